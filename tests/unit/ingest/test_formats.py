"""Every format through the real extractor (in-process here; through workers in
test_ingest.py), with the text asserted."""

from __future__ import annotations

import pytest

from core.ingest import address_of, locate
from core.ingest.model import CORRUPT, EMPTY, ENCRYPTED, NO_TEXT, ExtractError
from tests.unit.ingest import makers


def write(tmp_path, name, data):
    path = tmp_path / name
    path.write_bytes(data)
    return path


def test_plain_markdown_code_keep_text_and_normalise_newlines(tmp_path, read_file):
    doc = read_file(write(tmp_path, "a.txt", b"one\r\ntwo\rthree\n"))
    assert (doc.format, doc.text, doc.spans) == ("text", "one\ntwo\nthree\n", ())
    assert read_file(write(tmp_path, "r.md", b"# Hi\n")).format == "markdown"
    assert read_file(write(tmp_path, "m.py", b"x = 1\n")).format == "code"
    assert read_file(write(tmp_path, "Makefile", b"all:\n\ttrue\n")).format == "code"


def test_text_document_fields(tmp_path, read_file):
    data = "héllo\n".encode()
    doc = read_file(write(tmp_path, "h.txt", data))
    import hashlib
    assert doc.chars == len("héllo\n") == len(doc.text)
    assert doc.size == len(data)
    assert doc.sha256 == hashlib.sha256(data).hexdigest()
    assert doc.source_path == str(tmp_path / "h.txt")


def test_csv_tsv_kept_as_text_with_row_addresses(tmp_path, read_file):
    doc = read_file(write(tmp_path, "t.csv", b"name,amount\r\nAnn,10\r\nBob,20\r\n"))
    assert doc.format == "csv" and doc.text == "name,amount\nAnn,10\nBob,20\n"
    assert address_of(doc, doc.text.index("Bob")) == "line 3"
    assert read_file(write(tmp_path, "t.tsv", b"a\tb\n1\t2\n")).format == "tsv"


def test_json_valid_kept_as_is_invalid_kept_as_text(tmp_path, read_file):
    doc = read_file(write(tmp_path, "d.json", b'{"a": [1, 2]}'))
    assert (doc.format, doc.text) == ("json", '{"a": [1, 2]}')
    broken = read_file(write(tmp_path, "b.json", b'{"a": [1, 2'))
    assert (broken.format, broken.text) == ("text", '{"a": [1, 2')
    lines = read_file(write(tmp_path, "e.jsonl", b'{"e": 1}\n{"e": 2}\n'))
    assert lines.format == "jsonl"
    assert read_file(write(tmp_path, "f.jsonl", b'{"e": 1}\nnot json\n')).format == "text"


def test_html_visible_text_only(tmp_path, read_file):
    html = (b"<html><head><title>Report</title><style>p{color:red}</style>"
            b"<script>var secret = 1;</script></head><body><h1>Heading</h1>"
            b"<p>First &amp; <b>bold</b> para</p><noscript>nojs</noscript>"
            b"<table><tr><td>a</td><td>b</td></tr></table><pre>  indented\n  code</pre></body></html>")
    doc = read_file(write(tmp_path, "p.html", html))
    assert doc.format == "html"
    assert doc.text.startswith("Report\n\nHeading")
    assert "First & bold para" in doc.text
    assert "a\tb" in doc.text
    assert "  indented\n  code" in doc.text
    for hidden in ("secret", "color:red", "nojs"):
        assert hidden not in doc.text


def test_html_sniffed_without_extension(tmp_path, read_file):
    doc = read_file(write(tmp_path, "page", b"<!DOCTYPE html><html><body><p>Hi</p></body></html>"))
    assert (doc.format, doc.text) == ("html", "Hi")


def test_xml_text_content(tmp_path, read_file):
    doc = read_file(write(tmp_path, "x.xml", b'<?xml version="1.0"?><r><a id="1">Alpha</a>'
                                             b'<b>Beta</b>\n<c>Gamma <i>delta</i></c></r>'))
    assert doc.format == "xml"
    assert doc.text == "Alpha Beta\nGamma delta"


