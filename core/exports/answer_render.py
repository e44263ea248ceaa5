"""The answer as a report shows it: Markdown rendered (headings, emphasis, lists,
tables), citations `[doc:PATH:ADDRESS]` turned into links to the quoted passage.

    md = answer_markdown(answer)                       # for the Markdown export
    body, passages = answer_html(answer, documents)    # for the HTML export

Model output is hostile: raw HTML in an answer is escaped before Markdown sees it,
so a `<script>` in an answer is shown as text, never run; and only `http:`, `https:`,
`mailto:` and in-page (`#...`) links stay links (`safe_links`): a `javascript:` or
`data:` link, and every image, is shown as its text and address.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from typing import Any, Sequence

import markdown

from core.fences import split_fences
from core.ingest.citations import Citation, cited_text, resolve_citations

PASSAGE_CHARS = 1200
_HEADING = re.compile(r"^(#{1,6})(\s)")
_TOKEN = "RLMCITE{}X"
_TOKEN_RE = re.compile(r"RLMCITE(\d+)X")
_LINK = re.compile(r'<a href="([^"]*)"(?: title="[^"]*")?>(.*?)</a>', re.S)
_IMAGE = re.compile(r'<img\b[^>]*?>', re.S)
_ATTR = re.compile(r'(alt|src)="([^"]*)"')
SAFE_SCHEMES = ("http:", "https:", "mailto:", "#")
_IGNORED_IN_URLS = re.compile(r"[\x00-\x20\x7f-\x9f]+")    # what browsers drop from a scheme


def safe_href(href: str) -> bool:
    """Would a browser follow this (HTML-escaped) href to a page, an e-mail or a place in the page?"""
    plain = _IGNORED_IN_URLS.sub("", html.unescape(href)).lower()
    return plain.startswith(SAFE_SCHEMES)


def safe_links(body: str) -> str:
    """Rendered HTML with every link that is not http(s), mailto or in-page, and every image,
    turned into text: its words and its address, as written."""
    def link(m: re.Match) -> str:
        href, inner = m.group(1), m.group(2)
        if safe_href(href):
            return m.group(0)
        return f'{inner} <span class="link-off">({href})</span>'

    def image(m: re.Match) -> str:
        attrs = dict(_ATTR.findall(m.group(0)))
        return f'<span class="link-off">[image: {attrs.get("alt", "")} ({attrs.get("src", "")})]</span>'
    return _IMAGE.sub(image, _LINK.sub(link, body))


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
                doc_text = cited_text(documents[c.document]) if c.document is not None else ""
                quoted = doc_text[c.start:c.end] if c.start is not None else ""
                if len(quoted) > PASSAGE_CHARS:
                    quoted = quoted[:PASSAGE_CHARS] + " […]"
                passages.append(Passage(anchor, c, quoted))
            parts.append(f'<a class="cite" href="#{anchor}">{shown}</a>')
        return "[" + "; ".join(parts) + "]"

    return _TOKEN_RE.sub(link, safe_links(body)), passages
