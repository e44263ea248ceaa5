"""The engine refuses copied feedback and a rebound `context`, says so to the root, and
counts the refusals (real engine, real worker, real HTTP to the scripted server)."""

from tests.integration.engine_helpers import Doc, run


async def test_refused_blocks_are_told_to_the_root_and_counted(server):
    server.script("root", replies=[
        "Here.\n```repl\nprint(context.count('ERROR'))\nTraceback (most recent call last):\n"
        "  File \"<cell 1>\", line 1\nNameError: name 'x' is not defined\n```\n"
        "```repl\ncontext = 'SECRET_CODE=1'\n```\n"
        "```\nrepl\nn = context.count('ERROR')\nprint('errors:', n)\n```",
        "```repl\nFINAL(str(n))\n```",
    ])
    result, events = await run(server, "How many ERROR lines?", docs=[Doc("a.log", "ok\nERROR one\nERROR two\n")],
                               max_depth=0)
    assert result.status == "finished" and result.answer == "2"
    cells = [e for e in events if e.type == "CellExecuted"]
    assert [c.code for c in cells] == ["n = context.count('ERROR')\nprint('errors:', n)", "FINAL(str(n))"]
    notices = [e.message for e in events if e.type == "Notice"]
    assert any("Block 1 was not run (feedback)" in m for m in notices)
    assert any("Block 2 was not run (protected)" in m for m in notices)
    assert result.totals["refused_cells"] == 2 and result.totals["cells"] == 2
    assert result.totals["syntax_errors"] == 0
    feedback = server.requests_for("root")[1].messages[-1]["content"]
    assert feedback.startswith("REPL output for your turn 1")
    assert "[block 1 of 3: not run]\nThis block was not run: line 2 (`Traceback (most recent call last):`)" in feedback
    assert "[block 2 of 3: not run]\nThis block was not run: it rebinds `context` (line 1)" in feedback
    assert "[block 3 of 3: ran]\nerrors: 2" in feedback


async def test_a_rebinding_that_slips_through_is_restored_and_said_plainly(server):
    server.script("root", replies=["```repl\nglobals()['context'] = 'mine'\n```",
                                   "```repl\nFINAL(str(context.startswith('=== a.log')))\n```"])
    result, events = await run(server, docs=[Doc("a.log", "ok\n")], max_depth=0)
    assert result.answer == "True"
    feedback = server.requests_for("root")[1].messages[-1]["content"]
    assert "`context` restored after this cell: these names belong to the REPL" in feedback