def test_xml_entities_are_never_expanded(tmp_path, read_file):
    bomb = (b'<?xml version="1.0"?><!DOCTYPE l [<!ENTITY a "aaaaaaaaaa">'
            b'<!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]><l>&b;</l>')
    doc = read_file(write(tmp_path, "bomb.xml", bomb))
    assert doc.format == "text" and doc.text == bomb.decode()      # raw, not expanded
    external = (b'<?xml version="1.0"?><!DOCTYPE r [<!ENTITY x SYSTEM "file:///etc/passwd">]>'
                b'<r>&x;</r>')
    doc = read_file(write(tmp_path, "ext.xml", external))
    assert "root:" not in doc.text and doc.format == "text"


def test_pdf_pages_spans_and_addresses(tmp_path, read_file):
    doc = read_file(write(tmp_path, "r.pdf", makers.pdf_bytes(
        ["Alpha page\nsecond line", "Beta page", "Gamma page"])))
    assert doc.format == "pdf"
    assert [s.address for s in doc.spans] == ["page 1", "page 2", "page 3"]
    for span, word in zip(doc.spans, ("Alpha", "Beta", "Gamma")):
        assert word in doc.text[span.start:span.end]
    assert doc.text.startswith("--- page 1 ---\nAlpha page\nsecond line")
    assert address_of(doc, doc.text.index("second")) == "page 1, line 2"
    assert address_of(doc, doc.text.index("Beta")) == "page 2, line 1"
    start, end = locate(doc, "page 1, line 2")
    assert doc.text[start:end] == "second line"
    assert locate(doc, "page 9") is None


def test_pdf_latin_text(tmp_path, read_file):
    doc = read_file(write(tmp_path, "l.pdf", makers.pdf_bytes(["Caf\u00e9 co\u00fbte 5 \u20ac"])))
    assert "Café coûte 5 €" in doc.text


