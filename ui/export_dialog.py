"""The save dialog of a run export, where the file type and the name agree.

The type offered first is the one the suggested name ends with (an HTML report);
picking another type changes the name's extension, typing another known extension
picks its type, and a name whose extension is no export type is not saved before the
user says which name to use. `ask_export_path` returns (path, format) or None.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import QFileDialog, QLineEdit, QWidget

from ui import confirm

FORMATS = (("html", "HTML report (*.html)"), ("md", "Markdown (*.md)"), ("json", "JSON record (*.json)"))
SUFFIXES = {".html": "html", ".htm": "html", ".md": "md", ".markdown": "md", ".json": "json"}


def format_of(path: str | Path) -> str | None:
    """The export type a file name says ("html", "md", "json"), None for any other name."""
    return SUFFIXES.get(Path(path).suffix.lower())


class ExportDialog(QFileDialog):
    """Qt's own save dialog (the same on every desktop, so the type and the name can be
    kept in step), the types of FORMATS."""

    def __init__(self, parent: QWidget | None, title: str, suggested: str,
                 formats: tuple[tuple[str, str], ...] = FORMATS) -> None:
        super().__init__(parent, title)
        self.setObjectName("exportDialog")
        self.setAcceptMode(QFileDialog.AcceptMode.AcceptSave)
        self.setFileMode(QFileDialog.FileMode.AnyFile)
        self.setOption(QFileDialog.Option.DontUseNativeDialog, True)
        self._formats = dict(formats)
        self.setNameFilters([label for _fmt, label in formats])
        start = format_of(suggested) or formats[0][0]
        self.setDirectory(str(Path(suggested).parent))
        self.select_format(start)
        self.selectFile(Path(suggested).name)
        self.filterSelected.connect(self._type_picked)
        self.name_edit().textEdited.connect(self._name_typed)

    def name_edit(self) -> QLineEdit:
        return self.findChild(QLineEdit, "fileNameEdit")

    def chosen_format(self) -> str:
        label = self.selectedNameFilter()
        return next((fmt for fmt, text in self._formats.items() if text == label), next(iter(self._formats)))

    def select_format(self, fmt: str) -> None:
        self.selectNameFilter(self._formats[fmt])
        self.setDefaultSuffix(fmt)

    def _type_picked(self, label: str) -> None:
        """Another type: the name takes its extension."""
        fmt = next((f for f, text in self._formats.items() if text == label), None)
        if fmt is None:
            return
        self.setDefaultSuffix(fmt)
        edit = self.name_edit()
        name = edit.text().strip()
        if name and format_of(name) not in (None, fmt):
            edit.setText(str(Path(name).with_suffix(f".{fmt}")))
        elif name and not Path(name).suffix:
            edit.setText(f"{name}.{fmt}")

    def _name_typed(self, text: str) -> None:
        """A known extension typed: its type is picked."""
        fmt = format_of(text.strip())
        if fmt in self._formats and fmt != self.chosen_format():
            self.select_format(fmt)

    def accept(self) -> None:
        edit = self.name_edit()
        name = edit.text().strip()
        fmt = self.chosen_format()
        if name and Path(name).suffix and format_of(name) is None:
            fixed = str(Path(name).with_suffix(f".{fmt}"))
            answer = confirm.ask(self, "Which file name?",
                                 f"“{Path(name).suffix}” is not a type RLM Studio exports. The file would hold "
                                 f"{self._formats[fmt].split(' (')[0]}, so it is saved as {fixed}.",
                                 [("fix", f"Save as {fixed}"), ("back", "Change the name")])
            if answer != "fix":
                return
            edit.setText(fixed)
        elif name and format_of(name) not in (None, fmt):
            self.select_format(format_of(name))
        super().accept()

    def chosen(self) -> tuple[str, str] | None:
        files = self.selectedFiles()
        if not files:
            return None
        path = files[0]
        return path, format_of(path) or self.chosen_format()


def ask_export_path(parent: QWidget | None, title: str, suggested: str,
                    formats: tuple[tuple[str, str], ...] = FORMATS) -> tuple[str, str] | None:
    """Ask where to save; (path, format) with the format the name ends with, or None."""
    dialog = ExportDialog(parent, title, suggested, formats)
    try:
        if dialog.exec() != QFileDialog.DialogCode.Accepted:
            return None
        return dialog.chosen()
    finally:
        dialog.deleteLater()
