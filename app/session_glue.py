"""Follow-up questions: keep the last run's REPL alive while the app is open,
ask the next question in it, and say plainly when it is gone.

Every run from the window is started with keep_session=True. When it ends
(finished or capped) its Session (live REPL + the root's conversation) is
kept here; "Ask a follow-up" sends a "follow-up" RunRequest (that session,
parent_run_id = that run) down the one run path, so the variables the model
built are reused and History links the two runs. Sessions belong to the
engine's loop: they are closed there (WindowRuns.close_session).
Plain Run starts over (the kept REPL is closed). The session is closed when
the sources change, when a new run starts fresh, and when the window closes.

When the REPL is gone (the app was restarted, the run was opened from
History, the sources changed), the user is told so and chooses: rebuild it by
re-execution (a "rebuild" RunRequest: core/follow_up.py on the engine's loop,
no model calls) or start fresh (a "re-run" over that run's stored documents
with the earlier question and answer written into the question, so nothing is
hidden).
"""

from __future__ import annotations

import logging
from typing import Any

from PySide6.QtWidgets import QMessageBox

from core.run_names import title_of
from app.ports import LiveRunPort, ReplayPort, RunsPort, SourcesPort
from app.run_service import RunRequest
from ui.follow_up_bar import FollowUpBar
from core.follow_up import rebuild_available
from core.follow_up import fresh_question

log = logging.getLogger(__name__)

FROM_HISTORY = "the run was opened from History, and its REPL is no longer running"


def fingerprint(documents: dict[str, Any]) -> tuple:
    # the default only when there is no chars: getattr's default is evaluated (a text read back) first
    return tuple(sorted((path, d.chars if hasattr(d, "chars") else len(getattr(d, "text", "")))
                        for path, d in documents.items()))


