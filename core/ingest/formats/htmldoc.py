"""HTML -> visible text with the stdlib html.parser: no script, style, head
metadata or templates; block elements start new lines; <pre> keeps its spaces.
The <title> comes first."""

from __future__ import annotations

import re
from html.parser import HTMLParser

from core.ingest.formats.plain import decode_text
from core.ingest.model import Extracted

_HIDDEN = {"script", "style", "noscript", "template", "head", "svg", "math", "iframe", "object"}
_BLOCK = {"p", "div", "br", "li", "ul", "ol", "tr", "table", "section", "article", "header",
          "footer", "nav", "aside", "main", "h1", "h2", "h3", "h4", "h5", "h6", "blockquote",
          "pre", "hr", "dt", "dd", "dl", "figure", "figcaption", "form", "fieldset", "address",
          "details", "summary", "caption", "thead", "tbody", "tfoot", "body", "html", "title"}
_CELL = {"td", "th"}
_VOID = {"br", "hr", "img", "input", "meta", "link", "area", "base", "col", "embed", "source",
         "track", "wbr", "param"}


class _TextParser(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.title: list[str] = []
        self.hidden = 0
        self.pre = 0
        self.in_title = False

    def handle_starttag(self, tag: str, attrs: list) -> None:
        if tag == "title":
            self.in_title = True
        elif tag == "body":
            self.hidden = 0            # an unclosed <head> must not hide the page
        elif tag in _HIDDEN and tag not in _VOID:
            self.hidden += 1
        elif tag == "pre":
            self.pre += 1
        if tag in _BLOCK:
            self.parts.append("\n")
        elif tag in _CELL:
            self.parts.append("\t")

    def handle_startendtag(self, tag: str, attrs: list) -> None:
        if tag in _BLOCK:
            self.parts.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self.in_title = False
        elif tag in _HIDDEN and tag not in _VOID:
            self.hidden = max(0, self.hidden - 1)
        elif tag == "pre":
            self.pre = max(0, self.pre - 1)
        if tag in _BLOCK:
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if self.in_title:
            self.title.append(data)
        elif not self.hidden:
            self.parts.append(data if self.pre else re.sub(r"\s+", " ", data))


def _trim(line: str) -> str:
    """Drop trailing blanks and the single space that whitespace folding leaves
    at the start of a line (deeper indentation only comes from <pre>)."""
    line = line.rstrip()
    return line[1:] if line.startswith(" ") and not line.startswith("  ") else line


def html_to_text(html: str) -> str:
    parser = _TextParser()
    parser.feed(html)
    parser.close()
    title = " ".join("".join(parser.title).split())
    lines = [_trim(line) for line in "".join(parser.parts).split("\n")]
    body = re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip("\n")
    cleaned = "\n".join(re.sub(r"[ \t]*\t[ \t]*", "\t", line).strip("\t")
                        for line in body.split("\n"))
    return f"{title}\n\n{cleaned}" if title and cleaned else title or cleaned


def extract(data: bytes, fmt: str = "html") -> Extracted:
    return Extracted("html", html_to_text(decode_text(data)))
