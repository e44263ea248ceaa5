"""A row of widgets that wraps onto more lines when its column is narrow (buttons
beside a blocked Run, Run and its neighbours): it asks for the width of its widest
item, never for the sum of them, so a narrow column never grows the window."""

from __future__ import annotations

from PySide6.QtCore import QPoint, QRect, QSize, Qt
from PySide6.QtWidgets import QLayout, QLayoutItem, QWidget


class FlowLayout(QLayout):
    def __init__(self, parent: QWidget | None = None, spacing: int = 6) -> None:
        super().__init__(parent)
        self._items: list[QLayoutItem] = []
        self._gap = spacing
        self.setContentsMargins(0, 0, 0, 0)

    # --- QLayout --------------------------------------------------------------
    def addItem(self, item: QLayoutItem) -> None:
        self._items.append(item)

    def count(self) -> int:
        return len(self._items)

    def itemAt(self, index: int) -> QLayoutItem | None:
        return self._items[index] if 0 <= index < len(self._items) else None

    def takeAt(self, index: int) -> QLayoutItem | None:
        return self._items.pop(index) if 0 <= index < len(self._items) else None

    def expandingDirections(self) -> Qt.Orientation:
        return Qt.Orientation(0)

    def hasHeightForWidth(self) -> bool:
        return True

    def heightForWidth(self, width: int) -> int:
        return self._arrange(QRect(0, 0, width, 0), apply=False)

    def setGeometry(self, rect: QRect) -> None:
        super().setGeometry(rect)
        self._arrange(rect, apply=True)

    def sizeHint(self) -> QSize:
        """One line of every item (what it would like)."""
        shown = self._shown()
        m = self.contentsMargins()
        width = sum(i.sizeHint().width() for i in shown) + self._gap * max(0, len(shown) - 1)
        height = max((i.sizeHint().height() for i in shown), default=0)
        return QSize(width + m.left() + m.right(), height + m.top() + m.bottom())

    def minimumSize(self) -> QSize:
        """As wide as the widest item: the rest wraps."""
        shown = self._shown()
        m = self.contentsMargins()
        width = max((i.minimumSize().width() for i in shown), default=0)
        height = max((i.minimumSize().height() for i in shown), default=0)
        return QSize(width + m.left() + m.right(), height + m.top() + m.bottom())

    # --- placing --------------------------------------------------------------
    def _shown(self) -> list[QLayoutItem]:
        return [i for i in self._items if not i.isEmpty()]

    def _arrange(self, rect: QRect, apply: bool) -> int:
        m = self.contentsMargins()
        area = rect.adjusted(m.left(), m.top(), -m.right(), -m.bottom())
        x, y, line = area.x(), area.y(), 0
        for item in self._shown():
            hint = item.sizeHint()
            width = min(hint.width(), max(area.width(), item.minimumSize().width()))
            if x > area.x() and x + width > area.right() + 1:
                x, y, line = area.x(), y + line + self._gap, 0
            if apply:
                item.setGeometry(QRect(QPoint(x, y), QSize(width, hint.height())))
            x += width + self._gap
            line = max(line, hint.height())
        return y + line - rect.y() + m.bottom()
