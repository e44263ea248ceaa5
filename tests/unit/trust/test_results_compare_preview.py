import csv
import io

import pytest

from core.config import Price, RunConfig
from core.run_record import fold_record
from core.trust.compare import compare_records
from core.trust.preview import CostProjection, preview_cost
from core.trust.results import COLUMNS, results_from_events, to_csv
from tests.support.trust_runs import DOCS
from tests.unit.trust.events import Run

PAGE2 = "Revenue grew in the north.\n--- page 2 ---\nRevenue in Q3 was 42 million dollars."


def _run(run_id="run-a", second_reply="reply two", second_output="two", answer="42"):
    run = Run(run_id, docs=DOCS)
    run.turn(1, "reply one")
    run.cell(1, 1, "c1", "one", subs=[("Read this:\n" + PAGE2, "42"), ("no document text here", "?")])
    run.turn(2, second_reply)
    run.cell(2, 1, "c2", second_output)
    return run.finish(answer)


def test_results_rows_name_the_source_of_each_prompt():
    rows = results_from_events(_run(), DOCS)
    assert [r.call_id for r in rows] == ["R.s1", "R.s2"]
    first = rows[0]
    assert first.source == "report.pdf:page 1, line 2 - report.pdf:page 2, line 1"
    assert DOCS[1].text[first.source_start:first.source_end] == PAGE2
    assert first.response == "42" and first.parent_id == "R.t1.c1" and first.cost_usd == 0.001
    assert rows[1].source == "" and rows[1].source_start is None
    table = list(csv.DictReader(io.StringIO(to_csv(rows))))
    assert tuple(table[0]) == COLUMNS and table[0]["prompt"] == "Read this:\n" + PAGE2


def test_compare_finds_the_first_turn_that_differs():
    a, b = fold_record(_run("run-a")), fold_record(_run("run-b", second_output="TWO", answer="43"))
    result = compare_records(a, b)
    assert not result.same_answer and result.same_question and result.shared_prompts == 2
    d = result.first_difference
    assert (d.turn, d.what, d.cell) == (2, "cell", 1) and "-two" in d.diff and "+TWO" in d.diff
    assert compare_records(a, fold_record(_run("run-c"))).first_difference is None
    d = compare_records(a, fold_record(_run("run-d", second_reply="other"))).first_difference
    assert (d.turn, d.what) == (2, "reply")


def test_preview_heuristic_gives_a_priced_range_bounded_by_the_cap():
    cfg = RunConfig(root_model="r", sub_model="s", prices={"r": Price(1.0, 2.0), "s": Price(0.5, 1.0)})
    p = preview_cost(cfg, 400_000)
    assert p.basis == "heuristic" and p.context_tokens == 100_000
    assert p.input_tokens[0] < p.input_tokens[1] and 0 < p.usd_low < p.usd_high
    # root: 3 turns of 2,500/4,000/5,500 input and 400 output; sub: 30,000 in, 1,500 out
    assert p.usd_low == pytest.approx((12_000 * 1.0 + 1_200 * 2.0 + 30_000 * 0.5 + 1_500 * 1.0) / 1e6)
    capped = preview_cost(cfg.replace(max_cost_usd=0.01), 40_000_000)
    assert capped.usd_high == 0.01 and any("cap" in n for n in capped.notes)
    unknown = preview_cost(RunConfig(root_model="no/such-model-x", sub_model="s"), 1000)
    assert unknown.usd_low is None and unknown.input_tokens[1] > 0


def test_projection_follows_the_run():
    proj = CostProjection(expected_turns=4)
    events = _run()
    for e in events[:-1]:
        proj.apply(e)
    p = proj.projection()
    assert p["turns"] == 2 and p["spent_usd"] == pytest.approx(0.02)
    assert p["projected_usd"] == pytest.approx(0.04) and p["high_usd"] == pytest.approx(0.01 * 21)
    proj.apply(events[-1])
    assert proj.projection()["projected_usd"] == 0.05 and proj.projection()["finished"]


