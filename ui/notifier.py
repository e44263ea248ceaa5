"""The one place where background errors and notices show up.

Anything in the app that has something to tell the user (a failed run, a
skipped file, an unhandled exception caught by the hook) calls
`notifier.post(...)` or `notifier.error(...)`. The window shows the latest
warning or error as a banner above the panes (message, what to do, an optional
action button) and every notice briefly in the status bar.

`explain_error` turns engine and provider error text into a message a user can
act on ("Set your OpenAI key in Settings > Keys").
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field
from time import time

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QToolButton

from ui import icons
from ui.plain_text import plain

log = logging.getLogger(__name__)

LEVELS = ("info", "warning", "error")


@dataclass(frozen=True)
class Notification:
    level: str                 # "info" | "warning" | "error"
    message: str               # what happened, one sentence
    advice: str = ""           # what to do about it
    action: str = ""           # an action id the window knows: "keys", "models", "settings", "log"
    action_label: str = ""
    detail: str = ""           # technical text (log, tooltip)
    ts: float = field(default_factory=time)
    # What the message is about ("run", "sources", "question", ...): when that changes
    # (a new run starts, the sources are cleared, the question is edited) the window
    # takes the message down, so no banner outlives what it was about.
    topic: str = ""
    # More ways forward besides `action`: (action id, button label) pairs.
    more_actions: tuple[tuple[str, str], ...] = ()


class Notifier(QObject):
    """Collects notifications; the window's banner and status bar listen."""

    posted = Signal(object)          # Notification
    action_requested = Signal(str)   # an action id from a banner button
    cleared = Signal(str)            # a topic whose messages are stale now ("" : all of them)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.history: list[Notification] = []

    def post(self, note: Notification) -> Notification:
        if note.level not in LEVELS:
            raise ValueError(f"unknown level {note.level!r}")
        self.history.append(note)
        del self.history[:-200]
        level = {"info": logging.INFO, "warning": logging.WARNING, "error": logging.ERROR}[note.level]
        log.log(level, "%s %s %s", note.message, note.advice, note.detail[:2000])
        self.posted.emit(note)
        return note

    def info(self, message: str, advice: str = "", **kw: str) -> Notification:
        return self.post(Notification("info", message, advice, **kw))

    def warning(self, message: str, advice: str = "", **kw: str) -> Notification:
        return self.post(Notification("warning", message, advice, **kw))

    def error(self, message: str, advice: str = "", **kw: str) -> Notification:
        return self.post(Notification("error", message, advice, **kw))

    def clear(self, topic: str = "") -> None:
        """The messages about `topic` (all of them for "") no longer hold: take them down."""
        self.cleared.emit(topic)

    @property
    def last(self) -> Notification | None:
        return self.history[-1] if self.history else None


