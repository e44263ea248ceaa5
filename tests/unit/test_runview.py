"""RunView: the Qt-free fold of a run's events."""

from __future__ import annotations

import time

from core import events as ev
from core.runview import ROOT_ID, RunView, display_prose, fold
from tests.support.event_streams import Stream, big_run
from tests.support.record_runs import PANES_ANSWER, PANES_TURN1, recorded_run

# The folds below read real engine runs (tests/fixtures/recorded, re-recorded by
# tests/support/record_runs.py); "panes" has every shape the view shows. Hand-typed events
# (Stream, big_run) stay only where no run produces them: deltas after a reply, unknown
# parents, a terminal event while calls run, and a 5,000-event run.


def panes_run():
    return recorded_run("panes", "run-test")


def tree(view: RunView) -> list[tuple[str, str | None, int]]:
    return [(n.id, n.parent.id if n.parent else None, n.row) for n in view.node_list]


def test_full_run_meta_status_and_answer():
    view = fold(panes_run())
    assert view.meta.question.startswith("What are the main risks")
    assert view.meta.root_model == "openai/root-model"
    assert view.meta.max_iterations == 10 and view.meta.max_depth == 2
    assert view.status == "finished" and view.finished
    assert view.answer == PANES_ANSWER
    assert view.root is not None and view.root.status == "finished"


def test_turns_stream_then_reply_is_authoritative():
    s = Stream()
    s.start()
    s.add(ev.RootTurnStarted, "R.t1", "R", iteration=1, depth=0, model="m")
    view = RunView()
    view.apply_many(s.events)
    for delta in ("Hel", "lo ", "wor"):
        change = view.apply(ev.RootTokens(run_id="r", call_id="R.t1", parent_id="R", delta=delta))
        assert change.kind == "tokens" and change.turn_id == "R.t1" and change.delta == delta
    assert view.turns["R.t1"].text == "Hello wor"
    assert not view.turns["R.t1"].replied
    change = view.apply(ev.RootReplied(run_id="r", call_id="R.t1", parent_id="R", text="Hello world!",
                                       input_tokens=10, output_tokens=3, cost_usd=0.5, duration_ms=7, model="m"))
    assert change.kind == "turn_replied" and change.updated == ("R.t1",)
    assert view.turns["R.t1"].text == "Hello world!"
    # late deltas after the reply never change the authoritative text
    assert view.apply(ev.RootTokens(run_id="r", call_id="R.t1", delta="junk")).kind == "ignored"
    assert view.turns["R.t1"].text == "Hello world!"
    node = view.nodes["R.t1"]
    assert (node.status, node.input_tokens, node.output_tokens, node.cost_usd, node.duration_ms) == \
        ("ok", 10, 3, 0.5, 7)


def test_call_tree_follows_the_id_scheme():
    view = fold(panes_run())
    parents = {nid: parent for nid, parent, _ in tree(view)}
    assert parents["R"] is None
    assert parents["R.t1"] == "R" and parents["R.t1.c2"] == "R.t1"
    assert [parents[f"R.s{n}"] for n in range(1, 6)] == ["R.t2.c1"] * 5
    assert parents["R.s6"] == "R.t3.c1"                  # the nested RLM hangs under its cell
    assert parents["R.s6.t1"] == "R.s6" and parents["R.s6.t1.c1"] == "R.s6.t1"
    assert parents["R.s6.s1"] == "R.s6.t1.c1"
    # rows are positions among siblings
    for node in view.node_list:
        if node.parent is not None:
            assert node.parent.children[node.row] is node
    assert view.nodes["R.s6"].kind == "rlm" and view.nodes["R.s6"].depth == 1
    statuses = {n: view.nodes[n].status for n in ("R.s1", "R.s2", "R.s5", "R.t1.c2", "R.t3.c2")}
    assert statuses == {"R.s1": "ok", "R.s2": "error", "R.s5": "refused", "R.t1.c2": "syntax error",
                        "R.t3.c2": "timeout"}
    assert "429" in view.nodes["R.s2"].error
    assert view.nodes["R.s1"].response == "Supply delays in Q3."
    assert view.nodes["R.s1"].prompt.startswith("List the risks in: chunk 1")


def test_nested_turns_stay_out_of_the_transcript_timeline():
    view = fold(panes_run())
    assert [k for k, _ in view.timeline] == ["notice", "turn", "turn", "turn", "turn", "final"]
    assert [t.id for t in view.top_turns()] == ["R.t1", "R.t2", "R.t3", "R.t4"]
    assert view.turns["R.s6.t1"].rlm_id == "R.s6"
    assert view.iteration == 4


def test_cells_and_error_kinds():
    view = fold(panes_run())
    t1 = view.turns["R.t1"]
    assert [c.index for c in t1.cells] == [1, 2]
    assert t1.cells[0].stdout.split("\n")[0].isdigit() and t1.cells[0].error_kind is None
    assert t1.cells[1].error_kind == "syntax"
    assert "refused:" in view.cells["R.t2.c1"].stdout               # the refused llm_query, caught
    timeout = view.cells["R.t3.c2"]
    assert timeout.error_kind == "fault" and timeout.fault == "timeout"


def test_figures_and_budget():
    view = fold(panes_run())
    f, b = view.figures, view.budget
    assert (f.cells, f.syntax_errors, f.runtime_errors, f.faults) == (6, 1, 0, 1)
    assert f.syntax_error_rate == 1 / 6
    assert (f.sub_calls, f.sub_call_errors, f.refused_calls, f.iterations) == (7, 1, 1, 4)
    assert b.cap_usd == 1.0 and b.in_flight == 0 and b.sub_calls == 6       # a refused call is not spent
    assert b.spent_usd == f.cost_usd == view.totals["cost_usd"] > 0
    assert 0 < b.fraction < 1


