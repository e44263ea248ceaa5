"""Cells in a real worker: context layout, persistence, errors, FINAL, get_var."""

from __future__ import annotations

import json

from core.repl import protocol as P
from core.repl.capture import CappedText
from core.repl.client import default_worker_command, worker_environment
from core.repl.connection import WorkerConnection
from core.repl.context_file import read_context, write_context

from .conftest import DOCS


async def run(repl, code: str, timeout_s: float = 10.0):
    return await repl.execute(code, timeout_s=timeout_s)


async def test_handshake_reports_pid_and_sandbox(repl):
    assert repl.pid and repl.pid > 0
    assert repl.sandbox["network"] in ("namespace", "audit-hook")
    assert repl.sandbox["memory_limit_mb"] == 4096
    assert repl.sandbox["core_dumps"] is False
    r = await run(repl, "import os; print(os.getpid())")
    assert r.stdout.strip() == str(repl.sandbox["pid_in_sandbox"])   # 2 inside a PID namespace


async def test_context_and_documents_layout(repl):
    r = await run(repl, "import json; print(json.dumps({'context': context, 'documents': documents}))")
    assert r.error is None, r.error
    data = json.loads(r.stdout)
    expected = "".join(f"=== {d['path']} ===\n{d['text']}\n\n" for d in DOCS)
    assert data["context"] == expected
    for doc, want in zip(data["documents"], DOCS):
        assert doc["path"] == want["path"]
        assert doc["text"] == want["text"]
        assert doc["chars"] == len(want["text"])
        assert data["context"][doc["offset"]:doc["offset"] + doc["chars"]] == want["text"]


def test_context_file_roundtrip_with_objects_and_surrogates(tmp_path):
    class Doc:
        def __init__(self, path, text):
            self.path, self.text = path, text
    docs = [Doc(tmp_path / "x.txt", "bad \ud800 char"), {"path": "y", "text": ""}]
    files = write_context(docs, tmp_path)
    context, documents = read_context(files.path, files.index_path)
    assert files.chars == len(context) and files.documents == 2
    assert documents[0]["text"] == "bad ? char"          # one char per unencodable one
    assert documents[1]["text"] == "" and documents[1]["path"] == "y"
    assert json.loads((tmp_path / "context.index.json").read_text())[1]["offset"] == documents[1]["offset"]


async def test_variables_persist_and_last_expression_is_echoed(repl):
    assert (await run(repl, "x = 41\ndef inc(v):\n    return v + 1")).error is None
    r = await run(repl, "inc(x)")
    assert r.stdout == "42\n"
    r = await run(repl, "y = None\ny")
    assert r.stdout == ""


async def test_overwritten_repl_names_are_restored(repl):
    r = await run(repl, "context = 'mine'\ndel llm_query\nFINAL = 3\nBudgetExceeded = None")
    assert r.error is None
    assert "restored" in r.stderr and "llm_query" in r.stderr
    r = await run(repl, "print(context.startswith('=== notes/a.txt'), callable(llm_query), "
                        "callable(FINAL), issubclass(BudgetExceeded, Exception))")
    assert r.stdout.split() == ["True"] * 4


async def test_syntax_error_is_flagged_with_line(repl):
    r = await run(repl, "x = 1\nif x\n    print(x)")
    assert r.is_syntax_error and r.error_type == "SyntaxError"
    assert "line 2" in r.error and "<cell" in r.error
    r = await run(repl, "return 5")          # a compile-time error, not a parse error
    assert r.is_syntax_error and "return" in r.error
    r = await run(repl, "x = 1\x00")
    assert r.is_syntax_error and "null" in r.error
    r = await run(repl, "y = " + "(" * 5000 + ")" * 5000)
    assert r.error is not None and r.fault is None
    assert (await run(repl, "print('alive')")).stdout == "alive\n"


async def test_runtime_error_traceback_shows_only_user_frames(repl):
    r = await run(repl, "def f(d):\n    return d['missing']\n\nf({})")
    assert not r.is_syntax_error and r.error_type == "KeyError"
    assert 'File "<cell 1>", line 4' in r.error and "return d['missing']" in r.error
    assert "worker.py" not in r.error and "namespace.py" not in r.error
    r = await run(repl, "llm_query(None)")
    assert r.error_type == "TypeError" and "namespace.py" not in r.error


async def test_sys_exit_is_an_ordinary_error(repl):
    r = await run(repl, "import sys; sys.exit(4)")
    assert r.error_type == "SystemExit" and r.fault is None
    assert (await run(repl, "print('alive')")).stdout == "alive\n"


