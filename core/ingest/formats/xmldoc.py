"""XML -> its text content, parsed by the defused expat parser (xmlsafe).

Character data keeps the file's line breaks; a space goes in at each element
end so values never run together; attribute values are dropped. XML that cannot
be parsed safely (malformed, or declaring entities) is kept as its raw text,
format "text"."""

from __future__ import annotations

import logging

from core.ingest.formats import xmlsafe
from core.ingest.formats.plain import decode_text
from core.ingest.model import Extracted

log = logging.getLogger(__name__)


def extract(data: bytes, fmt: str = "xml") -> Extracted:
    runs: list[str] = []
    try:
        xmlsafe.parse(data, end=lambda tag: runs.append(" "), text=runs.append)
    except ValueError as exc:      # includes UnsafeXml
        log.info("XML kept as raw text: %s", exc)
        return Extracted("text", decode_text(data))
    lines = (" ".join(line.split()) for line in "".join(runs).replace("\r", "\n").split("\n"))
    return Extracted("xml", "\n".join(line for line in lines if line))