class Banner(QFrame):
    """Shows the latest warning or error until the user closes it."""

    def __init__(self, notifier: Notifier, parent=None) -> None:
        super().__init__(parent)
        self.setObjectName("banner")
        self.notifier = notifier
        self.note: Notification | None = None
        layout = QHBoxLayout(self)
        layout.setContentsMargins(8, 4, 4, 4)
        self.icon_label = QLabel()
        self.text = QLabel()
        self.text.setWordWrap(True)
        self.text.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.action_button = QPushButton()
        self.action_button.clicked.connect(self._on_action)
        self.more_buttons: list[QPushButton] = []
        for _ in range(3):
            button = QPushButton()
            button.clicked.connect(lambda _c=False, b=button: self._on_more(b))
            button.hide()
            self.more_buttons.append(button)
        self.close_button = QToolButton()
        icons.bind(self.close_button, "close")
        self.close_button.setAccessibleName("Dismiss message")
        self.close_button.setToolTip("Dismiss")
        self.close_button.clicked.connect(self.dismiss)
        layout.addWidget(self.icon_label)
        layout.addWidget(self.text, 1)
        layout.addWidget(self.action_button)
        for button in self.more_buttons:
            layout.addWidget(button)
        layout.addWidget(self.close_button)
        self.hide()
        notifier.posted.connect(self.show_note)
        notifier.cleared.connect(self.clear_topic)

    def show_note(self, note: Notification) -> None:
        if note.level == "info":
            return
        self.note = note
        self.setProperty("level", note.level)
        self.style().unpolish(self)
        self.style().polish(self)
        self.icon_label.setPixmap(icons.icon(note.level).pixmap(18, 18))
        text = f"<b>{_escape(note.message)}</b>"
        if note.advice:
            text += f"<br>{_escape(note.advice)}"
        self.text.setText(text)
        self.text.setToolTip(plain(note.detail[:4000]))
        self.setAccessibleDescription(f"{note.message} {note.advice}")
        self.action_button.setVisible(bool(note.action))
        self.action_button.setText(note.action_label or "Open")
        for i, button in enumerate(self.more_buttons):
            extra = note.more_actions[i] if i < len(note.more_actions) else None
            button.setVisible(extra is not None)
            button.setProperty("action", extra[0] if extra else "")
            button.setText(extra[1] if extra else "")
        self.show()

    def dismiss(self) -> None:
        self.note = None
        self.hide()

    def clear_topic(self, topic: str) -> None:
        """Take the message down if it is about `topic` ("" : whatever it is about)."""
        if self.note is not None and (not topic or self.note.topic == topic):
            self.dismiss()

    def _on_more(self, button: QPushButton) -> None:
        action = button.property("action")
        if action:
            self.notifier.action_requested.emit(str(action))

    def _on_action(self) -> None:
        if self.note and self.note.action:
            self.notifier.action_requested.emit(self.note.action)


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


# --- turning error text into advice --------------------------------------

def provider_of(model: str) -> tuple[str, str]:
    """(keychain provider name, display name) for a model id; ('', '') if unknown."""
    from core.providers import get, provider_for_model
    name = provider_for_model(model or "") if model else ""
    known = get(name) if name else None
    return name, (known.display if known else name)


def shown_model(model: str, api_base: str | None) -> str:
    """The model as the user knows it: a model of their own server is routed as
    "openai/<name>" (the OpenAI-compatible protocol), but it is not OpenAI's."""
    return model.removeprefix("openai/") if api_base and model.startswith("openai/") \
        and "api.openai.com" not in api_base else model


def _host(api_base: str) -> str:
    return api_base.split("//", 1)[-1].split("/", 1)[0] or api_base


