"""One RLM: a root model, its own REPL worker, and the turn loop.

The top-level run is an Rlm at depth 0; `rlm_query` inside its code starts
another Rlm at depth + 1 with its own worker, sharing the run's budget.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import time
from typing import TYPE_CHECKING, Any, Sequence

from core import events as ev
from core.call_ids import CallId
from core.engine import prompts, reply_reader
from core.engine.answer_kind import AnswerKindCheck, offer_at_once, offer_for, searched_nothing
from core.engine.budget import BudgetExceeded, Tally
from core.engine.costs import ROOT_FLOOR_TOKENS, CallMeter, explain_no_fit, root_reserve, worst_case
from core.engine.cell_output import cell_output
from core.engine.edited_turn import run_edited_turn
from core.engine.parse import parse_reply, stated_final
from core.engine.printed_so_far import printed_so_far, self_contained
from core.engine.screen import screen_block
from core.engine.search_help import (empty_search_note, header_only_note, next_hop_note, no_such_document_note,
                                      not_a_table_note, nothing_found_note, table_in_documents_note)
from core.engine.outcome import RlmOutcome, RootCallRefused, Session, TextDocument  # noqa: F401
from core.engine.subcalls import SubCaller
from core.engine.turn_state import RootMemory, Turn
from core.lifecycle import finish
from core.local_defaults import repeat_temperature, root_temperature, small_prompt
from core.repl.context_file import chars_of, form_of, head_of
from core.routing import extra_sub_call_models

if TYPE_CHECKING:
    from core.engine.context import RunContext

log = logging.getLogger(__name__)

# An answer that came before the worker's handshake waits this long at most for it, so the
# run still records its sandbox (its start is 0.15-0.5 s here).
START_REPORT_WAIT_S = 10.0
# A root whose reply repeated the one before this many times in a row is asked for its final
# answer at once (the real 1.5B model printed the cause, then sent that block 3-5 more times).
REPEATS_BEFORE_ASKING = 2


class Rlm:
    def __init__(self, ctx: "RunContext", *, rlm_id: str, parent_id: str | None, depth: int,
                 question: str, documents: Sequence[Any], session: Session | None = None,
                 follow_up: bool = False, keep_repl: bool = False, tally: Tally | None = None) -> None:
        self.ctx = ctx
        self.tally = tally if tally is not None else Tally()   # this RLM's subtree spend
        self.rlm_id = rlm_id
        self.parent_id = parent_id
        self.depth = depth
        self.question = question
        self.documents = documents
        self.config = ctx.config
        self.can_llm = depth < self.config.max_depth
        self.can_rlm = depth + 1 < self.config.max_depth
        self.current_parent: str = rlm_id      # the cell (or turn) sub-calls belong to
        self.subcaller = SubCaller(self)
        self.repl: Any = session.repl if session else None
        self.messages: list[dict] = list(session.messages) if session else []
        self._follow_up = follow_up
        self._edit = getattr(session, "edit", None)   # a fork's edited turn, run first (edited_turn.py)
        self._keep_repl = keep_repl
        self._reported = len(self.messages) if session and follow_up else 0
        self.memory = RootMemory()             # what later turns read of earlier ones (turn_state.py)
        self._this_turn: Turn | None = None        # the root turn that runs now
        self._started_event = asyncio.Event()  # the worker shook hands (its sandbox is told)
        self.answer_kind = AnswerKindCheck(question)   # a final answer of the wrong kind is sent back once

    def answer_at_cap(self) -> str | None:
        """The outcome's answer when a cap or a refused root call ends the run: the last answer a turn
        gave that did not end the run (a FINAL sent back), else the last FINAL line a small root was
        offered to copy from what its own code printed and never sent (said in the transcript). The
        real 1.5B model printed 30 for a how-many question, was offered FINAL('30'), and sent the block
        that printed it again until the time cap: "no answer" hid the number its code had computed."""
        if self.memory.best_answer is not None or self.memory.offered is None:
            return self.memory.best_answer
        self.ctx.emit(ev.Notice, call_id=self.current_parent, parent_id=self.rlm_id, level="warning",
                      message=f"No final answer by the cap: the answer is what the root's code printed, "
                              f"{self.memory.offered[:80]!r}, which it was offered as its answer and did not send.")
        return self.memory.offered

    @property
    def turn_notes(self) -> list[str]:
        """Notes for the root at the end of the turn that runs now (sub-calls add theirs)."""
        return self._this_turn.notes if self._this_turn is not None else []

    # -- lifecycle -----------------------------------------------------------------
    async def solve(self) -> RlmOutcome:
        """The RLM's whole life. The worker's start and the context's load are inside the
        cleanup scope, and the cleanup (its sub-calls cancelled, its worker closed) runs to
        its end whatever cancel comes, a second Stop included (core/lifecycle.py)."""
        try:
            if self.repl is None:
                from core.repl import spare
                from core.repl.client import ReplClient
                limits = dict(memory_limit_mb=self.config.memory_limit_mb, worker_command=self.ctx.worker_command,
                              require_full_sandbox=self.config.require_full_sandbox)
                # a worker started while the documents were read (`ask`), maybe loaded already, else a new one
                taken = spare.take(on_sub_call=self.subcaller.handle, documents=self.documents,
                                   on_started=self._started, **limits) if self.depth == 0 else None
                self.repl, preloaded = taken or (ReplClient(on_sub_call=self.subcaller.handle, **limits), None)
                if self.config.require_full_sandbox:
                    await self.repl.start()         # refused (SandboxIncomplete) before any model call
                    self._tell_sandbox()
                    loading = self.repl.begin_loading(self.documents)   # the first root call goes on meanwhile
                    if self.depth == 0:
                        from core.engine.loading import tell
                        tell(self.ctx, self.rlm_id, loading, self.documents)
                    return await self._loop()
                # The worker's start (0.15-0.5 s) and the load go on beside the root's first call.
                loading = preloaded or self.repl.begin_loading(self.documents, start=True, on_started=self._started)
                await asyncio.sleep(0)          # its first step spawns the worker (or fails to)
                if loading.done() and not loading.cancelled() and loading.exception() is not None:
                    await loading               # no worker at all: the run fails before any call
                if self.depth == 0:
                    from core.engine.loading import tell
                    tell(self.ctx, self.rlm_id, loading, self.documents)
                return await self._beside_start(loading)
            self.repl.on_sub_call = self.subcaller.handle   # a kept REPL now serves this run
            return await self._loop()
        finally:
            await finish(self._clean_up())

    async def _beside_start(self, loading: asyncio.Future) -> RlmOutcome:
        """The loop while the worker starts: a start that fails (the worker dies or never
        shakes hands) ends the run at once as a worker that could not run, the call in
        flight cancelled, instead of after the root's reply. A failed load of the context
        stays the first cell's error (ReplClient.execute)."""
        from core.repl.client import ReplStartError
        main = asyncio.ensure_future(self._loop())
        try:
            await asyncio.wait({main, loading}, return_when=asyncio.FIRST_COMPLETED)
            failed = (loading.done() and not loading.cancelled()
                      and isinstance(loading.exception(), ReplStartError))
            if failed and not main.done():
                main.cancel()
                await finish(asyncio.wait({main}))
                await loading           # raises the start's error
            outcome = await main
            if not self._started_event.is_set() and not loading.done():
                # An answer before the worker shook hands (no cell ran): the run still says
                # what box it had (the sandbox warning), so wait for the start, not the load.
                started = asyncio.ensure_future(self._started_event.wait())
                try:
                    await asyncio.wait({started, loading}, timeout=START_REPORT_WAIT_S,
                                       return_when=asyncio.FIRST_COMPLETED)
                finally:
                    started.cancel()
            return outcome
        except asyncio.CancelledError:
            main.cancel()               # a Stop: the loop ends its own way (it is cancelled)
            await finish(asyncio.wait({main}))
            raise

    async def _clean_up(self) -> None:
        await self.subcaller.cancel_all()
        if self.repl is None or self._keep_repl:
            return
        if self.depth > 0:
            # A nested RLM's answer should not wait for its worker to shut down (50-190 ms
            # on the parent's critical path): close it beside the run, awaited at its end.
            self.ctx.closing.append(asyncio.ensure_future(self._close_repl()))
        else:
            await self._close_repl()

    def _started(self) -> None:
        self._started_event.set()
        self._tell_sandbox()

    def _tell_sandbox(self) -> None:
        """A warning in the run's events (window, CLI, store) when the worker's box lacks a layer."""
        from core.repl import sandbox_report
        text = sandbox_report.describe(getattr(self.repl, "sandbox", None) or {})
        if text and self.depth == 0:
            self.ctx.emit(ev.Notice, call_id=self.rlm_id, parent_id=self.parent_id, level="warning",
                          message=text)

    def session(self) -> Session | None:
        alive = self.repl is not None and getattr(self.repl, "alive", True)
        return Session(self.repl, list(self.messages)) if alive else None

    async def _close_repl(self) -> None:
        try:
            await self.repl.close()
        except Exception:
            log.exception("closing the REPL worker of %s failed", self.rlm_id)

    # -- the loop --------------------------------------------------------------------
    async def _loop(self) -> RlmOutcome:
        cfg = self.config
        messages = self.messages
        if not messages:
            messages += [
                {"role": "system", "content": prompts.system_prompt(
                    can_llm=self.can_llm, can_rlm=self.can_rlm, model=cfg.root_model,
                    user_notes=cfg.prompt_notes, sub_models=extra_sub_call_models(cfg),
                    tables=prompts.has_tables(self.documents))},
                {"role": "user", "content": prompts.first_turn_small(
                    self.question, [(d.path, d.text) for d in self.documents])
                 if small_prompt(cfg.root_model) else prompts.first_turn(
                    self.question, [(d.path, chars_of(d)) for d in self.documents], self._prefix(),
                    context_form=form_of(self.documents))},
            ]
        elif self._follow_up:
            messages.append({"role": "user", "content": prompts.follow_up(self.question)})
        first = 1
        if self._edit is not None:
            await run_edited_turn(self, self._edit, messages)
            self._reported = len(messages) - 1        # the next turn carries the edit's feedback
            first = 2
        ask_now = False
        for iteration in range(first, cfg.max_iterations + 1):
            try:
                answer, feedback = await self._turn(messages, iteration, final_request=ask_now)
            except RootCallRefused as exc:
                return RlmOutcome(self.answer_at_cap(), "capped", str(exc))
            if answer is not None:
                return RlmOutcome(answer, "finished")
            ask_now = False
            if iteration == cfg.max_iterations:
                feedback += "\n\n" + prompts.final_request(cfg.max_iterations)
            elif self.memory.repeats >= REPEATS_BEFORE_ASKING:
                # Stuck: the same reply again and again (told each time, sampled hotter) finds
                # nothing new; ask for the answer from what was printed, as at the cap.
                ask_now, self.memory.repeats = True, 0
                feedback += "\n\n" + prompts.repeated_final_request(REPEATS_BEFORE_ASKING + 1)
                self.ctx.emit(ev.Notice, call_id=CallId.for_turn(self.rlm_id, iteration), parent_id=self.rlm_id,
                              level="info", message=f"The root sent the same reply {REPEATS_BEFORE_ASKING + 1} "
                              "times running; it was asked for its final answer now.")
            messages.append({"role": "user", "content": feedback})
        # Out of turns: the root was asked once for its best final answer.
        self.ctx.cap_hit = self.ctx.cap_hit or "iterations"
        try:
            answer, _ = await self._turn(messages, cfg.max_iterations + 1, final_request=True)
        except RootCallRefused as exc:
            return RlmOutcome(self.answer_at_cap(), "capped", str(exc))
        if answer is not None:
            return RlmOutcome(answer, "capped", f"iteration cap reached ({cfg.max_iterations} turns); "
                                                "the answer was requested at the cap")
        return RlmOutcome(self.answer_at_cap(), "capped", f"iteration cap reached ({cfg.max_iterations} turns) "
                                                      "without a final answer")

    def _prefix(self) -> str:
        head = []
        size = 0
        for d in self.documents:
            head.append(f"=== {d.path} ===\n{head_of(d, prompts.PREFIX_CHARS)}")
            size += len(head[-1])
            if size >= prompts.PREFIX_CHARS:
                break
        return "\n".join(head)[:prompts.PREFIX_CHARS]

    # -- one root turn -----------------------------------------------------------------
    async def _turn(self, messages: list[dict], iteration: int, *, final_request: bool
                    ) -> tuple[str | None, str]:
        """Ask the root, run its blocks, resolve its answer: (the answer, "") when the turn
        ends the run, else (None, the feedback for the root's next turn)."""
        turn = self._this_turn = Turn(iteration, CallId.for_turn(self.rlm_id, iteration), final_request)
        self.current_parent = turn.id
        if self.depth == 0:
            self.ctx.counters.iterations = iteration
        self.ctx.emit(ev.RootTurnStarted, call_id=turn.id, parent_id=self.rlm_id, iteration=iteration,
                      depth=self.depth, model=self.config.root_model, final_request=final_request,
                      new_messages=messages[self._reported:])
        turn.reply = await self._call_root(self._asked(messages, turn), turn)
        messages.append({"role": "assistant", "content": turn.reply.text})
        self._reported = len(messages)           # RootReplied carries the reply itself
        turn.parsed = parse_reply(turn.reply.text)
        told = reply_reader.note_for_root(turn.cut) if turn.cut else None
        if told:
            turn.notes.append(told)
        if turn.cut_by_cap is not None:
            turn.notes.append(prompts.cut_by_cap(turn.cut_by_cap))
        self._reserve_next_root_call(messages, len(turn.parsed.cells))
        await self._run_blocks(turn)
        answer = await self._answer(turn)
        if answer is not None:
            return answer, ""
        self._note_no_answer(turn)
        offered = prompts.offered_value(turn.notes)
        if offered and not searched_nothing(offered):
            self.memory.offered = offered
        feedback = prompts.turn_feedback(turn.outputs, turn.notes, iteration, self.config.max_iterations,
                                         small=small_prompt(self.config.root_model))
        return None, feedback

    def _asked(self, messages: list[dict], turn: Turn) -> list[dict]:
        """What the root is sent: the conversation, but for a small root asked for its final answer (stuck,
        or at the cap) only the system prompt, the question and the last feedback. The real 1.5B model,
        asked for its answer after sending one block three times, sent it again and again until the
        time cap: with its own replies in view it copies them; the request's output and offer stay."""
        if not (turn.final_request and small_prompt(self.config.root_model) and len(messages) > 3
                and messages[-1].get("role") == "user"):
            return messages
        self.ctx.emit(ev.Notice, call_id=turn.id, parent_id=self.rlm_id, level="info",
                      message="The root was asked for its final answer in a short conversation: the system prompt, "
                              "the question and the last feedback, without its earlier replies.")
        earlier = printed_so_far(self.memory.printed_by, [d.path for d in self.documents])
        return [messages[0], {"role": "user", "content": prompts.fill(
            "final_request_small.md", question=self.question, feedback=messages[-1]["content"],
            earlier=prompts.fill("printed_so_far_small.md", blocks=earlier) + "\n\n" if earlier else "")}]

    def _reserve_next_root_call(self, messages: list[dict], blocks: int) -> None:
        """What the next root turn needs at least: its input at worst and a reply of the
        floor's length, at most half of what is left (core/engine/costs.py: root_reserve)."""
        ctx, cfg = self.ctx, self.config
        if self.depth != 0 or ctx.budget.max_cost_usd is None:
            return
        allowance = "x" * min(cfg.max_output_chars * max(blocks, 1), 200_000)
        need = ctx.prices.worst_case_usd(
            cfg.root_model, messages + [{"role": "user", "content": allowance}],
            min(cfg.root_max_tokens, ROOT_FLOOR_TOKENS))
        ctx.root_reserve_usd = root_reserve(need, ctx.budget.max_cost_usd, ctx.budget.spent_usd)

    # -- cells ----------------------------------------------------------------------------
    async def _run_blocks(self, turn: Turn) -> None:
        """Run the reply's blocks in order (none when it repeats an earlier reply), each
        screened first; a cell that ran FINAL ends the turn's blocks (turn.final)."""
        parsed, memory = turn.parsed, self.memory
        cells = tuple(c.strip() for c in parsed.cells)
        turn.repeated, turn.repeated_turn = self._repeated(cells, parsed, turn.reply.text, turn.id)
        for index, code in enumerate(() if turn.repeated else parsed.cells, start=1):
            refusal = screen_block(code, memory.shown)
            if refusal is not None:          # copied feedback or a rebound `context`: not run
                self.ctx.counters.refused_cells += 1
                turn.outputs.append(f"[block {index} of {len(parsed.cells)}: not run]\n{refusal.reason}")
                self.ctx.emit(ev.Notice, call_id=turn.id, parent_id=self.rlm_id, level="warning",
                              message=f"Block {index} was not run ({refusal.kind}): {refusal.reason}")
                continue
            result, shown = await self.run_cell(turn.id, index, len(parsed.cells), code)
            turn.outputs.append(shown)
            if result.final is not None:
                turn.final = result.final
                break
        if turn.repeated == "code":
            if cells != memory.last_ran[1]:       # an earlier turn's blocks (A, B, A): as if it ran last
                then, outputs, printed = memory.ran[cells]
                memory.last_ran, memory.printed = (then, cells, outputs), printed
            turn.outputs.append(prompts.repeated_reply(turn.repeated_turn, memory.last_ran[2]))
            # a small root copies a literal line, not advice: the line that ends the run with it
            earlier = "\n".join(memory.shown[:len(memory.shown) - len(memory.last_ran[2])])
            offer = offer_for(self.question, memory.printed, earlier) if small_prompt(self.config.root_model) else None
            if offer and not searched_nothing(memory.printed):
                turn.notes.append(offer)
        elif cells:
            memory.last_ran = (turn.iteration, cells, tuple(turn.outputs))
            memory.ran[cells] = (turn.iteration, tuple(turn.outputs), turn.printed)
        memory.last_prose = (turn.iteration, "" if cells else " ".join(turn.reply.text.split()))
        if cells and turn.final is None and small_prompt(self.config.root_model):
            self._search_help(turn, memory.printed if turn.repeated else turn.printed)

    def _search_help(self, turn: Turn, printed: str | None) -> None:
        """A small root's search that matched nothing: the lines holding its words in any order; one
        that printed a code the question does not name: the search for it; a document taken from
        `tables` that has none: how to read its lines (core/engine/search_help.py); else a short output
        is offered as the FINAL line at once (the real 1.5B model sent the block that printed the answer
        again, turn after turn, and was offered it only then)."""
        code = "\n".join(self.memory.last_ran[1])
        if not code:
            return
        shown = (self.memory.last_ran[2] or ("",))[-1] if turn.repeated else (turn.outputs or [""])[-1]
        if turn.repeated and "\n[error]\n" in "\n" + shown:
            printed = None
        if printed is None:
            docs = [(d.path, d.text) for d in self.documents]
            note = (not_a_table_note(code, shown, docs) or no_such_document_note(code, shown, docs)
                    or table_in_documents_note(code, shown, docs))
        elif searched_nothing(printed):
            note = (nothing_found_note(self.memory.empty_searched, code)
                    or empty_search_note(code, [(d.path, d.text) for d in self.documents]))
        else:
            self.memory.empty_searched.clear()
            note = (next_hop_note(self.question, code, printed)
                    or header_only_note(code, printed, [(d.path, d.text) for d in self.documents]))
        if note:
            turn.notes.append(note)
            self.memory.hinted += note + "\n"
        elif printed and not turn.repeated and not searched_nothing(printed):   # the FINAL line to copy, at once
            offer = offer_at_once(self.question, printed, "\n".join(self.memory.shown[:-1]))
            if offer:
                turn.notes.append(offer)

    async def run_cell(self, turn_id: str, index: int, of: int, code: str, *,
                       recorded: Any = None) -> tuple[Any, str]:
        """Run `code` as cell `index` (of `of`) of the turn: its events and counters, its
        sub-calls under the cell. `recorded` (a fork's edited cell, core/engine/edited_turn.py):
        the stored turn's sub-calls, answered from the record. Returns (the result, what the
        root is shown of it)."""
        cfg = self.config
        cell_id = CallId.for_cell(turn_id, index)
        self.current_parent = cell_id
        self.ctx.emit(ev.CellStarted, call_id=cell_id, parent_id=turn_id, index=index, code=code)
        try:
            with self.subcaller.answering_from(cell_id, recorded):
                result = await self.repl.execute(code, timeout_s=cfg.cell_timeout_s, cell_id=cell_id)
        finally:
            self.current_parent = turn_id
        if getattr(result, "between_cells", None):     # a limit held between cells: say so, record it
            self.ctx.emit(ev.Notice, call_id=cell_id, parent_id=turn_id, level="warning",
                          message=f"{result.between_cells[:1].upper()}{result.between_cells[1:]} "
                                  "(a limit of the REPL sandbox, which holds between cells too).")
        shown = cell_output(cfg, index, of, result)
        self.memory.shown.append(shown)
        self._count(result)
        if not result.error and not result.fault:
            self.memory.printed = result.stdout
            self.memory.printed_by.append((code, result.stdout or ""))
        if self._this_turn is not None:
            self._this_turn.printed = None if result.error or result.fault else result.stdout
        self.ctx.emit(ev.CellExecuted, call_id=cell_id, parent_id=turn_id, index=index, code=code,
                      stdout=result.stdout, stderr=result.stderr, error=result.error,
                      is_syntax_error=result.is_syntax_error, duration_ms=result.duration_ms,
                      output_for_model=shown, fault=result.fault, restarted=result.restarted)
        return result, shown

    # -- answer resolution ----------------------------------------------------------------
    async def _answer(self, turn: Turn) -> str | None:
        """The answer that ends the run, or None (the reason is then one of turn.notes): a
        FINAL a cell ran, else a FINAL(...)/FINAL_VAR(...) line of the reply; sent back when
        it rests on no output yet (a small root) or is empty."""
        parsed = turn.parsed
        answer: str | None = None
        if turn.repeated == "code":
            insisted = self.answer_kind.insisted(CallId.for_turn(self.rlm_id, turn.repeated_turn))
            if insisted is not None:     # the same reply after its answer was sent back: it stands
                self.ctx.emit(ev.Notice, call_id=turn.id, parent_id=self.rlm_id, level="info",
                              message=f"The root sent the same reply again, so its answer {insisted.strip()[:80]!r} "
                                      "stands.")
                return insisted
        if turn.final is not None:
            answer = str(turn.final.get("value", ""))
        elif parsed.final is not None:
            if parsed.final.kind == "FINAL":
                answer = parsed.final.value
            else:
                found, value, error = await self.repl.get_var(parsed.final.value)
                if found:
                    answer = value or ""
                else:
                    turn.notes.append(
                        f"FINAL_VAR({parsed.final.value}) did not end the run: {error or 'no such variable'}. "
                        "Create the variable first, or use FINAL(\"...\").")
        if answer is None and turn.final_request and not parsed.cells:
            # asked for its final answer, it wrote "The final answer is 126." without FINAL, or wrote the very
            # line it was offered without FINAL(...) around it: that is its answer
            answer = stated_final(turn.reply.text) or self._offer_written_out(turn.reply.text)
        if answer is None:
            return None
        if answer.strip():
            self.memory.best_answer = answer
        if turn.final is None and self._unseen(turn.final_request):
            # A small root's answer before any code ran rests on nothing it has seen: sent back
            # once, said in the transcript (core/local_defaults.py: answer_needs_output).
            self.memory.unseen_told = True
            turn.notes.append(prompts.final_unseen(answer))
            self.ctx.emit(ev.Notice, call_id=turn.id, parent_id=self.rlm_id, level="info",
                          message=f"The root answered {answer[:80]!r} before any code ran; it was asked once to "
                                  "check it with code first.")
            return None
        if turn.iteration <= self.config.max_iterations:   # not at the cap: a final answer of the wrong
            # kind is sent back once (answer_kind.py), when the root was asked for it because it was stuck too
            by_variable = (turn.final or {}).get("kind") == "FINAL_VAR" or getattr(parsed.final, "kind", "") == "FINAL_VAR"
            answer = self.answer_kind.review(self, answer, turn.id, self.memory.shown, by_variable,
                                             ran=turn.final is not None)
            if answer is None:
                return None
        if answer.strip():
            return answer
        # An empty answer is a bug in the model's code (a split that found nothing, a
        # variable never filled), not an answer: say so and let it try again.
        turn.notes.append("The final answer you gave is empty, so the run did not end. Check "
                          "the variable (print it), then finish with the real answer.")
        return None

    def _offer_written_out(self, text: str) -> str | None:
        """The offered answer when a reply's text is that answer itself (the real 1.5B model, asked for
        its answer, wrote the offered line as prose: "The great storm of 1987 tore the pier ...")."""
        offered = self.memory.offered
        said = " ".join((text or "").split()).strip(" '\"`")
        return offered if offered and said and said == " ".join(offered.split()) else None

    # -- notes for the root ---------------------------------------------------------------
    def _note_no_answer(self, turn: Turn) -> None:
        """What the root is told when its turn gave no answer: a stated answer without FINAL,
        a repeated reply, a reply without code (cut off or not), a block cut off."""
        parsed, reply, cfg = turn.parsed, turn.reply, self.config
        stated = None
        if parsed.final is None and turn.final is None:
            stated = stated_final(reply.text)       # "Final answer: 2610" without FINAL: say how
            if stated:
                self.ctx.counters.stated_finals += 1
                turn.notes.append(prompts.stated_final(stated))
        if turn.repeated == "prose":
            turn.notes.append(prompts.repeated_prose(turn.repeated_turn))
        elif not parsed.cells and parsed.final is None:
            if reply.finish_reason == "length":
                turn.notes.append(
                    "Your reply was cut off at the output-token limit before any code. "
                    "Think less and write a short repl block.")
            turn.notes.append(prompts.no_code())
        elif parsed.unclosed_fence and reply.finish_reason == "length":
            turn.notes.append("Your reply was cut off at the output-token limit inside a code block; "
                              "write shorter blocks.")
        if not parsed.cells and parsed.final is None and not stated and small_prompt(cfg.root_model) \
                and not searched_nothing(self.memory.printed):
            printed = prompts.last_output(self.memory.printed)     # the line to copy, for a small root
            if printed:
                turn.notes.append(printed)

    def _repeated(self, cells: tuple, parsed: Any, text: str, turn_id: str) -> tuple[str | None, int]:
        """("code", turn) when the reply's blocks are those of the last reply that ran code, "prose" when
        it is the last reply's text again without code; else (None, 0). A small model's loop (the
        real 1.5B model wrote the same reply up to seven turns running, whatever the notes said):
        the code is not run again, the root is told what it printed then, and its next reply is
        sampled hotter (core/local_defaults.py: repeat_temperature), said in the transcript."""
        memory = self.memory
        if cells:
            kind = "code" if cells == memory.last_ran[1] or (cells in memory.ran and self_contained(cells)) else None
        elif parsed.final is None and " ".join(text.split()) and " ".join(text.split()) == memory.last_prose[1]:
            kind = "prose"
        else:
            kind = None
        if kind is None:
            memory.repeats = 0
            return None, 0
        memory.repeats += 1
        memory.hot = True
        hotter = repeat_temperature(root_temperature(self.config.root_model, self.config.root_temperature))
        turn = memory.ran.get(cells, memory.last_ran)[0] if kind == "code" else memory.last_prose[0]
        what = "code, not run again" if kind == "code" else "text, without code"
        self.ctx.emit(ev.Notice, call_id=turn_id, parent_id=self.rlm_id, level="info",
                      message=f"The root repeated its reply of turn {turn} ({what}); it was told so"
                              + (f", and its next reply is sampled at temperature {hotter:g}." if hotter is not None
                                 else "."))
        return kind, turn

    def _unseen(self, final_request: bool) -> bool:
        """No cell has run in this RLM and its root is one that must see output first."""
        from core.local_defaults import answer_needs_output
        return (not final_request and not self.memory.shown and not self.memory.unseen_told and not self._follow_up
                and answer_needs_output(self.config.root_model))

    # -- the root call ----------------------------------------------------------------
    async def _call_root(self, messages: list[dict], turn: Turn) -> Any:
        """The root's reply to `messages`, streamed, metered and read only as far as useful
        (turn.cut says where it was cut); RootCallRefused when the dollar cap refuses it."""
        ctx, cfg = self.ctx, self.config
        model = cfg.root_model
        meter = CallMeter(ctx, model, messages, cfg.root_max_tokens, tally=self.tally,
                          keep_usd=lambda: 0.0 if self.depth == 0 else ctx.root_reserve_usd,
                          floor_tokens=ROOT_FLOOR_TOKENS)
        reader = reply_reader.reader_for(cfg, model)
        turn_id = turn.id

        def on_delta(delta: str) -> None:
            ctx.emit(ev.RootTokens, call_id=turn_id, parent_id=self.rlm_id, delta=delta)

        def on_retry(attempt: int, error: Exception) -> None:
            ctx.emit(ev.Notice, call_id=turn_id, parent_id=self.rlm_id, level="warning",
                     message=f"Root call failed ({error}); retrying (attempt {attempt + 1}).")
            if reader is not None:
                reader.reset()

        started = time.monotonic()

        def failed(status: str, error: str) -> None:
            if meter.attempts:
                ctx.emit(ev.RootCallFailed, call_id=turn_id, parent_id=self.rlm_id, status=status,
                         error=error, input_tokens=meter.input_tokens, output_tokens=meter.output_tokens,
                         cost_usd=meter.cost_usd, duration_ms=int((time.monotonic() - started) * 1000),
                         model=model)

        try:
            temperature = root_temperature(model, cfg.root_temperature)
            if self.memory.hot:
                temperature, self.memory.hot = repeat_temperature(temperature), False
            reply = await ctx.llm.complete(
                model, messages, max_tokens=cfg.root_max_tokens, stream=True, on_delta=on_delta,
                temperature=temperature,
                on_retry=on_retry, reasoning_effort=cfg.reasoning_effort.get(model), meter=meter,
                stop=reader.feed if reader is not None else None)
        except asyncio.CancelledError:
            failed("cancelled", "cancelled")
            raise
        except BudgetExceeded as exc:
            ctx.cap_hit = ctx.cap_hit or "cost"
            why = str(exc)
            b = ctx.budget
            if b.max_cost_usd is not None and b.spent_usd + meter.worst_usd() > b.max_cost_usd + 1e-12:
                # Even alone it cannot fit: say why in numbers, and what would make it fit.
                first = "the first root call" if self.depth == 0 and len(messages) <= 2 else "the next root call"
                why = explain_no_fit(worst_case(ctx.prices, model, messages, cfg.root_max_tokens),
                                     b.max_cost_usd, b.spent_usd, what=first)
            ctx.emit(ev.Notice, call_id=turn_id, parent_id=self.rlm_id, level="warning",
                     message=f"Root call refused: {why}")
            failed("refused", why)
            raise RootCallRefused(f"dollar cap reached: {why}") from exc
        except Exception as exc:
            failed("error", str(exc) or type(exc).__name__)
            raise
        turn.cut = reply_reader.record(reader, meter.output_tokens, cfg.root_max_tokens)
        if turn.cut:                      # what was cut never enters the conversation
            reply = dataclasses.replace(reply, text=reader.kept)
            ctx.counters.cut_replies += 1
        ctx.emit(ev.RootReplied, call_id=turn_id, parent_id=self.rlm_id, text=reply.text,
                 input_tokens=meter.input_tokens, output_tokens=meter.output_tokens,
                 cost_usd=meter.cost_usd, duration_ms=reply.duration_ms, model=model, cut=turn.cut,
                 shortened_to=meter.shortened_to, finish_reason=reply.finish_reason)
        turn.cut_by_cap = meter.shortened_to if reply.finish_reason == "length" else None
        if turn.cut:
            ctx.emit(ev.Notice, call_id=turn_id, parent_id=self.rlm_id, level="info",
                     message=reply_reader.sentence(turn.cut))
        return reply

    def _count(self, result: Any) -> None:
        c = self.ctx.counters
        c.cells += 1
        if result.is_syntax_error:
            c.syntax_errors += 1
        elif result.fault:
            c.faults += 1
        elif result.error:
            c.runtime_errors += 1