class SessionGlue:
    """Narrow dependencies: the window (question panel, sources and history panes), the
    notifier, and ports (app/ports.py): the run in progress (`live`: its signals,
    close_session), History (store, replaying, leave_replay), the window's runs (compose a
    RunRequest from the question panel, launch it) and Sources (read and replaced)."""

    def __init__(self, window: Any, notifier: Any, *, live: LiveRunPort, history: ReplayPort,
                 launcher: RunsPort, sources: SourcesPort, last_session: dict | None = None) -> None:
        self.window = window
        self.notifier = notifier
        self.runs = live
        self.history = history
        self._launcher = launcher
        self._sources = sources
        self.session: Any = None           # core.engine.rlm.Session of the last run, alive
        self.run_id: str | None = None     # the run that session belongs to
        self.question = ""                 # the question that run answered
        self.fingerprint: tuple = ()
        self.gone_run_id: str | None = None
        self.gone_reason = ""
        self.gone_dialog: QMessageBox | None = None
        self._in_use: Any = None           # the session the current run continues
        self._asked = ("", ())             # (question, fingerprint) of the current run

        self.bar = FollowUpBar()
        window.question_panel.add_accessory(self.bar, "bottom")
        self.bar.follow_up_requested.connect(self.ask_follow_up)
        model = window.sources_pane.model
        for signal in (model.modelReset, model.rowsInserted, model.rowsRemoved):
            signal.connect(self._sources_changed)
        window.history_pane.open_requested.connect(lambda _id: self.refresh_bar())   # after the controller
        window.leave_replay_requested.connect(self.refresh_bar)
        live.started.connect(self.run_started)
        live.prepared.connect(self._prepared)
        live.ended.connect(lambda _request, outcome: self.run_ended(outcome))
        live.failed.connect(lambda _request, _exc: self.run_ended(None))
        live.stopped_early.connect(lambda _request: self.run_ended(None))
        last = last_session or {}
        if isinstance(last, dict) and last.get("run_id"):
            self.gone_run_id = str(last["run_id"])
            self.gone_reason = "it ended when the app was closed"
        self.refresh_bar()

    def _name(self, run_id: str | None) -> str:
        """A run as the user knows it: its question and start time (core/run_names.py)."""
        return title_of(self.history.store(), run_id)

    # --- the bar ------------------------------------------------------------------
    def refresh_bar(self, ended: bool = False) -> None:
        replaying = self.history.replaying
        if self.runs.running and not ended:      # (inside the run's own task it still counts as running)
            self.bar.set_state("hidden")
        elif replaying and replaying != self.run_id:
            self.bar.set_state("gone", f"The REPL of “{self._name(replaying)}” is gone: {FROM_HISTORY}. "
                                       "A follow-up can rebuild it or start fresh.")
        elif self.session is not None:
            self.bar.set_state("live", f"The REPL of “{self._name(self.run_id)}” is still open: type the "
                                       "next question and ask a follow-up to reuse what the model "
                                       "built (Run starts over).")
        elif self.gone_run_id:
            self.bar.set_state("gone", f"The REPL of “{self._name(self.gone_run_id)}” is gone: {self.gone_reason}. "
                                       "A follow-up can rebuild it or start fresh.")
        else:
            self.bar.set_state("hidden")

    def _sources_changed(self, *_args) -> None:
        if self.session is not None and fingerprint(self._sources.documents) != self.fingerprint:
            self._drop_session("it was closed when the sources changed")
            self.refresh_bar()

    def _drop_session(self, reason: str) -> None:
        self.close_later(self.session)
        self.gone_run_id, self.gone_reason = self.run_id, reason
        self.session = None

    # --- every run of the window ---------------------------------------------------------
    def run_started(self, request: Any) -> None:
        """A fresh run closes the kept REPL; a follow-up continues in it."""
        self._in_use = request.session if request.kind == "follow-up" else None
        if self._in_use is None and self.session is not None:
            self.close_later(self.session)
            self.session = None
        self._asked = (request.question, fingerprint(self._sources.documents))
        self.bar.set_state("hidden")

    def _prepared(self, _request: Any, prepared: Any) -> None:
        if prepared.kind != "rebuild":
            return
        note = (f"Rebuilt the REPL of “{self._name(prepared.parent_run_id)}” ({prepared.replayed_cells} cells "
                "re-run from the record).")
        if prepared.unmatched:
            self.notifier.warning(note + f" {len(prepared.unmatched)} cells asked things that are not "
                                  "in the record, so some variables may differ from the original.")
        else:
            self.notifier.info(note)

    def run_ended(self, outcome: Any) -> None:
        in_use, self._in_use = self._in_use, None
        kept = getattr(outcome, "session", None)
        if in_use is not None and (kept is None or kept.repl is not in_use.repl):
            self.close_later(in_use)
        if kept is not None and outcome.status in ("finished", "capped"):
            self.session, self.run_id = kept, outcome.run_id
            self.question, self.fingerprint = self._asked
            self.gone_run_id, self.gone_reason = None, ""
        elif kept is not None:
            self.close_later(kept)
        self.refresh_bar(ended=True)

    def _start(self, kind: str, parent_run_id: str, **fields: Any) -> bool:
        """Start the question panel's question as a `kind` request from `parent_run_id`."""
        if self.runs.running:
            return False
        request = self._launcher.compose(kind, parent_run_id=parent_run_id, **fields)
        if not isinstance(request, RunRequest):        # refused (no model, no question, ...): said why
            return False
        if not self._launcher.confirm_rerun(parent_run_id, request.config):    # an imported run asks first
            return False
        return self._launcher.launch(request) is not None

    # --- "Ask a follow-up" ----------------------------------------------------------
    def ask_follow_up(self) -> str:
        """What happened: "started", "asked" (the gone dialog is open) or "refused"."""
        if self.runs.running:
            return "refused"
        question = self.window.question_panel.question()
        replaying = self.history.replaying
        if replaying and (replaying != self.run_id or self.session is None):
            return self._ask_gone(replaying, FROM_HISTORY)
        if self.session is not None:
            if not question or question == self.question:
                self.notifier.warning("Type the follow-up question first.",
                                      "The box still holds the last question; write the next one, "
                                      "then press Ask a follow-up.", topic="question")
                return "refused"
            session = self.session
            self.session = None
            if not self._start("follow-up", self.run_id, session=session):
                self.session = session
                return "refused"
            return "started"
        if self.gone_run_id:
            return self._ask_gone(self.gone_run_id, self.gone_reason)
        self.notifier.info("There is no earlier run to follow up yet.", "Run a question first.")
        return "refused"

    def _ask_gone(self, run_id: str, reason: str) -> str:
        question = self.window.question_panel.question()
        run = self.history.store().get_run(run_id)
        if not run:
            self.notifier.error("That run is no longer stored.", "Run the question again.")
            return "refused"
        if not question or question == (run.get("question") or "").strip():
            self.notifier.warning("Type the follow-up question first.",
                                  "The box holds the earlier question; write the next one, then "
                                  "press Ask a follow-up.", topic="question")
            return "refused"
        box = QMessageBox(self.window)
        box.setObjectName("followUpGoneDialog")
        box.setIcon(QMessageBox.Icon.Information)
        box.setWindowTitle("The REPL of that run is gone")
        box.setText(f"The REPL of “{self._name(run_id)}” is gone: {reason}. "
                    "The variables the model built there are not in memory any more.")
        can_rebuild = rebuild_available()
        box.setInformativeText(
            ("Rebuild: re-run that run's code in a new REPL, every sub-call answered from the record "
             "(no model calls, no cost), then ask your follow-up in the same conversation.\n\n"
             if can_rebuild else
             "Rebuilding the REPL by re-running its code is not available in this build.\n\n")
            + "Start fresh: a new run over the same documents, with the earlier question and answer "
              "written into the question as background; the model starts from an empty REPL.\n\n"
              "Either way the new run is linked to the earlier one in History.")
        rebuild = box.addButton("Rebuild and ask", QMessageBox.ButtonRole.AcceptRole) if can_rebuild else None
        fresh = box.addButton("Start fresh", QMessageBox.ButtonRole.ActionRole)
        box.addButton(QMessageBox.StandardButton.Cancel)

        def chosen(button) -> None:
            self.gone_dialog = None
            if rebuild is not None and button is rebuild:
                self.rebuild_and_ask(run_id, question)
            elif button is fresh:
                self.start_fresh(run_id, question)
        box.buttonClicked.connect(chosen)
        box.finished.connect(box.deleteLater)
        self.gone_dialog = box
        box.open()
        return "asked"

    def _restore_documents(self, run_id: str) -> bool:
        # lazy: free in the window (where it runs)
        from core.store.errors import StoreError
        try:
            documents = list(self.history.store().documents(run_id))
        except StoreError as exc:
            self.notifier.error(f"The documents of “{self._name(run_id)}” cannot be restored: {exc}")
            return False
        self.history.leave_replay()
        self._sources.set_documents(documents)
        return True

    def start_fresh(self, run_id: str, question: str) -> bool:
        run = self.history.store().get_run(run_id) or {}
        if not self._restore_documents(run_id):
            return False
        qp = self.window.question_panel
        qp.set_question(fresh_question(run.get("question") or "", run.get("answer"), question))
        started = self._start("re-run", run_id)
        if started:
            self.notifier.info(f"Started fresh over the {len(self._sources.documents)} documents of "
                               f"“{self._name(run_id)}”; the earlier question and answer are in the question as "
                               "background.")
        return started

    def rebuild_and_ask(self, run_id: str, question: str) -> bool:
        """A "rebuild" request: the run service re-runs that run's code in a new REPL on the
        engine's loop (no model calls), then asks `question` there as a follow-up."""
        if not self._restore_documents(run_id):      # the sources show what the rebuilt REPL holds
            return False
        self.window.question_panel.set_question(question)
        return self._start("rebuild", run_id)

    # --- closing ---------------------------------------------------------------------
    def close_later(self, session: Any) -> None:
        if session is not None:
            self.runs.close_session(session)

    def close(self) -> None:
        """The window closes: end every kept REPL (WindowRuns.shutdown waits for them)."""
        self.close_later(self.session)
        self.session = None
