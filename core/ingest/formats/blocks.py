"""Builds a document's text out of addressed blocks (pages, sheets, slides,
messages, chapters) and records a Span for each.

Each block starts with a marker line such as "--- page 3 ---" so the model can
see the structure in `context` too; the span covers marker and body, and line
1 of the block is the first line after the marker.
"""

from __future__ import annotations

from core.ingest.model import Span


class BlockText:
    def __init__(self) -> None:
        self._parts: list[str] = []
        self._length = 0
        self.spans: list[Span] = []
        self.blocks_with_text = 0

    def add(self, address: str, body: str, marker: str | None = None) -> None:
        if self._parts:
            self._append("\n\n")
        start = self._length
        self._append(f"--- {marker or address} ---\n")
        self._append(body.rstrip("\n"))
        if body.strip():
            self.blocks_with_text += 1
        self.spans.append(Span(start, self._length, address))

    def _append(self, piece: str) -> None:
        self._parts.append(piece)
        self._length += len(piece)

    def text(self) -> str:
        return "".join(self._parts)
