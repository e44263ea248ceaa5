"""Under the question panel after a run: "Ask a follow-up" about the same documents.

States: hidden (no run yet); live (the run's REPL is alive: its variables
are reused); gone (the REPL is gone: the app was restarted, or the run was
opened from History; pressing the button explains the choices).
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, Qt, Signal
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton

from ui import icons


class FollowUpBar(QFrame):
    follow_up_requested = Signal()

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.setObjectName("followUpBar")
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 4, 0, 0)
        self.label = QLabel()
        self.label.setObjectName("hint")
        self.label.setWordWrap(True)
        self.label.installEventFilter(self)      # at its width: at most two lines, whole in the tooltip
        self._text = ""
        self.button = QPushButton("Ask a follow-up")
        self.button.setAccessibleName("Ask a follow-up about the same documents")
        icons.bind(self.button, "rerun")
        self.button.clicked.connect(self.follow_up_requested)
        layout.addWidget(self.label, 1)
        layout.addWidget(self.button)
        self.state = "hidden"
        self.hide()

    def set_state(self, state: str, text: str = "") -> None:
        """state: hidden | live | gone | busy."""
        self.state = state
        self._text = text
        self.label.setToolTip(text)
        self._fit_text()
        self.button.setEnabled(state in ("live", "gone"))
        self.setVisible(state != "hidden")
        tips = {"live": "Ask the question in the box in the same REPL: the variables the model built stay",
                "gone": "The REPL of that run is gone; you can start fresh (or rebuild it, where available)"}
        self.button.setToolTip(tips.get(state, ""))

    def text(self) -> str:
        """The whole sentence (the label may show it cut to two lines)."""
        return self._text

    def _fit_text(self) -> None:
        """Two lines at most beside the button, so Run keeps its room on a small screen."""
        fm = self.label.fontMetrics()
        room = max(1, self.label.width()) * 2 - fm.averageCharWidth() * 12
        self.label.setText(fm.elidedText(self._text, Qt.TextElideMode.ElideRight, max(room, 40)))

    def eventFilter(self, obj, event) -> bool:
        if obj is self.label and event.type() == QEvent.Type.Resize:
            self._fit_text()
        return super().eventFilter(obj, event)
