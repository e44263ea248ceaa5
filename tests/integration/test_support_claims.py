"""The unsupported-answer flag without false alarms (core/support.py), through the real engine,
worker and scripted server: a value code computed is supported, a plain call's answer is checked
claim by claim (a time range with its date is one claim), and the flag names claims in words."""

from tests.integration.engine_helpers import Doc, code, of_type, run

LOG = Doc("shop.log", "2024-08-14 09:41:55 INFO order 17 paid\n"
                      "2024-08-14 09:42:13 ERROR card payment failed: certificate expired\n"
                      "2024-08-14 12:52:40 INFO card payments work again\n")
REPORT = Doc("report-2024-Q3.md", "# 2024-Q3\nThe web shop lost card payments for a morning; 92 orders failed.\n")
REPORTS = [Doc(f"r{i}.md", f"report {i}\nsection\n") for i in range(1, 5)]


async def test_a_count_computed_in_code_and_returned_through_final_var_is_supported(server):
    # The real runs: `len(reports)` through FINAL_VAR was flagged "4: not found" because the code
    # typed a 4 elsewhere (a slice); nothing printed it, and the root never typed it as an answer.
    server.script("root", replies=[
        code("reports = [d for d in documents if d['path'].endswith('.md')]\nprint([d['path'] for d in reports[:4]])"),
        code("answer = str(len(reports))\nFINAL_VAR('answer')")])
    result, events = await run(server, "How many reports are there?", REPORTS, mode="rlm")
    assert result.answer == "4"
    assert result.totals["unsupported"] == [] and result.totals["support_values"] == 1
    assert not [n for n in of_type(events, "Notice") if "not found" in n.message]


async def test_a_typed_answer_nothing_printed_is_still_flagged(server):
    # typed twice: the first time it is sent back (no output holds 7, core/engine/answer_kind.py)
    server.script("root", replies=[code("print(len(documents))"), code("FINAL('7 reports')"), code("FINAL('7 reports')")])
    result, _ = await run(server, "How many reports are there?", REPORTS, mode="rlm")
    assert result.totals["unsupported"] == ["7 reports"]


async def test_a_plain_calls_answer_is_checked_claim_by_claim(server):
    right = ("Card payments failed 09:42-12:52 UTC on 14 August 2024 (Q3 2024) because a certificate "
             "expired; 92 orders failed.")
    server.script("root", replies=[right])
    result, events = await run(server, "When did card payments fail, and why?", [LOG, REPORT], mode="direct")
    assert result.answer == right
    assert result.totals["unsupported"] == []
    assert result.totals["support_values"] == 3        # the time range, the quarter, the orders

    wrong = "Card payments failed 10:05-12:52 UTC on 15 August 2024; 120 orders and $5,000 were lost."
    server.script("root", replies=[wrong])
    result, events = await run(server, "When did card payments fail, and why?", [LOG, REPORT], mode="direct")
    assert result.totals["unsupported"] == ["10:05-12:52 UTC on 15 August 2024", "120 orders", "$5,000"]
    warning = [n.message for n in of_type(events, "Notice") if "not found" in n.message]
    assert warning == ["The answer states 10:05-12:52 UTC on 15 August 2024, 120 orders, $5,000: "
                       "not found in anything the run read."]
