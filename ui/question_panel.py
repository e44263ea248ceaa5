"""Question and run: the question box, model pickers, quick caps, Run and Stop."""

from __future__ import annotations

from PySide6.QtCore import QEvent, Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox, QFormLayout, QFrame, QHBoxLayout, QLabel, QPlainTextEdit,
    QPushButton, QScrollArea, QSpinBox, QVBoxLayout, QWidget,
)

from ui.dollar_spin import DollarSpin, dollar_text
from ui import icons
from ui.flow_layout import FlowLayout
from ui.fold import Fold
from ui.mode_button import ModeButton
from ui.model_picker import ModelChoice, ModelPicker  # noqa: F401  (ModelChoice: re-exported)
from ui.plain_text import plain
from ui.rows import counted

LONG_PASTE_CHARS = 20_000      # a longer paste is offered as a source (docs/window.md)


class QuestionBox(QPlainTextEdit):
    """Multi-line question; Ctrl+Enter asks for a run. It asks for five lines (three at
    least), so the fields below it stay in view on a small screen. A paste or drop of more
    than LONG_PASTE_CHARS is not inserted: `long_paste` offers it as a source (app/paste_glue.py)."""

    submit = Signal()
    long_paste = Signal(str)
    LINES, MIN_LINES = 5, 3

    def _lines_height(self, lines: int) -> int:
        margins = self.contentsMargins()
        return (self.fontMetrics().lineSpacing() * lines + int(2 * self.document().documentMargin())
                + margins.top() + margins.bottom() + 4)

    def sizeHint(self):
        hint = super().sizeHint()
        hint.setHeight(self._lines_height(self.LINES))
        return hint

    def minimumSizeHint(self):
        hint = super().minimumSizeHint()
        hint.setHeight(self._lines_height(self.MIN_LINES))
        return hint

    def insertFromMimeData(self, source) -> None:
        if source.hasText() and len(source.text()) > LONG_PASTE_CHARS:
            self.long_paste.emit(source.text())
            return
        super().insertFromMimeData(source)

    def keyPressEvent(self, event) -> None:
        if (event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter)
                and event.modifiers() & Qt.KeyboardModifier.ControlModifier):
            self.submit.emit()
            return
        super().keyPressEvent(event)

    def event(self, event) -> bool:
        # Claim Ctrl+Enter so a window shortcut does not fire twice.
        if event.type() == QEvent.Type.ShortcutOverride and event.key() in (
                Qt.Key.Key_Return, Qt.Key.Key_Enter) \
                and event.modifiers() & Qt.KeyboardModifier.ControlModifier:
            event.accept()
            return True
        return super().event(event)


