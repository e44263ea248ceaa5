"""The REPL's where(offset) helper, in a real worker (both sandbox modes)."""

import pytest

from core.repl.client import ReplClient, default_worker_command
from tests.support.trust_runs import DOCS


async def _no_calls(request):
    return [{"error": {"type": "SubCallError", "message": "none"}} for _ in request.prompts]


@pytest.mark.parametrize("extra", [[], ["--no-namespace"]], ids=["namespace", "audit-hook"])
async def test_where_names_the_document_and_address_of_an_offset(extra):
    repl = ReplClient(on_sub_call=_no_calls, worker_command=default_worker_command() + extra,
                      memory_limit_mb=2048)
    await repl.start()
    try:
        await repl.load_context(DOCS)
        result = await repl.execute(
            "print(where(context.index('Revenue in Q3')))\n"
            "print(where(context.index('gamma')))\n"
            "print(where(0))\n"                                  # a header line: start of its document
            "print(where(3, 'report.pdf'))\n"
            "print(sorted(documents[1]))\n"
            "for bad in (-1, len(context) + 5):\n"
            "    try:\n        where(bad)\n    except ValueError as e:\n        print('ValueError')\n"
            "where = None", timeout_s=20)
        assert result.error is None, result.error
        assert result.stdout.splitlines() == [
            "report.pdf:page 2, line 1", "notes.txt:line 3", "notes.txt:line 1", "report.pdf:page 1",
            "['chars', 'offset', 'path', 'text']", "ValueError", "ValueError"]
        again = await repl.execute("print(where(len(context) - 1))", timeout_s=20)   # restored after the cell
        assert again.stdout.strip() == "report.pdf:page 2, line 2"
    finally:
        await repl.close()
