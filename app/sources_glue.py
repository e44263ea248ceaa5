"""The Sources pane's glue: reading dropped files and folders (core.ingest, off the
loop, with progress), the documents a run is given, remove, clear and citations.
A SourcesPort (app/ports.py) for the other glue.
"""

from __future__ import annotations

import asyncio
import sys
import threading
from typing import Any

from PySide6.QtCore import QObject, Signal

from app.ports import SettingsPort, StorePort
from ui.notifier import Notifier
from ui.sources_pane import SourceRow, duplicates_text


class SourcesGlue(QObject):
    cleared = Signal()          # Sources were emptied: a re-run History loaded no longer applies

    def __init__(self, window: Any, notifier: Notifier, *, settings: SettingsPort, store: StorePort,
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.window = window
        self.pane = window.sources_pane
        self.notifier = notifier
        self._settings = settings
        self._store = store
        self.documents: dict[str, Any] = {}      # Document.path -> Document
        self.skipped: dict[str, Any] = {}        # Skip.path -> Skip
        self._queued_paths: list[str] = []
        self.ingest_task: asyncio.Task | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def reading(self) -> bool:
        return self.ingest_task is not None and not self.ingest_task.done()

    def add_paths(self, paths: list[str]) -> None:
        self._loop = asyncio.get_event_loop()
        self._queued_paths.extend(str(p) for p in paths)
        if not self.reading():
            self.pane.set_reading(True)
            self.ingest_task = asyncio.ensure_future(self._read_queued())
            self.ingest_task.add_done_callback(self._reading_done)

    async def _read_queued(self) -> None:
        # lazy: free in the window (where it runs)
        from core.ingest import ingest
        while self._queued_paths:
            paths, self._queued_paths = self._queued_paths, []
            try:
                # lazy: free in the window (where it runs)
                from app.settings import ingest_options
                # lazy: free in the window (where it runs)
                from core.store.extracts import ExtractCache
                options = ingest_options(self._settings.current(), ocr=self.pane.ocr())
                result = await ingest(paths, options,
                                      on_progress=self._on_progress, cache=ExtractCache(self._store.store()))
            except OSError as exc:
                self.notifier.error(f"Could not read the sources: {exc}",
                                    "Check that the files exist and that you may read them.")
                continue
            self._take_result(result)
            for p in paths:
                self._settings.current().remember_folder(p)

    def _reading_done(self, task: asyncio.Task) -> None:
        self.pane.set_reading(False)
        if task.cancelled():
            self._queued_paths.clear()
            self.notifier.info("Reading stopped; the files read so far are kept.")
        elif task.exception() is not None:
            exc = task.exception()
            sys.excepthook(type(exc), exc, exc.__traceback__)

    def _on_progress(self, progress: Any) -> None:
        def show() -> None:
            self.pane.set_progress(progress.files_done, progress.files_total, progress.bytes_done,
                                   progress.bytes_total, progress.current or "")
        if threading.current_thread() is threading.main_thread():
            show()
        else:
            self._loop.call_soon_threadsafe(show)

    def _take_result(self, result: Any) -> None:
        # lazy: free in the window (where it runs)
        from core.ingest.run import against_known
        # Read once across drops too: a copy of a file already in the sources costs nothing.
        fresh, repeats, grown = against_known(self.documents.values(), result.documents)
        for doc in grown:
            self.documents[doc.path] = doc
        rows = []
        for doc in fresh:
            self.documents[doc.path] = doc
            self.skipped.pop(doc.path, None)
            rows.append(SourceRow.of_document(doc))
        for skip in [*result.skipped, *repeats]:
            if skip.path not in self.documents:
                self.skipped[skip.path] = skip
                rows.append(SourceRow.of_skip(skip))
        self.pane.add_rows(rows)
        problems = [s for s in result.skipped if s.reason != "duplicate"]
        if problems:
            reasons = sorted({s.reason.replace("_", " ") for s in problems})
            n = len(problems)
            self.notifier.warning(
                f"{n} file{'s were' if n != 1 else ' was'} skipped ({', '.join(reasons)}).",
                "The Sources list shows the reason for each; the other files were read.",
                topic="sources")
        duplicates = len(result.skipped) - len(problems) + len(repeats)
        once = (f" · {len(problems)} skipped" if problems else "") + \
            (f" · {duplicates_text(duplicates)}" if duplicates else "")        # the Sources totals' words
        kept = f", {result.unchanged:,} unchanged since an earlier read" if result.unchanged else ""
        self.notifier.info(f"Read {len(fresh)} document{'s' if len(fresh) != 1 else ''} "
                           f"in {result.duration_ms / 1000:.1f} s{once}{kept}.")

    def cancel_reading(self) -> None:
        if self.reading():
            self.ingest_task.cancel()

    def remove_sources(self, paths: list[str]) -> None:
        for p in paths:
            self.documents.pop(p, None)
            self.skipped.pop(p, None)
        self.pane.remove_paths(paths)

    def clear_sources(self) -> None:
        self.cancel_reading()
        self.documents.clear()
        self.skipped.clear()
        self.pane.set_rows([])
        self.cleared.emit()

    def set_documents(self, documents: list[Any]) -> None:
        """Replace the sources with these documents (re-run from history)."""
        self.documents = {d.path: d for d in documents}
        self.skipped = {}
        self.pane.set_rows([SourceRow.of_document(d) for d in documents])

    def show_citation(self, address: str) -> None:
        """A citation in the answer: select its document in the sources list."""
        found = self.pane.select_cited(address)
        self.window.statusBar().showMessage(
            f"Cited: {address}" + ("" if found else " (not among the current sources)"), 10_000)

    async def shutdown(self, timeout: float) -> None:
        if self.reading():
            self.ingest_task.cancel()
            await asyncio.wait([self.ingest_task], timeout=timeout)
