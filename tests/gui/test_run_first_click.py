"""Typing a model name opens the type-ahead list under the picker; the first click on Run
closes the list and starts the run (Qt delivers a click outside an open popup to the popup,
and QCompleter's filter used to swallow it, so only the second click ran)."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication

from tests.support.gui_app import qloop, studio, studio_home  # noqa: F401
from ui.model_picker import ModelChoice


def click_while_popup_open(popup, button) -> None:
    """A click on `button` as Qt routes it while `popup` is open: to the popup, outside its rect."""
    at = button.mapToGlobal(button.rect().center())
    QTest.mouseClick(popup, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, popup.mapFromGlobal(at))


def test_the_first_click_on_run_after_typing_a_model_runs(studio, qapp):
    window, _controller = studio
    qp = window.question_panel
    qp.set_model_choices([ModelChoice("lab/coder-7b", "free", local=True),
                          ModelChoice("lab/coder-3b", "free", local=True)])
    runs: list[int] = []
    qp.run_requested.connect(lambda: runs.append(1))
    picker = qp.root_picker
    picker.lineEdit().setFocus()
    QTest.keyClicks(picker.lineEdit(), "lab/cod")
    popup = picker.completer().popup()
    assert popup.isVisible(), "typing shows the matching models under the field"
    at = qp.run_button.mapToGlobal(qp.run_button.rect().center())
    assert QApplication.widgetAt(at) is qp.run_button
    click_while_popup_open(popup, qp.run_button)
    for _ in range(3):
        qapp.processEvents()
    assert not popup.isVisible()
    assert runs == [1], "the first click on Run did not run"
    assert picker.model_id() == "lab/cod"             # what was typed stays (no pick was made)


def test_a_click_elsewhere_only_closes_the_list(studio, qapp):
    window, _controller = studio
    qp = window.question_panel
    qp.set_model_choices([ModelChoice("lab/coder-7b", "free", local=True)])
    runs: list[int] = []
    qp.run_requested.connect(lambda: runs.append(1))
    picker = qp.root_picker
    picker.lineEdit().setFocus()
    QTest.keyClicks(picker.lineEdit(), "coder")
    popup = picker.completer().popup()
    assert popup.isVisible()
    click_while_popup_open(popup, qp.question_box)    # not a button: nothing is pressed
    qapp.processEvents()
    assert not popup.isVisible() and runs == []
