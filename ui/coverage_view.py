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
from ui.plain_text import plain


@dataclass(frozen=True)
class DocumentShown:
    path: str
    chars: int
    read: tuple[tuple[int, int], ...] = ()     # [start, end) stretches looked at, sorted, merged
    searched: bool = False                     # the code ran over it (searched, counted), shown or not

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


EXPLAIN = ("Green: text a model was shown (printed cell output the root saw, sub-call prompts).")
DETAIL = ("Tinted: documents the code ran over. Searching or counting reads all of a document "
          "without showing it to a model, so it does not count as shown.")


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
        self.setToolTip(plain(f"{document.path}: {document.read_chars:,} of {document.chars:,} characters read "
                        f"({percent(document.fraction)}) in {len(document.read)} stretch"
                        f"{'es' if len(document.read) != 1 else ''}"))
        self.update()

    def paintEvent(self, _event) -> None:
        palette = PALETTES["dark" if is_dark() else "light"]
        painter = QPainter(self)
        rect = QRectF(self.rect()).adjusted(0.5, 0.5, -0.5, -0.5)
        painter.setPen(QColor(palette["border"]))
        painter.setBrush(QColor(palette["alt"]))
        painter.drawRect(rect)
        paint_document(painter, palette, self.document, rect, tint=rect.adjusted(1, 1, -1, -1))
        painter.end()


def paint_document(painter: QPainter, palette: dict[str, str], doc: DocumentShown, rect: QRectF,
                   tint: QRectF | None = None) -> None:
    """One document in `rect`: tinted where code ran over all of it (in `tint`, default
    `rect`), filled where its text was shown to a model."""
    painter.setPen(Qt.PenStyle.NoPen)
    if doc.searched:
        painter.setBrush(searched_color(palette))
        painter.drawRect(tint if tint is not None else rect)
    if doc.chars <= 0:
        return
    painter.setBrush(QColor(palette["ok"]))
    for start, end in doc.read:
        x0 = rect.left() + rect.width() * max(0, start) / doc.chars
        x1 = rect.left() + rect.width() * min(doc.chars, end) / doc.chars
        painter.drawRect(QRectF(x0, rect.top(), max(1.0, x1 - x0), rect.height()))


def searched_color(palette: dict[str, str]) -> QColor:
    color = QColor(palette["accent"])
    color.setAlpha(55)
    return color


class OverviewStrip(QWidget):
    """Every document side by side, as wide as its share of the text: shown to a model
    (filled), searched by code (tinted), untouched (empty). One look at the whole run."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("coverageOverview")
        self.setAccessibleName("What was read, all documents")
        self.setMinimumHeight(16)
        self.setMaximumHeight(16)
        self.documents: list[DocumentShown] = []

    def set_documents(self, documents: list[DocumentShown]) -> None:
        self.documents = list(documents)
        self.update()

    def paintEvent(self, _event) -> None:
        palette = PALETTES["dark" if is_dark() else "light"]
        painter = QPainter(self)
        rect = QRectF(self.rect()).adjusted(0.5, 0.5, -0.5, -0.5)
        painter.setPen(QColor(palette["border"]))
        painter.setBrush(QColor(palette["alt"]))
        painter.drawRect(rect)
        total = sum(d.chars for d in self.documents)
        if total <= 0:
            painter.end()
            return
        x = rect.left()
        for doc in self.documents:
            width = rect.width() * doc.chars / total
            paint_document(painter, palette, doc, QRectF(x, rect.top(), width, rect.height()))
            x += width
            painter.setPen(QColor(palette["border"]))         # where one document ends
            painter.drawLine(QRectF(x, rect.top(), 0, rect.height()).topLeft(),
                             QRectF(x, rect.top(), 0, rect.height()).bottomLeft())
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
        self.total_label.setWordWrap(True)
        layout.addWidget(self.total_label)
        self.overview = OverviewStrip(self)
        layout.addWidget(self.overview)
        self.explain_label = QLabel(self)
        self.explain_label.setObjectName("hint")
        self.explain_label.setWordWrap(True)
        self.explain_label.setText(EXPLAIN)
        self.explain_label.setToolTip(DETAIL)
        layout.addWidget(self.explain_label)
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
        self.overview.set_documents(docs)
        if docs:
            searched = sum(1 for d in docs if d.searched)
            self.total_label.setText(f"Shown to a model: {percent(coverage.fraction)} of the text of "
                                     f"{len(docs)} document{'s' if len(docs) != 1 else ''}")
            self.total_label.setToolTip(EXPLAIN)
            reach = (f"tinted: code ran over it ({searched} of {len(docs)})" if searched else
                     "no cell's code went through the documents")
            self.explain_label.setText(f"Green: shown to a model · {reach}")
            self.explain_label.setToolTip(f"{EXPLAIN} {DETAIL}")
        else:
            self.total_label.setText("No run yet.")
            self.explain_label.setText(EXPLAIN)
        warnings = list(coverage.warnings)
        palette = PALETTES["dark" if is_dark() else "light"]
        self.warnings_label.setStyleSheet(f"QLabel {{ color: {palette['warning']}; }}")
        self.warnings_label.setText(plain("\n".join(f"\u26a0 {w}" for w in warnings)))
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
            name = QLabel(plain(path), self._rows_widget)
            name.setToolTip(plain(path))
            name.setMaximumWidth(220)
            name.setMinimumWidth(48)            # a long path is cut (its tooltip has it all)
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