def test_pdf_encrypted_truncated_scanned_fake(tmp_path, read_file):
    with pytest.raises(ExtractError) as info:
        read_file(write(tmp_path, "e.pdf", makers.encrypted_pdf_bytes(["secret text"])))
    assert info.value.reason == ENCRYPTED
    good = makers.pdf_bytes(["one", "two"])
    with pytest.raises(ExtractError) as info:
        read_file(write(tmp_path, "t.pdf", good[: len(good) // 2]))
    assert info.value.reason == CORRUPT and "PDFium" in info.value.detail
    with pytest.raises(ExtractError) as info:
        read_file(write(tmp_path, "s.pdf", makers.pdf_bytes(["", ""])))
    assert info.value.reason == NO_TEXT and "2 page" in info.value.detail
    with pytest.raises(ExtractError) as info:
        read_file(write(tmp_path, "fake.pdf", b"just some words, not a pdf"))
    assert info.value.reason == CORRUPT and "%PDF-" in info.value.detail


def test_pdf_with_empty_user_password_is_read(tmp_path, read_file):
    doc = read_file(write(tmp_path, "o.pdf", makers.encrypted_pdf_bytes(["open text"], "")))
    assert "open text" in doc.text


def test_docx_paragraphs_and_tables_in_order(tmp_path, read_file):
    doc = read_file(makers.write_docx(tmp_path / "m.docx"))
    assert doc.format == "docx"
    assert doc.text == ("# Quarterly Report\nRevenue grew in the north region.\n"
                        "Region\tRevenue\nNorth\t1200\n\nClosing paragraph after the table.")


def test_pptx_slides_with_notes_and_tables(tmp_path, read_file):
    doc = read_file(makers.write_pptx(tmp_path / "d.pptx"))
    assert doc.format == "pptx"
    assert [s.address for s in doc.spans] == ["slide 1", "slide 2"]
    first = doc.text[doc.spans[0].start:doc.spans[0].end]
    assert first == ("--- slide 1 ---\nKickoff\nGoals for the year\n"
                     "Notes:\nSpeaker note: mention budget")
    second = doc.text[doc.spans[1].start:doc.spans[1].end]
    assert "Numbers" in second and "Metric\tValue\nUsers\t42" in second
    assert address_of(doc, doc.text.index("Users")).startswith("slide 2")
    assert locate(doc, "slide 2") == (doc.spans[1].start, doc.spans[1].end)


def test_xlsx_sheets_rows_and_addresses(tmp_path, read_file):
    doc = read_file(makers.write_xlsx(tmp_path / "b.xlsx"))
    assert doc.format == "xlsx"
    assert [s.address for s in doc.spans] == ["sheet Sales", "sheet Q2 Costs"]
    sales = doc.text[doc.spans[0].start:doc.spans[0].end]
    assert sales == "--- sheet Sales ---\nRegion\tAmount\nNorth\t100\nSouth\t250.5\n\nafter a gap"
    assert address_of(doc, doc.text.index("South")) == "sheet Sales row 3"
    assert address_of(doc, doc.text.index("after a gap")) == "sheet Sales row 5"
    assert address_of(doc, doc.text.index("Rent")) == "sheet Q2 Costs row 2"
    start, end = locate(doc, "sheet Q2 Costs row 2")
    assert doc.text[start:end] == "Rent\t900"


def test_eml_headers_body_attachment(tmp_path, read_file):
    message = makers.email_message("Budget 2025", "Please review.", attachment=b"\x00\x01")
    doc = read_file(write(tmp_path, "m.eml", message.as_bytes()))
    assert doc.format == "eml"
    assert doc.text.startswith("From: ann@example.com\nTo: bob@example.com\n"
                               "Cc: carol@example.com\nDate: Mon, 03 Feb 2025 10:00:00 +0000\n"
                               "Subject: Budget 2025\n\nPlease review.")
    assert "[attachment: data.bin (application/octet-stream, 2 bytes; not read)]" in doc.text


def test_eml_html_only_body_becomes_visible_text(tmp_path, read_file):
    message = makers.email_message("Hi", "", html="<p>Only <b>html</b></p><style>x{}</style>",
                                   html_only=True)
    doc = read_file(write(tmp_path, "h.eml", message.as_bytes()))
    assert doc.text.endswith("Subject: Hi\n\nOnly html")


def test_eml_prefers_plain_alternative(tmp_path, read_file):
    message = makers.email_message("Alt", "plain version", html="<p>html version</p>")
    doc = read_file(write(tmp_path, "a.eml", message.as_bytes()))
    assert "plain version" in doc.text and "html version" not in doc.text


def test_mbox_messages_spans_and_addresses(tmp_path, read_file):
    data = makers.mbox_bytes([makers.email_message("First", "alpha body"),
                              makers.email_message("Second", "beta body\nFrom the start"),
                              makers.email_message("Third", "gamma body")])
    doc = read_file(write(tmp_path, "Inbox", data))            # no extension: sniffed
    assert doc.format == "mbox"
    assert [s.address for s in doc.spans] == ["message 1 (First)", "message 2 (Second)",
                                              "message 3 (Third)"]
    second = doc.text[doc.spans[1].start:doc.spans[1].end]
    assert second.startswith("--- message 2 ---\nFrom: ann@example.com")
    assert "beta body" in second and "Subject: Second" in second
    assert address_of(doc, doc.text.index("gamma")).startswith("message 3 (Third), line ")
    assert locate(doc, "message 2") == (doc.spans[1].start, doc.spans[1].end)


def test_epub_chapters_in_spine_order(tmp_path, read_file):
    doc = read_file(write(tmp_path, "b.epub", makers.epub_bytes(
        [("Opening", "It begins."), ("Middle", "It goes on."), ("Ending", "It ends.")])))
    assert doc.format == "epub"
    assert [s.address for s in doc.spans] == ["chapter 1", "chapter 2", "chapter 3"]
    assert doc.text.index("It begins.") < doc.text.index("It goes on.") < doc.text.index("It ends.")
    assert "color: red" not in doc.text
    assert address_of(doc, doc.text.index("It ends.")).startswith("chapter 3, line ")


def test_zip_named_docx_is_corrupt_plain_zip_unsupported(tmp_path, read_file):
    import io
    import zipfile
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("hello.txt", "hi")
    for name, reason, words in (("fake.docx", CORRUPT, "word/document.xml"),
                                ("bundle.zip", "unsupported", "zip archive")):
        with pytest.raises(ExtractError) as info:
            read_file(write(tmp_path, name, buffer.getvalue()))
        assert info.value.reason == reason and words in info.value.detail


def test_docx_with_broken_part_is_corrupt(tmp_path, read_file):
    import io
    import zipfile
    source = makers.write_docx(tmp_path / "ok.docx")
    buffer = io.BytesIO()
    with zipfile.ZipFile(source) as old, zipfile.ZipFile(buffer, "w") as new:
        for item in old.infolist():
            data = old.read(item)
            new.writestr(item, b"<w:document garbage" if item.filename == "word/document.xml"
                         else data)
    with pytest.raises(ExtractError) as info:
        read_file(write(tmp_path, "broken.docx", buffer.getvalue()))
    assert info.value.reason == CORRUPT and info.value.detail


def test_whitespace_only_text_is_empty(tmp_path, read_file):
    with pytest.raises(ExtractError) as info:
        read_file(write(tmp_path, "w.txt", b"  \n\n\t \n"))
    assert info.value.reason == EMPTY


def test_unsupported_and_binary(tmp_path, read_file):
    cases = {"i.png": (b"\x89PNG\r\n\x1a\n" + bytes(100), "unsupported"),
             "old.doc": (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(100), "unsupported"),
             "locked.xlsx": (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(100), ENCRYPTED),
             "blob.dat": (bytes(range(256)) * 4, "binary"),
             "ctrl.txt": (b"\x01\x02\x03\x04\x05\x06" * 100, "binary")}
    for name, (data, reason) in cases.items():
        with pytest.raises(ExtractError) as info:
            read_file(write(tmp_path, name, data))
        assert info.value.reason == reason, name


def test_zip_that_inflates_too_far_is_too_large(tmp_path, read_file, monkeypatch):
    from core.ingest import extract
    monkeypatch.setattr(extract, "MAX_UNZIPPED_BYTES", 1000)      # instead of writing 1 GiB
    with pytest.raises(ExtractError) as info:
        read_file(makers.write_docx(tmp_path / "m.docx"))
    assert info.value.reason == "too_large" and "inflates" in info.value.detail


def test_html_with_unclosed_head_still_shows_the_body(tmp_path, read_file):
    doc = read_file(write(tmp_path, "s.htm", b"<html><head><title>T</title><body><p>Hello<br>"
                                             b"world</p><script>x=1</script><p>end"))
    assert doc.text == "T\n\nHello\nworld\n\nend"


def test_pathological_nesting_is_kept_as_text_not_a_crash(tmp_path, read_file):
    deep = b"[" * 200_000 + b"]" * 200_000
    doc = read_file(write(tmp_path, "deep.json", deep))
    assert doc.format == "text" and doc.chars == 400_000
    xml = b"<a>" * 20_000 + b"x" + b"</a>" * 20_000
    assert read_file(write(tmp_path, "deep.xml", xml)).text == "x"


def test_text_that_mentions_pdf_or_starts_with_from_stays_text(tmp_path, read_file):
    note = b"Notes on formats\nA PDF starts with %PDF-1.7 and ends with %%EOF.\n"
    assert read_file(write(tmp_path, "notes.md", note)).format == "markdown"
    letter = b"From the meeting at 10:30 we learned:\n- budget is fine\n"
    doc = read_file(write(tmp_path, "minutes", letter))
    assert (doc.format, doc.text) == ("text", letter.decode())
