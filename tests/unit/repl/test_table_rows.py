"""A big CSV's table in the REPL, read from `context` itself (core/repl/table_rows.py): the
same rows and cells as the tables parsed up front (core/ingest/formats/tables.py), quoted
cells with commas, quotes and newlines included, from any row, without holding the rows."""

from __future__ import annotations

import pytest

from core.ingest.formats.tables import from_delimited
from core.repl import table_rows
from core.repl.context_file import read_context, write_context


def _csv(rows: int) -> str:
    lines = ["id,name,amount,note"]
    for i in range(rows):
        note = {0: '"two\nlines"', 1: '"a ""quoted"" word"', 2: '"comma, inside"'}.get(i % 7, "")
        lines.append(f"{i},name {i % 13},{i * 1.5 if i % 3 else i},{note}")
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("chunk", [64, 1000, table_rows.CHUNK])
def test_rows_read_from_the_text_match_the_parsed_table(monkeypatch, chunk):
    monkeypatch.setattr(table_rows, "CHUNK", chunk)
    text = _csv(2_000)
    parsed = from_delimited("t.csv", text, "csv", 10**9)[0]
    prefix = "=== t.csv ===\n"
    found = table_rows.lazy_table("t.csv", prefix + text + "\n\n", len(prefix), len(text), "csv")
    rows = found["rows"]
    assert found["header"] == parsed.header == ("id", "name", "amount", "note")
    assert len(rows) == len(parsed.rows) == 2_000
    assert list(rows) == list(parsed.rows)
    for i in (0, 1, 7, 699, 700, 1_999, -1):
        assert rows[i] == parsed.rows[i]
    assert rows[695:705] == list(parsed.rows[695:705]) and rows[::500] == list(parsed.rows[::500])
    assert rows[0][3] == "two\nlines" and rows[1][3] == 'a "quoted" word'
    # row i's line, for where(): the header is line 1, rows 0 and 7 take two lines: row 8 is line 12
    assert (prefix + text)[rows.offset(8):].startswith("8,name 8,")
    assert text.count("\n", 0, rows.offset(8) - len(prefix)) + 1 == 12
    with pytest.raises(IndexError, match="row index 2000 out of range"):
        rows[2_000]


def test_a_big_csv_gets_its_table_in_the_repl_and_a_small_one_keeps_the_parsed_one(tmp_path, monkeypatch):
    monkeypatch.setattr("core.repl.context_file.LAZY_TABLE_CHARS", 10_000)
    big = _csv(2_000)
    docs = [{"path": "big.csv", "text": big, "format": "csv", "tables": ()},
            {"path": "small.csv", "text": "a,b\n1,2\n", "format": "csv"}]
    files = write_context(docs, tmp_path)
    context, documents = read_context(files.path, files.index_path)
    lazy, small = documents[0]["tables"][0], documents[1]["tables"][0]
    assert isinstance(lazy["rows"], table_rows.Rows) and len(lazy["rows"]) == 2_000
    assert lazy["rows"][1_999] == (1999, "name 10", 2998.5, None)
    assert context[lazy["rows"].offset(3):].startswith("3,name 3,3,\n")
    assert small["rows"] == [[1, 2]] or list(small["rows"]) == [(1, 2)]
