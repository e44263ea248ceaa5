"""CoverageView: which parts of which documents the run actually looked at.

One row per document: its path, a bar of read (filled) and unread (empty)
stretches, and the percentage read; the total on top; warnings (a sub-call
that forwarded most of its parent's context without splitting it) below.

    view.set_coverage(CoverageShown(documents=[DocumentShown("a.txt", 1200, ((0, 300),))],
                                    warnings=["..."]))

The data is plain (app/trust_glue.py fills it from core.trust.coverage); the
widget only draws it.
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QColor, QPainter
from PySide6.QtWidgets import (QFrame, QGridLayout, QLabel, QScrollArea, QSizePolicy, QVBoxLayout,
                               QWidget)

from ui.highlight import is_dark
from ui.theme import PALETTES


@dataclass(frozen=True)
class DocumentShown:
    path: str
    chars: int
    read: tuple[tuple[int, int], ...] = ()     # [start, end) stretches looked at, sorted, merged

    @property
    def read_chars(self) -> int:
        return sum(max(0, min(e, self.chars) - max(s, 0)) for s, e in self.read)

    @property
    def fraction(self) -> float:
        return self.read_chars / self.chars if self.chars else 0.0


@dataclass(frozen=True)
class CoverageShown:
    documents: tuple[DocumentShown, ...] | list[DocumentShown] = ()
    warnings: tuple[str, ...] | list[str] = ()
    total_fraction: float | None = None        # None: computed from the documents

    @property
    def fraction(self) -> float:
        if self.total_fraction is not None:
            return self.total_fraction
        total = sum(d.chars for d in self.documents)
        return sum(d.read_chars for d in self.documents) / total if total else 0.0


def percent(fraction: float) -> str:
    value = fraction * 100
    if 0 < value < 1:
        return "<1%"
    if 99 < value < 100:
        return ">99%"
    return f"{value:.0f}%"


class CoverageBar(QWidget):
    """Read stretches filled, unread ones empty, over the document's length."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setMinimumHeight(12)
        self.setMaximumHeight(14)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.document = DocumentShown("", 0)

    def set_document(self, document: DocumentShown) -> None:
        self.document = document
        self.setToolTip(f"{document.path}: {document.read_chars:,} of {document.chars:,} characters read "
                        f"({percent(document.fraction)}) in {len(document.read)} stretch"
                        f"{'es' if len(document.read) != 1 else ''}")
        self.update()

    def paintEvent(self, _event) -> None:
        palette = PALETTES["dark" if is_dark() else "light"]
        painter = QPainter(self)
        rect = QRectF(self.rect()).adjusted(0.5, 0.5, -0.5, -0.5)
        painter.setPen(QColor(palette["border"]))
        painter.setBrush(QColor(palette["alt"]))
        painter.drawRect(rect)
        chars = self.document.chars
        if chars > 0:
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(QColor(palette["ok"]))
            width = rect.width()
            for start, end in self.document.read:
                x0 = rect.left() + width * max(0, start) / chars
                x1 = rect.left() + width * min(chars, end) / chars
                painter.drawRect(QRectF(x0, rect.top(), max(1.0, x1 - x0), rect.height()))
        painter.end()


class CoverageView(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("coverageView")
        self.setAccessibleName("Coverage")
        self.coverage = CoverageShown()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        self.total_label = QLabel("No run yet.", self)
        self.total_label.setObjectName("coverageTotal")
        self.total_label.setStyleSheet("QLabel { font-weight: bold; }")
        layout.addWidget(self.total_label)
        self.warnings_label = QLabel(self)
        self.warnings_label.setObjectName("coverageWarnings")
        self.warnings_label.setWordWrap(True)
        self.warnings_label.hide()
        layout.addWidget(self.warnings_label)
        scroll = QScrollArea(self)
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        self._rows_widget = QWidget()
        self._grid = QGridLayout(self._rows_widget)
        self._grid.setContentsMargins(0, 0, 0, 0)
        self._grid.setColumnStretch(1, 1)
        self._grid.setRowStretch(999, 1)
        scroll.setWidget(self._rows_widget)
        layout.addWidget(scroll, 1)
        self.bars: dict[str, CoverageBar] = {}
        self._labels: dict[str, tuple[QLabel, QLabel]] = {}

    def set_coverage(self, coverage: CoverageShown) -> None:
        self.coverage = coverage
        docs = list(coverage.documents)
        if [d.path for d in docs] != list(self.bars):
            self._rebuild([d.path for d in docs])
        for doc in docs:
            self.bars[doc.path].set_document(doc)
            self._labels[doc.path][1].setText(percent(doc.fraction))
        if docs:
            self.total_label.setText(f"Read {percent(coverage.fraction)} of {len(docs)} document"
                                     f"{'s' if len(docs) != 1 else ''}")
        else:
            self.total_label.setText("No run yet.")
        warnings = list(coverage.warnings)
        palette = PALETTES["dark" if is_dark() else "light"]
        self.warnings_label.setStyleSheet(f"QLabel {{ color: {palette['warning']}; }}")
        self.warnings_label.setText("\n".join(f"\u26a0 {w}" for w in warnings))
        self.warnings_label.setVisible(bool(warnings))

    def _rebuild(self, paths: list[str]) -> None:
        for bar in self.bars.values():
            bar.deleteLater()
        for name, pct in self._labels.values():
            name.deleteLater()
            pct.deleteLater()
        self.bars.clear()
        self._labels.clear()
        for row, path in enumerate(paths):
            name = QLabel(path, self._rows_widget)
            name.setToolTip(path)
            name.setMaximumWidth(220)
            bar = CoverageBar(self._rows_widget)
            pct = QLabel("", self._rows_widget)
            pct.setAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            pct.setMinimumWidth(40)
            self._grid.addWidget(name, row, 0)
            self._grid.addWidget(bar, row, 1)
            self._grid.addWidget(pct, row, 2)
            self.bars[path] = bar
            self._labels[path] = (name, pct)

    def percent_text(self, path: str) -> str:
        return self._labels[path][1].text() if path in self._labels else ""
