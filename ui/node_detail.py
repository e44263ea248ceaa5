"""NodeDetail: the full texts of the selected call-tree node, read-only, with copy.

A header line (kind, id, status, model, tokens, cost, latency) and one tab per
text the fold gives for the node (`RunView.node_texts`): Prompt/Response/Error
for sub-calls, Code/Output/Error for cells, Reply for turns, Question/Answer
for the run.
"""

from __future__ import annotations

import html

from core.control_chars import escape_controls
from PySide6.QtGui import QFontDatabase, QGuiApplication
from PySide6.QtWidgets import (QHBoxLayout, QLabel, QPlainTextEdit, QPushButton, QTabWidget,
                               QVBoxLayout, QWidget)

from core.runview import RunView
from ui.cost_meter import money


class NodeDetail(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("nodeDetail")
        self.node_id: str | None = None
        self._titles: list[str] = []
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        top = QHBoxLayout()
        self.header = QLabel("Select a call in the tree to see its prompt and response.", self)
        self.header.setObjectName("nodeHeader")
        self.header.setWordWrap(True)
        self.header.setAccessibleName("Selected call")
        self.copy_button = QPushButton("Copy", self)
        self.copy_button.setAccessibleName("Copy the shown text")
        self.copy_button.setToolTip("Copy the text of the current tab")
        self.copy_button.clicked.connect(self.copy_current)
        self.copy_button.setEnabled(False)
        top.addWidget(self.header, 1)
        top.addWidget(self.copy_button)
        layout.addLayout(top)
        self.tabs = QTabWidget(self)
        self.tabs.setDocumentMode(True)
        layout.addWidget(self.tabs, 1)
        self._font = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)

    def texts(self) -> dict[str, str]:
        """Shown texts by tab title (for tests and copy)."""
        return {self.tabs.tabText(i): self._editor(i).toPlainText() for i in range(self.tabs.count())}

    def _editor(self, i: int) -> QPlainTextEdit:
        widget = self.tabs.widget(i)
        assert isinstance(widget, QPlainTextEdit)
        return widget

    def clear(self) -> None:
        self.node_id = None
        self._titles = []
        self.tabs.clear()
        self.header.setText("Select a call in the tree to see its prompt and response.")
        self.copy_button.setEnabled(False)

    def show_node(self, view: RunView, node_id: str | None) -> None:
        node = view.nodes.get(node_id) if node_id else None
        if node is None:
            self.clear()
            return
        self.node_id = node_id
        bits = [f"<b>{html.escape(node.label)}</b>", html.escape(node.id), html.escape(node.status)]
        if node.model:
            bits.append(html.escape(node.model))
        if node.input_tokens or node.output_tokens:
            bits.append(f"{node.input_tokens:,} in / {node.output_tokens:,} out tokens")
        if node.subtree_cost_usd != node.cost_usd:        # calls below it: what it and they cost
            bits.append(f"{money(node.cost_usd)} own, {money(node.subtree_cost_usd)} with the calls below")
        elif node.cost_usd:
            bits.append(money(node.cost_usd))
        if node.duration_ms is not None:
            bits.append(f"{node.duration_ms / 1000:.2f} s")
        self.header.setText(" · ".join(bits))
        texts = view.node_texts(node.id)
        titles = [t for t, _ in texts]
        if titles != self._titles:
            current = self.tabs.currentIndex()
            self.tabs.clear()
            for title, _ in texts:
                editor = QPlainTextEdit(self.tabs)
                editor.setReadOnly(True)
                editor.setFont(self._font)
                editor.setAccessibleName(title)
                self.tabs.addTab(editor, title)
            self._titles = titles
            if 0 <= current < len(titles):
                self.tabs.setCurrentIndex(current)
        for i, (_, text) in enumerate(texts):
            text = escape_controls(text)     # prompts and responses: control characters as \u00XX
            editor = self._editor(i)
            if editor.toPlainText() != text:
                editor.setPlainText(text)
        self.copy_button.setEnabled(bool(texts))

    def copy_current(self) -> None:
        i = self.tabs.currentIndex()
        if i >= 0:
            QGuiApplication.clipboard().setText(self._editor(i).toPlainText())
