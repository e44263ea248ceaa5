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
