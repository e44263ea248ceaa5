"""ModelsView: which model works, from your own runs and evaluations.

    view = ModelsView(parent)
    view.set_fitness({"roots": [...], "subs": [...]})        # core.fitness.model_fitness
    view.set_evaluations([{"id", "name", "answers", ...}])   # core.evaluation.records.list_evaluations
    view.set_scorecard(card)                                 # core.evaluation.scorecard.build_scorecard
    view.evaluation_chosen.connect(...); view.export_requested.connect(...)   # (id, "csv" | "md")
    view.evaluate_requested.connect(...)     # New evaluation… (app/scorecard_glue.py)

Two tabs: Fitness (a table per root model and per sub model, with bars of the
syntax-error and answer rates) and Scorecards (per pair and mode, with bars of
accuracy, and the latest answers of the RLM and the direct call side by side).
Plain data in, intents out (app/models_glue.py reads the store and writes files).
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QRectF, Qt, Signal
from PySide6.QtGui import QColor, QPainter
from PySide6.QtWidgets import (QComboBox, QDialog, QHBoxLayout, QHeaderView, QLabel, QPushButton, QTableWidget,
                               QTableWidgetItem, QTabWidget, QVBoxLayout, QWidget)

from core.run_names import run_title
from ui.answer_text import one_line
from ui.window_fit import sized_to_screen

ROOT_COLUMNS = [("Model", "model"), ("Runs", "runs"), ("Finished", "finished"), ("Capped", "capped"),
                ("Failed", "failed"), ("Stopped", "stopped"), ("Answered", "answer_rate%"), ("Cells", "cells"),
                ("Syntax errors", "syntax_error_rate%"), ("Runtime errors", "runtime_error_rate%"),
                ("Refused blocks", "refused_cells"), ("Turns to answer", "turns_to_answer"),
                ("$ per run", "cost_per_run_usd$"), ("s per run", "seconds_per_run"),
                ("Output tokens", "root_output_tokens"), ("Thinking tokens", "thinking_tokens")]
SUB_COLUMNS = [("Model", "model"), ("Calls", "calls"), ("Runs", "runs"), ("Errors", "error_rate%"),
               ("Cancelled", "cancelled"), ("Refused", "refused"),
               ("s per call", "seconds_per_call"), ("Cost $", "cost_usd$"), ("Output tokens", "output_tokens")]
CARD_COLUMNS = [("Pair", "pair"), ("Mode", "mode"), ("Answers", "answers"), ("Accuracy", "accuracy%"),
                ("Lowest repeat", "accuracy_min%"), ("Highest repeat", "accuracy_max%"), ("Repeats", "repeats"),
                ("Answered", "answer_rate%"), ("Cost $", "cost_usd$"), ("$ per answer", "cost_per_answer_usd$"),
                ("Mean s", "mean_seconds"), ("Turns", "mean_turns"), ("Syntax errors", "syntax_error_rate%"),
                ("By kind", "by_kind_text")]      # right answers per kind of question, when the set says kinds


def format_value(row: dict[str, Any], key: str) -> str:
    kind = key[-1] if key[-1] in "%$" else ""
    value = row.get(key.rstrip("%$"))
    if value is None:
        return "–"
    if kind == "%":
        return f"{value:.0%}"
    if kind == "$":
        return f"{value:.4f}"
    if isinstance(value, float):
        return f"{value:.3g}"
    return str(value)


class BarChart(QWidget):
    """Horizontal bars, one group per label, values 0..1 (rates); painted with QPainter."""

    COLORS = ("#3b82f6", "#f97316", "#22c55e", "#a855f7")

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.series: list[str] = []
        self.rows: list[tuple[str, list[float | None]]] = []
        self.setMinimumHeight(120)

    def set_data(self, series: list[str], rows: list[tuple[str, list[float | None]]]) -> None:
        self.series, self.rows = list(series), list(rows)
        bar = 14
        self.setMinimumHeight(max(120, 28 + len(self.rows) * (bar * max(len(self.series), 1) + 10)))
        self.update()

    def bars(self) -> list[tuple[str, str, float]]:
        """What is drawn: (label, series, value) for every bar with a value."""
        return [(label, name, float(v)) for label, values in self.rows
                for name, v in zip(self.series, values) if v is not None]

    def paintEvent(self, event) -> None:   # noqa: N802
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        text = self.palette().windowText().color()
        metrics = painter.fontMetrics()
        label_w = min(max([metrics.horizontalAdvance(r[0]) for r in self.rows] + [40]) + 12,
                      self.width() // 2)
        x = 4
        for i, name in enumerate(self.series):                      # the legend
            painter.fillRect(QRectF(x, 6, 10, 10), QColor(self.COLORS[i % len(self.COLORS)]))
            painter.setPen(text)
            painter.drawText(x + 14, 16, name)
            x += 24 + metrics.horizontalAdvance(name)
        width = max(self.width() - label_w - 60, 10)
        y, bar = 26, 14
        for label, values in self.rows:
            painter.setPen(text)
            painter.drawText(QRectF(4, y, label_w - 8, bar * len(self.series)),
                             Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignLeft,
                             metrics.elidedText(label, Qt.TextElideMode.ElideMiddle, label_w - 8))
            for i, value in enumerate(values):
                top = y + i * bar
                if value is None:
                    painter.drawText(label_w, top + bar - 3, "–")
                    continue
                painter.fillRect(QRectF(label_w, top + 1, max(width * max(min(value, 1.0), 0.0), 1), bar - 2),
                                 QColor(self.COLORS[i % len(self.COLORS)]))
                painter.drawText(int(label_w + width * min(value, 1.0) + 4), top + bar - 3, f"{value:.0%}")
            y += bar * len(self.series) + 10
        painter.end()


def _table(columns: list[tuple[str, str]], name: str) -> QTableWidget:
    table = QTableWidget(0, len(columns))
    table.setHorizontalHeaderLabels([c[0] for c in columns])
    table.setAccessibleName(name)
    table.verticalHeader().hide()
    table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
    table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
    return table


def _fill(table: QTableWidget, columns: list[tuple[str, str]], rows: list[dict[str, Any]]) -> None:
    table.setRowCount(len(rows))
    for r, row in enumerate(rows):
        for c, (_, key) in enumerate(columns):
            item = QTableWidgetItem(format_value(row, key))
            if c:
                item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            table.setItem(r, c, item)


class ModelsView(QDialog):
    evaluation_chosen = Signal(str)
    export_requested = Signal(str, str)        # evaluation id, "csv" | "md"
    refresh_requested = Signal()
    evaluate_requested = Signal()
    beside_chosen = Signal(str)                # another evaluation to compare with ("" for none)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("modelsView")
        self.setWindowTitle("Models: fitness and scorecards")
        self.setModal(False)
        sized_to_screen(self, 1000, 700)
        layout = QVBoxLayout(self)
        self.tabs = QTabWidget(self)
        layout.addWidget(self.tabs)

        fitness = QWidget()
        fl = QVBoxLayout(fitness)
        self.fitness_hint = QLabel()
        self.fitness_hint.setWordWrap(True)
        fl.addWidget(self.fitness_hint)
        fl.addWidget(QLabel("Root models"))
        self.root_table = _table(ROOT_COLUMNS, "Fitness per root model")
        fl.addWidget(self.root_table, 2)
        self.root_chart = BarChart()
        self.root_chart.setAccessibleName("Syntax-error and answer rates per root model")
        fl.addWidget(self.root_chart, 1)
        fl.addWidget(QLabel("Sub models"))
        self.sub_table = _table(SUB_COLUMNS, "Fitness per sub model")
        fl.addWidget(self.sub_table, 1)
        self.tabs.addTab(fitness, "Fitness")

        cards = QWidget()
        cl = QVBoxLayout(cards)
        top = QHBoxLayout()
        top.addWidget(QLabel("Evaluation"))
        self.evaluation_box = QComboBox()
        self.evaluation_box.setAccessibleName("Evaluation")
        self.evaluation_box.currentIndexChanged.connect(self._chosen)
        top.addWidget(self.evaluation_box, 1)
        top.addWidget(QLabel("beside"))
        self.beside_box = QComboBox()
        self.beside_box.setAccessibleName("Compare with evaluation")
        self.beside_box.setToolTip("Another evaluation's lines under this one's, to compare scorecards")
        self.beside_box.currentIndexChanged.connect(
            lambda _i: self.beside_chosen.emit(self.beside_box.currentData() or ""))
        top.addWidget(self.beside_box, 1)
        self.evaluate_button = QPushButton("New evaluation…")
        self.evaluate_button.setToolTip("Score model pairs and modes on a question set over documents")
        self.evaluate_button.clicked.connect(self.evaluate_requested)
        top.addWidget(self.evaluate_button)
        self.csv_button = QPushButton("Export CSV…")
        self.md_button = QPushButton("Export Markdown…")
        self.csv_button.clicked.connect(lambda: self._export("csv"))
        self.md_button.clicked.connect(lambda: self._export("md"))
        top.addWidget(self.csv_button)
        top.addWidget(self.md_button)
        cl.addLayout(top)
        self.card_hint = QLabel()
        self.card_hint.setWordWrap(True)
        cl.addWidget(self.card_hint)
        self.card_table = _table(CARD_COLUMNS, "Scorecard per pair and mode")
        cl.addWidget(self.card_table, 2)
        self.card_chart = BarChart()
        self.card_chart.setAccessibleName("Accuracy and syntax-error rate per pair")
        cl.addWidget(self.card_chart, 1)
        self.answers_table = QTableWidget(0, 5)
        self.answers_table.setHorizontalHeaderLabels(["Question", "Pair", "Mode", "Right", "Answer"])
        self.answers_table.setAccessibleName("Latest answers side by side")
        self.answers_table.verticalHeader().hide()
        self.answers_table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        header = self.answers_table.horizontalHeader()
        header.setStretchLastSection(True)
        for column in (1, 2, 3):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.ResizeToContents)
        self.answers_table.setColumnWidth(0, 320)          # the question as asked: it needs the room
        self.answers_table.setWordWrap(False)
        cl.addWidget(self.answers_table, 2)
        self.tabs.addTab(cards, "Scorecards")
        self._card: dict[str, Any] | None = None
        self._beside: tuple[dict[str, Any], str] | None = None
        self._set_export_enabled(False)

    # --- fitness -------------------------------------------------------------
    def set_fitness(self, stats: dict[str, list[dict[str, Any]]]) -> None:
        roots, subs = stats.get("roots", []), stats.get("subs", [])
        _fill(self.root_table, ROOT_COLUMNS, roots)
        _fill(self.sub_table, SUB_COLUMNS, subs)
        self.root_chart.set_data(["syntax errors per cell", "answered"],
                                 [(m["model"], [m.get("syntax_error_rate"), m.get("answer_rate")]) for m in roots])
        runs = sum(m["runs"] for m in roots)
        self.fitness_hint.setText(
            f"{runs:,} stored runs over {len(roots)} root models. A good root writes code that parses "
            "(few syntax errors per cell) and finishes with an answer in few turns."
            if roots else "No runs stored yet: ask a question, or score models on a question set "
                          "(Scorecards > New evaluation…).")

    # --- scorecards ------------------------------------------------------------
    def set_evaluations(self, items: list[dict[str, Any]]) -> None:
        beside = self.beside_box.currentData()
        for box in (self.evaluation_box, self.beside_box):
            box.blockSignals(True)
            box.clear()
        self.beside_box.addItem("nothing", None)
        for e in items:
            when = run_title({"question": e["name"], "created_utc": e.get("updated_utc")})   # "name · 1 Dec 14:03"
            self.evaluation_box.addItem(f"{when} · {e.get('answers') or 0} answers", e["id"])
            self.beside_box.addItem(when, e["id"])
        self.beside_box.setCurrentIndex(max(0, self.beside_box.findData(beside)) if beside else 0)
        for box in (self.evaluation_box, self.beside_box):
            box.blockSignals(False)
        if items:
            self.evaluation_box.setCurrentIndex(0)
            self._chosen(0)
        else:
            self.set_scorecard(None)

    def choose_evaluation(self, evaluation_id: str) -> bool:
        index = self.evaluation_box.findData(evaluation_id)
        if index < 0:
            return False
        if index == self.evaluation_box.currentIndex():
            self._chosen(index)
        else:
            self.evaluation_box.setCurrentIndex(index)
        return True

    def current_evaluation(self) -> str | None:
        return self.evaluation_box.currentData()

    def set_beside(self, card: dict[str, Any] | None, title: str = "") -> None:
        """Another evaluation's lines under the chosen one's, their pairs marked with its name."""
        self._beside = (card, title) if card else None
        self._show_lines()

    def _show_lines(self) -> None:
        lines = list((self._card or {}).get("lines", []))
        if self._beside is not None:
            card, title = self._beside
            lines += [{**ln, "pair": f"{ln['pair']} · {title}"} for ln in card.get("lines", [])]
        _fill(self.card_table, CARD_COLUMNS, lines)
        self.card_chart.set_data(["accuracy", "syntax errors per cell"],
                                 [(f"{ln['pair']} ({ln['mode']})", [ln.get("accuracy"), ln.get("syntax_error_rate")])
                                  for ln in lines])

    def set_scorecard(self, card: dict[str, Any] | None) -> None:
        self._card = card
        lines = (card or {}).get("lines", [])
        self._show_lines()
        answers = (card or {}).get("latest_answers", [])
        # the question as asked, not its id (the id is in the tooltip), in the set's order
        questions = {q.get("id"): q for q in (card or {}).get("questions", []) if isinstance(q, dict)}
        order = {qid: n for n, qid in enumerate(questions)}
        self.answers_table.setRowCount(len(answers))
        for r, a in enumerate(sorted(answers, key=lambda a: (order.get(a["question_id"], len(order)),
                                                             a["question_id"], a["mode"], a["pair"]))):
            # the answer as read (Markdown rendered, on one line), not "## Direct answer …**"
            text = one_line(a["answer"], 300) if a.get("answer") else a.get("error") or a.get("status") or ""
            q = questions.get(a["question_id"]) or {}
            right = "stopped" if a.get("status") == "cancelled" else ("yes" if a["correct"] else "no")
            for c, value in enumerate((" ".join(str(q.get("question") or a["question_id"]).split()), a["pair"],
                                       a["mode"], right, " ".join(str(text).split())[:300])):
                item = QTableWidgetItem(value)
                if c == 0:
                    item.setToolTip(f"{a['question_id']}: {q.get('question', '')}\nexpected: {q.get('expected', '')}")
                self.answers_table.setItem(r, c, item)
        self.card_hint.setText(
            "No evaluation yet: press New evaluation… to score model pairs on a question set "
            "(or run `rlm-studio eval SET.jsonl PATH... --pair ROOT:SUB`)."
            if card is None else f"{len(lines)} pair/mode lines: rlm is the RLM, auto the plain call when the "
                                 "documents fit and the RLM otherwise, direct one plain call with every document "
                                 "in the prompt.")
        self._set_export_enabled(card is not None)

    def _chosen(self, index: int) -> None:
        evaluation_id = self.evaluation_box.itemData(index)
        if evaluation_id:
            self.evaluation_chosen.emit(evaluation_id)

    def _export(self, fmt: str) -> None:
        evaluation_id = self.current_evaluation()
        if evaluation_id:
            self.export_requested.emit(evaluation_id, fmt)

    def _set_export_enabled(self, enabled: bool) -> None:
        self.csv_button.setEnabled(enabled)
        self.md_button.setEnabled(enabled)
