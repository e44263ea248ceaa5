"""A grid's cells on a Ray cluster (`pip install 'rlm-studio[ray]'`, `--ray ADDRESS`).

    ray = connect("127.0.0.1:6379")                  # RayUnavailable: a sentence saying why not
    cells = RayCells(ray, writer, keys={...})        # writer: the grid's one EventWriter
    grid = GridRun(db, grid_id, documents, config, run_cell=cells.run_cell, writer=writer, ...)

Each cell is a Ray task (a shard of one cell: the grid's scheduler bounds how many run at
once) that runs its own engine and its own sandboxed REPL worker on whichever node Ray
picks. The task returns the run's events and result; as each task finishes, the desktop
hands them to the grid's one EventWriter (the writer of the local grid's cells too), with
the run's source, before the cell's own row: one thread and one connection write every
cell, and a cell's run is an ordinary stored run here. Every
call of every task reserves from the grid's one budget, a Ray actor (core/grid/ray_budget.py).
A task whose worker or node is lost is run once more, and the cell says so; lost twice,
the cell fails with the reason. API keys stay on this computer unless `keys` carries them:
the caller passes only the keys the user allowed for this grid.
"""

from __future__ import annotations

import asyncio
import logging
import socket
from functools import partial
from typing import Any

log = logging.getLogger(__name__)

LOST = ("WorkerCrashedError", "NodeDiedError", "RayActorError", "ActorDiedError", "OwnerDiedError",
        "ObjectLostError", "TaskUnschedulableError")
RETRIED_NOTE = "its Ray worker was lost; the cell ran again"


class RayUnavailable(RuntimeError):
    """The grid cannot run on the cluster (the message says why and what to do)."""


class CellLost(RuntimeError):
    """A cell's Ray worker was lost on both tries."""


def _split(address: str) -> tuple[str, int]:
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit():
        raise RayUnavailable(f"--ray needs HOST:PORT (the head node's GCS address, e.g. 127.0.0.1:6379), "
                             f"got {address!r}")
    return host, int(port)


def connect(address: str, *, timeout_s: float = 5.0) -> Any:
    """Ray, connected to the cluster at `address`, which was checked to run this project."""
    host, port = _split(address)
    try:
        socket.create_connection((host, port), timeout=timeout_s).close()
    except OSError as exc:
        raise RayUnavailable(f"the Ray cluster at {address} does not answer ({exc.strerror or exc}); "
                             "start it with `ray start --head` or check the address") from None
    try:
        import ray
    except ImportError:
        raise RayUnavailable("Ray is not installed here: pip install 'rlm-studio[ray]'") from None
    if not ray.is_initialized():
        ray.init(address=address, logging_level=logging.WARNING, log_to_driver=False,
                 configure_logging=False)
    try:
        version = ray.get(ray.remote(num_cpus=0)(probe).remote(), timeout=120)
    except Exception as exc:
        raise RayUnavailable(f"the Ray cluster at {address} cannot run RLM Studio ({type(exc).__name__}: "
                             f"{str(exc).splitlines()[-1] if str(exc) else ''}); install it on every node: "
                             "pip install 'rlm-studio[ray]'") from None
    log.info("Ray cluster at %s runs rlm-studio (%s)", address, version)
    return ray


def probe() -> str:
    """Run on the cluster: this project's engine and grid import there."""
    import core.engine.run  # noqa: F401
    import core.grid.ray_budget  # noqa: F401
    return "ok"


def run_cell_task(question: str, document: Any, config: Any, run_id: str, actor: Any, cap: float | None,
                  keys: dict[str, str | None], version: str) -> dict:
    """On a node: one cell's run, its own engine and REPL worker; its events and result back."""
    from core.engine_process import prepare_engine_process
    from core.grid.ray_budget import RemoteBudget
    prepare_engine_process()
    events: list = []

    async def go() -> Any:
        from core.engine.run import Engine
        engine = Engine(config, emit=events.append, key_for=lambda model: keys.get(model), run_id=run_id,
                        version=version, shared_budget=RemoteBudget(actor, cap))
        return await engine.run(question, [document])
    return {"result": asyncio.run(go()), "events": events}


class RayCells:
    def __init__(self, ray: Any, writer: Any, *, keys: dict[str, str | None], version: str = "",
                 task_cpus: float = 0.25) -> None:
        self.ray = ray
        self.version = version
        self.writer = writer
        self.keys = dict(keys)
        self.actor: Any = None
        self.task = ray.remote(num_cpus=task_cpus, max_retries=0)(run_cell_task)
        self.lost = 0                        # tasks whose worker or node was lost

    async def run_cell(self, question: str, document: Any, config: Any, budget: Any, run_id: str) -> Any:
        from core.engine.prepare import check_config
        from core.grid.ray_budget import budget_actor
        check_config(config, [document])                   # ConfigError: said
        if self.actor is None:
            self.actor = budget_actor(self.ray, cap_usd=budget.max_cost_usd, spent_usd=budget.spent_usd)
        retried = False
        for attempt in (1, 2):
            ref = self.task.remote(question, document, config, run_id, self.actor, budget.max_cost_usd, self.keys,
                                   self.version)
            try:
                out = await ref
                break
            except asyncio.CancelledError:
                self.ray.cancel(ref, force=True)
                raise
            except Exception as exc:
                if not {c.__name__ for c in type(exc).__mro__} & set(LOST):
                    raise
                self.lost += 1
                log.warning("grid cell %s: Ray worker lost (%s), attempt %d", run_id, type(exc).__name__, attempt)
                if attempt == 2:
                    raise CellLost(f"the Ray worker running this cell was lost twice ({type(exc).__name__})") from None
                retried = True
        self._store(run_id, document, out["events"])
        state = await self.actor.state.remote()
        budget.spent_usd = state["spent_usd"]          # the desktop's view of the one budget
        result = out["result"]
        if retried:
            result.totals["retried"] = RETRIED_NOTE
        return result

    def _store(self, run_id: str, document: Any, events: list) -> None:
        """The task's run to the grid's writer (queued, not waited for: committed in its next
        batch, before the cell's row that the grid hands it next), as a local cell's run is."""
        from core.store.runstore import write_sources_in
        self.writer.submit(partial(write_sources_in, run_id=run_id, documents=[document]), _sources_written)
        for event in events:
            self.writer(event)


def _sources_written(error: BaseException | None) -> None:
    if error is not None:
        log.error("the source of a Ray cell's run could not be saved: %s", error)
