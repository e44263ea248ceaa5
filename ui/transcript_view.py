"""Transcript: the top-level RLM's turns as they stream, one card per turn.

A QScrollArea holding a column of small widgets, in the order of
`RunView.timeline`: turn cards (the model's prose, then its code cells with
output and errors), notices, and the final answer card (Copy, Export).
Nothing is re-rendered per token: `note(change)` only marks what is dirty and
`flush()` (called by RunPanes' ~30 Hz timer, or once after a bulk apply)
updates just those widgets: the streaming turn's text is set once per flush,
a replied turn is rendered as Markdown once, a finished cell is built once.
Nested RLMs' turns are not listed here; they are in the call tree.
"""

from __future__ import annotations

import logging

from core.control_chars import escape_controls
from PySide6.QtCore import QEvent, QPoint, Qt, QTimer, Signal
from PySide6.QtGui import QCursor, QFont, QFontDatabase, QGuiApplication
from PySide6.QtWidgets import (QFrame, QHBoxLayout, QLabel, QPushButton, QScrollArea, QSizePolicy, QToolTip,
                               QToolButton, QVBoxLayout, QWidget)

from core import limits
from core.runview import Cell, Change, RunView, Turn
from core.plain_call import plain_call_line
from core.support import unsupported_line
from ui.cost_meter import clock, cost_text, money
from ui.highlight import code_html, is_dark
from ui.notifier import error_in_words
from ui.theme import PALETTES
from ui.transcript_text import (ENDED_WORDS, OUTPUT_CHARS, OUTPUT_LINES, RETRY_MARK,  # noqa: F401
                                 breakable, retry_line, truncate_output)
from ui.plain_text import markdown_html, plain
from ui.rows import counted

log = logging.getLogger(__name__)

EXPANDED_CHARS = 200_000     # beyond this, the detail panel has the whole text
_RESIZING_EVENTS = frozenset({QEvent.Type.StyleChange, QEvent.Type.FontChange, QEvent.Type.ContentsRectChange,
                              QEvent.Type.LayoutDirectionChange})
