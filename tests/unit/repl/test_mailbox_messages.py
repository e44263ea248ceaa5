"""A mailbox in the REPL: `documents[i]["messages"]`, one dict per message with its From, To,
Date and Subject and its text cut from `context` when read, in both of `context`'s forms."""

from __future__ import annotations

import pytest

from core.ingest import IngestOptions, ingest_sync
from core.repl.context_file import read_context, write_context
from tests.support.big_files import PLANT, write_mbox


@pytest.mark.parametrize("form", ["str", "list"])
def test_each_message_is_addressable_with_its_headers(tmp_path, form):
    path = tmp_path / "export.mbox"
    messages, planted = write_mbox(path, 200_000, body=2_000)
    (tmp_path / "notes.txt").write_text("before the mailbox\n")
    docs = ingest_sync([tmp_path / "notes.txt", path], IngestOptions(workers=1)).documents
    (tmp_path / "ctx").mkdir()
    files = write_context(docs, tmp_path / "ctx")
    context, documents = read_context(files.path, files.index_path, form)
    mailbox = documents[1]
    assert "messages" not in documents[0]
    found = mailbox["messages"]
    assert len(found) == messages
    eighth = found[7]
    assert (eighth["number"], eighth["from"], eighth["to"], eighth["subject"]) == \
        (8, "bob@example.com", "team@example.org", "Report 7")
    assert eighth["date"] == "Mon, 01 Jan 2024 00:00:00 +0000"
    assert eighth["text"].startswith("--- message 8 ---\nFrom: bob@example.com\n")
    text = docs[1].text
    start, end, address = (docs[1].spans[7].start, docs[1].spans[7].end, docs[1].spans[7].address)
    assert eighth["text"] == text[start:end] and address == "message 8 (Report 7)"
    assert sum(PLANT in m["text"] for m in found) == planted
    assert "text" not in dict.keys(eighth)              # cut when read, not held apart
    # A sequence whose dicts are built when read: the headers are not held for every message.
    assert [m["number"] for m in found[-2:]] == [messages - 1, messages]
    assert found[-1]["subject"] == f"Report {messages - 1}" and list(reversed(found))[0]["number"] == messages
    assert [m["number"] for m in found][:3] == [1, 2, 3] and found[7] == eighth
    assert repr(found).startswith(f"<{messages} messages: ")
    with pytest.raises(IndexError, match=f"message index {messages} out of range"):
        found[messages]
