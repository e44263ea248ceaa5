"""Start-up, shortcuts, accessibility, the exception hook, layout restored."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
from pathlib import Path

from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import QAbstractButton, QToolButton

from tests.support.gui_app import qloop, run_async, studio, studio_home, wait_until  # noqa: F401

REPO = Path(__file__).resolve().parents[2]


def test_smoke_quit_after_starts_paints_and_quits(tmp_path):
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "RLMSTUDIO_DESKTOP_HOME": str(tmp_path)}
    code = ("import sys; from app.gui import run_gui; rc = run_gui(['--smoke-quit-after', '300']);"
            "print('litellm imported:', 'litellm' in sys.modules); sys.exit(rc)")
    proc = subprocess.run([sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "first paint after" in proc.stdout
    print(proc.stdout.strip())                                  # the start-up time, for the record
    assert "litellm imported: False" in proc.stdout             # kept off start-up
    assert (tmp_path / "settings.json").exists()                # the layout was saved on quit
    assert (tmp_path / "logs" / "rlm-studio.log").exists()


def test_entry_point_opens_the_window(tmp_path):
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "RLMSTUDIO_DESKTOP_HOME": str(tmp_path)}
    proc = subprocess.run([sys.executable, "-m", "app.main", "--smoke-quit-after", "200"], cwd=REPO,
                          env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "first paint after" in proc.stdout


def test_window_parts_shortcuts_and_accessible_names(studio, qloop):
    window, controller = studio
    run_async(qloop, wait_until(lambda: window._painted, what="first paint"))
    assert window.isVisible()
    shortcuts = {a.text(): {s.toString() for s in a.shortcuts()} for a in window.actions()}
    assert "Ctrl+Return" in shortcuts["Run"]
    assert {"Esc", "Ctrl+."} <= shortcuts["Stop"]
    assert "Ctrl+H" in shortcuts["History"]
    assert QKeySequence("Ctrl+,").toString() in shortcuts["Settings"]

    # Ctrl+H shows the history pane, again hides it.
    assert not window.history_pane.isVisible()
    window.history_action.trigger()
    assert window.history_pane.isVisible()
    window.history_action.trigger()
    assert not window.history_pane.isVisible()

    # Every button that shows only an icon has an accessible name.
    unnamed = [b for b in window.findChildren(QAbstractButton)
               if not b.text() and isinstance(b, QToolButton) and not b.accessibleName()
               and b.isVisibleTo(window) and b.objectName() != "qt_toolbar_ext_button"]
    assert unnamed == [], [b.toolTip() for b in unnamed]


def test_run_without_sources_says_what_to_do(studio, qloop):
    window, controller = studio
    window.question_panel.set_question("What changed?")
    window.question_panel.run_button.click()
    note = window.notifier.last
    assert note.level == "warning" and "no documents" in note.message
    assert "Drop files" in note.advice
    assert window.banner.isVisibleTo(window)
    assert controller.run_task is None


def test_excepthook_logs_and_shows_instead_of_crashing(studio, qloop, studio_home):
    from app.gui import install_excepthook, setup_logging
    window, _controller = studio
    saved, saved_thread = sys.excepthook, threading.excepthook
    try:
        log_path = setup_logging()
        install_excepthook(window.notifier, log_path)
        try:
            raise ZeroDivisionError("the slot divided by zero")
        except ZeroDivisionError:
            sys.excepthook(*sys.exc_info())
        worker = threading.Thread(target=lambda: [][1])                # IndexError in a thread
        worker.start()
        worker.join()
        run_async(qloop, wait_until(lambda: "IndexError" in window.notifier.last.message,
                                    what="the thread's error in the window"))
    finally:
        sys.excepthook, threading.excepthook = saved, saved_thread
    assert window.banner.isVisibleTo(window)
    assert "ZeroDivisionError" in window.notifier.history[-2].message
    assert log_path in window.notifier.last.advice
    assert "the slot divided by zero" in Path(log_path).read_text(encoding="utf-8")


def test_layout_and_last_used_choices_are_restored(qapp, qloop, studio_home):
    from app.gui import build_window
    window, controller = build_window(qapp)
    window.show()
    height = max(603, window.minimumSizeHint().height())
    window.resize(window.minimumSizeHint().width(), height)
    qapp.processEvents()
    window.left_splitter.setSizes([330, 200])
    window.question_panel.set_caps({"max_depth": 3, "max_cost_usd": 2.5, "max_iterations": 7})
    window.question_panel.set_models("openai/gpt-4o", "openai/gpt-4o-mini")
    qapp.processEvents()
    sizes = window.left_splitter.sizes()
    window.close()                                   # saves into settings.json's ui dict
    window.deleteLater()
    qapp.processEvents()

    again, controller2 = build_window(qapp)
    again.show()
    qapp.processEvents()
    try:
        assert again.height() == height     # (the offscreen screen is too narrow to test the width)
        assert not again.history_pane.isVisible()
        assert again.left_splitter.sizes() == sizes
        assert again.question_panel.caps() == {"max_depth": 3, "max_cost_usd": 2.5, "max_iterations": 7}
        assert (again.question_panel.root_model(), again.question_panel.sub_model()) == \
            ("openai/gpt-4o", "openai/gpt-4o-mini")
        again.restore_state({"history_visible": True})
        assert again.history_pane.isVisible() and again.history_action.isChecked()
    finally:
        run_async(qloop, controller2.shutdown())
        again.close()
        again.deleteLater()


def test_theme_switches_style_and_icons(qapp):
    from ui import icons, theme
    manager = theme.ThemeManager(qapp)
    assert manager.apply("dark") == "dark"
    assert theme.PALETTES["dark"]["bg"] in qapp.styleSheet()
    assert re.search(r"@[a-z_]+", qapp.styleSheet()) is None      # every variable filled
    assert manager.apply("light") == "light"
    assert theme.PALETTES["light"]["accent"] in qapp.styleSheet()
    assert manager.apply("system") in ("light", "dark")
    assert not icons.icon("run").isNull()
    try:
        icons.icon("no-such-icon")
    except icons.UnknownIcon as exc:
        assert "run" in str(exc)        # the message lists the names that exist
    else:
        raise AssertionError("an unknown icon name must fail loudly")
