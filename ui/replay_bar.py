"""ReplayBar: a timeline over a stored run's events: step, scrub, play.

The bar drives a target with `reset(live=False)` and `apply_many(events)`
(RunPanes). Going forward applies only the new events; going back rebuilds:
reset, then apply_many(events[:k]) (the fold is fast enough for that).
Play runs on a QTimer at real time x1, x4 or x16 (pauses longer than
`MAX_GAP_S` are shortened); "instant" jumps to the end. Position k means
"the first k events are applied" (0..n).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Protocol

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QSlider, QStyle, QStyleOptionSlider, QToolButton, QWidget

from core.events import Event

SPEEDS: tuple[tuple[str, float | None], ...] = (("×1", 1.0), ("×4", 4.0), ("×16", 16.0), ("instant", None))
TICK_MS = 33
MAX_GAP_S = 2.0
SCRUB_MS = 40


class ReplayTarget(Protocol):
    def reset(self, live: bool = ...) -> None: ...
    def apply_many(self, events: Sequence[Event]) -> object: ...


class JumpSlider(QSlider):
    """A click on the track moves the handle to that point (not a page towards it)."""

    def mousePressEvent(self, event) -> None:
        if event.button() == Qt.MouseButton.LeftButton:
            option = QStyleOptionSlider()
            self.initStyleOption(option)
            handle = self.style().subControlRect(QStyle.ComplexControl.CC_Slider, option,
                                                 QStyle.SubControl.SC_SliderHandle, self)
            if not handle.contains(event.position().toPoint()):
                groove = self.style().subControlRect(QStyle.ComplexControl.CC_Slider, option,
                                                     QStyle.SubControl.SC_SliderGroove, self)
                x = int(event.position().x()) - groove.x() - handle.width() // 2
                span = max(1, groove.width() - handle.width())
                self.setValue(QStyle.sliderValueFromPosition(self.minimum(), self.maximum(), x, span,
                                                             option.upsideDown))
                event.accept()
                return
        super().mousePressEvent(event)


class ReplayBar(QWidget):
    position_changed = Signal(int, int)     # k, n
    playing_changed = Signal(bool)
    leave_requested = Signal()              # "Back to live": show the live (or last) run again

    def __init__(self, target: ReplayTarget | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("replayBar")
        self.setAccessibleName("Replay timeline")
        self.target = target
        self._events: list[Event] = []
        self._pos = 0
        self._speed: float | None = 1.0
        self._due = 0.0
        self._last_tick = 0.0
        self._syncing = False
        self._timer = QTimer(self)
        self._timer.setInterval(TICK_MS)
        self._timer.timeout.connect(self._tick)
        self._scrub = QTimer(self)
        self._scrub.setSingleShot(True)
        self._scrub.setInterval(SCRUB_MS)
        self._scrub.timeout.connect(self._apply_scrub)
        row = QHBoxLayout(self)
        row.setContentsMargins(4, 2, 4, 2)
        self.back_button = self._button("◀", "Step back", "Step back one event", self.step_back)
        self.play_button = self._button("▶", "Play", "Play the run", self.toggle_play)
        self.forward_button = self._button("▶|", "Step forward", "Step forward one event", self.step_forward)
        self.slider = JumpSlider(Qt.Orientation.Horizontal, self)
        self.slider.setObjectName("replaySlider")
        self.slider.setAccessibleName("Replay position")
        self.slider.setRange(0, 0)
        self.slider.valueChanged.connect(self._on_slider)
        self.speed = QComboBox(self)
        self.speed.setObjectName("replaySpeed")
        self.speed.setAccessibleName("Replay speed")
        for name, _ in SPEEDS:
            self.speed.addItem(name)
        self.speed.currentIndexChanged.connect(self._on_speed)
        self.label = QLabel("0 / 0", self)
        self.label.setObjectName("replayPosition")
        self.label.setAccessibleName("Replay position")
        for w in (self.back_button, self.play_button, self.forward_button):
            row.addWidget(w)
        row.addWidget(self.slider, 1)
        row.addWidget(self.label)
        row.addWidget(self.speed)
        # In the bar, not the toolbar: it comes and goes with the replay, and moves nothing else.
        self.live_button = self._button("Back to live", "Back to the live run",
                                        "Leave the replay and show the live (or last) run", self.leave_requested)
        self.live_button.setObjectName("replayLeave")
        self.live_button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        from ui import icons
        icons.bind(self.live_button, "close")
        row.addWidget(self.live_button)

    def _button(self, text: str, name: str, tip: str, slot: object) -> QToolButton:
        button = QToolButton(self)
        button.setText(text)
        button.setAccessibleName(name)
        button.setToolTip(tip)
        button.clicked.connect(slot)
        return button

    # ---- state ---------------------------------------------------------
    @property
    def events(self) -> list[Event]:
        return self._events

    @property
    def position(self) -> int:
        return self._pos

    @property
    def playing(self) -> bool:
        return self._timer.isActive()

    def load(self, events: Sequence[Event], position: int | None = None) -> None:
        """Take a run's events and show it at `position` (default: the end)."""
        self.pause()
        self._events = list(events)
        self._pos = -1
        self.seek(len(self._events) if position is None else position, force_rebuild=True)

    def set_speed(self, speed: float | None) -> None:
        """1, 4, 16 or None (instant)."""
        for i, (_, value) in enumerate(SPEEDS):
            if value == speed:
                self.speed.setCurrentIndex(i)
                return
        raise ValueError(f"unknown replay speed {speed!r}")

    # ---- moving --------------------------------------------------------
    def seek(self, k: int, force_rebuild: bool = False) -> None:
        k = max(0, min(k, len(self._events)))
        target = self.target
        if target is not None:
            if force_rebuild or k < self._pos or self._pos < 0:
                target.reset(live=False)
                target.apply_many(self._events[:k])
            elif k > self._pos:
                target.apply_many(self._events[self._pos:k])
        changed = k != self._pos
        self._pos = k
        self._sync_widgets()
        if changed or force_rebuild:
            self.position_changed.emit(k, len(self._events))

    def step_forward(self) -> None:
        self.seek(self._pos + 1)

    def step_back(self) -> None:
        self.seek(self._pos - 1)

    def play(self) -> None:
        if self._speed is None:
            self.seek(len(self._events))
            return
        if self._pos >= len(self._events):
            self.seek(0)
        if not self._timer.isActive():
            self._due = 0.0
            self._last_tick = time.monotonic()
            self._timer.start()
            self._sync_widgets()
            self.playing_changed.emit(True)

    def pause(self) -> None:
        if self._timer.isActive():
            self._timer.stop()
            self._sync_widgets()
            self.playing_changed.emit(False)

    def toggle_play(self) -> None:
        if self.playing:
            self.pause()
        else:
            self.play()

    def _tick(self) -> None:
        now = time.monotonic()
        self._due += (now - self._last_tick) * (self._speed or 1.0)
        self._last_tick = now
        events, k, n = self._events, self._pos, len(self._events)
        while k < n:
            gap = events[k].ts - events[k - 1].ts if k > 0 else 0.0
            gap = min(max(gap, 0.0), MAX_GAP_S)
            if gap > self._due:
                break
            self._due -= gap
            k += 1
        if k != self._pos:
            self.seek(k)
        if self._pos >= n:
            self.pause()

    # ---- widgets -------------------------------------------------------
    def _sync_widgets(self) -> None:
        n = len(self._events)
        self._syncing = True
        try:
            self.slider.setRange(0, n)
            self.slider.setValue(self._pos)
        finally:
            self._syncing = False
        self.label.setText(f"{self._pos:,} / {n:,}")
        self.back_button.setEnabled(self._pos > 0)
        self.forward_button.setEnabled(self._pos < n)
        self.play_button.setText("❚❚" if self.playing else "▶")
        self.play_button.setAccessibleName("Pause" if self.playing else "Play")

    def _on_slider(self, value: int) -> None:
        if not self._syncing:
            self._scrub.start()              # coalesce a drag into a few rebuilds

    def _apply_scrub(self) -> None:
        self.seek(self.slider.value())

    def _on_speed(self, index: int) -> None:
        self._speed = SPEEDS[index][1]
        if self._speed is None and self.playing:
            self.pause()
            self.seek(len(self._events))
