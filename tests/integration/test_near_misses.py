"""Near misses in the root's code that have one obvious meaning, served and told (issue 25):
real engine, real worker subprocess, scripted server over HTTP."""

from tests.integration.engine_helpers import Doc, code, of_type, root_prompts, run

DOCS = [Doc("logs/shop.log", "2024-08-14 ERROR pay failed\n2024-08-14 INFO ok\n"), Doc("notes.txt", "hello\n")]


async def test_open_of_a_document_name_reads_the_document_and_the_root_is_told(server):
    server.script("root", replies=[
        code("with open('shop.log') as f:\n    lines = f.read().splitlines()\nprint(len(lines), lines[0])"),
        code("FINAL(str(len(lines)))"),
    ])
    result, events = await run(server, "How many lines?", DOCS, mode="rlm")
    assert result.status == "finished" and result.answer == "2"
    cell = of_type(events, "CellExecuted")[0]
    assert cell.error is None and cell.stdout.strip() == "2 2024-08-14 ERROR pay failed"
    told = ("[note: there is no file 'shop.log'; open() read the document 'logs/shop.log' from `documents` "
            "(it is also in `context`). Use `documents` next time.]")
    assert told in cell.stderr
    assert told in root_prompts(server)[1]           # the root saw it in its next prompt


async def test_open_of_a_name_that_is_no_document_fails_and_names_the_documents(server):
    server.script("root", replies=[
        code("print(open('sales.csv').read())"),
        code("with open('out.txt', 'w') as f:\n    f.write('mine')\nprint(open('out.txt').read())"),
        code("FINAL('done')"),
    ])
    result, events = await run(server, "What is in the documents?", DOCS, mode="rlm")
    missing, own = of_type(events, "CellExecuted")[:2]
    assert "FileNotFoundError" in missing.error
    assert "the documents are in `documents` and `context`, not files ('logs/shop.log', 'notes.txt')" \
        in missing.error
    assert "note:" not in missing.stderr
    assert own.error is None and own.stdout.strip() == "mine" and "note:" not in own.stderr   # a real file


async def test_the_modules_the_prompt_names_are_imported_before_the_first_cell(server):
    # The real 1.5B model wrote csv.DictReader(io.StringIO(...)) without importing io.
    server.script("root", replies=[
        code("rows = list(csv.DictReader(io.StringIO('a,b\\n1,2\\n')))\n"
             "print(rows[0]['b'], re.sub('x', 'y', 'x'), json.dumps(math.floor(2.5)), collections.Counter('aa')['a'])"),
        code("print(sorted(SHOW_VARS()))"),
        code("FINAL('done')"),
    ])
    result, events = await run(server, "What is in the documents?", DOCS, mode="rlm")
    first, listing = of_type(events, "CellExecuted")[:2]
    assert first.error is None and first.stdout.strip() == "2 y 2 2"
    assert listing.stdout.strip().splitlines()[-1] == "['rows']"     # modules are not the model's variables
    system = server.requests_for("root")[0].messages[0]["content"]
    assert "re, io, csv, json, math and collections already are" in system


async def test_a_small_roots_answer_before_any_code_is_sent_back_once(server):
    # The real 1.5B model's first reply was FINAL("2023-Q4"), a guess: no code had run.
    server.script("tiny-1.5b", replies=[
        'FINAL("2023-Q4")',
        code("print(len(documents))"),
        'FINAL("2 documents")',
    ])
    result, events = await run(server, "How many documents?", DOCS, mode="rlm", root_model="openai/tiny-1.5b")
    assert result.status == "finished" and result.answer == "2 documents"
    second = server.requests_for("tiny-1.5b")[1].messages[-1]["content"]
    assert "FINAL('2023-Q4') did not end the run: no code has run yet" in second
    assert any("answered '2023-Q4' before any code ran" in n.message for n in of_type(events, "Notice"))
    # Once only: a second answer without code is the answer. A large root is never sent back.
    server.script("tiny-1.5b", replies=['FINAL("2")', 'FINAL("2")'])
    again, _ = await run(server, "How many documents?", DOCS, mode="rlm", root_model="openai/tiny-1.5b")
    assert again.answer == "2" and again.totals["iterations"] == 2
    server.script("root", replies=['FINAL("2")'])
    large, _ = await run(server, "How many documents?", DOCS, mode="rlm")
    assert large.answer == "2" and large.totals["iterations"] == 1


