"""Near misses in model code that have one obvious meaning: served, and told.

A small root model writes `open('webshop.log').read()` although the documents are in
`context` and `documents`, not in files (the real Qwen2.5-Coder-1.5B did, issue 25). When
no such file can be opened and the name is that of exactly one loaded document (its path,
or the path's last part), `open` gives the document's text for reading instead, and the
cell's stderr says so, so the root learns where the documents are:

    [note: there is no file 'webshop.log'; open() read the document 'webshop.log' from
    `documents` (it is also in `context`). Use `documents` next time.]

The modules in PREIMPORTED are imported before the first cell (the prompts say so).

Nothing else changes: a file that exists (one the cell wrote) opens as before, a name that
matches no document or several raises the usual error (with the document names beside it),
and writing never goes to a document.
"""

from __future__ import annotations

import builtins
import io
import os
import sys
TYPE_CHECKING = False
if TYPE_CHECKING:   # (typing costs the worker's start ~8 ms of CPU)
    from typing import Any, Callable

if TYPE_CHECKING:
    Documents = Callable[[], list]


def _matching(name: str, documents: list) -> list[dict]:
    wanted = name.replace("\\", "/").lstrip("./")
    exact = [d for d in documents if str(d.get("path", "")) == wanted]
    if exact:
        return exact
    tail = wanted.rsplit("/", 1)[-1]
    return [d for d in documents if str(d.get("path", "")).rsplit("/", 1)[-1] == tail
            or str(d.get("path", "")).endswith("/" + wanted)]


def document_open(documents: Documents) -> Callable[..., Any]:
    """An `open` for model code: the real one, then a loaded document of that name."""
    real_open = builtins.open

    def open(file: Any, mode: str = "r", *args: Any, **kwargs: Any) -> Any:  # noqa: A001 - the name model code calls
        try:
            return real_open(file, mode, *args, **kwargs)
        except OSError as exc:
            if not isinstance(file, (str, os.PathLike)) or any(c in str(mode) for c in "wax+"):
                raise
            name = os.fspath(file)
            found = _matching(name, documents())
            if len(found) != 1:
                if found or documents():
                    paths = ", ".join(repr(d.get("path")) for d in (found or documents())[:10])
                    raise type(exc)(exc.errno, f"{exc.strerror}; the documents are in `documents` and "
                                               f"`context`, not files ({paths})", name) from None
                raise
            path, text = str(found[0].get("path")), str(found[0].get("text", ""))
            print(f"[note: there is no file {name!r}; open() read the document {path!r} from `documents` "
                  "(it is also in `context`). Use `documents` next time.]", file=sys.stderr)
            if "b" in str(mode):
                return io.BytesIO(text.encode("utf-8"))
            return io.StringIO(text)

    return open


# Imported before the first cell, and said so in the system prompts: the real 1.5B model
# wrote `csv.DictReader(io.StringIO(...))` without importing io (a NameError, a turn lost).
PREIMPORTED = ("re", "io", "csv", "json", "math", "collections")


def names(documents: Documents) -> dict[str, Any]:
    """The near-miss names model code gets, beside the REPL's own."""
    import importlib
    found: dict[str, Any] = {name: importlib.import_module(name) for name in PREIMPORTED}
    found["open"] = document_open(documents)
    return found
