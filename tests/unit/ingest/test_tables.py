"""Tables as data: CSV/TSV/XLSX parsed in the real ingest workers, typed cells,
and the tables file the REPL worker reads."""

from __future__ import annotations

import json

from core.ingest import IngestOptions, ingest_sync
from core.ingest.formats.tables import typed
from core.repl.context_file import TABLES_NAME, read_context, write_context
from tests.unit.ingest import table_makers

FAST = IngestOptions(per_file_timeout_s=20.0, workers=2)


def _ingest(tmp_path):
    folder = tmp_path / "t"
    folder.mkdir()
    table_makers.write_workbook(folder / "book.xlsx")
    (folder / "a.csv").write_text("name;score;when\nAnn;3.5;2024-01-02\nBob;;\n;7;x\n")
    (folder / "b.tsv").write_text("k\tv\n1\t1,234\n2\t-0.5e3\n")
    return ingest_sync([folder], FAST)


def test_sheets_and_csv_become_typed_tables(tmp_path):
    result = _ingest(tmp_path)
    assert result.skipped == []
    tables = [t for d in result.documents for t in d.tables]
    by_key = {(t.path, t.sheet): t for t in tables}
    assert list(by_key) == [("a.csv", None), ("b.tsv", None), ("book.xlsx", "Orders"),
                            ("book.xlsx", "Q2 Costs")]                 # "Empty" has none
    orders = by_key[("book.xlsx", "Orders")]
    assert orders.header == ("Date", "Region", "Amount", "Paid", "Note")
    assert orders.rows == (("2024-03-01", "North", 1200, True, None),
                           ("2024-03-02T14:30:00", "South", 250.5, False, "late"),
                           (None, None, None, None, None),
                           ("2024-03-04", "North", 80, None, "007"))
    assert by_key[("book.xlsx", "Q2 Costs")].rows == (("Rent", 900), ("Power", None))
    assert by_key[("a.csv", None)].header == ("name", "score", "when")
    assert by_key[("a.csv", None)].rows == (("Ann", 3.5, "2024-01-02"), ("Bob", None, None),
                                            (None, 7, "x"))
    assert by_key[("b.tsv", None)].rows == ((1, "1,234"), (2, -500.0))
    docs = {d.path: d for d in result.documents}
    assert "sheet Orders" in [s.address for s in docs["book.xlsx"].spans]   # text unchanged
    assert docs["a.csv"].text.startswith("name;score;when\n")


def test_typed_cells():
    assert [typed(v) for v in ("", " ", "0", "-12", "007", "3.25", "1e3", ".5", "1,5",
                                "2024-03-01", "TRUE", "nan", "12abc")] == \
        [None, None, 0, -12, "007", 3.25, 1000.0, 0.5, "1,5", "2024-03-01", "TRUE", "nan", "12abc"]


def test_tables_file_round_trip_and_stored_documents(tmp_path):
    result = _ingest(tmp_path)
    work = tmp_path / "ctx"
    work.mkdir()
    files = write_context(result.documents, work)
    assert (work / TABLES_NAME).is_file()
    _context, documents = read_context(files.path, files.index_path)
    read = [t for d in documents for t in d.get("tables", [])]
    assert read == [t.to_dict() for d in result.documents for t in d.tables]
    # A stored run's documents carry text, format and spans only: tables are parsed again.
    stored = [{"path": d.path, "text": d.text, "format": d.format, "spans": d.spans}
              for d in result.documents]
    files = write_context(stored, work)
    _context, documents = read_context(files.path, files.index_path)
    again = {(t["path"], t["sheet"]): t for d in documents for t in d.get("tables", [])}
    assert again[("book.xlsx", "Orders")]["rows"][0] == ["2024-03-01", "North", 1200, "TRUE", None]
    assert again[("a.csv", None)]["rows"] == [["Ann", 3.5, "2024-01-02"], ["Bob", None, None],
                                              [None, 7, "x"]]
    # No tables: no stale tables file from before.
    files = write_context([{"path": "x.txt", "text": "plain"}], work)
    assert not (work / TABLES_NAME).exists()
    assert json.loads((work / "context.index.json").read_text())[0].get("tables") is None


def test_tables_over_the_cell_cap_stay_text_only(tmp_path):
    table_makers.write_big_csv(tmp_path / "big.csv", 2000)
    result = ingest_sync([tmp_path / "big.csv"], IngestOptions(workers=1, max_table_cells=5000))
    assert result.documents[0].tables == () and result.documents[0].chars > 0
    result = ingest_sync([tmp_path / "big.csv"], IngestOptions(workers=1))
    table = result.documents[0].tables[0]
    assert len(table.rows) == 2000 and table.rows[1] == (1, "2024-03-02", "South", 9.25, "note 1, ok")


def test_tables_can_be_turned_off(tmp_path):
    (tmp_path / "a.csv").write_text("x,y\n1,2\n")
    result = ingest_sync([tmp_path], IngestOptions(workers=1, tables=False))
    assert result.documents[0].tables == ()
