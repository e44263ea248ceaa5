"""Control characters made visible, for text that came from a model, a cell or a file name.

A terminal acts on C0 and C1 control characters: ESC starts a sequence that can set the
clipboard (OSC 52), change the window title, move the cursor or erase the line above
(and so wipe a sandbox warning and print a fake one); CR and BS overwrite what was shown.
`escape_controls` writes every C0 character but newline and tab, DEL and every C1
character as `\\u00XX`: inert on a terminal, readable, and in a JSON string still the same
character. The CLI writes everything through it (`EscapingStream`), the window's
labels show what it returns, and every export but JSON (Markdown, HTML, CSV, and grid
exports cell by cell with `escape_cells`) is written through it: `cat run.md` in a terminal
sets no clipboard and no title.
"""

from __future__ import annotations

import io
from typing import Iterable, TextIO

_KEEP = {"\n", "\t"}
CONTROLS = [chr(c) for c in (*range(0x00, 0x20), 0x7F, *range(0x80, 0xA0)) if chr(c) not in _KEEP]
_TABLE = {ord(c): f"\\u{ord(c):04x}" for c in CONTROLS}


def escape_controls(text: str) -> str:
    """`text` with C0 (but newline and tab), DEL and C1 characters written as `\\u00XX`."""
    return text.translate(_TABLE)


def escape_cells(values: Iterable[object]) -> list[object]:
    """A row of an export (CSV, XLSX): every string escaped as above, other values as they are."""
    return [escape_controls(v) if isinstance(v, str) else v for v in values]


def has_controls(text: str) -> bool:
    return any(ord(c) in _TABLE for c in text)


class EscapingStream(io.TextIOBase):
    """A text stream that escapes control characters in everything written to it; the
    app's own control output (the progress line's carriage return) goes through
    `write_control`."""

    def __init__(self, inner: TextIO) -> None:
        super().__init__()
        self.inner = inner

    def write(self, text: str) -> int:
        self.inner.write(escape_controls(text))
        return len(text)

    def write_control(self, text: str) -> None:
        self.inner.write(text)

    def flush(self) -> None:
        self.inner.flush()

    def isatty(self) -> bool:
        return self.inner.isatty()

    def fileno(self) -> int:
        return self.inner.fileno()

    @property
    def encoding(self) -> str:   # type: ignore[override]
        return getattr(self.inner, "encoding", "utf-8")

    @property
    def errors(self) -> str | None:   # type: ignore[override]
        return getattr(self.inner, "errors", None)

    def writable(self) -> bool:
        return True


def carriage_return(stream: TextIO) -> None:
    """Back to the start of the line: the one control character the CLI itself writes."""
    write = getattr(stream, "write_control", None)
    (write or stream.write)("\r")