class QuestionPanel(QWidget):
    run_requested = Signal()
    stop_requested = Signal()
    models_wanted = Signal()    # a model popup is opening: fill the catalog
    running_changed = Signal(bool)
    fix_requested = Signal(str)  # a fix button beside a blocked Run: its action id (app/limit_fixes.py)

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        title = QLabel("Question")
        title.setObjectName("paneTitle")
        outer.addWidget(title)
        # Everything but Run and the status line scrolls: a short column scrolls, it never
        # squeezes a field below its height.
        self.scroll = QScrollArea()
        self.scroll.setObjectName("questionScroll")
        self.scroll.setWidgetResizable(True)
        self.scroll.setFrameShape(QFrame.Shape.NoFrame)
        self.scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.content = QWidget()
        self.content.setObjectName("questionContent")
        layout = QVBoxLayout(self.content)
        layout.setContentsMargins(0, 0, 4, 0)
        self._content_layout = layout
        self.scroll.setWidget(self.content)
        outer.addWidget(self.scroll, 1)

        self.question_box = QuestionBox()
        self.question_box.setPlaceholderText(
            "Ask a question about your sources… (Ctrl+Enter runs)")
        self.question_box.setAccessibleName("Question")
        self.question_box.setTabChangesFocus(True)
        self.question_box.submit.connect(self.run_requested)
        layout.addWidget(self.question_box, 1)

        form = QFormLayout()
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        self.root_picker = self._model_box("Root model", "e.g. openai/gpt-4o-mini",
                                           "Root model: writes the code; it needs to be reliable")
        self.sub_picker = self._model_box("Sub model", "the root model, or a cheaper one",
                                          "Sub model: reads the pieces; it can be cheaper")
        self.root_price = QLabel()
        self.root_price.setObjectName("hint")
        self.sub_price = QLabel()
        self.sub_price.setObjectName("hint")
        for picker, label in ((self.root_picker, self.root_price), (self.sub_picker, self.sub_price)):
            picker.opening.connect(self.models_wanted)
            picker.currentTextChanged.connect(
                lambda text, p=picker, lab=label: lab.setText(p.price_of(text.strip())))
        form.addRow("Root model", self.root_picker)
        form.addRow("", self.root_price)
        form.addRow("Sub model", self.sub_picker)
        form.addRow("", self.sub_price)
        layout.addLayout(form)

        # Depth, cap, iterations (and the glue's "options") fold away; the header sums them up.
        self.advanced = Fold("Limits")
        self.advanced.setObjectName("advancedSettings")
        caps = FlowLayout()
        self.mode_button = ModeButton()
        self._reply_tokens: int | None = None     # proposed for a local root model (app glue)
        self.depth_spin = QSpinBox()
        self.depth_spin.setRange(0, 3)
        self.depth_spin.setValue(1)
        self.depth_spin.setAccessibleName("Recursion depth")
        self.depth_spin.setToolTip("0: the REPL only · 1: sub-calls · 2-3: nested RLMs")
        self.cost_spin = DollarSpin()
        self.cost_spin.setSingleStep(0.5)
        self.cost_spin.setValue(1.0)
        self.cost_spin.setAccessibleName("Dollar cap")
        self.cost_spin.setToolTip("The run stops when it has spent this much (0: no cap)")
        self.iter_spin = QSpinBox()
        self.iter_spin.setRange(1, 200)
        self.iter_spin.setValue(20)
        self.iter_spin.setAccessibleName("Maximum iterations")
        self.iter_spin.setToolTip("Root turns at most")
        # Narrow enough for a 1024 px window with History open (the hint is for $10,000.00).
        self.depth_spin.setMinimumWidth(40)
        self.cost_spin.setMinimumWidth(80)
        self.iter_spin.setMinimumWidth(50)
        for label, widget in (("Depth", self.depth_spin), ("Cap", self.cost_spin),
                              ("Iterations", self.iter_spin)):
            pair = QWidget()                  # a label and its field wrap together
            row = QHBoxLayout(pair)
            row.setContentsMargins(0, 0, 0, 0)
            row.addWidget(QLabel(label))
            row.addWidget(widget)
            caps.addWidget(pair)
            widget.valueChanged.connect(self._sum_up_caps)
        self.advanced.body_layout.addLayout(caps)
        layout.addWidget(self.advanced)
        self._sum_up_caps()

        # Why Run is disabled, with the fixes as buttons (set_blocked).
        self.blocked_box = QWidget()
        self.blocked_box.setObjectName("runBlocked")
        blocked = QVBoxLayout(self.blocked_box)
        blocked.setContentsMargins(0, 0, 0, 0)
        self.blocked_label = QLabel()
        self.blocked_label.setObjectName("runBlockedReason")
        self.blocked_label.setWordWrap(True)
        self.blocked_label.setAccessibleName("Why Run is disabled")
        self.fix_row = FlowLayout()          # the fixes wrap: a narrow column shows every one
        blocked.addWidget(self.blocked_label)
        blocked.addLayout(self.fix_row)
        self.fix_buttons: list[QPushButton] = []
        self.blocked_box.hide()
        self._blocked = ""
        self.caution = ""                    # what the cap will do to a run that can start (set_caution)
        self._running = False
        self._status_slot = QWidget()          # where "status" accessories go (before it)
        self._status_slot.setFixedHeight(0)
        layout.addWidget(self._status_slot)

        # Run, Stop, the status line and "bottom" accessories stay in view below the scrolling part.
        self.footer = QWidget()
        self.footer.setObjectName("questionFooter")
        self._footer_layout = QVBoxLayout(self.footer)
        self._footer_layout.setContentsMargins(0, 4, 0, 0)
        # Why Run is disabled sits right above it, in view (it never scrolls away).
        self._footer_layout.addWidget(self.blocked_box)
        buttons = FlowLayout()          # Run, the mode, Stop, "Also ask directly": they wrap
        self.run_button = QPushButton("Run")
        self.run_button.setObjectName("runButton")
        icons.bind(self.run_button, "run")
        self.run_button.setToolTip("Run (Ctrl+Enter)")
        self.run_button.clicked.connect(self.run_requested)
        self.stop_button = QPushButton("Stop")
        self.stop_button.setObjectName("stopButton")
        icons.bind(self.stop_button, "stop")
        self.stop_button.setToolTip("Stop (Esc or Ctrl+.): what was done is kept")
        self.stop_button.clicked.connect(self.stop_requested)
        self.stop_button.setEnabled(False)
        self.status_label = QLabel()
        self.status_label.setObjectName("hint")
        self.status_label.setWordWrap(True)
        self.status_label.setMinimumHeight(self.status_label.fontMetrics().lineSpacing() * 2)
        buttons.addWidget(self.run_button)
        buttons.addWidget(self.mode_button)        # the mode, beside Run
        buttons.addWidget(self.stop_button)
        self.direct_check = QCheckBox("Also ask directly")
        self.direct_check.setToolTip("Also send every document and the question to the root model in one "
                                     "plain call, when they fit its window, and show both answers side by side")
        buttons.addWidget(self.direct_check)
        self._footer_layout.addLayout(buttons)
        self._footer_layout.addWidget(self.status_label)
        outer.addWidget(self.footer)
        self._keep_width()

    def _keep_width(self) -> None:
        """The column is never narrower than its widest row of fields (it scrolls down,
        not sideways): the scroll area asks for the content's minimum width."""
        bar = self.scroll.verticalScrollBar().sizeHint().width()
        self.scroll.setMinimumWidth(self.content.minimumSizeHint().width() + bar + 2)

    def _model_box(self, name: str, placeholder: str, tip: str) -> ModelPicker:
        """One model picker (root or sub): the one place a picker is made."""
        picker = ModelPicker()
        picker.setAccessibleName(name)
        picker.lineEdit().setPlaceholderText(placeholder)
        picker.setToolTip(tip)
        picker.setMinimumWidth(130)        # a narrow column cuts the id (the tooltip has it whole)
        return picker

    def _sum_up_caps(self, *_args) -> None:
        cost = self.cost_spin.value()
        self.advanced.set_summary(f"depth {self.depth_spin.value()} · "
                                  f"{f'${dollar_text(cost)} cap' if cost > 0 else 'no cap'} · "
                                  f"{counted(self.iter_spin.value(), 'iteration')}")

    def focus_chain(self) -> list[QWidget]:
        """Tab order as the panel reads: the scrolling fields top to bottom, then the
        footer (Run first); returns the chain (ui/tab_order.py)."""
        from ui.tab_order import order_by_position
        chain = order_by_position(self.content) + order_by_position(self.footer)
        for a, b in zip(chain, chain[1:]):
            QWidget.setTabOrder(a, b)
        return chain

    def wanted_height(self) -> int:
        """The height that shows every field without scrolling (the question box at its
        minimum), at the panel's width."""
        content = self.content
        layout = content.layout()
        width = max(1, self.scroll.viewport().width())
        inner = layout.heightForWidth(width) if layout.hasHeightForWidth() else -1
        inner = max(inner, layout.minimumSize().height())
        return inner + self._around_scroll() + 2

    def required_height(self) -> int:
        """The least height that shows Run, the reason beside a blocked Run with its fixes,
        and the status line whole (the fields above them scroll)."""
        return self.scroll.minimumSizeHint().height() + self._around_scroll() + 2

    def _around_scroll(self) -> int:
        """The title, the footer at the panel's width and the spacing between them."""
        footer = self.footer
        width = max(1, self.width())
        need = footer.heightForWidth(width) if footer.hasHeightForWidth() else -1
        need = max(need, footer.minimumSizeHint().height())
        return self.height() - self.scroll.height() - footer.height() + need

    # --- values ------------------------------------------------------------
    def question(self) -> str:
        return self.question_box.toPlainText().strip()

    def set_question(self, text: str) -> None:
        self.question_box.setPlainText(text)

    def root_model(self) -> str:
        return self.root_picker.model_id()

    def sub_model(self) -> str:
        return self.sub_picker.model_id()

    def set_models(self, root: str, sub: str) -> None:
        self.root_picker.set_model_id(root)
        self.sub_picker.set_model_id(sub)

    def set_model_choices(self, choices: list[ModelChoice]) -> None:
        self.root_picker.set_choices(choices)
        self.sub_picker.set_choices(choices)
        self.root_price.setText(self.root_picker.price_of(self.root_model()))
        self.sub_price.setText(self.sub_picker.price_of(self.sub_model()))

    def caps(self) -> dict:
        return {"max_depth": self.depth_spin.value(),
                "max_cost_usd": self.cost_spin.amount(),
                "max_iterations": self.iter_spin.value()}

    def set_reply_tokens(self, tokens: int | None) -> None:
        """Output tokens per root reply proposed for the picked model (None: the settings')."""
        self._reply_tokens = tokens

    def run_overrides(self) -> dict:
        """What the next run takes from the panel besides caps(): the mode, and the reply
        tokens proposed for a local model."""
        out: dict = {"mode": self.mode()}
        if self._reply_tokens:
            out["root_max_tokens"] = self._reply_tokens
        return out

    def mode(self) -> str:
        """The run's mode (RunConfig.mode): auto, rlm or direct."""
        return self.mode_button.mode()

    def set_mode(self, mode: str | None) -> None:
        self.mode_button.set_mode(mode)

    def set_caps(self, caps: dict) -> None:
        if "max_depth" in caps:
            self.depth_spin.setValue(int(caps["max_depth"]))
        if "max_cost_usd" in caps:
            self.cost_spin.setValue(float(caps["max_cost_usd"] or 0))
        if "max_iterations" in caps:
            self.iter_spin.setValue(int(caps["max_iterations"]))

    # --- state ---------------------------------------------------------------
    def set_blocked(self, reason: str, fixes: list[tuple[str, str]] = ()) -> None:
        """Disable Run with `reason` beside it and a button per fix ((action id, label));
        an empty reason enables it again."""
        self._blocked = reason
        self.caution = ""                    # set_caution's text, when that is what the box says
        self.blocked_label.setText(plain(reason))
        for button in self.fix_buttons:
            self.fix_row.removeWidget(button)
            button.deleteLater()
        self.fix_buttons = []
        self._add_fixes(fixes if reason else ())
        from ui.highlight import is_dark
        from ui.theme import PALETTES
        color = PALETTES["dark" if is_dark() else "light"]["warning"]
        self.blocked_label.setStyleSheet(f"QLabel {{ color: {color}; }}")
        self.blocked_box.setVisible(bool(reason))
        self.run_button.setEnabled(not self._running and not reason)
        self.run_button.setToolTip(f"Run is disabled: {reason}" if reason else "Run (Ctrl+Enter)")

    def set_caution(self, text: str, fixes: list[tuple[str, str]] = (), consequence: str = "") -> None:
        """What the cap will do to a run that can start, with fixes as buttons, in the box
        set_blocked uses; Run stays enabled and its tooltip says the consequence."""
        if self._blocked:
            return
        self.set_blocked("")
        if not text:
            return
        self.blocked_label.setText(plain(text))
        self._add_fixes(fixes)
        self.blocked_box.setVisible(True)
        self.caution = text
        self.run_button.setToolTip(f"{consequence or text} (Ctrl+Enter)")

    def _add_fixes(self, fixes) -> None:
        for action, label in fixes:
            button = QPushButton(label, self.blocked_box)
            button.setObjectName("runFix")
            button.clicked.connect(lambda _=False, a=action: self.fix_requested.emit(a))
            self.fix_row.addWidget(button)
            self.fix_buttons.append(button)

    def blocked(self) -> str:
        return self._blocked

    def focus_field(self, name: str) -> None:
        """Put the cursor in a field a fix points at: "cost", "sub_model", "root_model", "iterations"."""
        widget = {"cost": self.cost_spin, "sub_model": self.sub_picker, "root_model": self.root_picker,
                  "iterations": self.iter_spin}.get(name)
        if widget is not None:
            widget.setFocus()
            if hasattr(widget, "selectAll"):
                widget.selectAll()

    def set_running(self, running: bool) -> None:
        changed = self.stop_button.isEnabled() != running
        self._running = running
        self.run_button.setEnabled(not running and not self._blocked)
        self.stop_button.setEnabled(running)
        self.question_box.setReadOnly(running)
        if changed:
            self.running_changed.emit(running)

    def also_direct(self) -> bool:
        return self.direct_check.isChecked()

    def set_status(self, text: str) -> None:
        self.status_label.setText(plain(text))

    def status(self) -> str:
        return self.status_label.text()

    def insert_text(self, text: str) -> None:
        """Text into the question at the cursor (a long paste the user kept as question)."""
        self.question_box.insertPlainText(text)

    # --- places for extra parts (app/ glue adds its widgets here, never into the layout) ----
    ACCESSORY_SLOTS = ("options", "status", "bottom")

    def add_accessory(self, widget: QWidget, slot: str = "bottom") -> None:
        """Show `widget` in the panel: "options" in the folding limits section,
        "status" after the question's fields, "bottom" below the status line (in view)."""
        if slot not in self.ACCESSORY_SLOTS:
            raise ValueError(f"unknown slot {slot!r} (one of {', '.join(self.ACCESSORY_SLOTS)})")
        layout = self._content_layout
        if slot == "bottom":
            self._footer_layout.addWidget(widget)
        elif slot == "status":
            layout.insertWidget(layout.indexOf(self._status_slot), widget)
        else:
            self.advanced.body_layout.addWidget(widget)
        self._keep_width()
