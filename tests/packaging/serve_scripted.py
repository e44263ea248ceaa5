"""The scripted OpenAI-compatible server for the bundle's smoke test.

    .venv/bin/python tests/packaging/serve_scripted.py

Prints its base URL on the first line of stdout, then serves until it gets
SIGTERM or SIGINT (or --max-seconds pass). Runs from the dev
venv: the bundle under test only talks to it over HTTP on 127.0.0.1.

The root model replies once, with code that imports standard-library modules
(they must be in the bundle for model code), reads `documents`, makes one
batched sub-call and one nested RLM call (its own frozen REPL worker), then
hands over FINAL. The sub model upper-cases its prompt. For the folder made by
`make_docs()` and `--max-depth 2` the answer is EXPECTED_ANSWER.
"""

from __future__ import annotations

import signal
import sys
import threading
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

ROOT_CODE = """\
import re, json, collections, statistics, textwrap, difflib, csv, io, math, datetime
docs = sorted(documents, key=lambda d: d['path'])
counts = [int(re.search(r'\\d+', d['text']).group()) for d in docs]
out = llm_query_batched([d['path'] for d in docs])
inner = rlm_query('inner task', context='nested material 12345')
FINAL(', '.join(out) + ' | total=' + str(sum(counts)) + ' | nested=' + inner)
"""
# The nested RLM (started by rlm_query, with its own REPL worker) answers from its context.
NESTED_CODE = "FINAL(context.split()[-1])\n"
NESTED_QUESTION = "inner task"
EXPECTED_ANSWER = "ONE.TXT, SUB/TWO.MD | total=7 | nested=12345"
MAX_DEPTH = "2"      # --max-depth for the ask: rlm_query starts a nested RLM


def code_reply(code: str) -> str:
    return f"Let me look at the documents.\n```repl\n{code}```"


def root_reply(request) -> str:
    first_user = next((m.get("content") for m in request.messages if m.get("role") == "user"), "")
    nested = f"Question: {NESTED_QUESTION}" in str(first_user)
    return code_reply(NESTED_CODE if nested else ROOT_CODE)


def make_docs(folder: Path) -> Path:
    """Two small documents in a folder with a subfolder."""
    (folder / "sub").mkdir(parents=True, exist_ok=True)
    (folder / "one.txt").write_text("apples: 3\n", encoding="utf-8")
    (folder / "sub" / "two.md").write_text("# pears\npears: 4\n", encoding="utf-8")
    return folder


def start():
    from tests.support.openai_server import ScriptedOpenAI
    server = ScriptedOpenAI().start()
    server.script("root", fn=root_reply)
    server.script("sub", fn=lambda request: request.prompt.upper())
    return server


def main(argv: list[str] | None = None) -> int:
    import argparse
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-seconds", type=float, default=900.0,
                        help="stop on its own after this long (default 900)")
    args = parser.parse_args(argv)
    server = start()
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    print(server.url, flush=True)
    stop.wait(args.max_seconds)
    print(f"serve_scripted: served {len(server.history)} requests", file=sys.stderr)
    server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
