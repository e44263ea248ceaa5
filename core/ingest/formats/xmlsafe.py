"""A defused expat parser: DTD entity declarations are refused (no billion
laughs, no external entities), nothing is ever fetched. Used for XML files and
for the XML inside EPUBs."""

from __future__ import annotations

from collections.abc import Callable
from xml.parsers import expat


class UnsafeXml(ValueError):
    """The XML declares entities; we do not expand them."""


def _refuse_entity(*args: object) -> None:
    raise UnsafeXml("XML declares entities (DTD); not expanded for safety")


def _refuse_external(*args: object) -> int:
    raise UnsafeXml("XML references an external entity; not fetched")


def parse(data: bytes,
          start: Callable[[str, dict[str, str]], None] | None = None,
          end: Callable[[str], None] | None = None,
          text: Callable[[str], None] | None = None) -> None:
    """Run expat over `data` with the given handlers. Raises UnsafeXml, or
    ValueError (expat.ExpatError) with line and column for malformed XML."""
    parser = expat.ParserCreate()
    parser.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_NEVER)
    parser.EntityDeclHandler = _refuse_entity
    parser.UnparsedEntityDeclHandler = _refuse_entity
    parser.ExternalEntityRefHandler = _refuse_external
    parser.buffer_text = True
    if start:
        parser.StartElementHandler = start
    if end:
        parser.EndElementHandler = end
    if text:
        parser.CharacterDataHandler = text
    try:
        parser.Parse(data, True)
    except expat.ExpatError as exc:
        raise ValueError(f"malformed XML: {exc}") from None


def local(tag: str) -> str:
    """Tag without namespace prefix or URI."""
    return tag.rsplit("}", 1)[-1].rsplit(":", 1)[-1]


class Element:
    """A minimal element tree (tag, attributes, children, text) for small files
    such as EPUB's container.xml and package.opf."""

    def __init__(self, tag: str, attrs: dict[str, str]) -> None:
        self.tag = local(tag)
        self.attrs = {local(k): v for k, v in attrs.items()}
        self.children: list[Element] = []
        self.text = ""

    def iter(self, tag: str):
        if self.tag == tag:
            yield self
        for child in self.children:
            yield from child.iter(tag)


def parse_tree(data: bytes) -> Element:
    stack: list[Element] = [Element("#document", {})]

    def start(tag: str, attrs: dict[str, str]) -> None:
        node = Element(tag, attrs)
        stack[-1].children.append(node)
        stack.append(node)

    def end(tag: str) -> None:
        stack.pop()

    def text(data: str) -> None:
        stack[-1].text += data

    parse(data, start, end, text)
    return stack[0]
