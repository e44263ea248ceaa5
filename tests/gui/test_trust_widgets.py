"""The trust widgets on their own (no window, no engine): citation formatting,
coverage bars, the sub-call table's filter, the approval dialog's answer."""

from __future__ import annotations

from ui.approval_dialog import ApprovalDialog, ApprovalShown, ApprovalThresholds
from ui.citation_text import CitationMark, CitationText, body_of, href_for
from ui.coverage_view import CoverageShown, CoverageView, DocumentShown, percent
from ui.results_table import ResultShown, ResultsTable
from ui.source_viewer import SourceViewer


def resolver(text):
    marks = []
    start = text.find("[doc:a.txt:line 2]")
    if start >= 0:
        marks.append(CitationMark(start, start + 18, "a.txt:line 2", "a.txt", "line 2", True, doc_range=(4, 8)))
    start = text.find("[doc:b.txt:page 9]")
    if start >= 0:
        marks.append(CitationMark(start, start + 18, "b.txt:page 9", "b.txt", "page 9", False, "b.txt has no 'page 9'"))
    return marks


def test_citation_text_links_and_flags(qapp):
    ct = CitationText(resolver, "#c53030")
    assert ct.render("no citations here") is None
    html = ct.render("Fact [doc:a.txt:line 2], doubt [doc:b.txt:page 9].")
    assert f'href="{href_for("a.txt:line 2")}"' in html
    assert html.count("line-through") == 1 and "#c53030" in html and "\u26a0" in html
    assert body_of(href_for("a.txt:line 2")) == "a.txt:line 2"
    assert "page 9" in ct.tooltip(href_for("b.txt:page 9")) and "points to nothing" in ct.tooltip(href_for("b.txt:page 9"))


def test_source_viewer_highlights_and_reports_missing(qtbot):
    class Doc:
        def __init__(self, path, text):
            self.path, self.text = path, text
    viewer = SourceViewer()
    qtbot.addWidget(viewer)
    viewer.set_documents([Doc("a.txt", "one\ntwo\nthree\n"), Doc("b.txt", "bee")])
    assert viewer.show_passage("a.txt", 4, 7, label="a.txt, line 2")
    assert viewer.selected_text() == "two" and viewer.text.textCursor().position() == 4
    assert not viewer.show_passage("zzz.txt", 0, 1)
    assert "not among" in viewer.note.text()
    viewer.show_missing("b.txt:page 9", "b.txt has no 'page 9'", path="b.txt")
    assert viewer.current_path == "b.txt" and viewer.passage is None and viewer.selected_text() == ""


def test_coverage_view_draws_read_stretches(qtbot):
    view = CoverageView()
    qtbot.addWidget(view)
    view.set_coverage(CoverageShown([DocumentShown("a.txt", 1000, ((0, 250), (500, 750))),
                                     DocumentShown("b.txt", 1000, ())], ["sub-call R.s1 forwards 90%"]))
    assert view.percent_text("a.txt") == "50%" and view.percent_text("b.txt") == "0%"
    assert view.total_label.text() == "Shown to a model: 25% of the text of 2 documents"
    assert "forwards" in view.warnings_label.text()
    assert "2 stretches" in view.bars["a.txt"].toolTip()
    view.bars["a.txt"].grab()                         # paints without error
    assert percent(0.004) == "<1%" and percent(0.996) == ">99%"


def test_results_table_filters(qtbot):
    table = ResultsTable()
    qtbot.addWidget(table)
    table.set_rows([ResultShown("R.s1", "ok", "m", "a.txt:line 1", "first prompt", "yes"),
                    ResultShown("R.s2", "error", "m", "", "second prompt", "boom")])
    assert table.count_label.text() == "2 sub-calls"
    table.status_combo.setCurrentIndex(table.status_combo.findData("error"))
    assert [r.call_id for r in table.visible_rows()] == ["R.s2"]
    table.status_combo.setCurrentIndex(0)
    table.filter_edit.setText("first yes")
    assert [r.call_id for r in table.visible_rows()] == ["R.s1"]


def test_approval_dialog_answers_once(qtbot):
    dialog = ApprovalDialog(None, ApprovalShown(calls=120, cost_high=0.5, model="m", reason="more than 50 calls"))
    qtbot.addWidget(dialog)
    answers = []
    dialog.decided.connect(answers.append)
    dialog.open()
    assert "120 sub-calls" in dialog.message.text() and "$0.5" in dialog.message.text()
    dialog.reject()                                    # Esc / closing refuses
    dialog.approve()                                   # too late: the answer stands
    assert answers == [False] and dialog.answer is False
    thresholds = ApprovalThresholds()
    qtbot.addWidget(thresholds)
    seen = []
    thresholds.changed.connect(seen.append)
    thresholds.set_values({"approve_batch_calls": 50})
    assert thresholds.values() == {"approve_batch_calls": 50, "approve_batch_usd": None} and seen == []
    thresholds.usd_spin.setValue(1.25)
    assert seen[-1] == {"approve_batch_calls": 50, "approve_batch_usd": 1.25}
