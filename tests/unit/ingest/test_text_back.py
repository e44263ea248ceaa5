"""Plain-text documents hold no text; it is read back from the file (core/ingest/text_back.py).
Real files, the real ingestion (its worker processes for what is not plain text)."""

from __future__ import annotations

import copy
import os
import pickle

import pytest

from core.ingest import ingest
from core.ingest.model import DocumentChanged
from tests.unit.ingest.makers import pdf_bytes

ASCII = "alpha beta\n" * 4000
MIXED = "caf\u00e9 r\u00e9sum\u00e9\r\n" * 3000 + "a smile \U0001F600\r\n"
CP1252 = "na\u00efve fa\u00e7ade\n" * 500


def _folder(tmp_path):
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "a.txt").write_text(ASCII)
    (folder / "mixed.log").write_bytes(MIXED.encode("utf-8"))
    (folder / "old.txt").write_bytes(CP1252.encode("cp1252"))
    (folder / "table.csv").write_text("a,b\n1,2\n3,4\n")
    (folder / "big.md").write_text("# big\n" + "line of markdown\n" * 200_000)   # 3.4 MB: a worker reads it
    (folder / "q1.pdf").write_bytes(pdf_bytes(["Revenue was 12 million."]))
    return folder


def _no_text_held(doc) -> bool:
    """No string as long as the text among the document's own attributes."""
    return "text" not in vars(doc) and not any(
        isinstance(v, str) and len(v) >= min(doc.chars, 64) for k, v in vars(doc).items()
        if k not in ("path", "source_path", "format", "sha256", "text_sha256"))


async def test_plain_text_documents_hold_no_text_and_read_the_same_back(tmp_path):
    result = await ingest([_folder(tmp_path)])
    docs = {d.path: d for d in result.documents}
    expected = {"a.txt": ASCII, "mixed.log": MIXED.replace("\r\n", "\n"), "old.txt": CP1252,
                "table.csv": "a,b\n1,2\n3,4\n", "big.md": "# big\n" + "line of markdown\n" * 200_000}
    for path, text in expected.items():
        doc = docs[path]
        assert not doc.held and _no_text_held(doc), path
        assert doc.text == text and doc.chars == len(text), path
        assert doc.width == (4 if path == "mixed.log" else 1), path
        assert doc.tokens and doc.text_sha256, path
    assert docs["table.csv"].tables                        # its parsed tables are kept as before
    pdf = docs["q1.pdf"]                                   # extracted once, kept in a sidecar
    assert not pdf.held and _no_text_held(pdf) and "12 million" in pdf.text and pdf.spans


async def test_a_read_back_document_stays_so_through_pickle_copy_and_duplicates(tmp_path):
    folder = _folder(tmp_path)
    (folder / "sub").mkdir()
    (folder / "sub" / "copy.txt").write_text(ASCII)
    result = await ingest([folder])
    doc = next(d for d in result.documents if d.path == "a.txt")
    assert doc.duplicates == ("sub/copy.txt",) and not doc.held      # read_once kept it unread
    for again in (pickle.loads(pickle.dumps(doc)), copy.copy(doc), doc.but(path="b.txt")):
        assert not again.held and again.text == ASCII
    assert doc == pickle.loads(pickle.dumps(doc))
    held = doc.but(text="other")
    assert held.held and held.text == "other"


async def test_a_changed_or_removed_file_says_which_and_what_to_do(tmp_path):
    folder = _folder(tmp_path)
    result = await ingest([folder])
    docs = {d.path: d for d in result.documents}
    (folder / "a.txt").write_text(ASCII + "more\n")
    with pytest.raises(DocumentChanged, match=r"a\.txt changed on disk since it was read .*add it to Sources again"):
        docs["a.txt"].text
    stat = (folder / "old.txt").stat()
    os.utime(folder / "old.txt", ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    with pytest.raises(DocumentChanged, match="size or modification time"):
        docs["old.txt"].text
    (folder / "mixed.log").unlink()
    with pytest.raises(DocumentChanged, match=r"mixed\.log changed on disk"):
        docs["mixed.log"].text
    assert isinstance(DocumentChanged("x"), OSError)        # callers that handle OSError handle it
