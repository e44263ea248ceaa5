"""Citations in Markdown text: `[doc:PATH:ADDRESS]` as links, dangling ones flagged.

The transcript renders a reply or the answer through `CitationText.render(md)`:
each citation the resolver found becomes a link `doc:<quoted body>`; one that
points to nothing is struck through, red, with a warning sign, and its link
still opens the source viewer (which says what is wrong). `tooltip(href)` gives
the text shown when the pointer rests on a citation.

The resolver is injected (app/trust_glue.py: core.ingest.citations over the
run's documents), so this module only formats:

    resolve(text) -> list[CitationMark]
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable
from urllib.parse import quote, unquote

from ui.plain_text import markdown_html

HREF_PREFIX = "doc:"
WARNING_SIGN = "\u26a0"
_BODY_STYLE = re.compile(r"<body style=\"[^\"]*\">")
_STRUCK_LINK = re.compile(r"(<a href=\"doc:[^\"]*\"><span style=\"[^\"]*line-through[^\"]*?)color:#[0-9a-fA-F]{6};")


@dataclass(frozen=True)
class CitationMark:
    """One citation found in a text: where it is in that text, what it says,
    whether it resolved, and why not."""
    start: int            # [start, end) of "[doc:...]" in the text
    end: int
    body: str             # "PATH:ADDRESS" (what follows "doc:")
    path: str
    address: str
    ok: bool
    reason: str = ""      # why it points to nothing ("no document ...", "no such line ...")
    doc_range: tuple[int, int] | None = None    # the passage in the document's text


def href_for(body: str) -> str:
    return HREF_PREFIX + quote(body, safe="")


def body_of(href: str) -> str:
    """The citation body ("PATH:ADDRESS") of a `doc:` link."""
    return unquote(href[len(HREF_PREFIX):]) if href.startswith(HREF_PREFIX) else href


def _escape_label(text: str) -> str:
    return re.sub(r"([\\`*_\[\]<>~#|])", r"\\\1", text)


class CitationText:
    """Formats citations for the transcript; `resolve` finds and checks them."""

    def __init__(self, resolve: Callable[[str], list[CitationMark]], error_color: str = "#c53030") -> None:
        self.resolve = resolve
        self.error_color = error_color
        self.last_marks: list[CitationMark] = []
        self._reasons: dict[str, str] = {}

    def set_error_color(self, color: str) -> None:
        """The colour a dangling citation is struck in (the theme's error colour)."""
        self.error_color = color

    def markdown(self, text: str) -> tuple[str, list[CitationMark]]:
        """The Markdown with citations turned into links (dangling ones struck).
        One bracket may hold several citations: they become links side by side."""
        marks = sorted(self.resolve(text), key=lambda m: m.start)
        out: list[str] = []
        at = 0
        groups: dict[tuple[int, int], list[CitationMark]] = {}
        for mark in marks:
            groups.setdefault((mark.start, mark.end), []).append(mark)
        for (start, end), group in groups.items():
            if start < at:
                continue
            out.append(text[at:start])
            out.append("; ".join(self._link(mark) for mark in group))
            at = end
        out.append(text[at:])
        return "".join(out), marks

    def _link(self, mark: CitationMark) -> str:
        label = _escape_label(f"{mark.path}, {mark.address}" if mark.address else mark.path)
        link = f"[{label}](<{href_for(mark.body)}>)"
        if mark.ok:
            return link
        self._reasons[mark.body] = mark.reason or "this citation points to nothing"
        return f"~~{link}~~ {WARNING_SIGN}"

    def render(self, text: str) -> str | None:
        """Rich text (HTML) for a label, or None when the text cites nothing."""
        if "[doc:" not in text:
            return None
        md, marks = self.markdown(text)
        self.last_marks = marks
        if not marks:
            return None
        html = _BODY_STYLE.sub("<body>", markdown_html(md))      # raw HTML in the text stays text
        return _STRUCK_LINK.sub(lambda m: f"{m.group(1)}color:{self.error_color};", html)

    def tooltip(self, href: str) -> str:
        body = body_of(href)
        reason = self._reasons.get(body)
        if reason:
            return f"{WARNING_SIGN} [doc:{body}] points to nothing: {reason}"
        return f"Open [doc:{body}] in the source viewer"
