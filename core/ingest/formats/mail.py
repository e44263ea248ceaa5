"""EML and MBOX with the stdlib email package (policy.default): the headers
From/To/Cc/Date/Subject, then the body (text/plain preferred, HTML-only bodies
turned into visible text), a line per attachment (not read), and attached
messages inline. An mbox gets one span per message: "message 7 (Subject)"."""

from __future__ import annotations

import logging
import re
from email import policy
from email.message import EmailMessage
from email.parser import BytesParser

from core.ingest.decode import decode_bytes, normalize_newlines
from core.ingest.formats.blocks import BlockText
from core.ingest.formats.htmldoc import html_to_text
from core.ingest.model import CORRUPT, NO_TEXT, ExtractError, Extracted

log = logging.getLogger(__name__)

HEADERS = ("From", "To", "Cc", "Date", "Subject")
_FROM_LINE = re.compile(rb"^From ", re.MULTILINE)
_MAX_NESTING = 5
_MESSAGE_ERRORS = (ValueError, TypeError, IndexError, AttributeError, LookupError, KeyError)


def parse_message(data: bytes) -> EmailMessage:
    message = _single_part(data)
    return message if message is not None else BytesParser(policy=policy.default).parsebytes(data)


_HEADER_LINE = re.compile(r"[\041-\071\073-\176]+:")     # the stdlib parser's, a name required
_BLANK_LINE = re.compile(rb"\n\r?\n")
_PARSED_BODIES = ("multipart", "message")


def _single_part(data: bytes) -> EmailMessage | None:
    """The message the stdlib parser makes of `data`, built without it when the body is one
    part (not multipart/ or message/): its header lines as the parser stores them
    (policy.header_source_parse, set_raw) and the body as its payload, unsplit. The parser
    feeds a body line by line, most of the time a mailbox took. None when the parser must
    judge: no header block ending in a blank line, a line that is not a header, a body it
    parses into parts."""
    blank = _BLANK_LINE.search(data)
    if blank is None or blank.start() == 0:
        return None
    head = data[:blank.start() + 1]
    if b"\r" in head.replace(b"\r\n", b""):
        return None
    groups: list[list[str]] = []
    for line in head.decode("ascii", "surrogateescape").split("\n")[:-1]:
        line += "\n"
        if line[0] in " \t":
            if not groups:
                return None
            groups[-1].append(line)
        elif line.startswith("From ") or not _HEADER_LINE.match(line):
            return None
        else:
            groups.append([line])
    message = EmailMessage(policy=policy.default)
    for group in groups:
        message.set_raw(*policy.default.header_source_parse(group))
    try:
        if message.get_content_maintype() in _PARSED_BODIES:
            return None
    except _MESSAGE_ERRORS:
        return None
    message.set_payload(data[blank.end():].decode("ascii", "surrogateescape"))
    return message


def message_text(message: EmailMessage, depth: int = 0) -> str:
    lines = []
    for name in HEADERS:
        value = _header(message, name)
        if value:
            lines.append(f"{name}: {value}")
    body = _body(message)
    if body:
        lines += ["", body]
    for part in message.iter_attachments():
        content_type = part.get_content_type()
        if content_type == "message/rfc822" and depth < _MAX_NESTING:
            inner = part.get_payload(0) if part.is_multipart() else None
            if isinstance(inner, EmailMessage):
                lines += ["", "--- attached message ---", message_text(inner, depth + 1)]
                continue
        name = part.get_filename() or "unnamed"
        payload = part.get_payload(decode=True) or b""
        lines.append(f"[attachment: {name} ({content_type}, {len(payload)} bytes; not read)]")
    return "\n".join(lines).strip("\n")


_SEEN: dict[tuple[str, str], str] = {}   # (name, raw value) -> its text: a mailbox repeats its senders
_SEEN_MAX = 4096


def _header(message: EmailMessage, name: str) -> str:
    """The header's value as policy.default reads it, one line; the same raw value is parsed
    once (parsing addresses is most of the time a mailbox takes)."""
    lowered = name.lower()
    raw = next((value for key, value in message.raw_items() if key.lower() == lowered), None)
    if raw is None:
        return ""
    key = (lowered, raw) if isinstance(raw, str) else None
    if key is not None and key in _SEEN:
        return _SEEN[key]
    if lowered == "subject" and isinstance(raw, str) and raw.isascii() and "=?" not in raw:
        return " ".join(raw.split())       # unstructured ASCII without encoded words reads as it is
    text = _parsed_header(message, name)
    if key is not None:
        if len(_SEEN) >= _SEEN_MAX:
            _SEEN.clear()
        _SEEN[key] = text
    return text


def _parsed_header(message: EmailMessage, name: str) -> str:
    try:
        value = message.get(name)
    except (ValueError, TypeError, IndexError, AttributeError) as exc:
        log.info("unparseable %s header, kept raw: %s", name, exc)
        value = next((raw for key, raw in message.raw_items() if key.lower() == name.lower()), "")
    return " ".join(str(value).split()) if value else ""


def _body(message: EmailMessage) -> str:
    part = message.get_body(preferencelist=("plain", "html"))
    if part is None:
        if message.get_content_maintype() == "text":
            part = message
        else:
            return ""
    text = _part_text(part)
    if part.get_content_subtype() == "html":
        text = html_to_text(text)
    return normalize_newlines(text).strip("\n")


def _part_text(part: EmailMessage) -> str:
    try:
        return part.get_content()
    except (LookupError, UnicodeError, AssertionError) as exc:
        log.info("part content undecodable (%s); guessing its encoding", exc)
        payload = part.get_payload(decode=True) or b""
        return decode_bytes(payload)[0]


def extract_eml(data: bytes) -> Extracted:
    text = message_text(parse_message(data))
    if not text.strip():
        raise ExtractError(NO_TEXT, "message has no headers or text")
    return Extracted("eml", text)


def extract_mbox(data: bytes) -> Extracted:
    starts = [m.start() for m in _FROM_LINE.finditer(data)]
    if not starts or data[: starts[0]].strip():
        raise ExtractError(CORRUPT, "not an mbox: no 'From ' separator line at the start")
    starts.append(len(data))
    blocks = BlockText()
    for number, (begin, end) in enumerate(zip(starts, starts[1:]), 1):
        chunk = data[begin:end]
        newline = chunk.find(b"\n")
        address, body = mbox_message(number, chunk[newline + 1:] if newline >= 0 else b"")
        blocks.add(address, body, marker=f"message {number}")
    return Extracted("mbox", blocks.text(), tuple(blocks.spans))


def mbox_message(number: int, raw: bytes) -> tuple[str, str]:
    """(address, text) of a mailbox's message `number`: its bytes after the "From " line."""
    message = parse_message(raw)
    subject = _header(message, "Subject")
    if len(subject) > 60:
        subject = subject[:57] + "..."
    address = f"message {number} ({subject})" if subject else f"message {number}"
    try:
        body = message_text(message)
    except _MESSAGE_ERRORS as exc:      # one broken message must not lose the mailbox
        log.info("message %d kept as raw text: %s", number, exc)
        body = decode_bytes(raw)[0].strip("\n")
    return address, body
