"""Composition of one run: engine + store + whoever watches (GUI panes, CLI printer).

    run = QuestionRun(question, documents=docs, skipped=skips, config=cfg, sinks=[printer])
    outcome = await run.execute()        # run.cancel() stops it cleanly

The engine knows neither the store nor the screen: it emits events into a
fan-out; the store's writer thread persists them as they happen.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import uuid
from functools import partial
from typing import Any, Callable, Sequence

from app.key_routing import route_key_for
from app.version import __version__
from core.config import RunConfig
from core.engine.run import RunResult
from core.events import Event
from core.lifecycle import finish
from app.key_routing import resolved_before_run
from core.engine.prepare import check_config
from core.engine.run import Engine
from core.background import low_priority_steps

log = logging.getLogger(__name__)


SHARED_SOURCES_MAX_CHARS = 2_000_000   # above this, a run's texts are stored by a thread of its own


def _small(documents: Sequence[Any]) -> bool:
    return sum(getattr(d, "chars", 0) or 0 for d in documents) <= SHARED_SOURCES_MAX_CHARS


# What a run ends with: the engine's own result (run_id, status, answer, error, totals,
# started_at, finished_at, session).
RunOutcome = RunResult


class QuestionRun:
    def __init__(self, question: str, *, documents: Sequence[Any], skipped: Sequence[Any] = (),
                 config: RunConfig, sinks: Sequence[Callable[[Event], None]] = (),
                 store: Any = None, key_for: Callable[[str], str | None] | None = None,
                 parent_run_id: str | None = None, run_id: str | None = None,
                 worker_command: list[str] | None = None, persist: bool = True,
                 session: Any = None, follow_up: bool = False, keep_session: bool = False,
                 evaluation_id: str | None = None, forked_from: dict | None = None,
                 shared_budget: Any = None, writer: Any = None) -> None:
        """`writer`: an EventWriter shared by many runs (a grid's), kept open after this one;
        without it the run opens its own and closes it once its events are written."""
        if not question.strip():
            raise ValueError("the question is empty")
        if not documents:
            raise ValueError("there are no readable documents to ask about")
        self.question = question
        self.documents = list(documents)
        self.skipped = list(skipped)
        self.config = config
        self.sinks = list(sinks)
        self.run_id = run_id or uuid.uuid4().hex
        self.parent_run_id = parent_run_id
        self.evaluation_id = evaluation_id
        self.forked_from = forked_from          # a fork: {"run_id", "turn", "title"} (RunStarted)
        self.shared_budget = shared_budget
        self._store = store
        self._persist = persist
        self._key_for = key_for
        self._worker_command = worker_command
        self._engine: Any = None
        self._cancelled = False
        self._session = session
        self._follow_up = follow_up
        self._keep_session = keep_session
        self._writer: Any = None
        self._shared_writer = writer
        self._writer_error: Any = None      # a shared writer's error before this run began
        self.engine_started = False
        self._sink_failures: dict[int, int] = {}

    def cancel(self) -> None:
        self._cancelled = True
        if self._engine is not None:
            self._engine.cancel()

    def _fanout(self, writer: Any) -> Callable[[Event], None]:
        sinks = ([writer] if writer is not None else []) + self.sinks
        failed: dict[int, int] = {}        # id(sink) -> events it failed on

        def emit(event: Event) -> None:
            for sink in sinks:
                try:
                    sink(event)
                except Exception as exc:   # one broken viewer must not stop the run or the others
                    key = id(sink)
                    failed[key] = failed.get(key, 0) + 1
                    if failed[key] == 1:   # once per sink per run, with the traceback; then counted
                        log.exception("sink %r failed on %s (later failures of it are only counted)",
                                      sink, event.type)
                        self._sink_failed(sink, exc)
        self._sink_failures = failed
        return emit

    def _sink_failed(self, sink: Any, exc: Exception) -> None:
        what = "the run's record (the database)" if sink is self._writer else f"a viewer ({type(sink).__name__})"
        if self._engine is not None:
            self._engine.notice("warning", f"Events could not be passed to {what}: {type(exc).__name__}: "
                                           f"{exc}. The run goes on; see the log.")

    async def execute(self) -> RunOutcome:
        """The run and its record. The engine's start check comes before anything is stored
        (a refused run leaves no source rows and makes nobody wait for compression); a
        record that is not whole says so in `store_error`: events the writer could not
        write or was never handed, sources that could not be saved."""
        check_config(self.config, self.documents)          # ConfigError: nothing stored
        key_for = await resolved_before_run(self._key_for or route_key_for(self.config), self.config)
        store = writer = None
        # lazy: loaded already where documents were read
        from core.ingest.bigfile import keep_sidecars
        keep_sidecars(self.documents)        # before a store's sweep of unnamed sidecars
        if self._persist:
            # lazy: free in the window, +191 modules in ask (where it runs)
            from core.store import RunStore
            store = self._store or RunStore.open()
            writer = self._writer = self._shared_writer or store.writer()
            self._writer_error = writer.error
        self._engine = Engine(self.config, emit=self._fanout(writer), key_for=key_for,
                              run_id=self.run_id, worker_command=self._worker_command,
                              version=__version__, parent_run_id=self.parent_run_id,
                              keep_session=self._keep_session, evaluation_id=self.evaluation_id,
                              forked_from=self.forked_from, shared_budget=self.shared_budget)
        if self._cancelled:
            self._engine.cancel()
        sources = None
        sources_error: str | None = None
        try:
            if store is not None and self._shared_writer is not None and _small(self.documents):
                # A grid's cell: its one small text (or one already stored) goes in through the
                # shared writer, committed before the cell's own row; no thread of its own.
                # lazy: free here, imported with RunStore above
                from core.store.runstore import write_sources_in
                writer.submit(partial(write_sources_in, run_id=self.run_id, documents=self.documents,
                                      skipped=self.skipped), self._sources_written)
            elif store is not None:
                # Compressing a large context takes a while: do it beside the run, off the loop,
                # at a lower CPU priority than the run's own turns (core/background.py) ...
                sources = low_priority_steps(store.save_sources_steps(self.run_id, self.documents, self.skipped),
                                             name="rlm-save-sources")
            self.engine_started = True       # from here the engine owns a session it was given
            result = await self._engine.run(self.question, self.documents, session=self._session,
                                            follow_up=self._follow_up)
        finally:
            # One cleanup that a second cancel (a grid's Stop cancels its cells more than once)
            # cannot cut short: the sources, then the writer (the run's last rows), then the store.
            sources_error = await finish(self._close_record(sources, writer, store))
        store_error = "; ".join(filter(None, [self._store_error(writer), sources_error])) or None
        if store_error:
            log.error("run %s: %s", self.run_id, store_error)
            result = dataclasses.replace(result, store_error=store_error)
        return result

    async def _close_record(self, sources: Any, writer: Any, store: Any) -> str | None:
        """Wait for the sources, close the writer and the store; what went wrong with the sources, or None."""
        sources_error = None
        try:
            if sources is not None:
                sources.hurry()              # ... and what is left once the run is over, at full speed
                try:
                    await asyncio.wrap_future(sources.future)
                except Exception as exc:     # verify, fork and re-run need them: the record is not whole
                    log.exception("saving the sources of run %s failed", self.run_id)
                    sources_error = f"the sources of this run could not be saved: {type(exc).__name__}: {exc}"
        finally:
            if writer is not None and writer is not self._shared_writer:
                await asyncio.to_thread(writer.close)
            if store is not None and self._store is None:
                store.close()
        return sources_error

    def _sources_written(self, error: BaseException | None) -> None:
        """The writer's word on sources it stored (on its thread): a failure is logged."""
        if error is not None:
            log.error("saving the sources of run %s failed: %s", self.run_id, error)

    def _store_error(self, writer: Any) -> str | None:
        """What went wrong with the run's record, or None: a batch the writer could not
        write, or events the writer was never handed."""
        if writer is None:
            return None
        parts = []
        if writer.error is not None and writer.error is not self._writer_error:
            parts.append(f"some events could not be written to {writer.path}: {writer.error}")
        refused = self._sink_failures.get(id(writer), 0)
        if refused:
            parts.append(f"{refused} event(s) never reached the writer")
        return "; ".join(parts) or None
