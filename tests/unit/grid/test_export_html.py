"""The grid's HTML report, written from a real grid in a real SQLite file and parsed back:
the table (values, states, costs), each cell's answer and citations with their passages;
model and file text escaped, control characters written out, only safe links live."""

from core.exports.export_grid import write_grid
from core.grid import store as gs
from core.grid.model import Column, Row
from core.store import RunStore
from core.store.db import connect, write_transaction
from tests.support.grid_html import GridPage


HOSTILE = ("12 [doc:a.txt:line 1] <script>alert(1)</script> [click](javascript:alert(2)) "
           "[site](https://example.com) ![x](http://evil/img.png) \x1b[31mred")


def test_the_html_report_holds_the_grid_escaped(tmp_path):
    RunStore.open(tmp_path / "runs.db").close()
    db = connect(tmp_path / "runs.db")
    cols = [Column("cap", "What is the cap?", "number"), Column("law", "Which law?")]
    rows = [Row("a<b>.txt", "s1", 10), Row("gone.pdf", error="gone.pdf could not be read: corrupt")]
    grid_id, _ = gs.open_grid(db, cols, rows, max_cost_usd=1.0)
    with write_transaction(db):
        gs.finish_cell(db, grid_id, gs.CellResult(
            0, 0, "done", HOSTILE, 12, cost_usd=0.0125, run_id="run-1",
            citations=[{"reference": "[doc:a.txt:line 1]", "path": "a.txt", "address": "line 1", "ok": True,
                        "passage": "Cap: 12 <img src=x onerror=alert(3)>"},
                       {"reference": "[doc:a.txt:line 99]", "path": "a.txt", "address": "line 99", "ok": False,
                        "problem": "line 99 is past the end (3 lines)"}]))
        gs.finish_cell(db, grid_id, gs.CellResult(0, 1, "limited", error="the grid's dollar cap $1.0000 is spent"))
    out = write_grid(gs.load_grid(db, grid_id), tmp_path / "grid.html")
    raw = out.read_text(encoding="utf-8")
    page = GridPage(raw)

    assert "script" not in page.tags and "img" not in page.tags and "iframe" not in page.tags
    assert "Content-Security-Policy" in raw and "default-src 'none'" in raw
    live = [h for h in page.links if h]
    assert "https://example.com" in live
    assert all(h.startswith(("http:", "https:", "mailto:", "#")) for h in live)
    assert "#cell-0-0" in live and "cell-0-0" in page.ids                   # the table links to the cell
    text = "".join(page.text)
    assert "<script>alert(1)</script>" in text                           # shown as text, not run
    assert "javascript:alert(2)" in text and "\x1b" not in raw and "\\u001b[31mred" in text
    assert "Cap: 12 <img src=x onerror=alert(3)>" in text               # the passage, as text
    assert "does not resolve: line 99 is past the end (3 lines)" in text
    assert page.cells[0].startswith("12") and "done · $0.0125" in page.cells[0]
    assert page.cells[1].startswith("(limited: the grid's dollar cap $1.0000 is spent)")
    assert "a<b>.txt" in text and "(failed: gone.pdf could not be read: corrupt)" in text
    assert "1 done, 2 failed, 1 limited, 0 not run; cost $0.0125 of a $1.0000 cap" in text
