"""Duplicates read once: the same bytes (sha256) enter the context once; the other
paths are listed as "duplicate of PATH", cost nothing, and still resolve in
citations, live and from the store."""

from __future__ import annotations

import shutil

from core.ingest import IngestOptions, ingest_sync
from core.repl.context_file import write_context
from core.store import RunStore
from core.ingest.citations import resolve_citations
from tests.unit.ingest import archive_makers as am
from tests.unit.ingest import makers

FAST = IngestOptions(per_file_timeout_s=20.0, workers=2)


def duplicate_tree(root):
    """A folder copied twice (one copy also zipped), plus a file renamed."""
    original = root / "2024"
    original.mkdir(parents=True)
    (original / "report.txt").write_text("Revenue rose 12%.\nCosts fell.\n")
    (original / "memo.pdf").write_bytes(makers.pdf_bytes(["memo page one", "memo page two"]))
    (original / "unique.md").write_text("# only here\n")
    shutil.copytree(original, root / "backup" / "2024")
    (root / "backup" / "2024" / "unique.md").write_text("# changed in the backup\n")
    shutil.copy(original / "report.txt", root / "report (copy).txt")
    am.write(root / "export.zip", am.zip_bytes({"2024/memo.pdf": (original / "memo.pdf").read_bytes()}))
    return root


def test_duplicate_tree_is_read_once(tmp_path):
    result = ingest_sync([duplicate_tree(tmp_path / "tree")], FAST)
    docs = {d.path: d for d in result.documents}
    # The copy nearest the top is read (fewest path parts, then name order), its copies deeper
    # down are the duplicates: "report (copy).txt" at the top, not "2024/report.txt".
    assert sorted(docs) == ["2024/memo.pdf", "2024/unique.md", "backup/2024/unique.md",
                            "report (copy).txt"]
    skips = {s.path: (s.reason, s.detail) for s in result.skipped}
    assert skips == {
        "backup/2024/memo.pdf": ("duplicate", "duplicate of 2024/memo.pdf"),
        "2024/report.txt": ("duplicate", "duplicate of report (copy).txt"),
        "backup/2024/report.txt": ("duplicate", "duplicate of report (copy).txt"),
        "export.zip/2024/memo.pdf": ("duplicate", "duplicate of 2024/memo.pdf")}
    assert docs["2024/memo.pdf"].duplicates == ("backup/2024/memo.pdf", "export.zip/2024/memo.pdf")
    assert docs["report (copy).txt"].duplicates == ("2024/report.txt", "backup/2024/report.txt")
    sizes = {s.path: s.size for s in result.skipped}          # a duplicate shows its own size, not 0 B
    assert sizes["2024/report.txt"] == len("Revenue rose 12%.\nCosts fell.\n")
    assert sizes["backup/2024/memo.pdf"] == (tmp_path / "tree" / "2024" / "memo.pdf").stat().st_size
    # They cost nothing: the context holds each text once.
    (tmp_path / "ctx").mkdir()
    files = write_context(result.documents, tmp_path / "ctx")
    context = open(files.path, encoding="utf-8").read()
    assert context.count("Revenue rose 12%.") == 1 and context.count("memo page one") == 1
    assert result.total_chars == sum(d.chars for d in result.documents)


def test_citations_of_a_duplicate_resolve_live_and_stored(tmp_path):
    result = ingest_sync([duplicate_tree(tmp_path / "tree")], FAST)
    answer = ("Revenue rose [doc:2024/report.txt:line 1]; memo [doc:export.zip/2024/memo.pdf:page 2]"
              " [doc:backup/2024/unique.md:line 1] [doc:nowhere.txt:line 1]")
    live = resolve_citations(answer, result.documents)
    store = RunStore.open(tmp_path / "runs.db")
    try:
        store.save_sources("r1", result.documents, result.skipped)
        stored = resolve_citations(answer, store.documents("r1"))
    finally:
        store.close()
    for cites, docs in ((live, result.documents), (stored, None)):
        assert [c.ok for c in cites] == [True, True, True, False]
        report, memo = cites[0], cites[1]
        assert report.path == "2024/report.txt"
        assert report.document == [d.path for d in result.documents].index("report (copy).txt")
        assert memo.path == "export.zip/2024/memo.pdf" and memo.document == 0
        if docs is not None:
            assert docs[report.document].text[report.start:report.end] == "Revenue rose 12%."
            assert "memo page two" in docs[memo.document].text[memo.start:memo.end]