def test_budget_in_flight_while_calls_run():
    events = panes_run()
    first_budget_after_batch = next(i for i, e in enumerate(events)
                                    if isinstance(e, ev.BudgetChanged) and e.in_flight == 4)
    view = fold(events[:first_budget_after_batch + 1])
    assert view.budget.in_flight == 4
    assert [view.nodes[f"R.s{n}"].status for n in range(1, 5)] == ["running"] * 4
    assert view.status == "running"


def test_elapsed_live_replay_and_finished():
    events = recorded_run("export", "r")          # a real engine run
    partial = fold(events[:10])
    start = events[0].ts
    assert partial.elapsed() == events[9].ts - start              # replay: up to the last event seen
    assert partial.elapsed(now=start + 100) == 100                # live: up to now
    done = fold(events)
    assert done.elapsed(now=start + 1e6) == events[-1].ts - start  # finished: up to the terminal event
    assert RunView().elapsed() == 0.0


def test_unknown_parents_attach_to_the_root_and_missing_cells_are_made_up():
    view = RunView()
    change = view.apply(ev.SubCallStarted(run_id="r", call_id="X.s1", parent_id="nowhere", kind="llm",
                                          model="m", prompt="p", depth=0))
    assert change.added == ("R", "X.s1")                           # the root is made up too
    assert view.nodes["X.s1"].parent is view.root
    view.apply(ev.RootTurnStarted(run_id="r", call_id="R.t1", parent_id="R", iteration=1, depth=0, model="m"))
    change = view.apply(ev.SubCallStarted(run_id="r", call_id="R.s2", parent_id="R.t1.c1", kind="llm",
                                          model="m", prompt="p", depth=0))
    assert change.added == ("R.t1.c1", "R.s2")                     # no CellStarted: the cell is made up
    assert view.nodes["R.s2"].parent.id == "R.t1.c1"
    view.apply(ev.SubCallFinished(run_id="r", call_id="R.s9", parent_id="R.t7", kind="llm", model="m",
                                  status="ok", response="r", error=None, input_tokens=1, output_tokens=1,
                                  cost_usd=0.0, duration_ms=1))
    assert view.nodes["R.s9"].parent is view.root and view.nodes["R.s9"].status == "ok"


def test_terminal_event_stops_everything_still_running():
    s = Stream()
    s.start()
    tid = s.turn("R", 1, "```repl\nllm_query('x')\n```")
    c = s.cell(tid, 1, "llm_query('x')")
    s.sub_start("R", 1, c, "x")
    s.add(ev.RunFailed, "R", status="cancelled", error="cancelled by the user", answer=None, totals={})
    view = fold(s.events)
    assert view.status == "cancelled" and view.error == "cancelled by the user"
    assert view.nodes["R.s1"].status == "cancelled" and view.nodes[c].status == "cancelled"
    assert view.budget.in_flight == 0
    assert view.timeline[-1] == ("final", None)


def test_node_texts_for_each_kind():
    view = fold(panes_run())
    assert view.node_texts("R")[0] == ("Question", view.meta.question)
    assert view.node_texts("R.t1") == [("Reply", PANES_TURN1)]
    code, output, error = view.node_texts("R.t1.c2")
    assert code[0] == "Code" and error[0] == "Error" and "SyntaxError" in error[1]
    prompt, response, err = view.node_texts("R.s2")
    assert prompt[0] == "Prompt" and "429" in err[1]
    assert view.node_texts("nope") == []


def test_display_prose_drops_runnable_fences_only():
    text = "Intro\n\n```repl\nprint(1)\n```\n\nA table:\n```json\n{\"a\": 1}\n```\nEnd\n```python\nx = 1"
    prose = display_prose(text)
    assert "print(1)" not in prose and "x = 1" not in prose
    assert '{"a": 1}' in prose and "```json" in prose
    assert prose.startswith("Intro") and "End" in prose


def test_fold_is_incremental_and_order_preserving():
    for events in (panes_run(), recorded_run("export", "r")):      # two real engine runs
        _prefixes_are_the_same_tree(events)


def _prefixes_are_the_same_tree(events) -> None:
    whole = fold(events)
    for k in (0, 5, 37, len(events) // 2, len(events)):
        part = fold(events[:k])
        assert tree(part) == tree(whole)[:len(part.node_list)]


def test_5000_events_fold_quickly():
    events = big_run(5000)
    started = time.perf_counter()
    view = fold(events)
    elapsed = time.perf_counter() - started
    print(f"\nfold of 5,000 events: {elapsed * 1000:.1f} ms")
    assert view.events_applied == 5000 and view.status == "finished"
    assert view.figures.sub_calls == sum(isinstance(e, ev.SubCallStarted) for e in events)
    assert all(n.status != "running" for n in view.node_list)
    assert view.nodes[ROOT_ID].children[0].id == "R.t1"


def test_cell_output_joins_stdout_and_stderr():
    s = Stream()
    s.start()
    t = s.turn("R", 1, "```repl\nimport warnings\n```")
    s.add(ev.CellExecuted, f"{t}.c1", t, index=1, code="x", stdout="out", stderr="warn\n", error=None,
          is_syntax_error=False, duration_ms=1, output_for_model="out")
    view = fold(s.events)
    assert view.cells[f"{t}.c1"].output == "out\nwarn\n"
    assert view.nodes[f"{t}.c1"].response == "out\nwarn\n"


def test_runview_imports_no_qt():
    import subprocess
    import sys
    code = ("import sys, core.runview; "
            "bad = [m for m in sys.modules if m.split('.')[0] in ('PySide6', 'qasync', 'ui', 'app')]; "
            "assert not bad, bad")
    subprocess.run([sys.executable, "-c", code], check=True)
