"""`tables` in the REPL through the real engine: documents ingested by the real
workers, the tables file read by the real REPL worker, a ```repl cell from the
scripted server computing on them."""

from __future__ import annotations

from core.ingest import IngestOptions, ingest
from tests.integration.engine_helpers import code, of_type, run
from tests.unit.ingest import table_makers


async def _documents(tmp_path):
    folder = tmp_path / "data"
    folder.mkdir()
    table_makers.write_workbook(folder / "book.xlsx")
    (folder / "sales.csv").write_text("region,amount\nNorth,10\nSouth,2.5\nNorth,\n")
    (folder / "notes.txt").write_text("no tables here\n")
    result = await ingest([folder], IngestOptions(workers=2))
    return result.documents


async def test_repl_cell_computes_on_tables(server, tmp_path):
    docs = await _documents(tmp_path)
    server.script("root", replies=[
        code("print([(t['path'], t['sheet'], len(t['rows'])) for t in tables])\n"
             "orders = next(t for t in tables if t['sheet'] == 'Orders')\n"
             "i = orders['header'].index('Amount')\n"
             "total = sum(r[i] for r in orders['rows'] if r[i] is not None)\n"
             "sales = next(t for t in tables if t['path'] == 'sales.csv')\n"
             "csv_total = sum(r[1] or 0 for r in sales['rows'])\n"
             "dates = [r[0] for r in orders['rows'] if r[0]]\n"
             "tables = None   # overwritten by mistake: put back after the cell\n"),
        code("FINAL(f'{total} {csv_total} {dates[0]} {type(tables).__name__} {len(tables)}')"),
    ])
    result, events = await run(server, "Total of the orders?", docs)
    assert result.status == "finished", result.error
    assert result.answer == "1530.5 12.5 2024-03-01 list 3"
    printed = of_type(events, "CellExecuted")[0].stdout
    assert printed.strip() == ("[('book.xlsx', 'Orders', 4), ('book.xlsx', 'Q2 Costs', 2), "
                               "('sales.csv', None, 3)]")
    # `context` is as it was: the sheet as tab-separated text
    assert "Date\tRegion\tAmount" in docs[0].text
    system = server.requests_for("root")[0].messages[0]["content"]
    assert "`tables`: list of dicts" in system


async def test_stored_documents_get_their_tables_again(server):
    from core.store.queries import StoredDocument
    docs = [StoredDocument(path="s.csv", text="a,b\n1,x\n2,y\n", format="csv", chars=12,
                           sha256=None, text_sha256="")]
    server.script("root", replies=[code("FINAL(str(tables[0]['rows']))")])
    result, _ = await run(server, "rows?", docs)
    assert result.answer == "[[1, 'x'], [2, 'y']]"


async def test_a_small_roots_first_turn_names_each_table_with_its_columns(server, tmp_path):
    # The real 1.5B model summed a CSV column by splitting one line of its text and never used
    # `tables`; its first turn now names each table where it lists the document.
    docs = await _documents(tmp_path)
    server.script("tiny-1.5b", replies=[code("print(tables[2]['header'])"), code("FINAL('x')")])
    await run(server, "What is the total amount in sales.csv?", docs, root_model="openai/tiny-1.5b")
    first = server.requests_for("tiny-1.5b")[0].messages[1]["content"]
    book, notes, sales = first.split("- documents[")[1:4]
    assert book.startswith("0]: book.xlsx") and notes.startswith("1]: notes.txt") and sales.startswith("2]: sales.csv")
    assert "\n  a table: `tables[0]`, columns ['Date', 'Region', 'Amount', 'Paid', 'Note'], 4 rows\n" in book
    assert "\n  a table: `tables[1]`, columns ['Item', 'Cost'], 2 rows\n" in book
    assert "\n  a table: `tables[2]`, columns ['region', 'amount'], 3 rows\n" in sales
    assert "a table" not in notes
    second = server.requests_for("tiny-1.5b")[1].messages[-1]["content"]
    assert "['region', 'amount']" in second        # the numbering is the REPL's
    server.script("root", replies=[code("FINAL('x')")])
    await run(server, "What is the total amount in sales.csv?", docs)
    assert "a table: `tables[" not in server.requests_for("root")[0].messages[1]["content"]