GROUP_SIZE = 8               # transcript items per layout group
FAULT_NAMES = {"timeout": "Timeout", "crash": "Worker crashed", "memory": "Out of memory"}
class WrapLabel(QLabel):
    """A word-wrapped QLabel that remembers its height for a width until its
    text changes. QLabel recomputes it on every layout pass, which made each
    transcript update cost time in proportion to the whole run."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._hfw: dict[int, int] = {}

    def setText(self, text: str) -> None:  # type: ignore[override]
        # Model, cell and file-name text: control characters shown as \u00XX (Qt would break
        # lines at some, drop others, and a copied transcript would carry them to a terminal).
        self._hfw.clear()
        super().setText(escape_controls(text))

    def setTextFormat(self, fmt: Qt.TextFormat) -> None:  # type: ignore[override]
        self._hfw.clear()
        super().setTextFormat(fmt)

    def setFont(self, font: QFont) -> None:  # type: ignore[override]
        self._hfw.clear()
        super().setFont(font)

    def changeEvent(self, event: QEvent) -> None:
        if event.type() in _RESIZING_EVENTS:     # style sheet, font, margins: the height changes
            self._hfw.clear()
        super().changeEvent(event)

    def heightForWidth(self, width: int) -> int:
        height = self._hfw.get(width)
        if height is None:
            height = super().heightForWidth(width)
            if self.testAttribute(Qt.WidgetAttribute.WA_WState_Polished):   # style sheet margins known
                if len(self._hfw) > 8:
                    self._hfw.clear()
                self._hfw[width] = height
        return height


def make_label(text: str, parent: QWidget | None = None, fmt: Qt.TextFormat = Qt.TextFormat.PlainText) -> QLabel:
    label = WrapLabel(parent)
    label.setTextFormat(fmt)
    label.setWordWrap(True)
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse
                                  | Qt.TextInteractionFlag.LinksAccessibleByMouse)
    label.setOpenExternalLinks(False)
    # The column's width decides, not the longest line: long lines wrap (or are
    # clipped), so the transcript never grows wider than its pane.
    label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
    label.setText(text)
    return label


def set_markdown(label: QLabel, text: str, citations=None) -> None:
    """Markdown into a label; `citations` (ui.citation_text.CitationText, set by
    app/trust_glue.py) turns `[doc:PATH:ADDRESS]` into links, flagging dangling ones."""
    label.setProperty("markdown", text)       # the source, for copying (the label holds HTML)
    html = citations.render(text) if citations is not None else None
    if html is None:
        label.setTextFormat(Qt.TextFormat.RichText)
        label.setText(markdown_html(text))     # raw HTML in a reply shown as text, not rendered
    else:
        label.setTextFormat(Qt.TextFormat.RichText)
        label.setText(html)


class CellBlock(QFrame):
    """One code cell: highlighted code, output (truncated, expandable), error."""

    def __init__(self, colors: dict[str, str], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("cellBlock")
        self.colors = colors
        self.code_text = ""
        self.output_text = ""
        self.shown_output = ""
        self.error_text = ""
        self.error_kind: str | None = None
        self.done = False
        self._expanded = False
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 4, 6, 4)
        layout.setSpacing(3)
        self.title = make_label("", self)
        self.title.setObjectName("cellTitle")
        self.code = make_label("", self, Qt.TextFormat.RichText)
        self.code.setObjectName("cellCode")
        self.code.setStyleSheet(f"QLabel {{ background-color: {colors['alt']}; border: 1px solid"
                                f" {colors['border']}; border-radius: 3px; padding: 4px; }}")
        self.output = make_label("", self)
        self.output.setObjectName("cellOutput")
        self.output.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.expand = QToolButton(self)
        self.expand.setObjectName("expandOutput")
        self.expand.clicked.connect(self.toggle_output)
        self.error = make_label("", self)
        self.error.setObjectName("cellError")
        self.error.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.calls = make_label("", self)
        self.calls.setObjectName("hint")
        for w in (self.title, self.code, self.output, self.expand, self.error, self.calls):
            layout.addWidget(w)
        for w in (self.output, self.expand, self.error, self.calls):
            w.hide()

    def refresh(self, cell: Cell, view: RunView) -> None:
        if cell.code != self.code_text:
            self.code_text = cell.code
            self.code.setText(code_html(cell.code, is_dark()))
        if self.done or not cell.done:
            if not cell.done:
                ended = ENDED_WORDS.get(view.status) if view.finished else None
                self.title.setText(f"Cell {cell.index} · {ended}" if ended else f"Cell {cell.index} · running…")
            return
        self.done = True
        took = f" · {cell.duration_ms / 1000:.2f} s" if cell.duration_ms is not None else ""
        self.title.setText(f"Cell {cell.index}{took}")
        self.output_text = cell.output
        self._show_output()
        self.error_kind = cell.error_kind
        if cell.error:
            self._show_error(cell)
        node = view.nodes.get(cell.id)
        if node is not None and node.children:
            statuses = [c.status for c in node.children]
            summary = ", ".join(f"{statuses.count(s)} {s}" for s in dict.fromkeys(statuses))
            self.calls.setText(f"{len(statuses)} sub-call{'s' if len(statuses) != 1 else ''}: {summary}")
            self.calls.show()

    def _show_error(self, cell: Cell) -> None:
        c = self.colors
        if cell.fault:
            badge = FAULT_NAMES.get(cell.fault, cell.fault)
            if cell.restarted:
                badge += " (the REPL was restarted)"
            style = f"color: {c['error']}; background-color: {c['error_bg']}; border: 2px dashed {c['error']};"
        elif cell.is_syntax_error:
            badge = "Syntax error"
            style = f"color: {c['warning']}; background-color: {c['warning_bg']}; border: 1px solid {c['warning']};"
        else:
            badge = "Runtime error"
            style = f"color: {c['error']}; background-color: {c['error_bg']}; border: 1px solid {c['error']};"
        self.error_text = f"{badge}\n{cell.error}"
        self.error.setText(breakable(self.error_text))
        self.error.setProperty("errorKind", cell.error_kind)
        self.error.setAccessibleName(badge)
        self.error.setStyleSheet(f"QLabel {{ {style} border-radius: 3px; padding: 4px; }}")
        self.error.show()

    def _show_output(self) -> None:
        text = self.output_text
        if not text:
            return
        head, cut = truncate_output(text)
        if self._expanded or not cut:
            shown = text.rstrip("\n")[:EXPANDED_CHARS]
            if len(text) > EXPANDED_CHARS:
                shown += f"\n[... {len(text) - EXPANDED_CHARS:,} more characters: see the call tree's detail]"
        else:
            shown = head
        self.shown_output = shown
        self.output.setText(breakable(shown))
        self.output.show()
        if cut:
            lines = text.count("\n") + 1
            self.expand.setText("Show less" if self._expanded else f"Show all ({lines:,} lines, {len(text):,} chars)")
            self.expand.setAccessibleName("Collapse the output" if self._expanded else "Expand the output")
            self.expand.show()

    def toggle_output(self) -> None:
        self._expanded = not self._expanded
        self._show_output()

    @property
    def expanded(self) -> bool:
        return self._expanded

    def plain_text(self) -> str:
        return "\n".join(t for t in (self.title.text(), self.code_text, self.shown_output, self.error_text) if t)


class TurnCard(QFrame):
    """One root turn: a header, the prose (streamed, then Markdown), its cells."""
    link_activated = Signal(str)
    citations = None             # ui.citation_text.CitationText, from the Transcript

    def __init__(self, colors: dict[str, str], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("turnCard")
        self.colors = colors
        self.replied = False
        self._shown_len = -1
        self.blocks: list[CellBlock] = []
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(4)
        self.header = make_label("", self)
        self.header.setObjectName("turnHeader")
        self.header.setStyleSheet(f"QLabel {{ color: {colors['muted']}; font-weight: bold; }}")
        self.prose = make_label("", self)
        self.prose.setObjectName("turnProse")
        self.prose.linkActivated.connect(self.link_activated)
        layout.addWidget(self.header)
        layout.addWidget(self.prose)
        self._cells = QVBoxLayout()
        self._cells.setSpacing(6)
        layout.addLayout(self._cells)

    def refresh(self, turn: Turn, view: RunView) -> None:
        title = f"Turn {turn.iteration}" + (" · final answer request" if turn.final_request else "")
        if turn.replied:
            if not self.replied:
                self.replied = True
                self.header.setText(f"{title} · {turn.model} · {turn.input_tokens:,} in / "
                                    f"{turn.output_tokens:,} out · {money(turn.cost_usd)} · "
                                    f"{(turn.duration_ms or 0) / 1000:.1f} s")
                prose = turn.prose
                set_markdown(self.prose, prose, self.citations)
                self.prose.setVisible(bool(prose))
        else:
            text = turn.text
            ended = ENDED_WORDS.get(view.status) if view.finished else None
            if ended:
                self.header.setText(f"{title} · {turn.model} · {ended}")
            if len(text) != self._shown_len:
                if self._shown_len < 0 and not ended:
                    self.header.setText(f"{title} · {turn.model} · streaming…")
                self._shown_len = len(text)
                self.prose.setText(text)
        for i, cell in enumerate(turn.cells):
            if i == len(self.blocks):
                block = CellBlock(self.colors, self)
                self._cells.addWidget(block)
                self.blocks.append(block)
            self.blocks[i].refresh(cell, view)

    def plain_text(self) -> str:
        parts = [self.header.text(), self.prose.property("markdown") or self.prose.text()] + \
            [b.plain_text() for b in self.blocks]
        return "\n".join(p for p in parts if p)


class AnswerCard(QFrame):
    """The run's outcome: the answer (Markdown) with Copy and Export, or the error; an amber
    flag when a cap or limit changed what the run did (core/limits.py), with its fix."""
    copied = Signal()
    export_requested = Signal()
    link_activated = Signal(str)
    limit_fix_requested = Signal(str)     # a fix action id: "cost", "sub_calls", "prices", "cell_time"
    citations = None             # ui.citation_text.CitationText, from the Transcript

    def __init__(self, colors: dict[str, str], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("answerCard")
        self.setAccessibleName("Final answer")
        self.answer = ""
        self.setStyleSheet(f"QFrame#answerCard {{ border: 2px solid {colors['accent']}; border-radius: 6px;"
                           f" background-color: {colors['input']}; }}"
                           f" QFrame#answerCard QLabel {{ background-color: transparent; }}")
        self.colors = colors
        layout = QVBoxLayout(self)
        top = QHBoxLayout()
        self.title = make_label("Answer", self)
        self.title.setObjectName("answerTitle")
        self.title.setStyleSheet("QLabel { font-weight: bold; font-size: 110%; }")
        self.copy_button = QPushButton("Copy", self)
        self.copy_button.setObjectName("copyAnswer")
        self.copy_button.setAccessibleName("Copy the answer")
        self.copy_button.clicked.connect(self.copy)
        self.export_button = QPushButton("Export…", self)
        self.export_button.setObjectName("exportRun")
        self.export_button.setAccessibleName("Export the run")
        self.export_button.clicked.connect(self.export_requested)
        top.addWidget(self.title, 1)
        top.addWidget(self.copy_button)
        top.addWidget(self.export_button)
        layout.addLayout(top)
        self.body = make_label("", self, Qt.TextFormat.MarkdownText)
        self.body.setObjectName("answerText")
        self.body.linkActivated.connect(self.link_activated)
        self.error = make_label("", self)
        self.error.setObjectName("answerError")
        self.error.setStyleSheet(f"QLabel {{ color: {colors['error']}; }}")
        self.unsupported = make_label("", self)      # values nothing the run read holds
        self.unsupported.setObjectName("answerUnsupported")
        self.unsupported.setStyleSheet(f"QLabel {{ color: {colors['error']}; }}")
        self.unsupported.setVisible(False)
        self.figures = make_label("", self)
        self.figures.setObjectName("hint")
        self.limited = QFrame(self)
        self.limited.setObjectName("answerLimited")
        self.limited.setStyleSheet(f"QFrame#answerLimited {{ border: 1px solid {colors['warning']};"
                                   f" border-radius: 4px; background-color: {colors['warning_bg']}; }}")
        row = QHBoxLayout(self.limited)
        row.setContentsMargins(6, 4, 6, 4)
        self.limited_text = make_label("", self.limited)
        self.limited_text.setObjectName("answerLimitedText")
        self.limited_text.setStyleSheet(f"QLabel {{ color: {colors['warning']}; }}")
        self.limited_text.setAccessibleName("What the caps changed")
        self.fix_button = QPushButton("", self.limited)
        self.fix_button.setObjectName("answerLimitedFix")
        self.fix_button.clicked.connect(lambda: self.limit_fix_requested.emit(self._fix_action))
        self._fix_action = ""
        row.addWidget(self.limited_text, 1)
        row.addWidget(self.fix_button, 0, Qt.AlignmentFlag.AlignTop)
        self.limited.hide()
        layout.addWidget(self.body)
        layout.addWidget(self.limited)
        for w in (self.unsupported, self.error, self.figures):
            layout.addWidget(w)

    def refresh(self, view: RunView) -> None:
        status = view.status
        self.answer = view.answer or ""
        titles = {"finished": "Answer", "capped": "Answer (a cap was reached: best answer so far)",
                  "failed": "Run failed", "cancelled": "Run stopped"}
        self.title.setText(titles.get(status, status))
        set_markdown(self.body, self.answer or "*No answer.*", self.citations)
        self.copy_button.setEnabled(bool(self.answer))
        self.error.setText(error_in_words(view.error, getattr(view, "config", None),
                                          getattr(view, "root_model", "")))
        self.error.setToolTip(plain(view.error or ""))         # the raw text, for a bug report
        self.error.setVisible(bool(view.error))
        limited = view.totals.get("limited")
        text, fix = limits.summary(limited), limits.fix(limited)
        self.limited_text.setText(text or "")
        self._fix_action = fix[0] if fix else ""
        self.fix_button.setText(fix[1] if fix else "")
        self.fix_button.setVisible(fix is not None)
        self.limited.setVisible(bool(text))
        line = unsupported_line(view.totals)
        self.unsupported.setText(f"Unsupported: {line}" if line else "")
        self.unsupported.setVisible(bool(line))
        f = view.figures
        plain_call = plain_call_line(view.totals)
        if plain_call:               # no cells, syntax errors or turns to count
            self.figures.setText(f"{plain_call[:1].upper()}{plain_call[1:]} · "
                                 f"{cost_text(f.cost_usd, view.budget.unpriced)} · {clock(f.wall_s)} wall time")
            return
        self.figures.setText(
            f"{counted(f.cells, 'cell')} · {f.syntax_error_rate * 100:.0f}% syntax errors ·"
            f" {counted(f.runtime_errors, 'runtime error')} · {counted(f.faults, 'fault')} ·"
            f" {counted(f.sub_calls, 'sub-call')} ({f.sub_call_errors} failed, {f.refused_calls} refused) ·"
            f" {counted(f.iterations, 'iteration')} · {cost_text(f.cost_usd, view.budget.unpriced)} ·"
            f" {clock(f.wall_s)} wall time")

    def copy(self) -> None:
        QGuiApplication.clipboard().setText(self.answer)
        self.copied.emit()

    def plain_text(self) -> str:
        limited = self.limited_text.text() if self.limited.isVisibleTo(self) else ""
        return "\n".join(t for t in (self.title.text(), self.answer, limited, self.error.text(),
                                     self.figures.text()) if t)


class Transcript(QScrollArea):
    citation_clicked = Signal(str)
    export_requested = Signal()
    limit_fix_requested = Signal(str)
    answer_copied = Signal()
    citations = None             # set by app/trust_glue.py: citation links in replies and the answer
    turn_menu_requested = Signal(str, QPoint)   # a turn header's context menu: turn id, global position

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("transcript")
        self.setAccessibleName("Transcript")
        self.setWidgetResizable(True)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self._view = RunView()
        self._items: list[QWidget] = []
        self._cards: dict[str, TurnCard] = {}
        self._answer: AnswerCard | None = None
        self._dirty: set[str] = set()
        self._final_dirty = False
        self._follow = True
        self._retry_labels: dict[str, QLabel] = {}
        self._pinned = False          # the answer is kept in view (show_answer) until the user scrolls
        self._placing_answer = False
        self._build_column()
        bar = self.verticalScrollBar()
        bar.valueChanged.connect(self._on_scrolled)
        bar.rangeChanged.connect(self._on_range)
        bar.actionTriggered.connect(self._user_scrolled)

    def _build_column(self) -> None:
        self._column = QWidget()
        self._column.setObjectName("transcriptColumn")
        self._layout = QVBoxLayout(self._column)
        self._layout.setContentsMargins(8, 8, 8, 8)
        self._layout.setSpacing(10)
        self._layout.addStretch(1)
        self._group: QWidget | None = None
        self._group_layout = QVBoxLayout()
        self._placeholder = make_label("Ask a question to start a run; its turns appear here as they stream.",
                                       self._column)
        self._placeholder.setObjectName("hint")
        self._layout.insertWidget(0, self._placeholder)
        self._earlier = make_label("", self._column, Qt.TextFormat.MarkdownText)
        self._earlier_md = ""
        self._earlier.setObjectName("earlierQuestions")
        self._earlier.setAccessibleName("Earlier questions in this session")
        self._earlier.hide()
        self._earlier.linkActivated.connect(self._on_link)         # its answers' citations open too
        self._earlier.linkHovered.connect(self._on_hover)
        self._layout.insertWidget(0, self._earlier)
        self.fork_label = make_label("", self._column)      # a fork: where it came from
        self.fork_label.setObjectName("forkedFrom")
        self.fork_label.hide()
        self._layout.insertWidget(0, self.fork_label)
        self.setWidget(self._column)

    def set_earlier(self, exchanges: list[tuple[str, str]]) -> None:
        """Show the questions and answers this follow-up continues, above its turns."""
        if not exchanges:
            self._earlier.hide()
            return
        parts = ["**Earlier in this session**"]
        for i, (question, answer) in enumerate(exchanges, 1):
            quoted = "\n".join("> " + line for line in question.splitlines() or [""])
            parts.append(f"**Question {i}**\n\n{quoted}\n\n**Answer {i}**\n\n{answer or '*no answer*'}")
        parts.append("**This follow-up**")
        colors = PALETTES["dark" if is_dark() else "light"]
        self._earlier.setStyleSheet(f"QLabel {{ border-left: 3px solid {colors['border']}; padding: 4px 8px;"
                                    f" color: {colors['muted']}; }}")
        self._earlier_md = "\n\n".join(parts)
        set_markdown(self._earlier, self._earlier_md, self.citations)   # citations as links; raw HTML as text
        self._earlier.show()
        self._placeholder.hide()

    def set_fork(self, text: str) -> None:
        """"Forked from turn N of <run name>; ..." above a fork's turns ("" hides it)."""
        if text == self.fork_label.text() and self.fork_label.isHidden() == (not text):
            return
        self.fork_label.setText(text)
        self.fork_label.setVisible(bool(text))
        if text:
            self._placeholder.hide()

    def earlier_text(self) -> str:
        return self._earlier_md if not self._earlier.isHidden() else ""

    # ---- feeding -------------------------------------------------------
    def reset(self, view: RunView) -> None:
        """Show `view` from scratch (drops every widget of the previous run)."""
        self._view = view
        self._items.clear()
        self._cards.clear()
        self._answer = None
        self._dirty.clear()
        self._final_dirty = False
        self._follow = True
        self._retry_labels = {}
        self._pinned = False
        old = self.takeWidget()
        if old is not None:
            old.deleteLater()
        self._build_column()

    def note(self, change: Change) -> None:
        """Remember what `change` touched; `flush()` shows it."""
        if change.turn_id is not None:
            self._dirty.add(change.turn_id)
        elif change.kind == "finished":
            self._final_dirty = True

    def flush(self) -> None:
        view = self._view
        timeline = view.timeline
        if len(self._items) < len(timeline):
            self._placeholder.hide()
            colors = PALETTES["dark" if is_dark() else "light"]
            for kind, key in timeline[len(self._items):]:
                self._add_item(self._make_item(kind, key, colors))
        if self._dirty:
            dirty, self._dirty = self._dirty, set()
            for turn_id in dirty:
                card = self._cards.get(turn_id)
                if card is not None:
                    card.refresh(view.turns[turn_id], view)
        if self._final_dirty and self._answer is not None:
            self._final_dirty = False
            self._answer.refresh(view)
            for turn_id, card in self._cards.items():     # nothing says "streaming…" after the end
                if not card.replied or any(not b.done for b in card.blocks):
                    card.refresh(view.turns[turn_id], view)
            self.show_answer()

    def show_answer(self) -> None:
        """Scroll so the answer card's top is in view, and keep it there while the layout
        settles (cards above it get their heights late, the range grows after the scroll)
        until the user scrolls: a finished run ends on its answer."""
        self._follow = False
        self._pinned = True
        QTimer.singleShot(0, self, self._scroll_to_answer)     # not after this view is gone

    def _scroll_to_answer(self) -> None:
        card = self._answer
        if card is None or not self._pinned:
            return
        # Lay out the column, then the card's own group: its position is known only then.
        self._column.layout().activate()
        group = card.parentWidget()
        if group is not None and group is not self._column and group.layout() is not None:
            group.layout().activate()
        top = card.mapTo(self._column, QPoint(0, 0)).y() - 8
        bar = self.verticalScrollBar()
        self._placing_answer = True
        try:
            bar.setValue(max(0, min(top, bar.maximum())))
        finally:
            self._placing_answer = False

    def _user_scrolled(self, _action: int) -> None:
        """The user moved the scroll bar (wheel, keys, drag): the answer is no longer pinned."""
        self._pinned = False

    def eventFilter(self, obj, event) -> bool:
        if obj is self._answer and self._pinned and event.type() in (QEvent.Type.Move, QEvent.Type.Resize):
            QTimer.singleShot(0, self, self._scroll_to_answer)
        return super().eventFilter(obj, event)

    def _add_item(self, widget: QWidget) -> None:
        """Items go into groups of GROUP_SIZE: a change in the last item then
        re-lays out that group and a few group rows, not every item of the run."""
        if self._group is None or self._group_layout.count() >= GROUP_SIZE:
            self._group = QWidget(self._column)
            self._group.setObjectName("transcriptGroup")
            self._group_layout = QVBoxLayout(self._group)
            self._group_layout.setContentsMargins(0, 0, 0, 0)
            self._group_layout.setSpacing(10)
            self._layout.insertWidget(self._layout.count() - 1, self._group)
        widget.setParent(self._group)
        self._group_layout.addWidget(widget)
        self._items.append(widget)

    def _make_item(self, kind: str, key: str | int | None, colors: dict[str, str]) -> QWidget:
        view = self._view
        if kind == "turn":
            assert isinstance(key, str)
            card = TurnCard(colors, self._column)
            card.link_activated.connect(self._on_link)
            card.citations = self.citations
            card.prose.linkHovered.connect(self._on_hover)
            card.header.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
            card.header.customContextMenuRequested.connect(
                lambda pos, k=key, h=card.header: self.turn_menu_requested.emit(k, h.mapToGlobal(pos)))
            self._cards[key] = card
            self._dirty.add(key)
            return card
        if kind == "notice":
            assert isinstance(key, int)
            item = view.notices[key]
            text = f"{item.level.upper()}: {item.message}"
            if RETRY_MARK in item.message:
                # One line per call that is retried, updated in place: the latest attempt.
                previous = self._retry_labels.get(item.node_id or "")
                if previous is not None:
                    previous.hide()
                text = f"{item.level.upper()}: {retry_line(item.message)}"
            label = make_label(text, self._column)
            if RETRY_MARK in item.message:
                label.setToolTip(plain(item.message))
                self._retry_labels[item.node_id or ""] = label
            label.setObjectName("notice")
            label.setProperty("level", item.level)
            fg = colors["error" if item.level == "error" else "warning" if item.level == "warning" else "info"]
            bg = colors["error_bg" if item.level == "error" else "warning_bg" if item.level == "warning" else "info_bg"]
            label.setStyleSheet(f"QLabel {{ color: {fg}; background-color: {bg}; border: 1px solid {fg};"
                                f" border-radius: 4px; padding: 4px; }}")
            label.setAccessibleName(f"{item.level} notice")
            return label
        card_ = AnswerCard(colors, self._column)
        card_.copied.connect(self.answer_copied)
        card_.export_requested.connect(self.export_requested)
        card_.limit_fix_requested.connect(self.limit_fix_requested)
        card_.link_activated.connect(self._on_link)
        card_.citations = self.citations
        card_.body.linkHovered.connect(self._on_hover)
        self._answer = card_
        card_.installEventFilter(self)
        self._final_dirty = True
        return card_

    # ---- queries (tests, copy) ------------------------------------------
    @property
    def answer_card(self) -> AnswerCard | None:
        return self._answer

    def card(self, turn_id: str) -> TurnCard | None:
        return self._cards.get(turn_id)

    def item_count(self) -> int:
        return len(self._items)

    def plain_text(self) -> str:
        """Everything shown, as text (the Markdown/plain sources of each block)."""
        parts: list[str] = []
        for widget in self._items:
            if isinstance(widget, (TurnCard, AnswerCard)):
                parts.append(widget.plain_text())
            elif isinstance(widget, QLabel):
                parts.append(widget.text())
        return "\n\n".join(parts)

    # ---- scrolling -----------------------------------------------------
    def _on_scrolled(self, value: int) -> None:
        if not self._pinned:
            self._follow = value >= self.verticalScrollBar().maximum() - 8

    def _on_range(self, _low: int, high: int) -> None:
        if self._pinned:
            QTimer.singleShot(0, self, self._scroll_to_answer)   # after the column has its size
        elif self._follow:
            self.verticalScrollBar().setValue(high)

    def _on_hover(self, href: str) -> None:
        if href and self.citations is not None and href.startswith("doc:"):
            QToolTip.showText(QCursor.pos(), self.citations.tooltip(href), self)

    def _on_link(self, href: str) -> None:
        if href.startswith("doc:"):
            self.citation_clicked.emit(href)
        else:
            log.info("link in the transcript not opened: %s", href[:200])
