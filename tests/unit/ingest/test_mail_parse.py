"""A one-part message is built without the stdlib parser's line-by-line feed (core/ingest/
formats/mail._single_part), and reads exactly as the parser's message does: its text, its
mailbox address, its headers and its defects, over messages that take either path."""

from __future__ import annotations

from email import policy
from email.message import EmailMessage
from email.parser import BytesParser

import pytest

from core.ingest.formats import mail
from tests.unit.ingest import makers


def _built(subject: str, body: str, **kwargs) -> bytes:
    return makers.email_message(subject, body, **kwargs).as_bytes()


def _latin1() -> bytes:
    message = EmailMessage()
    message["From"] = "=?iso-8859-1?q?Andr=E9?= <andre@example.fr>"
    message["Subject"] = "=?utf-8?b?w6l0w6k=?="
    message.set_content("Caf\xe9 cr\xe8me\n", charset="iso-8859-1", cte="8bit")
    return message.as_bytes()


MESSAGES = {
    "plain": _built("Report", "The figures are fine.\n"),
    "crlf": _built("Report", "Line one\nLine two\n").replace(b"\n", b"\r\n"),
    "html only": _built("Page", "", html="<p>Hello <b>there</b></p>", html_only=True),
    "alternative": _built("Both", "plain text", html="<p>html text</p>"),
    "attachment": _built("Files", "see attached", attachment=b"\x00\x01binary"),
    "latin-1 8bit": _latin1(),
    "no charset, 8bit": b"From: a@b.c\nSubject: x\n\nna\xc3\xafve caf\xc3\xa9\n",
    "utf-8 8bit": (b"From: a@b.c\nContent-Type: text/plain; charset=utf-8\n"
                   b"Content-Transfer-Encoding: 8bit\n\nna\xc3\xafve caf\xc3\xa9\n"),
    "quoted-printable": (b"From: a@b.c\nContent-Type: text/plain; charset=utf-8\n"
                         b"Content-Transfer-Encoding: quoted-printable\n\ncaf=C3=A9 =\nsoft\n"),
    "unknown charset": b"From: a@b.c\nContent-Type: text/plain; charset=x-nope\n\nbody\n",
    "folded headers": (b"From: Ann Example\n <ann@example.com>\nTo: bob@example.com,\n\tcarol@example.com\n"
                       b"Subject: a long\n  folded subject\nDate: Mon, 3 Feb 2025 10:00:00 +0000\n\nbody\n"),
    "bad date": b"From: a@b.c\nDate: yesterday-ish\n\nbody\n",
    "no blank line": b"From: a@b.c\nSubject: headers only\n",
    "not a header line": b"From: a@b.c\nthis is body already\n\nmore\n",
    "continuation first": b" folded\nFrom: a@b.c\n\nbody\n",
    "lone cr": b"From: a@b.c\rSubject: x\n\nbody\n",
    "body first": b"\nbody without headers\n",
    "rfc822 inside": (b"From: a@b.c\nContent-Type: message/rfc822\n\n"
                      b"From: inner@b.c\nSubject: inner\n\ninner body\n"),
    "multipart, no boundary": b"From: a@b.c\nContent-Type: multipart/mixed\n\nbody\n",
    "html, one part": b"From: a@b.c\nContent-Type: text/html\n\n<p>hi</p>\n",
    "pdf, one part": b"From: a@b.c\nContent-Type: application/pdf\n\n%PDF-1.4\n",
    "envelope inside": b"From: a@b.c\nFrom x Mon Jan 1\nSubject: y\n\nbody\n",
}


def _parsed(data: bytes) -> EmailMessage:
    return BytesParser(policy=policy.default).parsebytes(data)


@pytest.mark.parametrize("name", sorted(MESSAGES))
def test_a_message_reads_as_the_stdlib_parser_reads_it(name, monkeypatch):
    data = MESSAGES[name]
    ours, theirs = mail.parse_message(data), _parsed(data)
    assert mail.message_text(ours) == mail.message_text(theirs)
    assert list(ours.raw_items()) == list(theirs.raw_items())
    assert [type(d) for d in ours.defects] == [type(d) for d in theirs.defects]
    fast = mail.mbox_message(3, data)
    monkeypatch.setattr(mail, "_single_part", lambda data: None)      # the parser for all
    assert fast == mail.mbox_message(3, data)


def test_one_part_messages_skip_the_parser_and_the_rest_do_not():
    built = {name for name, data in MESSAGES.items() if mail._single_part(data) is not None}
    assert built == {"plain", "crlf", "html only", "latin-1 8bit", "no charset, 8bit", "utf-8 8bit",
                     "quoted-printable", "unknown charset", "folded headers", "bad date",
                     "html, one part", "pdf, one part"}
