"""One worker process and its pipes, seen from the engine's event loop.

Spawns the worker (asyncio.create_subprocess_exec, its own session so a Ctrl+C
in the terminal does not reach it), talks protocol lines over two dedicated
pipes with asyncio streams, routes replies to the futures that wait for them by
`re`, serves each sub_call in its own task, drains the worker's fd 1/2 into a
small tail buffer (C-level output and fatal error messages land there) and
reaps the process. It knows nothing of cells or restarts: that is ReplClient.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import time
from typing import Any, Awaitable, Callable

from core.repl import protocol as P
from core.repl.proc_cpu import tree_cpu_s

log = logging.getLogger(__name__)

OUTPUT_TAIL_BYTES = 16 * 1024
SubCallServer = Callable[[dict[str, Any]], Awaitable[list[dict]]]


class WorkerDied(Exception):
    """The worker's pipe closed while a reply was awaited."""


def _decode(line: bytes, pid: int) -> dict[str, Any] | None:
    """One protocol line, or None. A line the worker began and never finished (a signal
    cut its write) runs into the next message: that whole message at its end is kept."""
    try:
        return P.decode(line)
    except P.ProtocolError as exc:
        start = line.rfind(b'{"id":')
        if start > 0:
            try:
                msg = P.decode(line[start:])
            except P.ProtocolError:
                msg = None                # not a whole message either: the line is bad (below)
            if msg is not None:
                log.warning("worker %s: a cut line before a %s message was dropped", pid, msg["type"])
                return msg
        log.warning("worker %s sent a bad line: %s", pid, exc)
        return None


async def _reap(proc: asyncio.subprocess.Process) -> None:
    for kill in (lambda: os.killpg(proc.pid, signal.SIGKILL), proc.kill):
        try:
            kill()
        except OSError as exc:            # (ProcessLookupError: already gone)
            log.debug("killing worker %s: %s", proc.pid, exc)
    await proc.wait()