async def test_a_small_roots_first_turn_shows_each_documents_first_lines(server):
    # The real 1.5B model guessed a CSV's columns: 500 characters of `context` showed only the
    # first document. A small root sees every listed document's first lines; a large one does not.
    docs = DOCS + [Doc("t.csv", "city,guests\nOslo,3\nBergen,4\n")]
    server.script("tiny-1.5b", replies=[code("print(1)"), code("FINAL('x')")])
    await run(server, "What?", docs, mode="rlm", root_model="openai/tiny-1.5b")
    first = server.requests_for("tiny-1.5b")[0].messages[1]["content"]
    assert f"- documents[2]: t.csv ({len(docs[2].text)} chars; a table, its rows also in `tables`):\n    city,guests\n    Oslo,3\n" in first
    assert "- documents[1]: notes.txt (6 chars):\n    hello\n" in first and "Bergen" not in first
    server.script("root", replies=[code("print(1)"), code("FINAL('x')")])
    await run(server, "What?", docs, mode="rlm")
    large = server.requests_for("root")[0].messages[1]["content"]
    assert "first lines" not in large and "The first characters of `context`:" in large


async def test_a_small_root_is_shown_at_most_4000_characters_of_a_cells_output(server):
    # The real 1.5B model printed a whole 149,422-character log: 20,000 shown characters are a
    # third of its 16k window per turn.
    big = [Doc("big.log", "".join(f"line {i}\n" for i in range(5000)))]
    for model, limit in (("tiny-1.5b", 4_000), ("root", 20_000)):
        server.script(model, replies=[code("print(context)"), code("FINAL('x')")])
        _, events = await run(server, "What?", big, mode="rlm", root_model=f"openai/{model}")
        shown = of_type(events, "CellExecuted")[0].output_for_model
        assert limit - 200 < len(shown) <= limit + 100 and "characters cut" in shown


async def test_a_run_capped_after_a_sent_back_answer_carries_that_answer(server):
    # The answer the root gave before any code ran was sent back; the wall-clock cap then ends
    # the run while its next cell runs: the capped outcome carries the last answer it gave.
    server.script("tiny-1.5b", replies=['FINAL("2023-Q4")', code("import time\ntime.sleep(60)")])
    result, events = await run(server, "Which quarter?", DOCS, mode="rlm", root_model="openai/tiny-1.5b",
                               max_wall_seconds=8, cell_timeout_s=60)
    assert result.status == "capped" and "wall-clock" in result.error
    assert result.answer == "2023-Q4"
    assert of_type(events, "CellStarted") and not of_type(events, "CellExecuted")   # capped inside the cell


async def test_a_search_for_capitals_in_lowercased_text_is_served_in_lower_case_and_told(server):
    # The real 1.5B model searched `"Inspector" in line.lower()` (never true), printed [] and sent
    # the same block until the time cap. The literal is compared in the case the text was put in.
    docs = [Doc("report.md", "Inspector: Cora Vinter. Result: passed.\nInspector: Agnes Holt. Result: FAILED.\n")]
    server.script("root", replies=[
        code('lines = documents[0]["text"].splitlines()\n'
             'hits = [l for l in lines if "Inspector" in l.lower() and not "PASSED" in l.lower()]\n'
             'print(hits, [l for l in lines if l.upper().startswith(("inspector", "x"))] == lines,\n'
             '      sum(l.lower().count("Result") for l in lines), "Inspector" in lines[0])'),
        code('print(lines[1].lower() == "INSPECTOR: AGNES HOLT. RESULT: FAILED.")'),
        code("FINAL(hits[0])"),
    ])
    result, events = await run(server, "Which inspector failed a ship?", docs, mode="rlm")
    assert result.status == "finished" and result.answer == "Inspector: Agnes Holt. Result: FAILED."
    first, second = of_type(events, "CellExecuted")[:2]
    assert first.error is None
    assert first.stdout.strip() == "['Inspector: Agnes Holt. Result: FAILED.'] True 2 True"
    assert ("[note: line 2 searched lower-case text (.lower()) for 'Inspector'; it was searched as 'inspector', "
            "and the output above is what that found. Write the word in lower case next time.]") in first.stderr
    assert "for 'PASSED'" in first.stderr and "searched upper-case text (.upper()) for 'inspector'" in first.stderr
    assert "for 'x'" in first.stderr and "for 'Result'" in first.stderr
    assert first.stderr.count("[note:") == 5     # the literal compared with text as it is stays
    assert second.stdout.strip() == "True" and "for 'INSPECTOR: AGNES HOLT" in second.stderr
    assert "searched lower-case text (.lower()) for 'Inspector'" in root_prompts(server)[1]   # the root saw it
