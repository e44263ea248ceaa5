"""The window's runs: the question panel's Run and Stop, every kind of run composed
into a RunRequest and launched on the engine thread (app/window_runs.py), the status
line as it starts, prepares and ends, and the notification that reports its end.
A RunsPort (app/ports.py) for the glue that starts runs (trust, follow-ups).
"""

from __future__ import annotations

import asyncio
from typing import Any

from PySide6.QtCore import QObject

from app.limit_fixes import cap_advice, one_stop
from app.ports import EnginePort, SettingsPort, SourcesPort, StorePort
from app.run_service import RunRequest, RunService
from app.window_runs import WindowRuns
from core import limits
from core.repl.sandbox_report import NOTICE_PREFIX as SANDBOX_NOTICE
from core.run_names import title_of
from ui.cost_meter import cost_text
from ui.notifier import Notification, Notifier, explain_error


class RunGlue(QObject):
    """The controller connects `runs`' signals (started, prepared, ended, failed,
    stopped_early) to the on_* methods here and to History's."""

    def __init__(self, window: Any, notifier: Notifier, *, settings: SettingsPort, sources: SourcesPort,
                 store: StorePort, service: RunService, engine: EnginePort | None = None,
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.window = window
        self.panel = window.question_panel
        self.panes = window.run_panes
        self.notifier = notifier
        self._settings = settings
        self._sources = sources
        self._store = store
        self.runs = WindowRuns(service, consume=self.consume, parent=self, engine=engine)
        self.last_outcome: Any = None
        self.parent_run_id: str | None = None    # set by "re-run" in History, used by the next Run
        self._approver: Any = None

    def use_approver(self, approver: Any) -> None:
        """Large batches ask in the window: `approver.with_approver(config)` (app/trust_glue.py)."""
        self._approver = approver

    @property
    def running(self) -> bool:
        return self.runs.running

    @property
    def run_task(self) -> asyncio.Task | None:
        return self.runs.task

    def last_run_id(self) -> str | None:
        return self.last_outcome.run_id if self.last_outcome else None

    def link_next(self, run_id: str | None) -> None:
        """History loaded a run's sources, question, models and caps: the next Run re-runs it
        (None: it no longer applies)."""
        self.parent_run_id = run_id

    def start_run(self) -> Notification | None:
        """Run the question panel's question (a re-run when History loaded one); returns
        the notification that explains why not, if it cannot start."""
        if self.running:
            return None
        parent = self.parent_run_id
        request = self.compose("re-run" if parent else "ask", parent_run_id=parent)
        if isinstance(request, Notification):
            return request
        if parent and not self.confirm_rerun(parent, request.config):
            return None
        self.launch(request)
        return None

    def confirm_rerun(self, run_id: str, config: Any) -> bool:
        """A re-run of an imported run starts only when the user says yes to where its calls go:
        a run file names its models, and so picks which of the user's providers and keys the
        re-run uses (a name that matches none of the user's endpoints goes to that provider's
        own URL with the user's key). Any other run: True."""
        if not (self._store.store().get_run(run_id) or {}).get("imported_utc"):
            return True
        # lazy: only for an imported run
        from app.key_routing import route_lines
        from core.control_chars import escape_controls  # lazy: the same
        from ui import confirm  # lazy: the same
        lines = route_lines(config, self._settings.current().endpoints)
        answer = confirm.ask(
            self.window, "Send this re-run's calls?",
            "This run came from a file. Its re-run sends each model's calls here, with the key named:\n\n"
            + "\n".join(escape_controls(line) for line in lines)
            + "\n\nNothing is sent until you choose Send.",
            [("send", "Send"), ("cancel", "Cancel")], destructive=True)
        if answer != "send":
            self.notifier.info("Not re-run: nothing was sent.")
            return False
        return True

    def compose(self, kind: str = "ask", **fields: Any) -> RunRequest | Notification:
        """A RunRequest from the question panel (question, models, caps) and the sources;
        or, posted, the notification that says what is missing."""
        qp = self.panel
        problem = self._run_problem(qp, needs_documents=kind not in ("rebuild", "fork"))
        if problem is not None:
            self.notifier.post(problem)
            return problem
        # lazy: free in the window (where it runs)
        from app.settings import build_run_config
        try:
            config = build_run_config(self._settings.current(), root=qp.root_model(),
                                      sub=qp.sub_model() or None, overrides={**qp.caps(), **qp.run_overrides()})
        except ValueError as exc:
            return self.notifier.error(f"These caps cannot be used: {exc}", "Change them and run again.")
        if self._approver is not None:
            config = self._approver.with_approver(config)      # large batches ask in the window
        fields.setdefault("question", qp.question())
        if kind not in ("rebuild", "fork"):
            fields.setdefault("documents", tuple(self._sources.documents.values()))
            fields.setdefault("skipped", tuple(self._sources.skipped.values()))
        return RunRequest(kind, config=config, keep_session=True, **fields)

    def launch(self, request: RunRequest) -> asyncio.Task | None:
        """Start any request (ask, re-run, follow-up, fork, rebuild) in the window."""
        if self.running:
            self.notifier.warning("A run is in progress.", "Stop it before starting another.")
            return None
        if request.question:
            self._remember_question(request.question)
        return self.runs.launch(request)

    def _run_problem(self, qp, *, needs_documents: bool = True) -> Notification | None:
        if self._sources.reading():
            return Notification("warning", "The sources are still being read.",
                                "Wait until reading ends, or stop it, then run.")
        if needs_documents and not self._sources.documents:
            return Notification("warning", "There are no documents to ask about yet.",
                                "Drop files or folders on the Sources pane, or use Add files.",
                                topic="sources")
        if not qp.question():
            return Notification("warning", "Type a question first.",
                                "Write it in the question box, then press Run (Ctrl+Enter).",
                                topic="question")
        if not qp.root_model():
            return Notification("warning", "Pick a root model.",
                                "Choose one in the question panel, or type a model id "
                                "(e.g. openai/gpt-4o-mini).")
        if qp.blocked():
            return Notification("warning", qp.blocked(), "Use one of the buttons under Run.")
        return None

    def _remember_question(self, question: str) -> None:
        self._settings.current().remember_question(question)

    def on_started(self, request: RunRequest) -> None:
        qp = self.panel
        if request.kind in ("ask", "re-run"):
            self.parent_run_id = None            # a re-run links one run only
        self.panes.reset()
        qp.set_running(True)
        qp.set_status(_starting(request, title_of(self._store.store(), request.parent_run_id)))

    def on_prepared(self, request: RunRequest, prepared: Any) -> None:
        qp = self.panel
        if prepared.kind == "fork":
            qp.set_status(f"Fork of “{title_of(self._store.store(), prepared.parent_run_id)}” from turn "
                          f"{prepared.turn}: running…")
        else:
            qp.set_status("Running…")

    def on_ended(self, request: RunRequest, outcome: Any) -> None:
        self.panel.set_running(False)
        self.last_outcome = outcome
        self._report(outcome, request.config)

    def on_failed(self, request: RunRequest, exc: BaseException) -> None:
        qp = self.panel
        qp.set_running(False)
        # lazy: free in the window (where it runs)
        from core.store.errors import StoreError
        # lazy: +8 modules in the window (where it runs)
        from core.engine.rebuild import RebuildError
        if request.kind == "fork" and isinstance(exc, (RebuildError, StoreError, OSError, ValueError)):
            self.notifier.error(f"The fork could not start: {exc}")
            qp.set_status("The fork could not start.")
        elif request.kind == "rebuild" and isinstance(exc, (RebuildError, StoreError, OSError, RuntimeError)):
            self.notifier.error(f"The REPL of “{title_of(self._store.store(), request.parent_run_id)}” could not "
                                f"be rebuilt: {exc}",
                                "Ask again and choose Start fresh.")
            qp.set_status("")
        else:
            config = request.config
            self.notifier.post(explain_error(f"{type(exc).__name__}: {exc}",
                                             model=getattr(config, "root_model", None),
                                             api_base=getattr(config, "api_base", None),
                                             labels=getattr(config, "model_labels", None)))
            qp.set_status("The run failed.")

    def on_stopped_early(self, request: RunRequest) -> None:
        qp = self.panel
        qp.set_running(False)
        qp.set_status("Stopped before the run began.")

    def _report(self, outcome: Any, config: Any) -> None:
        qp = self.panel
        totals = outcome.totals or {}
        cost = totals.get("cost_usd")
        wall = max(0.0, (outcome.finished_at or 0) - (outcome.started_at or 0))
        summary = f"{wall:.1f} s" + (f" · {cost_text(cost, totals.get('unpriced_models') or ())}"
                                     if cost is not None else "")
        limited = limits.summary(totals.get("limited"))
        if outcome.status == "finished" and limited:
            qp.set_status(f"Finished, limited · {summary}")
            action, label = limits.fix(totals.get("limited")) or ("", "")
            self.notifier.warning(f"The run finished, but {limited[0].lower()}{limited[1:]}",
                                  "The answer card says what was limited.", action=action, action_label=label,
                                  topic="cap")
        elif outcome.status == "finished":
            qp.set_status(f"Finished · {summary}")
            self.notifier.info(f"The run finished ({summary}).")
        elif outcome.status == "capped":
            qp.set_status(f"Stopped at a cap · {summary}")
            action, label = limits.fix(totals.get("limited")) or ("", "")
            if limited and action.startswith("set_cap:"):      # a refused root turn: said as it was
                self.notifier.warning(f"{limited} What was done is kept.",
                                      f"{one_stop(outcome.error or '')} {label} and run again.".strip(),
                                      action=action, action_label=label, topic="cap")
            else:
                self.notifier.warning(
                    f"The run stopped at a cap{': ' + one_stop(outcome.error) if outcome.error else '.'} "
                    "What was done is kept.", cap_advice(totals.get("cap_hit"), outcome.error),
                    action=action, action_label=label, topic="cap")
        elif outcome.status == "cancelled":
            qp.set_status(f"Stopped · {summary}")
            self.notifier.info("Stopped. The transcript so far stays.")
        else:
            qp.set_status("The run failed.")
            self.notifier.post(explain_error(outcome.error or "", model=getattr(config, "root_model", None),
                                             api_base=getattr(config, "api_base", None),
                                             label=config.label(config.root_model) if config is not None else None))
        if outcome.store_error:
            self.notifier.warning("The run's record is incomplete: some events could not be saved.",
                                  "History, Verify and the exports may miss part of this run. Check the "
                                  "disk and the data folder.", detail=outcome.store_error)

    def stop_run(self) -> None:
        if not self.running:
            return
        self.panel.set_status("Stopping…")
        self.runs.stop()

    def sink(self, event: Any) -> None:
        """An event sink for the panes (any thread): batched per frame (app/engine_thread.py)."""
        self.runs.bridge.sink(event)

    def _sandbox_incomplete(self, message: str) -> None:
        """Once per session a banner, and the status-bar badge for good."""
        badge = self.window.sandbox_badge
        if not badge.isVisible():
            self.notifier.warning(message, "Model code runs with fewer walls on this system.")
        badge.show_message(message)

    def flush_events(self) -> None:
        self.runs.bridge.drain()

    def consume(self, batch: list[Any], deadline: float | None = None) -> int:
        """A frame's events from the engine thread, in order, on the GUI thread: the panes
        fold them until `deadline` (app/engine_thread.py); returns how many they took."""
        done = self.panes.apply_many(batch, deadline)
        qp = self.panel
        if done and qp.status() == STARTING:
            qp.set_status("Running…")        # the run's first events: it is no longer starting
        for event in batch[:done] if done < len(batch) else batch:
            if event.type == "Notice" and event.level == "error":
                self.notifier.warning(event.message)
            elif event.type == "Notice" and event.message.startswith(SANDBOX_NOTICE):
                self._sandbox_incomplete(event.message)
        return done


STARTING = "Starting…"


def _starting(request: RunRequest, parent: str) -> str:
    """The status line as a run starts; `parent` names the run it comes from (core/run_names.py)."""
    if request.kind == "fork":
        return f"Rebuilding “{parent}” up to turn {request.fork_turn}…"
    if request.kind == "rebuild":
        return (f"Rebuilding the REPL of “{parent}”: re-running its code, "
                "no model calls…")
    return STARTING
