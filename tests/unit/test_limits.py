"""core/limits.py: what the caps changed, counted from real event objects, said in words."""

from core import events as ev
from core.limits import Limits, fix, is_limited, summary


def _finished(status, error_type=None, error=None, shortened_to=None):
    return ev.SubCallFinished(run_id="r", seq=1, ts=0.0, call_id="R.s1", parent_id="R.t1.c1", kind="llm",
                              model="m", status=status, response=None, error=error, input_tokens=0,
                              output_tokens=0, cost_usd=0.0, duration_ms=0, error_type=error_type,
                              shortened_to=shortened_to)


def test_counts_refusals_by_limit_cut_cells_and_shortened_calls():
    limits = Limits()
    for e in [_finished("ok"), _finished("ok", shortened_to=300),
              _finished("refused", "BudgetExceeded", "dollar cap $0.05: spent ..."),
              _finished("refused", "BudgetExceeded", "sub-call cap reached: 2 of 2 sub-calls used"),
              _finished("refused", "ApprovalDenied", "the user did not approve"),
              _finished("cancelled", "Cancelled", "cancelled: the cell that made it ended"),
              _finished("error", "SubCallError", "500")]:
        limits.observe(e)
    limits.observe(ev.CellExecuted(run_id="r", seq=2, ts=0.0, call_id="c", parent_id="t", index=1, code="",
                                   stdout="", stderr="", error="TimeoutError", is_syntax_error=False,
                                   duration_ms=1, output_for_model="", fault="timeout"))
    d = limits.as_dict()
    assert d["sub_calls"] == 7 and d["refused_sub_calls"] == 3
    assert d["refused_by"] == {"the dollar cap": 1, "the sub-call cap": 1, "the approval gate": 1}
    assert d["cut_cells"] == 1 and d["shortened_calls"] == 1
    text = summary(d)
    assert text.startswith("3 of 7 sub-calls were refused by the dollar cap and the sub-call cap and other "
                           "limits; 1 cell stopped at the time limit; 1 reply shortened")
    assert text.endswith(": this answer may be incomplete.")
    assert fix(d) == ("cost", "Raise the dollar cap…")


def test_nothing_limited_says_nothing():
    limits = Limits()
    limits.observe(_finished("ok"))
    limits.observe(_finished("cancelled", "Cancelled", "cancelled"))     # a Stop is not a limit
    assert not is_limited(limits.as_dict()) and summary(limits.as_dict()) is None
    assert fix(limits.as_dict()) is None and summary(None) is None


def test_the_fix_follows_what_refused_first():
    assert fix({"refused_sub_calls": 2, "refused_by": {"the sub-call cap": 2}, "shortened_calls": 3}) == \
        ("sub_calls", "Raise the sub-call cap…")
    assert fix({"cut_cells": 1}) == ("cell_time", "More time per cell…")
    assert fix({"refused_sub_calls": 1, "refused_by": {"an unknown price under the dollar cap": 1}}) == \
        ("prices", "Set a price…")
    assert summary({"refused_sub_calls": 1, "sub_calls": 1, "refused_by": {"the dollar cap": 1}}) == \
        "1 of 1 sub-call was refused by the dollar cap: this answer may be incomplete."


def test_replies_cut_at_their_max_tokens_are_counted():
    limits = Limits()
    limits.observe(_finished("ok"))
    cut = ev.SubCallFinished(run_id="r", seq=3, ts=0.0, call_id="R.s2", parent_id="c", kind="llm", model="m",
                             status="ok", response="half", error=None, input_tokens=1, output_tokens=9,
                             cost_usd=0.0, duration_ms=1, finish_reason="length")
    limits.observe(cut)
    limits.observe(ev.RootReplied(run_id="r", seq=4, ts=0.0, call_id="R.t1", parent_id="R", text="x",
                                  input_tokens=1, output_tokens=1, cost_usd=0.0, duration_ms=1, model="m",
                                  finish_reason="stop"))
    d = limits.as_dict()
    assert d["truncated_replies"] == 1 and summary(d) == "1 reply cut at its max tokens: this answer may be incomplete."
    assert fix(d) == ("models", "Raise max tokens…")
