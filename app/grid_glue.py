"""The review grid from the window: a Grid button in the toolbar opens ui/grid_view.py.

    glue = GridGlue(window, store=..., settings=..., sources=..., panel=..., engine=...,
                    history=..., citations=...)          # ports (app/ports.py)
    glue.open_view(); glue.start(path, cap)      # runs over Sources' documents
    await glue.task                              # (tests) the grid's end; glue.stop() stops it

The grid runs on the engine's loop (app/engine_thread.py) like every run: each cell a
RunRequest on RunService (app/grid_runs.py) reserving from the grid's one budget. Cell
updates cross back to the window's loop with call_soon_threadsafe. A double-click on a
cell replays its run in the main window and opens its cited passage in the source viewer.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from PySide6.QtGui import QAction

from app.ports import CitationPort, EnginePort, PanelPort, ReplayPort, SettingsPort, SourcesPort, StorePort
from core.lifecycle import finish, stop_then_wait
from ui import icons
from ui.grid_view import GridView

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class GridStart:
    """A grid checked and ready to run: its columns, one row per document, the run config
    every cell uses (checked: core.engine.prepare.check_config) and the grid's dollar cap."""
    columns: list
    rows: list
    documents: list
    config: Any
    cap: float | None


class GridGlue:
    """Ports (app/ports.py): the run store, the settings (and keychain), Sources, the question
    panel (its caps and models), the engine's loop, History (a cell's run replayed) and the
    trust glue (a cell's citation opened in the source viewer)."""

    def __init__(self, window: Any, *, store: StorePort, settings: SettingsPort, sources: SourcesPort,
                 panel: PanelPort, engine: EnginePort, history: ReplayPort, citations: CitationPort) -> None:
        self.window = window
        self.store, self.settings, self.keys = store.store, settings.current, settings.keys
        self.sources, self.panel, self.on_engine = sources, panel, engine.run
        self.open_run, self.open_citation = history.open_run, citations.open_citation
        self.view: GridView | None = None
        self.task: asyncio.Task | None = None
        self.grid_id: str | None = None
        self._grid: Any = None                 # the GridRun, on the engine's loop while it runs
        self._stopped = False
        self.action = QAction("Grid", window)
        self.action.setToolTip("Review grid: every question of a list over every document in Sources")
        icons.bind(self.action, "info")
        self.action.triggered.connect(self.open_view)
        window.add_toolbar_actions([self.action])

    def open_view(self) -> GridView:
        if self.view is None:
            self.view = GridView(self.window)
            self.view.run_requested.connect(self.start)
            self.view.stop_requested.connect(self.stop)
            self.view.grid_chosen.connect(self.show_grid)
            self.view.cell_opened.connect(self.open_cell)
            self.view.export_requested.connect(self.export)
            self.view.preset_save_requested.connect(self.save_preset)
        self.refresh()
        self.refresh_presets()
        self.view.show()
        self.view.raise_()
        return self.view

    def refresh(self) -> None:
        # lazy: +3 modules in the window (where it runs)
        from core.grid.store import list_grids
        self.view.set_grids(list_grids(self.store().db), self.grid_id)

    def presets_file(self) -> Path:
        # lazy: +1 modules (first use only)
        from core.grid.presets import presets_path
        # lazy: free in the window
        from core.paths import settings_path
        return presets_path(settings_path())

    def refresh_presets(self, current: str | None = None) -> None:
        # lazy: +1 modules (first use only)
        from core.grid.presets import PresetError, preset_names
        try:
            names = preset_names(self.presets_file())
        except PresetError as exc:
            names = []
            self.view.set_status(f"The column presets cannot be used: {exc}.")
        self.view.set_presets(names, self.view.chosen_preset() if current is None else current)

    def save_preset(self, name: str, columns_path: str) -> bool:
        """The questions file's columns saved as preset `name` (said in the view either way)."""
        # lazy: +1 modules (first use only)
        from core.grid.presets import PresetError, save_preset
        try:
            columns = self._file_columns(columns_path)
            save_preset(self.presets_file(), name, columns)
        except (ValueError, OSError) as exc:      # PresetError is a ValueError
            self.view.set_status(f"The preset was not saved: {exc}")
            return False
        self.refresh_presets(name.strip())
        self.view.set_status(f"Saved {len(columns)} questions as the preset “{name.strip()}”; "
                             "the grid now runs them.")
        return True

    def _file_columns(self, columns_path: str) -> list:
        # lazy: +22 modules, 59 ms at load 12 (first use only)
        from core.grid.model import ColumnError, parse_columns
        if not columns_path:
            raise ValueError("Pick a questions file: one question per line, or JSON lines.")
        path = Path(columns_path).expanduser()
        try:
            return parse_columns(path.read_text(encoding="utf-8"), path.name)
        except (OSError, UnicodeDecodeError) as exc:
            raise ValueError(f"The questions file cannot be read: {exc}") from None
        except ColumnError as exc:
            raise ValueError(str(exc)) from None

    def show_grid(self, grid_id: str) -> None:
        # lazy: +3 modules in the window (where it runs)
        from core.grid.store import load_grid
        # lazy: +4 modules in the window (where it runs)
        from core.exports.export_grid import cell_text
        data = load_grid(self.store().db, grid_id)
        self.grid_id = grid_id
        cells = {k: {**c, "text": cell_text(c)} for k, c in data.cells.items()}
        self.view.model.set_grid([c.name for c in data.columns], [r.path for r in data.rows], cells)
        counts = data.counts()
        if self.task is None or self.task.done():
            self.view.set_status(f"{data.name}: {counts['done']} done, {counts['failed']} failed, "
                                 f"{counts['limited']} limited, {counts['queued']} queued; ${data.cost_usd:.4f}. "
                                 "Double-click a cell for its run and its cited passage.")
        self.view.set_running(self.task is not None and not self.task.done())

    # --- run --------------------------------------------------------------------------------
    def start(self, columns_path: str, cap_usd: float) -> asyncio.Task | None:
        """Validate (a bad start is said in the view, nothing runs), then run the grid."""
        view = self.view
        if self.task is not None and not self.task.done():
            view.set_status("A grid is running: stop it first.")
            return None
        try:
            prepared = self._prepare(columns_path, cap_usd or None)
        except ValueError as exc:
            view.set_status(str(exc))
            return None
        self._stopped = False
        view.set_running(True)
        self.task = asyncio.ensure_future(self._run(prepared))
        return self.task

    def _prepare(self, columns_path: str, cap: float | None) -> GridStart:
        # lazy: free in the window (where it runs)
        from app.settings import build_run_config
        # lazy: +13 modules in the window (where it runs)
        from core.engine.prepare import ConfigError, check_config
        # lazy: +22 modules, 59 ms at load 12 (first use only)
        from core.grid.model import Row
        # lazy: +1 modules (first use only)
        from core.grid.presets import preset_columns
        preset = self.view.chosen_preset() if self.view is not None else ""
        columns = preset_columns(self.presets_file(), preset) if preset else self._file_columns(columns_path)
        documents = sorted(self.sources.documents.values(), key=lambda d: d.path)
        if not documents:
            raise ValueError("Sources has no documents: add the documents to review first.")
        root, sub = self.panel.root_model(), self.panel.sub_model()
        caps = {k: v for k, v in dict(self.panel.caps()).items() if k != "max_cost_usd"}
        config = build_run_config(self.settings(), root=root, sub=sub or root,
                                  overrides={**caps, "max_cost_usd": cap})
        try:
            check_config(config)
        except (ValueError, ConfigError) as exc:
            raise ValueError(f"The grid cannot start: {exc}") from None
        rows = [Row(d.path, d.sha256, d.chars) for d in documents]
        return GridStart(columns, rows, documents, config, cap)

    async def _run(self, start: GridStart) -> Any:
        # lazy: +3 modules in the window (where it runs)
        from core.grid import store as gs
        # lazy: +4 modules in the window (where it runs)
        from core.exports.export_grid import cell_text
        # lazy: +3 modules in the window (where it runs)
        from core.grid.preview import preview
        # lazy: free in the window (where it runs)
        from core.store.db import connect
        columns, rows, documents, config, cap = start.columns, start.rows, start.documents, start.config, start.cap
        view, gui = self.view, asyncio.get_running_loop()
        path = self.store().path
        db = connect(path)
        try:
            grid_id, _ = gs.open_grid(db, columns, rows, max_cost_usd=cap,
                                      config={"root_model": config.root_model, "sub_model": config.sub_model})
            data = gs.load_grid(db, grid_id)
            told = preview(config, columns, documents, gs.queued_cells(db, grid_id), cap_usd=cap,
                           spent_usd=data.cost_usd).sentence()
        finally:
            db.close()
        self.show_grid(grid_id)
        self.refresh()
        where = (f" The cells run on the Ray cluster at {self.ray_address()} (Settings > Grid); no API key "
                 "leaves this computer.") if self.ray_address() else ""
        view.set_status(told[:1].upper() + told[1:] + "." + where)

        def later(fn: Callable, *args: Any, **kw: Any) -> None:     # from the engine's loop to the window's
            if not gui.is_closed():
                gui.call_soon_threadsafe(lambda: fn(*args, **kw))

        def on_cell(event: Any) -> None:
            text = cell_text({"state": event.state, "value": event.value, "flag": event.flag, "error": event.error})
            later(view.model.update_cell, event.row, event.col, state=event.state, cost_usd=event.cost_usd,
                  flag=event.flag, error=event.error, run_id=event.run_id, text=text)
        cluster = None
        address = self.ray_address()
        if address:
            try:
                cluster = await asyncio.to_thread(self._connect_ray, address, config)
            except Exception as exc:          # RayUnavailable, a key refused, or Ray's own error
                log.info("the grid cannot run on Ray at %s: %s", address, exc)
                view.set_status(f"The grid cannot run on the Ray cluster at {address}: {exc}. Nothing ran; "
                                "clear the address in Settings > Grid to run it on this computer.")
                view.set_running(False)
                return None
        try:
            data = await self.on_engine(self._grid_on_engine(path, grid_id, documents, config, cap, on_cell,
                                                             cluster))
        except asyncio.CancelledError:
            view.set_status("Stopped.")
            raise
        except Exception as exc:             # the grid's boundary: said in the view, logged
            log.exception("the grid failed")
            view.set_status(f"The grid failed: {type(exc).__name__}: {exc}")
            view.set_running(False)
            return None
        await asyncio.sleep(0)               # the last cell updates (posted from the engine) first
        self.show_grid(grid_id)
        self.refresh()
        counts = data.counts()
        view.set_status(f"{'Stopped' if data.status == 'stopped' else 'Done'}: {counts['done']} done, "
                        f"{counts['failed']} failed, {counts['limited']} limited"
                        + (f", {counts['queued']} not run" if counts["queued"] else "")
                        + f"; ${data.cost_usd:.4f}. Double-click a cell for its run and its cited passage.")
        view.set_running(False)
        return data

    async def _grid_on_engine(self, path: Path, grid_id: str, documents: list, config: Any, cap: float | None,
                              on_cell: Callable, cluster: tuple | None = None) -> Any:
        """On the engine's loop: the grid, its cells on RunService over the window's store, or
        on the Ray cluster `cluster` (ray, keys) with their runs written into that store."""
        # lazy: +9 modules, 35 ms at load 3.7 (first use only)
        from app.grid_runs import GridCells
        # lazy: free in the window (where it runs)
        from app.run_service import RunService
        # lazy: +6 modules, 12 ms at load 11 (first use only)
        from core.grid.runner import WRITER_LINGER_S, GridRun
        # lazy: +115 modules, 208 ms at load 3.7 (first use only)
        from core.store import RunStore
        # lazy: free in the window (where it runs)
        from core.store.db import connect
        store = RunStore.open(path)           # one store and one writer for every cell, as the CLI's
        writer = store.writer(linger_s=WRITER_LINGER_S)   # (app/cli_grid.py); the grid reads on its own connection
        service = RunService(store=store, writer=writer, keys=self.keys, settings=self.settings)
        db = connect(path)
        try:
            run_cell = GridCells(service).run_cell
            if cluster is not None:           # Settings > Grid: the cells run on the cluster
                # lazy: +1 modules, 2 ms (first use only)
                from app.version import __version__
                # lazy: ray itself was imported when the cluster answered
                from core.grid.ray_cells import RayCells
                run_cell = RayCells(cluster[0], writer, keys=cluster[1], version=__version__).run_cell
            grid = GridRun(db, grid_id, documents, config, run_cell=run_cell,
                           concurrency=max(1, min(config.concurrency, 8)), max_cost_usd=cap, writer=writer)
            self._grid = grid
            if self._stopped:
                grid.stop()
            return await grid.run(on_cell=on_cell)
        finally:
            self._grid = None
            await finish(asyncio.to_thread(writer.close))
            db.close()
            store.close()

    def stop(self) -> None:
        """No cell starts after this; the running cells stop; the ended ones are kept."""
        if self.task is None or self.task.done():
            return
        self._stopped = True
        self.view.set_status("Stopping…")
        asyncio.ensure_future(self.on_engine(self._stop_on_engine()))

    def ray_address(self) -> str:
        return getattr(self.settings(), "ray_address", "") or ""

    def _connect_ray(self, address: str, config: Any) -> tuple[Any, dict]:
        """(In a thread) ray connected to the cluster at `address`, checked to run this project,
        and the keys the models carry: none leaves this computer from the window (a model that
        needs one is refused). RayUnavailable / ValueError: a sentence."""
        # lazy: +1 modules, 3 ms (first use only)
        from app.key_routing import keys_to_send
        # lazy: ray itself is imported only when the cluster answers
        from core.grid.ray_cells import connect
        keys = keys_to_send(config, set(), keys=self.keys(), settings=self.settings(),
                            how_to_allow="(a grid on Ray from the window sends no key; the command line's "
                                         "--ray-send-key {owner} allows it for one grid)")
        return connect(address), keys

    async def _stop_on_engine(self) -> None:
        if self._grid is not None:
            self._grid.stop()

    async def shutdown(self, timeout: float = 5.0) -> None:
        """Stop, and wait up to `timeout` for the runs in flight to end; then cancel what is left."""
        await stop_then_wait(self.task, self.stop, timeout)

    # --- evidence and export ----------------------------------------------------------------
    def open_cell(self, row: int, col: int) -> bool:
        """Replay the cell's run in the main window and open its cited passage."""
        # lazy: +3 modules in the window (where it runs)
        from core.grid.store import load_grid
        if self.grid_id is None:
            return False
        cell = load_grid(self.store().db, self.grid_id).cells.get((row, col)) or {}
        if not cell.get("run_id") or cell.get("state") in ("queued", "running"):
            self.view.set_status("This cell has no finished run yet.")
            return False
        self.open_run(cell["run_id"])
        cites = [c for c in cell.get("citations") or [] if c.get("ok")]
        if cites:
            self.open_citation(f"{cites[0]['path']}:{cites[0]['address']}")
        else:
            self.view.set_status("This cell's answer cites no passage; its run is shown in the main window.")
        return True

    def export(self, path: str) -> Path | None:
        # lazy: +3 modules in the window (where it runs)
        from core.grid.store import load_grid
        # lazy: +4 modules in the window (where it runs)
        from core.exports.export_grid import write_grid
        if self.grid_id is None:
            return None
        try:
            out = write_grid(load_grid(self.store().db, self.grid_id), Path(path))
        except (ValueError, OSError) as exc:
            self.view.set_status(f"The grid could not be exported: {exc}")
            return None
        self.view.set_status(f"Exported to {out}.")
        return out

