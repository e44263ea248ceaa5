"""ReplClient: the engine's handle on one sandboxed REPL worker.

Owns the worker's life (start, interrupt, kill, restart, close with escalation),
its temp directory (context files and the worker's cwd/HOME/TMPDIR) and the
cell semantics: every fault of model code (timeout, crash, memory) comes back
as a CellResult, never as an exception that ends the run.

    repl = ReplClient(on_sub_call=handler)          # handler: SubCallRequest -> result slots
    await repl.start()
    await repl.load_context(documents)              # .path/.text objects or dicts
    repl.begin_loading(documents)                   # or: the same in the background; the next
                                                    # execute/get_var waits for it (and raises its error)
    result = await repl.execute(code, timeout_s=120)
    found, value, error = await repl.get_var("answer")
    path = await repl.close()                       # "graceful" | "terminate" | "kill"
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import os
import signal
from dataclasses import dataclass
from typing import Any, Awaitable, Callable, Iterable

from core.blocking import run_blocking
from core.lifecycle import finish
from core.repl import protocol as P
from core.repl.cell_clock import within_run_time
from core.repl.connection import WorkerConnection, WorkerDied
from core.repl import sandbox_report, watchdog
from core.repl.context_file import ContextFiles, write_context
from core.repl.workdirs import OwnedDir, sweep_stale_dirs  # noqa: F401
from core.repl.workdirs import compile_worker_modules as _compile_worker_modules
from core.repl.workdirs import remove_tree as _remove_tree

log = logging.getLogger(__name__)

START_TIMEOUT_S = 30.0
LOAD_TIMEOUT_S = 120.0
GET_VAR_TIMEOUT_S = 30.0
CRASH_OUTPUT_CHARS = 1500
_MEMORY_MARKERS = ("MemoryError", "Cannot allocate memory", "out of memory", "bad_alloc")


@dataclass(frozen=True)
class SubCallRequest:
    kind: str                 # "llm" | "rlm"
    prompts: list[str]
    model: str | None
    context: str | None       # rlm only
    cell: str | None = None   # the engine's id of the cell that made it (ReplClient.execute's cell_id)


SubCallHandler = Callable[[SubCallRequest], Awaitable[list[dict]]]   # returns the result slots


@dataclass(frozen=True)
class CellResult:
    stdout: str
    stderr: str
    error: str | None
    error_type: str | None
    is_syntax_error: bool
    duration_ms: int
    final: dict | None        # {"kind": "FINAL"|"FINAL_VAR", "value": str}
    fault: str | None         # None | "timeout" | "crash" | "memory"
    restarted: bool           # the worker was restarted after this cell: user variables are gone
    stdout_chars: int
    stderr_chars: int
    # The worker was stopped and replaced before this cell because something a previous cell
    # left running went over a limit (core/repl/watchdog.py): what the user and the record are told.
    between_cells: str | None = None


class ReplError(Exception):
    """The REPL could not do what was asked (not a fault of model code)."""


class ReplStartError(ReplError):
    """The worker could not be started or failed its handshake."""


class SandboxIncomplete(ReplStartError):
    """The full sandbox was required and the worker reported layers missing."""

    def __init__(self, message: str, missing: list[str]) -> None:
        super().__init__(message)
        self.missing = missing


class ReplClosedError(ReplError):
    """The client was used after close()."""


# The worker's command line, environment and exit wording (core/repl/worker_launch.py),
# re-exported: callers and tests have long imported them from here.
from core.repl.worker_launch import BOOT_CODE, default_worker_command, describe_exit, worker_environment  # noqa: E402,F401


_swept = False


class ReplClient:
    def __init__(self, *, on_sub_call: SubCallHandler, memory_limit_mb: int | None = 4096,
                 worker_command: list[str] | None = None, interrupt_grace_s: float = 2.0,
                 require_full_sandbox: bool = False, spawn: str = "fds",
                 sub_call_wait_s: float = P.SUB_CALL_WAIT_S, watchdog: bool = True) -> None:
        """`require_full_sandbox`: refuse to start (SandboxIncomplete) unless hello_ok reports
        every layer. `spawn`: "fds" (dedicated inherited pipes, own process group: Linux and
        other POSIX) or "stdio" (standard pipes only: Windows, and tested on Linux)."""
        if spawn not in ("fds", "stdio"):
            raise ValueError(f"spawn must be 'fds' or 'stdio', got {spawn!r}")
        self._require_full = require_full_sandbox
        self._spawn_mode = spawn
        self._on_sub_call = on_sub_call
        self._sub_call_wait_s = sub_call_wait_s
        self._in_cell = False             # sub-calls belong to the cell running now
        self.sub_calls_cancelled = 0      # cancelled because their cell ended (for tests, logs)
        self._memory_limit_mb = memory_limit_mb
        self._watchdog = watchdog         # core/repl/watchdog.py: limits the box itself lacks
        self._command = list(worker_command) if worker_command else default_worker_command()
        if memory_limit_mb:
            self._command += ["--memory-limit-mb", str(int(memory_limit_mb))]
        self._grace = interrupt_grace_s
        self._lock = asyncio.Lock()
        self._conn: WorkerConnection | None = None
        self._root: str | None = None
        self._owned: OwnedDir | None = None    # self._root and the lock that says it is in use
        self._worker_dir: str | None = None
        self._generation = 0
        self._context: ContextFiles | None = None
        self._loading: asyncio.Future | None = None  # begin_loading's load, until a cell waits for it
        self._starting: asyncio.Future | None = None  # begin_start's start
        self._writing: asyncio.Future | None = None   # the context's file, written while the worker starts
        self._closed = False
        self._closing: asyncio.Task | None = None   # close() in progress (a second close waits for it)
        self._live: set[WorkerConnection] = set()   # every worker started and not yet disposed
        self._cell: tuple[int, int] | None = None   # (generation, worker's cell number) running now
        self._cell_tag: str | None = None           # the engine's id of that cell (sub-calls carry it)
        self._execs = 0                              # exec requests sent to the current worker
        self._note: str | None = None     # told with the next cell (worker died between cells)
        self._between: str | None = None  # the same, for the user and the record (CellResult.between_cells)
        self._cells = 0                   # cells run by this REPL, over restarts ("a thread left by cell 3")
        self._replacing: asyncio.Task | None = None   # replacing a worker the watchdog stopped between cells
        self.restarts = 0
        self.pid: int | None = None
        self.sandbox: dict = {}
        self.shutdown_path: str | None = None

    @property
    def on_sub_call(self) -> SubCallHandler:
        return self._on_sub_call

    @on_sub_call.setter
    def on_sub_call(self, handler: SubCallHandler) -> None:
        """A kept worker (follow-up, fork) serves the sub-calls of the run that now uses it."""
        self._on_sub_call = handler

    @property
    def alive(self) -> bool:
        """A worker is running and its pipe is open (False once its death is seen)."""
        return self._conn is not None and self._conn.alive

    @property
    def workdir(self) -> str | None:
        """The temp directory of this client (context files, worker dirs)."""
        return self._root

    # ---------------------------------------------------------------- life

    def begin_start(self) -> asyncio.Future:
        """start() as a task of its own, for a worker started before it is needed
        (core/repl/spare.py); start() then waits for that task."""
        self._starting = asyncio.ensure_future(self._start())
        return self._starting

    async def start(self) -> None:
        await (self._starting if self._starting is not None else self._start())

    async def _start(self) -> None:
        if self._closed:
            raise ReplClosedError("this REPL was closed")
        if self._conn is not None:
            return
        global _swept
        if not _swept:
            _swept = True
            sweep_stale_dirs()
            _compile_worker_modules()
        if self._root is None:
            self._owned = OwnedDir.make()
            self._root = self._owned.path
        await self._spawn()

    async def _spawn(self) -> None:
        """Start a worker and shake hands (and reload the context after a restart). Whatever
        ends this early (a failed handshake, close(), a cancel at any await) disposes the
        new worker before it returns: a worker is either this client's or gone."""
        assert self._root is not None
        if self._closed:
            raise ReplClosedError("this REPL was closed")
        self._generation += 1
        generation = self._generation
        cwd = os.path.join(self._root, f"worker-{generation}")
        home, tmp = os.path.join(cwd, "home"), os.path.join(cwd, "tmp")
        for d in (home, tmp):
            os.makedirs(d, mode=0o700)
        self._worker_dir = cwd
        command = self._command + ["--context-dir", self._root]

        def serve(msg: dict[str, Any]) -> Awaitable[list[dict]]:
            return self._serve_sub_call(msg, generation)
        try:
            if self._spawn_mode == "stdio":
                conn = await WorkerConnection.spawn_stdio(
                    command + ["--forward-signals"], env=worker_environment(home, tmp), cwd=cwd,
                    serve_sub_call=serve)
            else:
                conn = await WorkerConnection.spawn(command, env=worker_environment(home, tmp),
                                                    cwd=cwd, serve_sub_call=serve)
        except OSError as exc:
            raise ReplStartError(f"cannot start the REPL worker {self._command[0]}: {exc}") from exc
        self._live.add(conn)
        try:
            await self._handshake(conn)
            if self._closed:
                raise ReplClosedError("this REPL was closed while its worker started")
            self._conn = conn
            self._execs = 0
            conn.watch = watchdog.Watch(conn, self.sandbox, cwd, idle=lambda: self._idle(conn),
                                        on_breach=lambda b: self._on_breach(conn, b)).start()
            if self._context is not None:
                await self._load(self._context)
        except BaseException:
            if self._conn is conn:
                self._conn = None
            await finish(self._dispose(conn))
            raise

    async def _handshake(self, conn: WorkerConnection) -> None:
        try:
            reply = await conn.request(P.HELLO, timeout=START_TIMEOUT_S, version=P.PROTOCOL_VERSION,
                                       sub_call_wait_s=self._sub_call_wait_s)
            if reply["type"] != P.HELLO_OK or reply.get("version") != P.PROTOCOL_VERSION:
                raise ReplStartError(f"REPL worker handshake failed: {reply.get('message') or reply}")
        except (WorkerDied, asyncio.TimeoutError) as exc:
            tail = conn.output_tail()[-CRASH_OUTPUT_CHARS:]
            raise ReplStartError(f"REPL worker did not answer hello ({exc!r}); "
                                 f"its output: {tail or '(none)'}") from exc
        sandbox = watchdog.amend(dict(reply.get("sandbox") or {}), enabled=self._watchdog)
        gaps = sandbox_report.missing(sandbox)
        if self._require_full and gaps:
            raise SandboxIncomplete(
                f"the full REPL sandbox is required but {', '.join(gaps)} "
                f"{'is' if len(gaps) == 1 else 'are'} missing: {sandbox_report.describe(sandbox)} "
                "No model code was run. Turn off 'require full sandbox' (or drop --require-sandbox) "
                "to run with what this system has.", gaps)
        self.pid = conn.pid        # the process we started (inside a PID namespace the worker is pid 2)
        self.sandbox = sandbox
        log.info("REPL worker %s started (sandbox missing: %s)", self.pid, gaps or "nothing")

    def _idle(self, conn: WorkerConnection) -> bool:
        """No cell and no request is running on `conn` (its CPU then counts as left over)."""
        return self._conn is conn and not self._in_cell and not conn.busy

    def _on_breach(self, conn: WorkerConnection, breach: watchdog.Breach) -> None:
        """The watchdog stopped `conn`. During a cell the cell reports it; between cells the
        worker is replaced now, and the next cell tells the root and the user."""
        if not breach.between_cells or self._closed:
            return
        self._between = f"the REPL was restarted: a thread left by cell {self._cells} {breach.what}"
        self._replacing = asyncio.ensure_future(self._replace_between_cells(conn))

    async def _replace_between_cells(self, conn: WorkerConnection) -> None:
        async with self._lock:
            if self._closed or self._conn is not conn:
                return
            try:
                await self._ensure_worker(known_dead=True)
            except ReplError as exc:          # told by the next cell, which tries again
                log.error("replacing the REPL worker after a limit between cells failed: %s", exc)

    async def _dispose(self, conn: WorkerConnection) -> None:
        watch = getattr(conn, "watch", None)
        if watch is not None:
            watch.stop()
        try:
            await conn.dispose()
        finally:
            self._live.discard(conn)

    async def _restart(self, old: WorkerConnection) -> str | None:
        """Replace a dead or killed worker. Returns an error text if that failed."""
        self.restarts += 1
        await finish(self._dispose(old))
        _remove_tree(self._worker_dir)
        self._conn = None
        if self._closed:                 # close() came while the old one was stopped: no new worker
            return "the REPL was closed"
        try:
            await self._spawn()
        except ReplClosedError:
            return "the REPL was closed"
        except ReplError as exc:
            log.error("REPL worker restart failed: %s", exc)
            return str(exc)
        return None

    async def close(self, *, grace_s: float = 2.0) -> str:
        """Shut the worker down: ask, then SIGTERM, then SIGKILL (each waits grace_s), dispose
        any worker still starting, and remove the temp directory. Returns the path taken.
        From the first call on the client is closing: no restart or start begins, and one
        in progress disposes its worker. A cancel (a second Stop) does not cut it short:
        the whole sequence runs to its end, then the cancel goes on (core/lifecycle.py)."""
        if self._closing is None:
            self._closed = True
            self._closing = asyncio.ensure_future(self._shut_down(grace_s))
        return await finish(self._closing)

    async def _shut_down(self, grace_s: float) -> str:
        path = "graceful"
        try:
            await self._drop_loading()
            if self._replacing is not None and not self._replacing.done():
                self._replacing.cancel()
                await asyncio.gather(self._replacing, return_exceptions=True)
            conn = self._conn
            if conn is not None:
                watch = getattr(conn, "watch", None)
                if watch is not None:
                    watch.stop()
                try:
                    path = await conn.shutdown(grace_s)
                finally:
                    self._live.discard(conn)
            for other in list(self._live):          # a start or restart in progress
                await self._dispose(other)
        finally:
            if self._writing is not None:               # the context's writer is out of the directory first
                await asyncio.wait({self._writing})
            if self._owned is not None:
                self._owned.remove()
            self.shutdown_path = path
            self.pid = None
        return path

    # ---------------------------------------------------------------- context

    def begin_loading(self, documents: Iterable[Any], *, start: bool = False,
                      on_started: Callable[[], None] | None = None) -> asyncio.Future:
        """load_context as a task of its own, so the root's first call need not wait for
        gigabytes to be written and read. execute and get_var wait for it first and raise
        its error (a ReplError, as load_context would); close() cancels it. Returns the task.
        `start`: the worker's start is part of the task too (then `on_started` is called once
        it has shaken hands): the root's first request need not wait for the worker either."""
        self._check_open()
        work = self._start_then_load(list(documents), on_started) if start else self.load_context(documents)
        self._loading = asyncio.ensure_future(work)
        return self._loading

    async def _start_then_load(self, documents: list[Any], on_started: Callable[[], None] | None) -> None:
        """The context's file is written while the worker starts (for a big context each takes
        a while, and the worker needs the file only once it has shaken hands), then loaded."""
        self._check_open()
        if self._root is None:
            self._owned = OwnedDir.make()
            self._root = self._owned.path
        # (close() waits for it before it removes the directory: _shut_down)
        writing = self._writing = asyncio.ensure_future(finish(run_blocking(write_context, documents, self._root)))
        # retrieved: a failed start's error is the one that counts, and it is raised at once
        # (a worker that cannot be spawned fails the run before any model call)
        writing.add_done_callback(lambda t: t.cancelled() or t.exception())
        await self.start()
        if on_started is not None:
            on_started()
        files = await finish(writing)
        async with self._lock:
            self._check_open()
            self._context = files
            if self._conn is None or not self._conn.alive:
                await self._ensure_worker()
            else:
                await self._load(files)

    async def _wait_loading(self) -> None:
        task = self._loading
        if task is not None:
            try:
                await task
            finally:
                if self._loading is task:
                    self._loading = None

    async def _drop_loading(self) -> None:
        """A background load still going as the client closes: cancelled, its end awaited
        (its thread writing the file finishes first), its error only logged."""
        task, self._loading = self._loading, None
        if task is None:
            return
        task.cancel()
        await asyncio.wait({task})
        if not task.cancelled() and task.exception() is not None:
            log.info("the context load ended as the REPL closed: %r", task.exception())

    async def load_context(self, documents: Iterable[Any]) -> None:
        async with self._lock:
            self._check_open()
            if self._root is None:
                raise ReplError("start() the REPL before loading a context")
            docs = list(documents)
            # (a cancel waits for the thread: close() must not remove the directory under it)
            self._context = await finish(run_blocking(write_context, docs, self._root))
            self._check_open()
            if self._conn is None or not self._conn.alive:
                await self._ensure_worker()
            else:
                await self._load(self._context)

    async def _load(self, files: ContextFiles) -> None:
        assert self._conn is not None
        try:
            reply = await self._conn.request(P.LOAD_CONTEXT, timeout=LOAD_TIMEOUT_S,
                                             path=self._in_view(files.path),
                                             index_path=self._in_view(files.index_path), form=files.form)
        except (WorkerDied, asyncio.TimeoutError) as exc:
            raise ReplError(f"the REPL worker failed while loading the context: {exc!r}; "
                            f"{self._conn.output_tail()[-CRASH_OUTPUT_CHARS:]}") from exc
        if reply["type"] != P.CONTEXT_LOADED:
            raise ReplError(f"loading the context failed: {reply.get('message')}")

    def _in_view(self, path: str | None) -> str | None:
        """A context file's path as the worker sees it: under /rlm/context when its mount view
        binds the engine's directory there (core/repl/neutral.py), else the host's path."""
        seen = ((self.sandbox or {}).get("mount_view") or {}).get("context_dir")
        if not path or not seen or not self._root or not seen.startswith("/rlm/"):
            return path
        return seen + "/" + os.path.relpath(os.path.realpath(path), os.path.realpath(self._root))

    # ---------------------------------------------------------------- cells

    def _check_open(self) -> None:
        if self._closed:
            raise ReplClosedError("this REPL was closed")

    async def _ensure_worker(self, *, known_dead: bool = False) -> None:
        """A worker that died between cells is replaced before the next one."""
        if self._conn is not None and self._conn.alive and not known_dead:
            return
        if self._root is None:
            raise ReplError("start() the REPL first")
        if self._conn is None:           # the last restart failed: try again
            self.restarts += 1
            await self._spawn()
            return
        old = self._conn
        rc = await old.wait_exit(1.0)
        failed = await self._restart(old)
        if failed:
            self._check_open()
            raise ReplStartError(failed)
        if self._between:
            self._note = f"[REPL: {self._between}; variables were lost, context reloaded]\n"
        else:
            self._note = (f"[REPL: the worker {describe_exit(rc)} after the previous cell (a thread "
                          "left running?); it was restarted, variables were lost, context reloaded]\n")

    async def _send_exec(self, code: str) -> tuple[WorkerConnection, asyncio.Future]:
        await self._ensure_worker()
        assert self._conn is not None
        fut = await self._start_exec(code)
        if fut.done() and fut.exception() is not None:
            # Never delivered: the worker was already gone. Replace it, run the cell there.
            await self._ensure_worker(known_dead=True)
            assert self._conn is not None
            fut = await self._start_exec(code)
        return self._conn, fut

    async def _start_exec(self, code: str) -> asyncio.Future:
        """Send the cell; from now on sub-calls naming the worker's number for it are its own."""
        assert self._conn is not None
        self._execs += 1                 # the worker counts its cells the same way (worker.py)
        self._cell = (self._generation, self._execs)
        return await self._conn.start_request(P.EXEC, code=code)

    async def execute(self, code: str, *, timeout_s: float, cell_id: str | None = None) -> CellResult:
        """Run one cell. Its sub-calls end with it: whatever way it ends, the ones still
        outstanding are cancelled (and answered) before this returns. `cell_id` is the
        engine's name for the cell: every sub-call the cell makes carries it
        (SubCallRequest.cell); a sub-call made by a cell that has ended is refused."""
        await self._wait_loading()
        async with self._lock:
            self._check_open()
            self._in_cell = True
            self._cell, self._cell_tag = None, cell_id
            conn = None
            try:
                conn, fut = await self._send_exec(code)
                self._cells += 1
                try:
                    # sub-call waits not counted; asyncio.wait, unlike wait_for, never drops a cancel
                    reply = await within_run_time(conn, fut, timeout_s)
                except asyncio.TimeoutError:
                    return await self._timed_out(conn, fut, timeout_s)
                except WorkerDied:
                    return await self._died(conn, getattr(getattr(conn, "watch", None), "breach", None))
                except asyncio.CancelledError:
                    conn.signal(signal.SIGINT, group=True)   # abandon the cell, stop it
                    raise
                return self._result(reply)
            finally:
                self._in_cell = False
                self._cell, self._cell_tag = None, None
                if conn is not None:
                    self.sub_calls_cancelled += await finish(
                        conn.cancel_sub_calls("cancelled: the cell that made it ended"))

    def _result(self, reply: dict[str, Any], **changes: Any) -> CellResult:
        if reply["type"] != P.EXEC_RESULT:
            reply = {"error": f"REPL protocol error: {reply.get('message') or reply}",
                     "error_type": "ProtocolError"}
        stderr = str(reply.get("stderr") or "")
        if self._note:
            stderr, self._note = self._note + stderr, None
        between, self._between = self._between, None
        result = CellResult(
            stdout=str(reply.get("stdout") or ""), stderr=stderr,
            error=reply.get("error"), error_type=reply.get("error_type"),
            is_syntax_error=bool(reply.get("is_syntax_error")),
            duration_ms=int(reply.get("duration_ms") or 0), final=reply.get("final"),
            fault="memory" if reply.get("error_type") == "MemoryError" else None,
            restarted=False, stdout_chars=int(reply.get("stdout_chars") or 0),
            stderr_chars=int(reply.get("stderr_chars") or 0), between_cells=between)
        return dataclasses.replace(result, **changes) if changes else result

    def _lost(self, error: str, error_type: str, fault: str, duration_ms: int,
              restart_error: str | None) -> CellResult:
        if restart_error:
            error += f"\nRestarting the REPL worker failed: {restart_error}"
        stderr = self._note or ""
        self._note = None
        between, self._between = self._between, None
        return CellResult(stdout="", stderr=stderr, error=error, error_type=error_type,
                          is_syntax_error=False, duration_ms=duration_ms, final=None, fault=fault,
                          restarted=restart_error is None, stdout_chars=0, stderr_chars=len(stderr),
                          between_cells=between)

    async def _timed_out(self, conn: WorkerConnection, fut: asyncio.Future,
                         timeout_s: float) -> CellResult:
        conn.signal(signal.SIGINT, group=True)
        try:
            async with asyncio.timeout(self._grace):
                reply = await asyncio.shield(fut)
        except (asyncio.TimeoutError, WorkerDied):
            reply = None
        if reply is not None:
            res = self._result(reply)
            note = (f"TimeoutError: the cell's code ran longer than {timeout_s:g} s (time waiting for "
                    "sub-call replies not counted) and was interrupted. "
                    "Your variables are kept.")
            return dataclasses.replace(res, fault="timeout", error_type="TimeoutError",
                                       error=note + (f"\n{res.error}" if res.error else ""))
        if self._closed:
            return self._closed_result(int(timeout_s * 1000))
        await conn.kill()
        failed = await self._restart(conn)
        return self._lost(
            f"TimeoutError: the cell ran longer than {timeout_s:g} s and did not stop when "
            f"interrupted within {self._grace:g} s. The REPL worker was killed and restarted: "
            "all variables were lost; `context` and `documents` are loaded again.",
            "TimeoutError", "timeout", int((timeout_s + self._grace) * 1000), failed)

    async def _died(self, conn: WorkerConnection, breach: watchdog.Breach | None = None) -> CellResult:
        rc = await conn.wait_exit(2.0)
        if rc is None:            # pipe closed, process still there
            rc = await conn.kill()
        if self._closed:
            return self._closed_result(0)
        tail = conn.output_tail().strip()
        memory = any(m in tail for m in _MEMORY_MARKERS)
        failed = await self._restart(conn)
        what = describe_exit(rc)
        if breach is not None:    # the engine's watchdog stopped it
            text = f"{breach.message} while running this cell. It was restarted: all variables were lost."
            return self._lost(text, breach.error_type, breach.fault, 0, failed)
        if memory:
            head = (f"MemoryError: the REPL worker ran out of memory (limit "
                    f"{self._memory_limit_mb} MB) and {what} while running this cell.")
        elif conn.died_reason:
            head = f"WorkerCrash: {conn.died_reason} while running this cell."
        else:
            head = f"WorkerCrash: the REPL worker {what} while running this cell."
        text = head + (" It was restarted: all variables were lost; `context` and `documents` "
                       "are loaded again.")
        if tail:
            text += f"\nLast output of the worker:\n{tail[-CRASH_OUTPUT_CHARS:]}"
        return self._lost(text, "MemoryError" if memory else "WorkerCrash",
                          "memory" if memory else "crash", 0, failed)

    def _closed_result(self, duration_ms: int) -> CellResult:
        return CellResult(stdout="", stderr="", error="the REPL was closed while this cell ran",
                          error_type="ReplClosed", is_syntax_error=False, duration_ms=duration_ms,
                          final=None, fault="crash", restarted=False, stdout_chars=0, stderr_chars=0)

    async def get_var(self, name: str) -> tuple[bool, str | None, str | None]:
        """(found, str(value), error) for FINAL_VAR written outside code."""
        await self._wait_loading()
        async with self._lock:
            self._check_open()
            conn = self._conn
            if conn is None or not conn.alive:
                return False, None, "the REPL worker is not running"
            try:
                reply = await conn.request(P.GET_VAR, timeout=GET_VAR_TIMEOUT_S, name=name)
            except (WorkerDied, asyncio.TimeoutError) as exc:
                return False, None, f"could not read variable {name!r}: {exc!r}"
            if reply["type"] != P.VAR_VALUE:
                return False, None, str(reply.get("message") or reply)
            return bool(reply.get("found")), reply.get("value"), reply.get("error")

    # ---------------------------------------------------------------- sub-calls

    async def _serve_sub_call(self, msg: dict[str, Any], generation: int) -> list[dict]:
        raw = msg.get("prompts")
        prompts = [p if isinstance(p, str) else str(p) for p in (raw if isinstance(raw, list) else [])]
        if not self._in_cell:
            return P.cancelled_slots(len(prompts), "cancelled: made between cells (sub-calls end "
                                                   "with the cell that made them)")
        made_by = msg.get("cell") if "cell" in msg else (self._cell[1] if self._cell else None)
        if self._cell is None or (generation, made_by) != self._cell:
            # A thread of an earlier cell (or of a worker since replaced): its cell has ended.
            what = f"cell {made_by}" if isinstance(made_by, int) else "no cell"
            return P.cancelled_slots(len(prompts), f"cancelled: made by {what}, which has ended (sub-calls "
                                                   "end with the cell that made them)")
        model, context = msg.get("model"), msg.get("context")
        request = SubCallRequest(kind=str(msg.get("kind") or "llm"), prompts=prompts,
                                 model=None if model is None else str(model),
                                 context=None if context is None else str(context), cell=self._cell_tag)
        try:
            results = list(await self._on_sub_call(request))
        except asyncio.CancelledError:
            raise
        except Exception as exc:   # the handler's bug must not hang the worker's thread
            log.exception("on_sub_call failed for %s prompt(s)", len(prompts))
            return [{"error": {"type": type(exc).__name__, "message": str(exc)}} for _ in prompts]
        slots: list[dict] = []
        for i in range(len(prompts)):
            slot = results[i] if i < len(results) else None
            if not isinstance(slot, dict) or not ("ok" in slot or "error" in slot):
                slot = {"error": {"type": "ProtocolError",
                                  "message": f"the engine returned no result for prompt {i}"}}
            slots.append(slot)
        return slots
