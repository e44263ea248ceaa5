"""The ports the window's glue objects are handed: each a narrow object with the
few methods a glue needs (napari's pattern), never the controller nor a bag of
callables. app/controller.py builds the objects that implement them and wires
their signals; a glue sees another only through one of these.

    SettingsPort   app/settings_glue.py SettingsGlue: the settings in force, saved, the keychain
    SourcesPort    app/sources_glue.py SourcesGlue: the documents in Sources
    RunsPort       app/run_glue.py RunGlue: start a run, is one going, the last one
    LiveRunPort    app/window_runs.py WindowRuns: the run in progress as the engine holds it
    StorePort      app/run_store.py StoreHolder: the run store, opened on first use
    EnginePort     app/engine_thread.py EngineThread: await work on the engine's loop
    ReplayPort     app/history_glue.py HistoryGlue: the replay shown, leave it, open a run
    GuidePort      app/models_glue.py ModelsGlue: the guide's numbers measured here
"""

from __future__ import annotations

import asyncio
from typing import Any, Protocol


class SettingsPort(Protocol):
    def current(self) -> Any:
        """The settings in force (the dialog replaces them when it saves)."""

    def save(self) -> None:
        """Write the settings in force; a failure is said in the notifier."""

    def default_caps(self) -> dict:
        """The caps the question panel starts from (depth, cost, iterations)."""

    def keys(self) -> Any:
        """The keychain (core.secrets.KeyStore)."""

    def open(self, page: str = "") -> Any:
        """The settings dialog, open at `page`."""


class SourcesPort(Protocol):
    documents: dict[str, Any]          # Document.path -> Document, in Sources now
    skipped: dict[str, Any]            # Skip.path -> Skip

    def reading(self) -> bool:
        """Files are still being read."""

    def set_documents(self, documents: list[Any]) -> None: ...

    def add_paths(self, paths: list[str]) -> None: ...

    def clear_sources(self) -> None: ...

    def show_citation(self, address: str) -> None: ...


class RunsPort(Protocol):
    @property
    def running(self) -> bool: ...

    @property
    def run_task(self) -> asyncio.Task | None: ...

    last_outcome: Any                  # the last run's RunOutcome in this session (None before one)

    def last_run_id(self) -> str | None: ...

    def compose(self, kind: str = "ask", **fields: Any) -> Any:
        """A RunRequest from the question panel and Sources, or the Notification saying why not."""

    def launch(self, request: Any) -> asyncio.Task | None: ...

    def confirm_rerun(self, run_id: str, config: Any) -> bool:
        """False when the user declined where an imported run's re-run would send its calls."""

    def link_next(self, run_id: str) -> None:
        """The next Run re-runs this stored run (History loaded it)."""


class LiveRunPort(Protocol):
    """Also its signals: started, prepared, ended, failed, stopped_early (app/window_runs.py)."""

    @property
    def running(self) -> bool: ...

    @property
    def config(self) -> Any: ...

    @property
    def run_id(self) -> str | None: ...

    def documents(self) -> list[Any] | None: ...

    def close_session(self, session: Any) -> None: ...


class StorePort(Protocol):
    def store(self) -> Any:
        """The run store (core.store.RunStore), opened on first use."""


class EnginePort(Protocol):
    async def run(self, coro: Any) -> Any:
        """Await `coro` on the engine's loop (e.g. a key test through litellm)."""


class ReplayPort(Protocol):
    replaying: str | None              # the stored run shown in the panes, if one

    def leave_replay(self, *_args: Any) -> None: ...

    def open_run(self, run_id: str) -> int: ...

    def store(self) -> Any: ...


class GuidePort(Protocol):
    def guide_numbers(self) -> Any:
        """The guide's "your numbers": this machine's measured figures (app/models_glue.py)."""


class PanelPort(Protocol):
    """The question panel as a grid or an evaluation reads it (ui/question_panel.py)."""

    def caps(self) -> dict: ...

    def root_model(self) -> str: ...

    def sub_model(self) -> str: ...


class CitationPort(Protocol):
    def open_citation(self, body: str) -> None:
        """Open "PATH:ADDRESS" of the replayed run in the source viewer (app/trust_glue.py)."""


class EvaluationsPort(Protocol):
    def evaluation_done(self, evaluation_id: str) -> None:
        """An evaluation ended: its scorecard is shown (app/models_glue.py)."""


class EstimatePort(Protocol):
    def update_estimate(self) -> None:
        """The settings changed: the cost preview is worked out again (app/trust_glue.py)."""


class PathsPort(Protocol):
    def add_paths(self, paths: list[str]) -> None:
        """Read these files and folders into Sources (and remember them for "re-open")."""