async def test_final_last_call_wins_and_cell_continues(repl):
    r = await run(repl, "FINAL('first')\nFINAL(42)\nprint('after')")
    assert r.final == {"kind": "FINAL", "value": "42"}
    assert r.stdout == "after\n"
    r = await run(repl, "print('no final here')")
    assert r.final is None


async def test_final_var_by_name_by_value_and_identity(repl):
    await run(repl, "answer = 'the answer'\nnums = [1, 2]")
    r = await run(repl, "FINAL_VAR('answer')")
    assert r.final == {"kind": "FINAL_VAR", "value": "the answer"}
    r = await run(repl, "FINAL_VAR(nums)")
    assert r.final == {"kind": "FINAL_VAR", "value": "[1, 2]"}
    r = await run(repl, "FINAL_VAR(answer)")            # a str that IS a variable's value
    assert r.final == {"kind": "FINAL_VAR", "value": "the answer"}


async def test_final_var_missing_variable_tells_the_model(repl):
    await run(repl, "answer = 1")
    r = await run(repl, "FINAL_VAR('missing')\nprint('went on')")
    assert r.final is None and r.error is None
    assert "FINAL_VAR: no variable named 'missing'" in r.stderr and "answer" in r.stderr
    assert r.stdout == "went on\n"


async def test_get_var(repl):
    await run(repl, "report = {'a': 1}")
    assert await repl.get_var("report") == (True, "{'a': 1}", None)
    assert (await repl.get_var("'report'"))[0] is True     # quotes tolerated
    found, value, error = await repl.get_var("nothing")
    assert not found and value is None and "no variable named 'nothing'" in error and "report" in error


async def test_show_vars_lists_user_variables_only(repl):
    await run(repl, "import re\nn = 3\ntext = 'x'\ndef helper(): pass\n_private = 1")
    r = await run(repl, "v = SHOW_VARS()\nprint(sorted(v.items()))")
    lines = r.stdout.splitlines()
    assert lines[:3] == ["helper: function", "n: int", "text: str"]
    assert lines[3] == "[('helper', 'function'), ('n', 'int'), ('text', 'str')]"
    r = await run(repl, "SHOW_VARS()")     # as the last expression: printed once, not echoed
    assert r.stdout.count("n: int") == 1 and "{" not in r.stdout


def test_capped_text_keeps_head_and_tail_and_counts():
    buf = CappedText(head_chars=10, tail_chars=5)
    for piece in ("0123456", "789abc", "defgh", "X" * 1000, "tail!"):
        buf.write(piece)
    assert buf.chars == 7 + 6 + 5 + 1000 + 5
    value = buf.getvalue()
    assert value.startswith("0123456789") and value.endswith("tail!")
    assert f"[... {buf.chars - 15:,} characters omitted ...]" in value
    small = CappedText(head_chars=10, tail_chars=5)
    small.write("abc")
    assert small.getvalue() == "abc"


async def test_handshake_version_mismatch_is_fatal_for_the_worker(tmp_path):
    async def no_calls(msg):
        return []
    conn = await WorkerConnection.spawn(default_worker_command(), cwd=str(tmp_path),
                                        env=worker_environment(str(tmp_path), str(tmp_path)),
                                        serve_sub_call=no_calls)
    try:
        reply = await conn.request(P.HELLO, timeout=10, version=P.PROTOCOL_VERSION + 1)
        assert reply["type"] == P.ERROR and "version mismatch" in reply["message"]
        assert await conn.wait_exit(10) == 2
    finally:
        await conn.dispose()


async def test_lowercase_final_is_taken_as_final_and_told(repl):
    r = await run(repl, "final('The code is 12')")
    assert r.final == {"kind": "FINAL", "value": "The code is 12"} and r.error is None
    assert "`final(...)` was taken as `FINAL(...)`" in r.stderr
    r = await run(repl, "answer = 'forty-two'\nfinal_var('answer')")
    assert r.final == {"kind": "FINAL_VAR", "value": "forty-two"}
    assert "`final_var(...)` was taken as `FINAL_VAR(...)`" in r.stderr
    r = await run(repl, "Final('The code is 13')")              # the real 1.5B model's spelling
    assert r.final == {"kind": "FINAL", "value": "The code is 13"} and r.error is None
    assert "`Final(...)` was taken as `FINAL(...)`" in r.stderr
    r = await run(repl, "print(sorted(SHOW_VARS()))")
    assert r.stdout.strip().splitlines()[-1] == "['answer']"   # the aliases are not the model's variables


async def test_a_final_the_model_defined_itself_is_its_own(repl):
    r = await run(repl, "final = 3\nprint(final + 1)")
    assert r.stdout.strip() == "4" and r.final is None and not r.stderr
    r = await run(repl, "def final_var(x):\n    return x * 2\nprint(final_var(21))")
    assert r.stdout.strip() == "42" and r.final is None