def test_the_preview_uses_the_engines_worst_case_and_blocks_only_what_cannot_be_shortened_to_fit():
    from core.config import Price
    from core.engine.costs import first_root_messages, worst_case
    from core.llm.pricing import PriceBook
    prices = {"openai/r": Price(2.5, 10.0), "openai/s": Price(0.15, 0.6)}
    cfg = RunConfig(root_model="openai/r", sub_model="openai/s", max_cost_usd=0.03, prices=prices)
    p = preview_cost(cfg, 40_000, question="What is it?", documents=[("a.txt", 40_000)])
    messages = first_root_messages(cfg, "What is it?", [("a.txt", 40_000)], "x" * 500)
    first = worst_case(PriceBook(prices), "openai/r", messages, cfg.root_max_tokens)
    assert p.first_call_usd == first.usd and p.first_call_usd > 0.03
    # Too dear at 8,192 tokens, but its input and a 1,024-token reply fit: not blocked (shortened).
    assert first.input_usd + 1024 * 10.0 / 1e6 <= 0.03
    assert p.blocker == "" and p.fixes == []
    tiny = preview_cost(cfg.replace(max_cost_usd=0.02), 40_000, question="What is it?",
                        documents=[("a.txt", 40_000)])
    assert "cannot pay even a short first root call" in tiny.blocker and "iteration" not in tiny.blocker.lower()
    [(action, label)] = tiny.fixes
    need = float(action.split(":")[1])
    assert action.startswith("set_cap:") and label == f"Set the cap to ${need:.2f}"
    assert first.input_usd + 1024 * 10.0 / 1e6 <= need < first.input_usd + 1024 * 10.0 / 1e6 + 0.01
    assert tiny.blocker in tiny.notes
    roomy = preview_cost(cfg.replace(max_cost_usd=1.0), 40_000)
    assert roomy.blocker == "" and roomy.first_call_usd is not None
    assert roomy.reach.startswith("This cap pays for about ") and roomy.root_keep_usd > 0


def test_an_unpriced_model_under_a_cap_blocks_the_run_by_the_name_the_user_picked():
    cfg = RunConfig(root_model="openai/small-3b", sub_model="openai/small-3b", max_cost_usd=0.05,
                    model_labels={"openai/small-3b": "lab/small-3b"})
    p = preview_cost(cfg, 1000)
    assert p.blocker.startswith("No price is known for lab/small-3b")
    assert "--price" not in p.blocker and "openai/small-3b" not in p.blocker
    assert p.fixes == [("mark_free:lab/small-3b", "Mark lab/small-3b free"),
                       ("set_price:lab/small-3b", "Set a price…"), ("no_cap", "Run without a cap")]
    assert preview_cost(cfg.replace(max_cost_usd=None), 1000).blocker == ""


def test_how_far_the_cap_goes_counts_sub_calls_after_the_roots_reserve():
    from core.config import Price
    prices = {"openai/r": Price(1.0, 2.0), "openai/s": Price(0.5, 1.5)}
    cfg = RunConfig(root_model="openai/r", sub_model="openai/s", max_cost_usd=0.2, prices=prices)
    p = preview_cost(cfg, 200_000)
    count = int(p.reach.split("about ")[1].split(" ")[0])
    assert "of 50k characters (each reply up to 4,096 tokens)" in p.reach
    one = 50_000 / 4 * 0.5 / 1e6 + 4096 * 1.5 / 1e6
    assert count > 0 and count <= int((0.2 - p.root_keep_usd) // one)
    more = preview_cost(cfg.replace(max_cost_usd=0.5), 200_000)
    assert int(more.reach.split("about ")[1].split(" ")[0]) > count
    small = preview_cost(cfg.replace(max_cost_usd=0.03), 27)
    assert "about 0 sub-calls" not in small.reach and "of 27 characters" in small.reach