def explain_error(error: str, *, model: str = "", api_base: str | None = None,
                  label: str = "", labels: dict | None = None) -> Notification:
    """A user-facing notification for an engine or provider error text. `label` is the
    model's name as the user picked it ("ollama/qwen2.5-coder:7b"), shown instead of
    the routed one."""
    text = error or ""
    low = text.lower()
    first = text.strip().splitlines()[0][:300] if text.strip() else "unknown error"
    own_server = bool(api_base) and "api.openai.com" not in (api_base or "")
    _key, provider = provider_of(model) if not own_server else ("", "")
    model = label or shown_model(model, api_base)
    where = f" at {api_base}" if api_base else ""
    ways_on = (("endpoints", "Open Endpoints"), ("pick_model", "Pick another model"))
    # First: its numbers ("at least 401 MB") must not be read as an HTTP status below.
    if "too large for the repl worker's memory" in low:
        body = text.split("The documents are too large", 1)[-1]
        return Notification(
            "error", "The documents are too large" + body.split(" Raise the memory limit")[0],
            "Raise the REPL memory limit in Settings > Caps, ask about a narrower folder, or leave "
            "files out with a .rlmignore file.", "caps", "Open Caps", detail=text, topic="run")
    if any(s in low for s in ("apiconnectionerror", "connection refused", "connecterror",
                              "cannot connect", "could not connect", "failed to establish",
                              "name or service not known", "connection error", "unreachable",
                              "nodename nor servname", "errno 111")):
        if own_server:
            local = any(h in (api_base or "") for h in ("127.0.0.1", "localhost", "[::1]"))
            return Notification(
                "error", f"Nothing answers at {_host(api_base or '')}: the model server for "
                         f"{model} is not running{' on this computer' if local else ''}.",
                "Start it (Ollama, LM Studio, llama.cpp, vLLM) and press Look again; or check "
                "its address in Settings > Endpoints; or pick another model.",
                "look_again", "Look again", text, topic="run", more_actions=ways_on)
        return Notification("error", f"Cannot reach {provider or 'the provider'} for {model}.",
                            "Check the network connection, then run again; or pick another model.",
                            "pick_model", "Pick another model", text, topic="run")
    if any(s in low for s in ("authenticationerror", "invalid api key", "incorrect api key",
                              "api key", "api_key", "401", "unauthorized", "no key")):
        name = provider or "this provider's"
        return Notification("error", f"The {provider or 'provider'} key was refused or is missing"
                            + (f" for {model}." if model else "."),
                            f"Set your {name} key in Settings > Keys.", "keys", "Open Keys", text,
                            topic="run")
    if "timeout" in low or "timed out" in low:
        return Notification("error", f"The model {model} did not answer in time{where}.",
                            "Try again, or raise the request timeout or pick a faster model.",
                            "pick_model", "Pick another model", detail=text, topic="run")
    if "ratelimit" in low or "rate limit" in low or "429" in low:
        return Notification("warning", f"The provider is rate-limiting {model or 'the calls'}.",
                            "Wait a minute and run again, or use another model.", detail=text,
                            topic="run")
    if "notfounderror" in low or "model_not_found" in low or "does not exist" in low \
            or "llm provider not provided" in low:
        return Notification("error", f"The model {model!r} is not known to its provider.",
                            "Check the model name in the model picker or in Settings > Models.",
                            "models", "Open Models", text, topic="run")
    if "contextwindow" in low or "context length" in low or "maximum context" in low:
        return Notification("error", f"A prompt was too long for {model}.",
                            "Pick a sub model with a larger context window.", detail=text, topic="run")
    if "no price is known for model" in low:
        routed = text.split("'", 2)[1] if text.count("'") >= 2 else model
        name = (labels or {}).get(routed, routed)
        return Notification(
            "warning", f"No price is known for {name}, and a dollar cap is set: the run did not start.",
            "If it runs on this computer, mark it free; if it is paid, give it a price; or run "
            "without a cap.", f"mark_free:{name}", f"Mark {name} free", detail=text, topic="run",
            more_actions=((f"set_price:{name}", "Set a price…"), ("no_cap", "Run without a cap")))
    if "cap" in low and ("cost" in low or "$" in low or "budget" in low):
        return Notification("warning", "The dollar cap was reached; what was done so far is kept.",
                            "Raise the dollar cap in the question panel to let the run go further.",
                            detail=text, topic="run")
    return Notification("error", f"The run failed: {first}",
                        "The transcript shows what happened; details are in the log.", detail=text,
                        topic="run")


RAW_ERROR = re.compile(r"\[Errno \d+\]|\b[A-Z]\w*(Error|Exception)\b|Traceback|Connect call failed")


def error_in_words(error: str | None, config: dict | None = None, root_model: str = "") -> str:
    """A run's error as the banner says it ("Nothing answers at 127.0.0.1:5077: …") for the
    answer card, not the raw "[Errno 111] Connect call failed" (that stays its tooltip)."""
    if not error:
        return ""
    if not RAW_ERROR.search(error):
        return error                          # already a sentence for a person
    config = config or {}
    labels = config.get("model_labels")
    api_base, model = config.get("api_base"), root_model or ""
    said = re.search(r"the server at (\S+?:\d+) for (\S+?):", error)      # the engine's own words
    if said and not api_base:
        api_base, model = f"http://{said.group(1)}/v1", model or said.group(2)
    note = explain_error(error, model=model, api_base=api_base,
                         label=model if said else "", labels=labels if isinstance(labels, dict) else None)
    return f"{note.message} {note.advice}".strip()
