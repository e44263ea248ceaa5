"""Settings > Documents: how sources are read. OCR of scanned pages and images (with
tesseract, what it costs in time, the languages it has, and a note when it is missing),
archives read as folders, tables read as tables, and the largest file read (any size by default).

The page shows what app/ found out about tesseract (`OcrInfo`); it runs nothing itself.
Its values are the settings file's "ingest" entry (app/settings.py ingest_options).
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QCheckBox, QComboBox, QFormLayout, QLabel, QSpinBox, QVBoxLayout, QWidget

OCR_COST = ("OCR reads each scanned PDF page and each image as a picture: expect about 2 to 10 "
            "seconds per page on one core, so a folder of scans takes minutes. Off, those pages "
            "and images are skipped and the Sources list says why. Text PDFs, documents and "
            "spreadsheets are read without OCR either way.")


@dataclass(frozen=True)
class OcrInfo:
    """What this computer's tesseract offers: its path ("" when missing), its languages,
    and how to install it."""
    path: str = ""
    languages: tuple[str, ...] = ()
    install_hint: str = ""


class DocumentsPage(QWidget):
    def __init__(self, ingest: dict, ocr: OcrInfo, parent=None) -> None:
        super().__init__(parent)
        self.setObjectName("documentsPage")
        self._ingest = dict(ingest)
        layout = QVBoxLayout(self)
        self.ocr_check = QCheckBox("Read scanned pages and images with OCR (tesseract)")
        self.ocr_check.setAccessibleName("Read scanned pages and images with OCR")
        self.ocr_check.setChecked(bool(ingest.get("ocr")))
        layout.addWidget(self.ocr_check)
        self.cost_label = _hint(OCR_COST)
        layout.addWidget(self.cost_label)
        form = QFormLayout()
        self.language_combo = QComboBox()
        self.language_combo.setEditable(True)            # "eng+deu" reads two at once
        self.language_combo.setAccessibleName("OCR language")
        self.language_combo.setToolTip("The language of the scans; join several with + (eng+deu)")
        languages = [lang for lang in ocr.languages if lang != "osd"]
        self.language_combo.addItems(languages)
        self.language_combo.setCurrentText(str(ingest.get("ocr_language") or
                                               ("eng" if "eng" in languages or not languages else languages[0])))
        form.addRow("Language", self.language_combo)
        layout.addLayout(form)
        if ocr.path:
            names = ", ".join(languages) or "none"
            self.tesseract_label = _hint(f"tesseract: {ocr.path} · languages installed: {names}.")
        else:
            self.tesseract_label = _hint(f"tesseract was not found on this computer, so OCR cannot run: "
                                         f"{ocr.install_hint}.")
            self.tesseract_label.setObjectName("warning")
            self.ocr_check.setEnabled(bool(ingest.get("ocr")))    # it can still be switched off
        layout.addWidget(self.tesseract_label)
        self.archives_check = QCheckBox("Read archives (ZIP, TAR) as folders")
        self.archives_check.setChecked(ingest.get("archives", True) is not False)
        self.tables_check = QCheckBox("Read spreadsheets and CSV files as tables")
        self.tables_check.setChecked(ingest.get("tables", True) is not False)
        layout.addWidget(self.archives_check)
        layout.addWidget(self.tables_check)
        size_form = QFormLayout()
        self.largest = QSpinBox()
        self.largest.setRange(0, 1024 * 1024)
        self.largest.setSingleStep(100)
        self.largest.setSuffix(" MB")
        self.largest.setSpecialValueText("any size")
        limit = ingest.get("max_file_mb")
        self.largest.setValue(int(limit) if isinstance(limit, (int, float)) and limit > 0 else 0)
        self.largest.setToolTip("Files on disk larger than this are skipped as too large; "
                                "0 reads a file of any size")
        self.largest.setAccessibleName("Largest file")
        size_form.addRow("Largest file", self.largest)
        layout.addLayout(size_form)
        layout.addWidget(_hint("A file on disk of any size is read unless you set a limit here "
                               "(archives are still measured as they inflate)."))
        layout.addStretch(1)

    def ingest(self) -> dict:
        """The settings file's "ingest" entry as edited (raises ValueError on a bad language)."""
        language = self.language_combo.currentText().strip() or "eng"
        if not language.replace("+", "").replace("_", "").isalnum():
            raise ValueError(f"the OCR language {language!r} must look like eng or eng+deu")
        return {**self._ingest, "ocr": self.ocr_check.isChecked(), "ocr_language": language,
                "archives": self.archives_check.isChecked(), "tables": self.tables_check.isChecked(),
                "max_file_mb": self.largest.value()}


def _hint(text: str) -> QLabel:
    label = QLabel(text)
    label.setWordWrap(True)
    label.setObjectName("hint")
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    return label