class WorkerConnection:
    def __init__(self, proc: asyncio.subprocess.Process, reader: asyncio.StreamReader,
                 writer: asyncio.StreamWriter, serve_sub_call: SubCallServer,
                 output: asyncio.StreamReader | None = None) -> None:
        self.proc = proc
        self.pid: int = proc.pid
        self._reader = reader
        self._writer = writer
        self._serve_sub_call = serve_sub_call
        self._output = output
        self._ids = P.IdCounter("e")
        self._pending: dict[str, asyncio.Future[dict[str, Any]]] = {}
        self._sub_tasks: set[asyncio.Task[None]] = set()
        self._sub_by_id: dict[str, asyncio.Task[None]] = {}
        self._cancel_reasons: dict[str, str] = {}
        self._waiting = 0                      # sub-calls received and not yet answered
        self._waiting_since = 0.0
        self._waited_s = 0.0                   # time with at least one of them open
        self._cpu_at_wait: float | None = None # the worker tree's CPU seconds when that began
        self._cpu_in_waits = 0.0               # CPU its code used meanwhile (a thread still working)
        self._tail = bytearray()
        self.output_bytes = 0
        self.died_reason: str | None = None   # set when the engine stopped the worker itself
        self.group_signals = True              # False: spawned over standard pipes (no killpg)
        self.closed = False
        self.watch: Any = None                 # the client's watchdog over this worker's life
        self._read_task = asyncio.create_task(self._read_loop(), name=f"repl-read-{proc.pid}")
        self._drain_task = asyncio.create_task(self._drain_output(), name=f"repl-out-{proc.pid}")
        self._exit_task = asyncio.create_task(proc.wait(), name=f"repl-wait-{proc.pid}")

    @classmethod
    async def spawn(cls, command: list[str], *, env: dict[str, str], cwd: str,
                    serve_sub_call: SubCallServer) -> "WorkerConnection":
        loop = asyncio.get_running_loop()
        to_worker_r, to_worker_w = os.pipe()
        from_worker_r, from_worker_w = os.pipe()
        try:
            proc = await asyncio.create_subprocess_exec(
                *command, "--fd-in", str(to_worker_r), "--fd-out", str(from_worker_w),
                stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.STDOUT, pass_fds=(to_worker_r, from_worker_w),
                env=env, cwd=cwd, start_new_session=True)
        except BaseException:
            for fd in (to_worker_w, from_worker_r):
                os.close(fd)
            raise
        finally:
            os.close(to_worker_r)
            os.close(from_worker_w)
        read_file = write_file = None
        try:
            reader = asyncio.StreamReader(limit=P.LINE_CAP_BYTES, loop=loop)
            read_file = os.fdopen(from_worker_r, "rb", buffering=0)
            await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader, loop=loop), read_file)
            write_file = os.fdopen(to_worker_w, "wb", buffering=0)
            transport, protocol = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin, write_file)
            writer = asyncio.StreamWriter(transport, protocol, None, loop)
        except BaseException:
            # Cancelled (or failed) between the process's start and its connection: nobody
            # else knows this process, so it is killed and reaped here, whatever came.
            from core.lifecycle import finish
            await finish(_reap(proc))
            for f, fd in ((read_file, from_worker_r), (write_file, to_worker_w)):
                try:
                    f.close() if f is not None else os.close(fd)
                except OSError as exc:
                    log.debug("closing a pipe of worker %s: %s", proc.pid, exc)
            raise
        return cls(proc, reader, writer, serve_sub_call)

    @classmethod
    async def spawn_stdio(cls, command: list[str], *, env: dict[str, str], cwd: str,
                          serve_sub_call: SubCallServer) -> "WorkerConnection":
        """Spawn over standard pipes only: no pass_fds, no process group (Windows, macOS
        sandboxes). The worker moves the protocol off fd 0/1 itself (--stdio); its stderr
        is the output tail."""
        proc = await asyncio.create_subprocess_exec(
            *command, "--stdio", stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE, env=env, cwd=cwd, limit=P.LINE_CAP_BYTES)
        assert proc.stdout is not None and proc.stdin is not None
        conn = cls(proc, proc.stdout, proc.stdin, serve_sub_call, output=proc.stderr)
        conn.group_signals = False
        return conn

    # ---------------------------------------------------------------- messages

    @property
    def returncode(self) -> int | None:
        return self.proc.returncode

    @property
    def busy(self) -> bool:
        """A request (exec, load_context, get_var, hello) is waiting for its reply."""
        return bool(self._pending)

    @property
    def alive(self) -> bool:
        return not self.closed and self.proc.returncode is None and not self._read_task.done()

    async def send(self, msg: dict[str, Any]) -> None:
        if self.closed or self._writer.is_closing():
            raise WorkerDied("the worker's pipe is closed")
        self._writer.write(P.encode(msg))
        try:
            await self._writer.drain()
        except (ConnectionError, BrokenPipeError) as exc:
            raise WorkerDied(f"writing to the worker failed: {exc}") from exc

    async def start_request(self, type_: str, **fields: Any) -> asyncio.Future[dict[str, Any]]:
        """Send a request; the returned future gets the reply (or WorkerDied)."""
        id_ = self._ids()
        fut: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        # Mark a WorkerDied as seen even if nobody awaits this future any more.
        fut.add_done_callback(lambda f: f.cancelled() or f.exception())
        if self._read_task.done():
            fut.set_exception(WorkerDied("the worker's pipe is closed"))
            return fut
        self._pending[id_] = fut
        try:
            await self.send(P.message(type_, id_, **fields))
        except WorkerDied as exc:
            self._pending.pop(id_, None)
            if not fut.done():
                fut.set_exception(exc)
        return fut

    async def request(self, type_: str, *, timeout: float, **fields: Any) -> dict[str, Any]:
        fut = await self.start_request(type_, **fields)
        # (asyncio.timeout, not wait_for: in 3.11 wait_for returns a reply that came with a
        # cancel and drops the cancel, so a Stop during the context's load could be lost)
        async with asyncio.timeout(timeout):
            return await fut

    async def _read_loop(self) -> None:
        reason = "the worker closed its pipe"
        try:
            while True:
                line = await self._reader.readline()
                if not line.endswith(b"\n"):
                    break
                msg = _decode(line, self.pid)
                if msg is None:
                    continue
                try:
                    self._dispatch(msg)
                except Exception:    # a line the worker (or model code) forged must not end the reading
                    log.exception("worker %s: a %s line could not be handled", self.pid, msg.get("type"))
        except ValueError:   # a line longer than LINE_CAP_BYTES: not read, the worker is stopped
            reason = (f"the REPL worker sent a protocol line longer than "
                      f"{P.LINE_CAP_BYTES // (1024 * 1024)} MB (model code writing to the protocol "
                      "pipe?); the line was dropped and the worker stopped")
            self.died_reason = reason
            log.error("worker %s: %s", self.pid, reason)
            self.signal(signal.SIGKILL, group=self.group_signals)
            self.signal(signal.SIGKILL)
        finally:
            for fut in self._pending.values():
                if not fut.done():
                    fut.set_exception(WorkerDied(reason))
            self._pending.clear()

    def _dispatch(self, msg: dict[str, Any]) -> None:
        re = msg.get("re")
        if re is not None and not isinstance(re, str):
            log.warning("worker %s: a %s line whose re is %s, dropped", self.pid, msg["type"], type(re).__name__)
            return
        if msg["type"] == P.SUB_CALL:
            id_ = str(msg["id"])
            if id_ in self._sub_by_id:
                log.warning("worker %s: sub_call %s sent twice, the second dropped", self.pid, id_)
                return
            task = asyncio.create_task(self._sub_call(msg), name=f"repl-sub-{id_}")
            self._waiting_starts()
            self._sub_tasks.add(task)
            self._sub_by_id[id_] = task
            task.add_done_callback(lambda t, i=id_: self._sub_done(t, i))
            return
        if msg["type"] == P.CANCEL:
            self.cancel_sub_call(re or "", "cancelled: the REPL stopped waiting for it")
            return
        fut = self._pending.pop(re or "", None)
        if fut is not None and not fut.done():
            fut.set_result(msg)
        else:
            log.debug("worker %s: unexpected %s (re=%s)", self.pid, msg["type"], re)

    async def _sub_call(self, msg: dict[str, Any]) -> None:
        """Serve one sub_call and answer it exactly once: results, or cancelled."""
        id_ = str(msg["id"])
        try:
            results = await self._serve_sub_call(msg)
            reply = P.message(P.SUB_RESULT, self._ids(), re=id_, results=results)
        except asyncio.CancelledError:
            reason = self._cancel_reasons.pop(id_, "cancelled: the cell that made it ended")
            reply = P.message(P.SUB_RESULT, self._ids(), re=id_, cancelled=True, reason=reason)
            await self._send_reply(reply, id_)
            raise
        await self._send_reply(reply, id_)

    async def _send_reply(self, reply: dict[str, Any], id_: str) -> None:
        try:
            await self.send(reply)
        except (WorkerDied, ConnectionError, RuntimeError):
            log.debug("worker %s gone before sub_result %s", self.pid, id_)

    def _waiting_starts(self) -> None:
        if self._waiting == 0:
            self._waiting_since = time.monotonic()
            self._cpu_at_wait = tree_cpu_s(self.pid)
        self._waiting += 1

    def waited_s(self) -> float:
        """Seconds, since the worker started, during which the engine held at least one of its
        sub-calls and the worker's code did not run (the cell clock): the wall time of those
        spells less the CPU time the worker used in them (a thread working beside the wait)."""
        if not self._waiting:
            return self._waited_s - self._cpu_in_waits
        return (self._waited_s + (time.monotonic() - self._waiting_since)
                - self._cpu_in_waits - self._cpu_since_wait())

    def _cpu_since_wait(self) -> float:
        if self._cpu_at_wait is None:
            return 0.0
        now = tree_cpu_s(self.pid)
        return max(now - self._cpu_at_wait, 0.0) if now is not None else 0.0

    def _sub_done(self, task: asyncio.Task[None], id_: str) -> None:
        if task in self._sub_tasks:
            self._waiting -= 1
            if self._waiting == 0:
                self._waited_s += time.monotonic() - self._waiting_since
                self._cpu_in_waits += self._cpu_since_wait()
                self._cpu_at_wait = None
        self._sub_tasks.discard(task)
        if self._sub_by_id.get(id_) is task:
            del self._sub_by_id[id_]
        self._cancel_reasons.pop(id_, None)

    @property
    def sub_calls_open(self) -> int:
        """Sub-calls received and not yet answered."""
        return sum(not t.done() for t in self._sub_tasks)

    def cancel_sub_call(self, id_: str, reason: str) -> bool:
        task = self._sub_by_id.get(id_)
        if task is None or task.done():
            return False
        self._cancel_reasons.setdefault(id_, reason)
        task.cancel()
        return True

    async def cancel_sub_calls(self, reason: str) -> int:
        """Cancel every outstanding sub-call and wait until each has been answered
        (its work stopped, its reservations released). Returns how many."""
        tasks = [t for t in self._sub_tasks if not t.done()]
        for id_, task in list(self._sub_by_id.items()):
            if not task.done():
                self._cancel_reasons.setdefault(id_, reason)
                task.cancel()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)
        return len(tasks)

    async def _drain_output(self) -> None:
        stream = self._output if self._output is not None else self.proc.stdout
        if stream is None:
            return
        while True:
            chunk = await stream.read(65536)
            if not chunk:
                return
            self.output_bytes += len(chunk)
            self._tail += chunk
            if len(self._tail) > OUTPUT_TAIL_BYTES:
                del self._tail[:len(self._tail) - OUTPUT_TAIL_BYTES]

    def output_tail(self) -> str:
        """The last bytes the worker wrote to its fd 1/2 (crash messages)."""
        return self._tail.decode("utf-8", "replace")

    # ---------------------------------------------------------------- process

    def signal(self, sig: int, *, group: bool = False) -> None:
        """Signal the worker (`group`: its whole process group). Nothing is sent once its
        exit was seen: the pid, and so the group id, is then free and may belong to
        another process (pid_max is 32768 on many hosts; another run's worker, say).
        Inside its PID namespace nothing outlives the worker's PID 1 anyway."""
        if self.proc.returncode is not None:
            return
        try:
            if group and self.group_signals:
                os.killpg(self.pid, sig)
            elif self.proc.returncode is None:      # (over standard pipes: the process only)
                self.proc.send_signal(sig)
        except (ProcessLookupError, PermissionError) as exc:
            log.debug("signal %s to worker %s: %s", sig, self.pid, exc)

    async def wait_exit(self, timeout: float) -> int | None:
        try:
            return await asyncio.wait_for(asyncio.shield(self._exit_task), timeout)
        except asyncio.TimeoutError:
            return None

    async def kill(self) -> int | None:
        self.signal(signal.SIGKILL, group=True)
        self.signal(signal.SIGKILL)
        return await self.wait_exit(10.0)

    async def shutdown(self, grace_s: float) -> str:
        """Ask, then SIGTERM, then SIGKILL, each with a deadline. Returns the path."""
        path = "graceful"
        if self.proc.returncode is None:
            try:
                await self.start_request(P.SHUTDOWN)
            except WorkerDied:
                log.debug("worker %s: shutdown not sent, pipe closed", self.pid)
            if await self.wait_exit(grace_s) is None:
                path = "terminate"
                self.signal(signal.SIGTERM)
                if await self.wait_exit(grace_s) is None:
                    path = "kill"
                    await self.kill()
        await self.dispose()
        return path

    async def dispose(self) -> None:
        """Kill what is left (also grandchildren in the worker's process group),
        cancel outstanding sub-call tasks, close the pipes."""
        if self.closed:
            return
        self.closed = True
        if self.proc.returncode is None:
            await self.kill()
        tasks = [*self._sub_tasks, self._read_task, self._drain_task]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        self._writer.close()
