"""The answer as a report shows it: Markdown rendered (headings, emphasis, lists,
tables), citations `[doc:PATH:ADDRESS]` turned into links to the quoted passage.

    md = answer_markdown(answer)                       # for the Markdown export
    body, passages = answer_html(answer, documents)    # for the HTML export

Model output is hostile: raw HTML in an answer is escaped before Markdown sees it,
so a `<script>` in an answer is shown as text, never run.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from typing import Any, Sequence

import markdown

from core.fences import split_fences
from core.ingest.citations import Citation, resolve_citations

PASSAGE_CHARS = 1200
_HEADING = re.compile(r"^(#{1,6})(\s)")
_TOKEN = "RLMCITE{}X"
_TOKEN_RE = re.compile(r"RLMCITE(\d+)X")


def shift_headings(text: str, by: int = 2) -> str:
    """`# Title` becomes `### Title` (outside code fences): the report's own
    headings stay above the answer's."""
    out: list[str] = []
    for piece in split_fences(text or "", inline=False):
        if isinstance(piece, str):
            out.append(_HEADING.sub(lambda m: "#" * min(6, len(m.group(1)) + by) + m.group(2), piece))
        else:
            out.extend(piece.lines())
    return "\n".join(out)


def answer_markdown(answer: str) -> str:
    """The answer for a Markdown report: its own Markdown, headings below the report's,
    raw HTML escaped; citations stay `[doc:...]` as written."""
    return shift_headings(answer or "").replace("<", "&lt;")


@dataclass(frozen=True)
class Passage:
    anchor: str          # the element id the citation links point to
    citation: Citation
    text: str            # the quoted span of the document ("" when it does not resolve)


def answer_html(answer: str, documents: Sequence[Any] = ()) -> tuple[str, list[Passage]]:
    """(HTML of the answer, the passages its citations point to). Without documents
    (an export made without texts) citations stay as text."""
    cites = resolve_citations(answer, documents) if documents else []
    brackets: dict[tuple[int, int], list[Citation]] = {}
    for c in cites:
        brackets.setdefault((c.answer_start, c.answer_end), []).append(c)
    passages: list[Passage] = []
    anchors: dict[str, str] = {}
    pieces, last = [], 0
    for n, ((a, b), group) in enumerate(sorted(brackets.items())):
        pieces.append(answer[last:a])
        pieces.append(_TOKEN.format(n))
        last = b
    pieces.append(answer[last:])
    text = shift_headings("".join(pieces)).replace("&", "&amp;").replace("<", "&lt;")
    body = markdown.markdown(text, extensions=["tables", "sane_lists", "fenced_code"],
                             output_format="html")
    groups = [g for _, g in sorted(brackets.items())]

    def link(m: re.Match) -> str:
        group = groups[int(m.group(1))]
        parts = []
        for c in group:
            shown = html.escape(f"{c.path}, {c.address}" if c.address else c.path)
            if not c.ok:
                parts.append(f'<span class="cite bad" title="{html.escape(c.problem)}">{shown} ⚠</span>')
                continue
            anchor = anchors.get(c.text)
            if anchor is None:
                anchor = anchors[c.text] = f"cite-{len(anchors) + 1}"
                doc_text = _field(documents[c.document], "text", "") if c.document is not None else ""
                quoted = doc_text[c.start:c.end] if c.start is not None else ""
                if len(quoted) > PASSAGE_CHARS:
                    quoted = quoted[:PASSAGE_CHARS] + " […]"
                passages.append(Passage(anchor, c, quoted))
            parts.append(f'<a class="cite" href="#{anchor}">{shown}</a>')
        return "[" + "; ".join(parts) + "]"

    return _TOKEN_RE.sub(link, body), passages


def _field(doc: Any, name: str, default: Any = None) -> Any:
    return doc.get(name, default) if isinstance(doc, dict) else getattr(doc, name, default)
