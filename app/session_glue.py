"""Follow-up questions: keep the last run's REPL alive while the app is open,
ask the next question in it, and say plainly when it is gone.

Every run from the window is started with keep_session=True. When it ends
(finished or capped) its Session (live REPL + the root's conversation) is
kept here; "Ask a follow-up" runs the question in the box with
QuestionRun(session=..., follow_up=True) and parent_run_id = that run, so the
variables the model built are reused and History links the two runs.
Plain Run starts over (the kept REPL is closed). The session is closed when
the sources change, when a new run starts fresh, and when the window closes.

When the REPL is gone (the app was restarted, the run was opened from
History, the sources changed), the user is told so and chooses: rebuild it by
re-execution (core/follow_up.py, no model calls) or start fresh (a new run over
that run's stored documents with the earlier question and answer written into
the question, so nothing is hidden).
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from PySide6.QtWidgets import QMessageBox

from ui.follow_up_bar import FollowUpBar

log = logging.getLogger(__name__)

_UNSET = object()
FROM_HISTORY = "the run was opened from History, and its REPL is no longer running"


def fingerprint(documents: dict[str, Any]) -> tuple:
    return tuple(sorted((path, getattr(d, "chars", len(getattr(d, "text", "")))) for path, d in documents.items()))


class SessionGlue:
    def __init__(self, controller: Any) -> None:
        self.c = controller
        self.session: Any = None           # core.engine.rlm.Session of the last run, alive
        self.run_id: str | None = None     # the run that session belongs to
        self.question = ""                 # the question that run answered
        self.fingerprint: tuple = ()
        self.gone_run_id: str | None = None
        self.gone_reason = ""
        self.gone_dialog: QMessageBox | None = None
        self._pending: Any = None          # the session the next run continues
        self._in_use: Any = None           # the session the current run continues
        self._asked = ("", ())             # (question, fingerprint) of the current run
        self._saved_parent: Any = _UNSET
        self._tasks: set[asyncio.Task] = set()

        w = controller.window
        self.bar = FollowUpBar()
        w.question_panel.layout().addWidget(self.bar)
        self.bar.follow_up_requested.connect(self.ask_follow_up)
        model = w.sources_pane.model
        for signal in (model.modelReset, model.rowsInserted, model.rowsRemoved):
            signal.connect(self._sources_changed)
        w.history_pane.open_requested.connect(lambda _id: self.refresh_bar())   # after the controller
        w.leave_replay_requested.connect(self.refresh_bar)
        last = controller.settings.ui.get("last_session")
        if isinstance(last, dict) and last.get("run_id"):
            self.gone_run_id = str(last["run_id"])
            self.gone_reason = "it ended when the app was closed"
        self.refresh_bar()

    # --- the bar ------------------------------------------------------------------
    def refresh_bar(self, ended: bool = False) -> None:
        c = self.c
        if c.running and not ended:      # (inside the run's own task it still counts as running)
            self.bar.set_state("hidden")
        elif c.history.replaying and c.history.replaying != self.run_id:
            self.bar.set_state("gone", f"The REPL of run {c.history.replaying[:8]} is gone: {FROM_HISTORY}. "
                                       "A follow-up can rebuild it or start fresh.")
        elif self.session is not None:
            self.bar.set_state("live", f"The REPL of run {self.run_id[:8]} is still open: type the "
                                       "next question and ask a follow-up to reuse what the model "
                                       "built (Run starts over).")
        elif self.gone_run_id:
            self.bar.set_state("gone", f"The REPL of run {self.gone_run_id[:8]} is gone: {self.gone_reason}. "
                                       "A follow-up can rebuild it or start fresh.")
        else:
            self.bar.set_state("hidden")

    def _sources_changed(self, *_args) -> None:
        if self.session is not None and fingerprint(self.c.documents) != self.fingerprint:
            self._drop_session("it was closed when the sources changed")
            self.refresh_bar()

    def _drop_session(self, reason: str) -> None:
        self.close_later(self.session)
        self.gone_run_id, self.gone_reason = self.run_id, reason
        self.session = None

    # --- used by the controller's run ------------------------------------------------
    def run_kwargs(self) -> dict[str, Any]:
        """Extra QuestionRun arguments for the run about to start."""
        pending, self._pending = self._pending, None
        if pending is None and self.session is not None:      # a fresh run: the old REPL goes
            self.close_later(self.session)
            self.session = None
        self._in_use = pending
        self._asked = (self.c.window.question_panel.question(), fingerprint(self.c.documents))
        self.bar.set_state("hidden")
        kwargs: dict[str, Any] = {"keep_session": True}
        if pending is not None:
            kwargs.update(session=pending, follow_up=True)
        return kwargs

    def run_ended(self, outcome: Any) -> None:
        self._restore_parent()
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

    def _restore_parent(self) -> None:
        if self._saved_parent is not _UNSET:
            self.c.parent_run_id = self._saved_parent
            self._saved_parent = _UNSET

    def _start(self, parent_run_id: str, session: Any = None) -> bool:
        """Start the run in the question panel as a child of `parent_run_id`."""
        if self.c.running:
            return False
        self._pending = session
        self._saved_parent = self.c.parent_run_id
        self.c.parent_run_id = parent_run_id
        self.c.start_run()
        if not self.c.running:                      # refused (no model, no question, ...)
            self._pending = None
            self._restore_parent()
            return False
        return True

    # --- "Ask a follow-up" ----------------------------------------------------------
    def ask_follow_up(self) -> str:
        """What happened: "started", "asked" (the gone dialog is open) or "refused"."""
        c, qp = self.c, self.c.window.question_panel
        if c.running:
            return "refused"
        question = qp.question()
        if c.history.replaying and (c.history.replaying != self.run_id or self.session is None):
            return self._ask_gone(c.history.replaying, FROM_HISTORY)
        if self.session is not None:
            if not question or question == self.question:
                c.notifier.warning("Type the follow-up question first.",
                                   "The box still holds the last question; write the next one, "
                                   "then press Ask a follow-up.", topic="question")
                return "refused"
            session = self.session
            self.session = None
            if not self._start(self.run_id, session):
                self.session = session
                return "refused"
            return "started"
        if self.gone_run_id:
            return self._ask_gone(self.gone_run_id, self.gone_reason)
        c.notifier.info("There is no earlier run to follow up yet.", "Run a question first.")
        return "refused"

    def _ask_gone(self, run_id: str, reason: str) -> str:
        from core.follow_up import rebuild_available
        question = self.c.window.question_panel.question()
        run = self.c.history.store().get_run(run_id)
        if not run:
            self.c.notifier.error("That run is no longer stored.", "Run the question again.")
            return "refused"
        if not question or question == (run.get("question") or "").strip():
            self.c.notifier.warning("Type the follow-up question first.",
                                    "The box holds the earlier question; write the next one, then "
                                    "press Ask a follow-up.", topic="question")
            return "refused"
        box = QMessageBox(self.c.window)
        box.setObjectName("followUpGoneDialog")
        box.setIcon(QMessageBox.Icon.Information)
        box.setWindowTitle("The REPL of that run is gone")
        box.setText(f"The REPL of run {run_id[:8]} is gone: {reason}. "
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
                self._track(asyncio.ensure_future(self.rebuild_and_ask(run_id, question)))
            elif button is fresh:
                self.start_fresh(run_id, question)
        box.buttonClicked.connect(chosen)
        box.finished.connect(box.deleteLater)
        self.gone_dialog = box
        box.open()
        return "asked"

    def start_fresh(self, run_id: str, question: str) -> bool:
        from core.follow_up import fresh_question
        from core.store.errors import StoreError
        store = self.c.history.store()
        run = store.get_run(run_id) or {}
        try:
            documents = list(store.documents(run_id))
        except StoreError as exc:
            self.c.notifier.error(f"The documents of run {run_id[:8]} cannot be restored: {exc}")
            return False
        self.c.history.leave_replay()
        self.c.set_documents(documents)
        qp = self.c.window.question_panel
        qp.set_question(fresh_question(run.get("question") or "", run.get("answer"), question))
        started = self._start(run_id)
        if started:
            self.c.notifier.info(f"Started fresh over the {len(documents)} documents of run {run_id[:8]}; "
                                 "the earlier question and answer are in the question as background.")
        return started

    async def rebuild_and_ask(self, run_id: str, question: str) -> bool:
        from core.follow_up import rebuild_session
        from core.trust.rebuild import RebuildError
        qp = self.c.window.question_panel
        qp.set_status(f"Rebuilding the REPL of run {run_id[:8]}: re-running its code, no model calls…")
        try:
            rebuilt = await rebuild_session(self.c.history.store(), run_id,
                                            memory_limit_mb=self.c.settings.caps.get("memory_limit_mb", 4096))
        except (RebuildError, OSError, RuntimeError) as exc:
            log.warning("rebuilding run %s failed: %s", run_id, exc)
            qp.set_status("")
            self.c.notifier.error(f"The REPL of run {run_id[:8]} could not be rebuilt: {exc}",
                                  "Ask again and choose Start fresh.")
            return False
        self.c.history.leave_replay()
        self.c.set_documents(rebuilt.documents)
        qp.set_question(question)
        if not self._start(run_id, rebuilt.session):
            await rebuilt.close()
            return False
        note = f"Rebuilt the REPL of run {run_id[:8]} ({rebuilt.cells} cells re-run from the record)."
        if rebuilt.unmatched:
            self.c.notifier.warning(note + f" {len(rebuilt.unmatched)} cells asked things that are not "
                                    "in the record, so some variables may differ from the original.")
        else:
            self.c.notifier.info(note)
        return True

    # --- closing ---------------------------------------------------------------------
    def close_later(self, session: Any) -> None:
        if session is not None:
            self._track(asyncio.ensure_future(self._close(session)))

    def _track(self, task: asyncio.Task) -> None:
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _close(self, session: Any) -> None:
        try:
            await session.close()
        except (OSError, RuntimeError, ProcessLookupError) as exc:
            log.warning("closing a kept REPL failed: %s", exc)

    async def close(self) -> None:
        """The window closes: end every kept REPL."""
        for session in (self.session, self._pending):
            self.close_later(session)
        self.session = self._pending = None
        if self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)
