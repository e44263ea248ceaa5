"""A contract corpus and a scripted model that answers grid cells about it, for the grid's
tests and benchmark. Each document states its party, renewal date, liability cap and
whether it renews itself; the scripted model reads the document it was sent (a plain
call's prompt) and answers the column's question with a citation of the line."""

from __future__ import annotations

import json
import re
from pathlib import Path

from tests.support.openai_server import Reply

COLUMNS = [
    {"name": "renewal", "question": "What is the renewal date?", "type": "date"},
    {"name": "cap", "question": "What is the liability cap in dollars?", "type": "number"},
    {"name": "auto", "question": "Does the contract renew automatically?", "type": "yes/no",
     "instruction": "Count an evergreen clause as automatic renewal."},
]
LINES = {"renewal": 2, "cap": 3, "auto": 4}


def contract(i: int, filler_lines: int = 0) -> str:
    renewal = "early spring" if i % 10 == 7 else f"2025-{1 + i % 12:02d}-{1 + i % 28:02d}"
    return (f"Party: Acme {i}\nRenewal date: {renewal}\nLiability cap: ${(i + 1) * 1000:,}\n"
            f"Automatic renewal: {'yes' if i % 2 else 'no'}\n" + "Boilerplate clause text.\n" * filler_lines)


def write_corpus(folder: Path, n: int, filler_lines: int = 0) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    return [_write(folder / f"contract_{i:03d}.txt", contract(i, filler_lines)) for i in range(n)]


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def write_columns(path: Path, columns: list[dict] = COLUMNS) -> Path:
    path.write_text("\n".join(json.dumps(c) for c in columns) + "\n")
    return path


def expected(i: int) -> dict:
    """What each typed column should hold for contract i (None: flagged)."""
    return {"renewal": None if i % 10 == 7 else f"2025-{1 + i % 12:02d}-{1 + i % 28:02d}",
            "cap": (i + 1) * 1000, "auto": bool(i % 2)}


def answer_cell(request) -> Reply:
    """The scripted model's answer to one cell's plain call (usage: 100 in, 10 out)."""
    text = request.prompt
    path = re.search(r"=== (.+?) ===", text).group(1)
    body = text.split(" ===\n", 1)[1]
    lines = body.splitlines()
    for name, column in ((c["name"], c) for c in COLUMNS):
        if column["question"] in text:
            line = lines[LINES[name] - 1]
            value = line.split(": ", 1)[1]
            if name == "cap":
                value = value.lstrip("$")
            return Reply(f"{value} [doc:{path}:line {LINES[name]}]", usage=(100, 10))
    return Reply("not stated", usage=(100, 10))


def _column_of(request) -> dict:
    text = json.dumps(request.messages)
    return next(c for c in COLUMNS if c["question"] in text)


def document_root(request) -> str:
    """The root of one cell's RLM (mode rlm): one sub-call over its document, then FINAL."""
    q = _column_of(request)["question"]
    return ("```repl\nd = documents[0]\n"
            f"out = llm_query({q!r} + '\\n=== ' + d['path'] + ' ===\\n' + d['text'])\nFINAL(out)\n```")


def column_root(request) -> str:
    """The root of one RLM over a whole column: a sub-call per document, a table back."""
    q = _column_of(request)["question"]
    return ("```repl\n"
            f"outs = llm_query_batched([{q!r} + '\\n=== ' + d['path'] + ' ===\\n' + d['text'] for d in documents])\n"
            "table = '\\n'.join(d['path'] + '\\t' + o for d, o in zip(documents, outs))\nFINAL_VAR('table')\n```")
