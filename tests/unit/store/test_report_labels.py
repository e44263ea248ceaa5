"""Exports name caps and totals as a person reads them: a label and a unit, money as
money, and a file name made of the question and the time, not the run's hex id."""

from __future__ import annotations

from core.store import report as rp


def test_caps_have_labels_and_units():
    rows = rp.cap_rows({"max_cost_usd": None, "cell_timeout_s": 60, "max_output_chars": 20000,
                        "max_depth": 1, "max_wall_seconds": None, "root_max_tokens": 4096})
    assert rows == [("Recursion depth", "1"), ("Cost cap", "none"), ("Run time limit", "none"),
                    ("Cell time limit", "60 s"), ("Cell output shown to the root", "20,000 characters"),
                    ("Root reply limit", "4,096 tokens")]
    assert rp.cap_rows({"max_cost_usd": 0.05}) == [("Cost cap", "$0.0500")]
    assert rp.cap_rows({"max_cost_usd": 5.0}) == [("Cost cap", "$5.00")]


def test_totals_as_money_and_seconds():
    totals = {"cost_usd": 0.0, "wall_ms": 5700, "input_tokens": 70211}
    assert rp.total_value(totals, "cost_usd") == "$0.00"
    assert rp.total_value({"cost_usd": 0.006}, "cost_usd") == "$0.0060"
    assert rp.total_value(totals, "wall_ms") == "5.7 s"
    assert rp.total_value(totals, "input_tokens") == "70,211"
    assert rp.total_value({"cost_usd": 0.01, "unpriced_models": ["x"]}, "cost_usd") == "$0.0100 + unknown"


def test_export_file_name_is_the_question_and_time():
    run = {"id": "92490b27aa", "question": "When did card payments fail, and why?",
           "created_utc": 1764597780.0}
    name = rp.export_file_name(run, "html")
    assert name.startswith("when-did-card-payments-fail-") and name.endswith(".html")
    assert "92490b27" not in name
    assert rp.export_file_name({"id": "92490b27aa"}, "md") == "run-92490b27.md"
