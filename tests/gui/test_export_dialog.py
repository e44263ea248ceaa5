"""Exports are what they say: the answer card's Export offers an HTML report under an
.html name, the file type follows the typed extension and the other way round, and a
name that is no export type is not saved silently (the real Qt save dialog, driven the
way a user does: type in its name field, pick a type, press Save)."""

from __future__ import annotations

import json
from html.parser import HTMLParser
from pathlib import Path

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication, QDialogButtonBox, QFileDialog

from tests.gui.test_window_names import run_once
from tests.gui.test_window_run import code, prepare
from tests.support.gui_app import qloop, studio, studio_home  # noqa: F401
from ui.export_dialog import ExportDialog, format_of


class Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []

    def handle_starttag(self, tag, attrs) -> None:
        self.tags.append(tag)


def finished_run(window, controller, server, tmp_path, qloop) -> str:
    server.script("sub", fn=lambda r: r.prompt.upper())
    server.script("root", replies=[code("FINAL('There are two files: **one.txt** and two.md.')")])
    prepare(window, controller, server, tmp_path, qloop)
    return run_once(window, controller, qloop).run_id


def when_the_dialog_shows(act) -> list:
    """Run `act(dialog)` on the save dialog once it is open (it is modal); returns what it saw."""
    seen: list = []

    def poll() -> None:
        dialog = QApplication.activeModalWidget()
        if isinstance(dialog, QFileDialog):
            seen.append((dialog.selectedNameFilter(), dialog.name_edit().text()))
            act(dialog)
        else:
            QTimer.singleShot(20, poll)
    QTimer.singleShot(20, poll)
    return seen


def press_save(dialog: QFileDialog) -> None:
    dialog.findChild(QDialogButtonBox).button(QDialogButtonBox.StandardButton.Save).click()


def test_export_with_the_default_type_is_an_html_report(studio, qloop, server, tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    window, controller = studio
    finished_run(window, controller, server, tmp_path, qloop)
    seen = when_the_dialog_shows(press_save)
    path = controller.history.export_current()
    assert seen and seen[0][0].startswith("HTML report") and seen[0][1].endswith(".html"), seen
    assert path and Path(path).suffix == ".html" and Path(path).parent == tmp_path
    text = Path(path).read_text(encoding="utf-8")
    assert not text.lstrip().startswith("{"), "JSON in an .html file"
    tags = Tags()
    tags.feed(text)
    assert tags.tags[:1] == ["html"] or "html" in tags.tags[:3], tags.tags[:5]
    assert {"head", "body"} <= set(tags.tags)
    assert "one.txt" in text
    assert window.open_file_button.isVisible()


def test_the_type_and_the_name_follow_each_other(studio, qloop, server, tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    window, controller = studio
    finished_run(window, controller, server, tmp_path, qloop)

    def type_json(dialog):                       # typed .json: the JSON type is picked
        dialog.name_edit().setText("")
        from PySide6.QtTest import QTest
        QTest.keyClicks(dialog.name_edit(), "record.json")
        assert dialog.selectedNameFilter().startswith("JSON")
        press_save(dialog)
    when_the_dialog_shows(type_json)
    path = controller.history.export_current()
    assert Path(path).name == "record.json"
    assert json.loads(Path(path).read_text(encoding="utf-8"))["format"] == "rlm-studio-run"

    def pick_markdown(dialog):                   # the Markdown type picked: the name says .md
        label = next(f for f in dialog.nameFilters() if f.startswith("Markdown"))
        dialog.selectNameFilter(label)
        dialog.filterSelected.emit(label)
        assert dialog.name_edit().text().endswith(".md"), dialog.name_edit().text()
        press_save(dialog)
    when_the_dialog_shows(pick_markdown)
    path = controller.history.export_current()
    assert Path(path).suffix == ".md" and Path(path).read_text(encoding="utf-8").lstrip().startswith("#")


def test_a_name_that_is_no_export_type_is_not_saved_silently(studio, qloop, server, tmp_path, monkeypatch,
                                                             answered_questions):
    monkeypatch.setenv("HOME", str(tmp_path))
    window, controller = studio
    finished_run(window, controller, server, tmp_path, qloop)

    def type_txt(dialog):
        dialog.name_edit().setText("report.txt")
        press_save(dialog)
    when_the_dialog_shows(type_txt)
    path = controller.history.export_current()
    assert answered_questions and answered_questions[-1][0] == "Which file name?"
    assert ".txt" in answered_questions[-1][1] and "report.html" in answered_questions[-1][1]
    assert Path(path).name == "report.html" and not (tmp_path / "report.txt").exists()
    assert "<html" in Path(path).read_text(encoding="utf-8").lower()


def test_the_dialog_offers_the_type_its_name_ends_with(qapp, tmp_path):
    for name, label in (("a.html", "HTML report"), ("a.md", "Markdown"), ("a.json", "JSON record")):
        dialog = ExportDialog(None, "Export run", str(tmp_path / name))
        try:
            assert dialog.selectedNameFilter().startswith(label), (name, dialog.selectedNameFilter())
            assert dialog.chosen_format() == format_of(name)
        finally:
            dialog.deleteLater()


def test_the_report_is_headed_by_the_whole_question(studio, qloop, server, tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    window, controller = studio
    question = ("Find the outage in the web shop log: when did card payments start failing and when "
                "did they work again, how many orders failed, and what was the cause?")
    server.script("root", replies=[code("FINAL('From 09:42 to 12:52.')")])
    prepare(window, controller, server, tmp_path, qloop)
    window.question_panel.set_question(question)
    run_id = run_once(window, controller, qloop).run_id
    for fmt in ("html", "md"):
        path = controller.history.export_run(run_id, fmt, str(tmp_path / f"report.{fmt}"))
        text = Path(path).read_text(encoding="utf-8")
        heading = (text.split("<h1>", 1)[1].split("</h1>", 1)[0] if fmt == "html"
                   else text.splitlines()[0].removeprefix("# "))
        assert heading.startswith(question + " · "), heading
