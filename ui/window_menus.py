"""The main window's menus: File, Edit, View, Run, Help; every toolbar action and
shortcut is also in one of them."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence


def build_menus(window) -> None:
    """File, Edit, View, Run, Help: every toolbar action and shortcut is also here."""
    bar = window.menuBar()
    sp, qp = window.sources_pane, window.question_panel
    window.open_folder_action = QAction("Open folder…", window)
    window.open_folder_action.setShortcut(QKeySequence.StandardKey.Open)        # Ctrl+O
    window.open_folder_action.triggered.connect(sp.choose_folder)
    window.add_files_action = QAction("Add files…", window)
    window.add_files_action.setShortcut(QKeySequence("Ctrl+Shift+O"))
    window.add_files_action.triggered.connect(sp.choose_files)
    window.export_action = QAction("Export the run…", window)
    window.export_action.setShortcut(QKeySequence("Ctrl+E"))
    window.export_action.triggered.connect(window.run_panes.export_requested)
    window.quit_action = QAction("Quit", window)
    window.quit_action.setShortcut(QKeySequence("Ctrl+Q"))
    window.quit_action.setMenuRole(QAction.MenuRole.QuitRole)
    window.quit_action.triggered.connect(window.close)
    window.find_action = QAction("Find in history…", window)
    window.find_action.setShortcut(QKeySequence.StandardKey.Find)               # Ctrl+F
    window.find_action.triggered.connect(window.find)
    window.copy_answer_action = QAction("Copy the answer", window)
    window.copy_answer_action.setShortcut(QKeySequence("Ctrl+Shift+C"))
    window.copy_answer_action.triggered.connect(window.copy_answer)
    window.question_action = QAction("Go to the question", window)
    window.question_action.setShortcut(QKeySequence("Ctrl+L"))
    window.question_action.triggered.connect(lambda: qp.question_box.setFocus())
    window.about_action = QAction("About RLM Studio", window)
    window.about_action.setMenuRole(QAction.MenuRole.AboutRole)
    window.about_action.triggered.connect(window.show_about)
    window.keys_help_action = QAction("Keyboard shortcuts", window)
    window.keys_help_action.triggered.connect(window.show_shortcuts)
    for action in (window.open_folder_action, window.add_files_action, window.export_action,
                   window.quit_action, window.find_action, window.copy_answer_action,
                   window.question_action):
        action.setShortcutContext(Qt.ShortcutContext.WindowShortcut)
        window.addAction(action)
    file_menu = bar.addMenu("&File")
    file_menu.addActions([window.open_folder_action, window.add_files_action])
    file_menu.addSeparator()
    file_menu.addAction(window.export_action)
    file_menu.addSeparator()
    file_menu.addAction(window.quit_action)
    edit_menu = bar.addMenu("&Edit")
    edit_menu.addActions([window.find_action, window.copy_answer_action, window.question_action])
    edit_menu.addSeparator()
    edit_menu.addAction(window.settings_action)
    window.view_menu = bar.addMenu("&View")
    window.view_menu.addActions([window.history_action, window.live_action])
    window.run_menu = bar.addMenu("&Run")
    window.run_menu.addActions([window.run_action, window.stop_action])
    window.help_menu = bar.addMenu("&Help")
    window.help_menu.addActions([window.keys_help_action, window.about_action])
    window.menus = {"file": file_menu, "edit": edit_menu, "view": window.view_menu,
                    "run": window.run_menu, "help": window.help_menu}
