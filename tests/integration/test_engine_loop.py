"""The RLM loop end to end: real engine, real REPL worker, litellm over real HTTP."""

from tests.integration.engine_helpers import Doc, code, of_type, root_prompts, run

DOCS = [Doc("notes/a.txt", "The secret code is XYZ-789.\n" + "filler line\n" * 50 + "TAIL-MARKER\n"),
        Doc("b.md", "# Report\nRevenue rose 12% in 2025.\n")]


async def test_probe_then_final_var_in_code(server):
    server.script("root", replies=[
        code("print(len(documents), len(context))\nprint(context[:40])"),
        code("import re\nhit = re.search(r'code is (\\S+)', context).group(1).rstrip('.')\n"
             "answer = f'The code is {hit}'\nFINAL_VAR('answer')"),
    ])
    result, events = await run(server, "What is the secret code?", DOCS)
    assert result.status == "finished"
    assert result.answer == "The code is XYZ-789"
    first = root_prompts(server)[0]
    # the root sees metadata and the question, never the documents themselves
    assert "What is the secret code?" in first and "2 documents" in first
    assert "TAIL-MARKER" not in first and "Revenue rose" not in first
    second = root_prompts(server)[1]
    assert "2 " in second and "=== notes/a.txt ===" in second
    cells = of_type(events, "CellExecuted")
    assert [c.error for c in cells] == [None, None]
    assert result.totals["iterations"] == 2 and result.totals["cells"] == 2
    seqs = [e.seq for e in events]
    assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)
    assert events[0].type == "RunStarted" and events[-1].type == "RunFinished"


async def test_context_layout_headers_and_offsets(server):
    server.script("root", replies=[code(
        "d = documents[1]\n"
        "ok = context[d['offset']:d['offset'] + d['chars']] == d['text']\n"
        "FINAL(f\"{ok} {context.splitlines()[0]} {d['path']}\")")])
    result, _ = await run(server, docs=DOCS)
    assert result.answer == "True === notes/a.txt === b.md"


async def test_python_and_untagged_fences_run(server):
    server.script("root", replies=[
        code("x = 20", tag="python") + "\n```\ny = 22\n```",
        code("FINAL(str(x + y))"),
    ])
    result, events = await run(server, docs=DOCS)
    assert result.answer == "42"
    assert len(of_type(events, "CellExecuted")) == 3


async def test_reply_without_code_gets_a_nudge(server):
    server.script("root", replies=["I think the answer is probably in the documents.",
                                   code("FINAL('done')")])
    result, _ = await run(server, docs=DOCS)
    assert result.answer == "done"
    assert "Nothing ran" in root_prompts(server)[1]


async def test_final_line_outside_code_after_code_ran(server):
    server.script("root", replies=[code("summary = 'built in the REPL'") + "\nFINAL_VAR(summary)"])
    result, _ = await run(server, docs=DOCS)
    assert result.answer == "built in the REPL"


async def test_final_text_line(server):
    server.script("root", replies=["The answer is clear.\nFINAL(Revenue rose 12%)"])
    result, _ = await run(server, docs=DOCS)
    assert result.answer == "Revenue rose 12%"


async def test_missing_final_var_is_reported_and_the_run_goes_on(server):
    server.script("root", replies=["FINAL_VAR(nothing_here)", code("FINAL('recovered')")])
    result, _ = await run(server, docs=DOCS)
    assert result.answer == "recovered"
    assert "nothing_here" in root_prompts(server)[1]


async def test_final_var_missing_inside_code_is_reported(server):
    server.script("root", replies=[code("FINAL_VAR('ghost')"), code("FINAL('ok')")])
    result, _ = await run(server, docs=DOCS)
    assert result.answer == "ok"
    assert "ghost" in root_prompts(server)[1]


async def test_mention_in_prose_does_not_end_the_run(server):
    server.script("root", replies=["I will call FINAL later, first I look.\n" + code("print(1)"),
                                   code("FINAL('end')")])
    result, _ = await run(server, docs=DOCS)
    assert result.answer == "end" and result.totals["iterations"] == 2


async def test_final_in_code_wins_over_text_and_stops_later_blocks(server):
    server.script("root", replies=[
        code("FINAL('from code')") + "\n" + code("print('never runs')") + "\nFINAL(from text)"])
    result, events = await run(server, docs=DOCS)
    assert result.answer == "from code"
    assert len(of_type(events, "CellExecuted")) == 1


async def test_cell_output_is_truncated_for_the_root(server):
    server.script("root", replies=[code("print('H' * 50_000 + 'MID' + 'T' * 50_000)"),
                                   code("FINAL('x')")])
    result, events = await run(server, docs=DOCS, max_output_chars=5_000)
    shown = root_prompts(server)[1]
    assert "MID" not in shown and "characters cut" in shown
    assert "HHHH" in shown and "TTTT" in shown
    assert len(of_type(events, "CellExecuted")[0].output_for_model) <= 5_100


async def test_syntax_errors_are_counted_and_reported(server):
    server.script("root", replies=[code("print('unclosed'"), code("FINAL('fixed')")])
    result, events = await run(server, docs=DOCS)
    assert result.answer == "fixed" and result.totals["syntax_errors"] == 1
    assert of_type(events, "CellExecuted")[0].is_syntax_error
    assert "SyntaxError" in root_prompts(server)[1]


async def test_iterations_run_out_then_one_final_request(server):
    server.script("root", replies=[code("print(1)"), code("print(2)"), "FINAL(best guess)"])
    result, events = await run(server, docs=DOCS, max_iterations=2)
    assert result.status == "capped" and result.answer == "best guess"
    turns = of_type(events, "RootTurnStarted")
    assert len(turns) == 3 and turns[-1].final_request
    assert "used all 2 turns" in root_prompts(server)[2]


async def test_iterations_run_out_without_answer(server):
    server.script("root", replies=[code("print(1)"), "still thinking"])
    result, _ = await run(server, docs=DOCS, max_iterations=1)
    assert result.status == "capped" and result.answer is None
    assert "without a final answer" in result.error


async def test_root_max_tokens_reaches_the_request(server):
    server.script("root", replies=[code("FINAL('x')")])
    await run(server, docs=DOCS, root_max_tokens=1234)
    assert server.requests_for("root")[0].max_tokens == 1234
    assert server.requests_for("root")[0].stream is True


async def test_root_tokens_are_streamed_as_events(server):
    server.script("root", replies=[code("FINAL('streamed answer here')")])
    _, events = await run(server, docs=DOCS)
    deltas = "".join(e.delta for e in of_type(events, "RootTokens"))
    assert deltas == of_type(events, "RootReplied")[0].text
    assert len(of_type(events, "RootTokens")) > 1


async def test_an_empty_final_answer_does_not_end_the_run(server):
    server.script("root", replies=[code("result = ''\nFINAL_VAR('result')"), "FINAL()",
                                   code("FINAL('the real answer')")])
    result, _ = await run(server, docs=DOCS)
    assert result.answer == "the real answer" and result.totals["iterations"] == 3
    assert "empty" in root_prompts(server)[1] and "empty" in root_prompts(server)[2]
