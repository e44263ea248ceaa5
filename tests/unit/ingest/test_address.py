"""address_of and locate on plain text and on block documents."""

from __future__ import annotations

import subprocess
import sys

from core.ingest import Document, Span, address_of, locate


def doc(text, spans=(), fmt="text"):
    return Document("d.txt", "/d.txt", fmt, text, len(text), len(text), "0" * 64, tuple(spans))


def test_plain_text_lines():
    d = doc("first\nsecond\nthird")
    assert address_of(d, 0) == "line 1"
    assert address_of(d, d.text.index("second") + 3) == "line 2"
    assert address_of(d, 10_000) == "line 3"          # clamped
    assert address_of(d, -5) == "line 1"
    assert locate(d, "line 2") == (6, 12)
    assert locate(d, "line 3") == (13, 18)
    assert locate(d, "line 4") is None and locate(d, "page 1") is None


def test_block_lines_and_marker():
    text = "--- page 1 ---\nalpha\nbeta\n\n--- page 2 ---\ngamma"
    spans = [Span(0, 25, "page 1"), Span(27, len(text), "page 2")]
    d = doc(text, spans, "pdf")
    assert address_of(d, 3) == "page 1"
    assert address_of(d, text.index("beta")) == "page 1, line 2"
    assert address_of(d, text.index("gamma")) == "page 2, line 1"
    assert locate(d, "page 1, line 2") == (text.index("beta"), text.index("beta") + 4)
    assert locate(d, "page  2") == (27, len(text))
    assert locate(d, "page 1, line 9") is None
    assert locate(d, "page 10") is None and locate(d, "line 1") is None


def test_importing_ingest_stays_light():
    code = ("import sys, core.ingest; heavy = {'pypdfium2', 'docx', 'pptx', 'openpyxl', "
            "'charset_normalizer', 'PySide6', 'litellm'} & set(sys.modules); print(sorted(heavy))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_plain_data_variants_match_the_document_ones():
    from core.ingest import address_in, locate_in
    text = "--- sheet S ---\nh1\tv1\nh2\tv2"
    spans = [[0, len(text), "sheet S"]]                 # as read back from JSON
    assert address_in(text, spans, "xlsx", text.index("h2")) == "sheet S row 2"
    assert locate_in(text, spans, "sheet S row 1") == (16, 21)
    assert address_in("a\nb", [], "text", 2) == "line 2"
