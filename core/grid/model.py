"""What a review grid is: columns (questions, each with a type and an optional
instruction) over rows (documents), and a cell per pair.

    columns = parse_columns(Path("questions.jsonl").read_text(), "questions.jsonl")
    cell_question(column, "contracts/acme.pdf")     # what the cell's run is asked

COLUMNS is a text file with one question per line (type text), or JSON lines
{"name", "question", "type", "instruction"} (only "question" is required).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from functools import lru_cache

TYPES = ("text", "number", "date", "yes/no", "list", "excerpt")
STATES = ("queued", "running", "done", "failed", "limited")
ENDED = ("done", "failed", "limited")


class ColumnError(ValueError):
    """A column that cannot be asked (the message names the line and what is wrong)."""


@dataclass(frozen=True)
class Column:
    name: str
    question: str
    type: str = "text"
    instruction: str = ""

    def public_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class Row:
    path: str
    sha256: str = ""
    chars: int = 0
    error: str | None = None       # why the document could not be read (its cells fail with it)


def column(question: str, *, name: str = "", type: str = "text", instruction: str = "",
           where: str = "a column") -> Column:
    """A checked Column: a question that is not empty, a known type."""
    question = (question or "").strip()
    if not question:
        raise ColumnError(f"{where}: the question is empty")
    kind = (type or "text").strip().lower().replace("yes_no", "yes/no").replace("yesno", "yes/no")
    if kind == "boolean":
        kind = "yes/no"
    if kind not in TYPES:
        raise ColumnError(f"{where}: unknown type {type!r} (one of {', '.join(TYPES)})")
    return Column((name or "").strip() or question, question, kind, (instruction or "").strip())


def parse_columns(text: str, source: str = "COLUMNS") -> list[Column]:
    """Columns from a text file: one question per line, or one JSON object per line.
    Blank lines and lines starting with # are skipped; names must be unique."""
    columns: list[Column] = []
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        where = f"{source} line {number}"
        if stripped.startswith(("{", "[")):
            try:
                item = json.loads(stripped)
            except json.JSONDecodeError as exc:
                raise ColumnError(f"{where}: not valid JSON ({exc.msg})") from None
            if not isinstance(item, dict):
                raise ColumnError(f"{where}: expected a JSON object")
            unknown = set(item) - {"name", "question", "type", "instruction"}
            if unknown:
                raise ColumnError(f"{where}: unknown field(s) {', '.join(sorted(unknown))}")
            if not all(isinstance(item.get(k, ""), str) for k in ("name", "question", "type", "instruction")):
                raise ColumnError(f"{where}: name, question, type and instruction must be text")
            columns.append(column(item.get("question", ""), name=item.get("name", ""),
                                  type=item.get("type", "text"), instruction=item.get("instruction", ""),
                                  where=where))
        else:
            columns.append(column(stripped, where=where))
    if not columns:
        raise ColumnError(f"{source}: no questions (one per line, or JSON lines with a \"question\")")
    seen: set[str] = set()
    for c in columns:
        if c.name in seen:
            raise ColumnError(f"{source}: two columns are named {c.name!r}; give each a different name")
        seen.add(c.name)
    return columns


@lru_cache(maxsize=1)
def _shapes() -> dict[str, str]:
    from core.engine.prompts import prompts_dir
    lines = (prompts_dir() / "grid_types.md").read_text(encoding="utf-8").splitlines()
    return {k.strip(): v.strip() for k, _, v in (ln.partition(":") for ln in lines if ":" in ln)}


def cell_question(col: Column, path: str) -> str:
    """What the run of the cell (this column, the document at `path`) is asked."""
    from core.engine.prompts import fill
    return fill("grid_cell.md", question=col.question, instruction=col.instruction, path=path,
                shape=_shapes()[col.type])
