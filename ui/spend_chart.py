"""SpendChart: dollars spent over the run's time, against the cap, in the meter.

A small line (about 160x20 px) drawn from `RunView.spend`: the x axis is the
run's time so far, the y axis runs up to the cap (or to the spend, with no cap);
a dashed line marks the cap. Repainted only when a point was added, so it
costs nothing while tokens stream.
"""

from __future__ import annotations

from PySide6.QtCore import QPointF, QRectF, QSize, Qt
from PySide6.QtGui import QColor, QPainter, QPainterPath, QPen
from PySide6.QtWidgets import QSizePolicy, QWidget


class SpendChart(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("spendChart")
        self.setAccessibleName("Dollars spent over time against the cap")
        self.setSizePolicy(QSizePolicy.Policy.Fixed, QSizePolicy.Policy.Fixed)
        self.points: list[tuple[float, float]] = []
        self.cap: float | None = None
        self.end_s = 0.0
        self.color = QColor("#2f6fdd")
        self.cap_color = QColor("#c53030")
        self.grid_color = QColor("#cfcdc7")
        self.fraction = 0.0

    def sizeHint(self) -> QSize:
        return QSize(160, 20)

    def set_data(self, points: list[tuple[float, float]], cap: float | None, end_s: float) -> bool:
        """Returns True when something changed (and a repaint was asked for)."""
        end_s = max(end_s, points[-1][0] if points else 0.0)
        key = (len(points), points[-1] if points else None, cap, round(end_s))
        if key == getattr(self, "_key", None):
            return False
        self._key = key
        self.points, self.cap, self.end_s = list(points), cap, end_s
        spent = points[-1][1] if points else 0.0
        self.fraction = spent / cap if cap else 0.0
        self.update()
        return True

    def set_colors(self, line: str, cap: str, grid: str) -> None:
        self.color, self.cap_color, self.grid_color = QColor(line), QColor(cap), QColor(grid)
        self.update()

    def paintEvent(self, _event) -> None:
        p = QPainter(self)
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        r = QRectF(self.rect()).adjusted(1, 2, -1, -2)
        p.setPen(QPen(self.grid_color, 1))
        p.drawRect(r)
        top = max(self.cap or 0.0, max((v for _, v in self.points), default=0.0)) or 1.0
        if self.cap:
            y = r.bottom() - r.height() * min(1.0, self.cap / top)
            pen = QPen(self.cap_color, 1, Qt.PenStyle.DashLine)
            p.setPen(pen)
            p.drawLine(QPointF(r.left(), y), QPointF(r.right(), y))
        if not self.points:
            return
        span = self.end_s or 1.0
        path = QPainterPath(QPointF(r.left(), r.bottom()))
        last_y = r.bottom()
        for t, v in self.points:          # a step line: spend changes when a call settles
            x = r.left() + r.width() * min(1.0, t / span)
            y = r.bottom() - r.height() * min(1.0, v / top)
            path.lineTo(QPointF(x, last_y))
            path.lineTo(QPointF(x, y))
            last_y = y
        path.lineTo(QPointF(r.right(), last_y))
        fill = QColor(self.color)
        fill.setAlpha(60)
        area = QPainterPath(path)
        area.lineTo(QPointF(r.right(), r.bottom()))
        area.closeSubpath()
        p.fillPath(area, fill)
        p.setPen(QPen(self.color, 1.5))
        p.drawPath(path)
