"""The two questions the main window asks the glue, each through a method of the window
(app/ never sets a widget's field: tests/unit/test_layering.py): may it close, and which
documents a stored run had (a re-run of those same documents replaces nothing)."""

from __future__ import annotations

from ui.history_pane import HistoryRow
from ui.main_window import MainWindow
from ui.sources_model import SourceRow


def _window(qtbot) -> MainWindow:
    window = MainWindow()
    qtbot.addWidget(window)
    window.show()
    return window


def test_the_close_guard_keeps_the_window_open_until_it_says_yes(qtbot):
    window = _window(qtbot)
    answers, closing = [False, True], []
    window.closing.connect(lambda: closing.append(True))
    window.guard_close(lambda: answers.pop(0))
    window.close()
    assert window.isVisible() and closing == [] and answers == [True]      # asked, and kept open
    window.close()
    assert not window.isVisible() and closing == [True] and answers == []


def test_a_rerun_of_the_listed_documents_is_not_confirmed_but_of_others_it_is(qtbot, answered_questions):
    window = _window(qtbot)
    window.sources_pane.set_rows([SourceRow("/docs/a.txt", "read"), SourceRow("/docs/b.txt", "read")])
    window.history_pane.set_rows([HistoryRow("run-1", "What was Q3 revenue?", "finished")])
    assert window.history_pane.select("run-1")
    asked_for: list[str] = []

    def paths_of(run_id: str) -> list[str] | None:
        asked_for.append(run_id)
        return {"run-1": ["/docs/b.txt", "/docs/a.txt"]}.get(run_id)
    window.know_run_documents(paths_of)
    rerun = window.history_pane.confirm_rerun
    assert rerun() and asked_for == ["run-1"] and answered_questions == []   # its own documents: no question
    window.sources_pane.set_rows([SourceRow("/docs/other.txt", "read")])
    assert rerun() and [title for title, _ in answered_questions] == ["Replace the sources?"]
