"""The REPL worker: a child process that holds `context` and runs model code.

    python -m core.repl.worker --fd-in N --fd-out M [--memory-limit-mb N] [--no-namespace]
                               [--context-dir DIR] [--forward-signals] [--dir-limit-mb N]
    <frozen app> --repl-worker --fd-in N --fd-out M ...

Speaks core/repl/protocol.py on the two inherited file descriptors. Threads:
  main thread   takes requests from a queue and runs cells (so SIGINT raises
                KeyboardInterrupt in model code, also while it waits for a sub-call)
  reader thread reads the engine's pipe: routes sub_result to the waiting thread,
                answers shutdown at once (even while a cell runs), queues the rest
Any thread may send (a lock keeps lines whole).
"""

from __future__ import annotations

import ast
import faulthandler
import gc
import json
import linecache
import mmap
import os
import queue
import signal
import sys
import threading
import time
import traceback
TYPE_CHECKING = False
if TYPE_CHECKING:   # (typing costs the worker's start ~8 ms of CPU)
    from typing import Any, BinaryIO

from core.repl import case_blind, cell_origin
from core.repl import protocol as P
from core.repl.capture import CappedText, DiscardText
from core.repl.context_file import ContextFileError, read_context
from core.repl.namespace import Namespace, VarListing
from core.repl import sandbox, worker_args
from core.repl.stdio_fds import protocol_off_stdio
from core.repl.worker_log import get_logger

log = get_logger("core.repl.worker")

# Frames from these files are cut from tracebacks shown to the model.
_OWN_FILES = frozenset(os.path.abspath(m.__file__ or "") for m in
                       (sys.modules[__name__], sys.modules["core.repl.namespace"],
                        sys.modules["core.repl.capture"], sandbox))
# Address space held back and freed on MemoryError, so the reply can still be built.
# An untouched anonymous mapping counts against RLIMIT_AS (what runs out) but is never
# resident: it costs no RSS, unlike a bytearray, which zero-fills its pages.
_RESERVE_BYTES = 16 * 1024 * 1024


def _new_reserve() -> mmap.mmap:
    return mmap.mmap(-1, _RESERVE_BYTES)


class Channel:
    """The protocol pipes, seen from the worker."""

    def __init__(self, fd_in: int, fd_out: int) -> None:
        self._in: BinaryIO = os.fdopen(fd_in, "rb")
        self._out: BinaryIO = os.fdopen(fd_out, "wb")
        self._send_lock = threading.Lock()
        self._ids = P.IdCounter("w")
        self._pending: dict[str, tuple[threading.Event, list, int]] = {}
        self._pending_lock = threading.Lock()
        self.cell: int | None = None          # the cell running now (sub_calls name it)
        self.main_sending = False             # the main thread is writing a line (SIGINT waits)
        self.interrupt_deferred = False       # a SIGINT came while it was
        self.wait_s = P.SUB_CALL_WAIT_S
        self.requests: queue.Queue[dict[str, Any]] = queue.Queue()

    def send(self, msg: dict[str, Any]) -> None:
        try:
            data = P.encode(msg)
        except UnicodeEncodeError:   # lone surrogates printed by model code
            data = json.dumps(msg, ensure_ascii=False, separators=(",", ":")).encode(
                "utf-8", "replace") + b"\n"
        if len(data) > P.LINE_CAP_BYTES:   # the engine would drop the line and stop us
            raise P.ProtocolError(
                f"{msg.get('type')} message of {len(data) / 1e6:.1f} MB is over the protocol's "
                f"{P.LINE_CAP_BYTES // (1024 * 1024)} MB line cap; send less at once (fewer or "
                "shorter prompts per call)")
        main = threading.current_thread() is threading.main_thread()
        with self._send_lock:
            # A cell's interrupt (SIGINT at its timeout) raised inside this write would leave
            # half a line on the pipe, and the next message (the cell's result) glued to it
            # would be lost: the main thread's interrupt waits until the line is whole.
            if main:
                self.main_sending = True
            try:
                self._out.write(data)
                self._out.flush()
            finally:
                if main:
                    self.main_sending = False

    def raise_deferred(self) -> None:
        """The interrupt that came during a write, now that the line is whole."""
        if self.interrupt_deferred and threading.current_thread() is threading.main_thread():
            self.interrupt_deferred = False
            raise KeyboardInterrupt

    def reply(self, type_: str, re: str | None, **fields: Any) -> None:
        try:
            self.send(P.message(type_, self._ids(), re=re, **fields))
        except P.ProtocolError as exc:
            self.send(P.message(P.ERROR, self._ids(), re=re, message=str(exc)))

    def sub_call(self, kind: str, prompts: list[str], model: str | None,
                 context: str | None) -> list[dict]:
        """Ask the engine; block this thread until the sub_result arrives (bounded by
        wait_s). An interrupted or timed-out wait tells the engine with `cancel`."""
        id_ = self._ids()
        done = threading.Event()
        box: list = []
        with self._pending_lock:
            self._pending[id_] = (done, box, len(prompts))
        sent = False
        try:
            self.send(P.message(P.SUB_CALL, id_, kind=kind, prompts=prompts,
                                model=model, context=context, cell=cell_origin.origin(self.cell)))
            sent = True
            self.raise_deferred()
            if not done.wait(self.wait_s):
                self.send(P.message(P.CANCEL, self._ids(), re=id_))
                return [{"error": {"type": "SubCallTimeout", "message":
                                   f"no answer from the engine within {self.wait_s:g} s"}}
                        for _ in prompts]
        except BaseException:       # KeyboardInterrupt: the cell was interrupted
            if sent and not done.is_set():
                try:
                    self.send(P.message(P.CANCEL, self._ids(), re=id_))
                except (OSError, ValueError):
                    pass
            self.interrupt_deferred = False       # (this interrupt is the one being handled)
            raise
        finally:
            with self._pending_lock:
                self._pending.pop(id_, None)
        return box[0] if box else []

    def read_forever(self) -> None:
        """Reader thread body."""
        for line in self._in:
            try:
                msg = P.decode(line)
            except P.ProtocolError as exc:
                self.reply(P.ERROR, None, message=str(exc))
                continue
            kind = msg["type"]
            if kind == P.SUB_RESULT:
                self._deliver(msg)
            elif kind == P.SHUTDOWN:
                self.reply(P.BYE, msg["id"])
                os._exit(0)
            else:
                self.requests.put(msg)
        # The engine closed its end: it is gone or done with us.
        os._exit(0)

    def _deliver(self, msg: dict[str, Any]) -> None:
        with self._pending_lock:
            entry = self._pending.get(msg.get("re", ""))
        if entry is None:
            log.debug("sub_result for unknown or abandoned call %s", msg.get("re"))
            return
        done, box, count = entry
        if msg.get("cancelled"):
            box.append(P.cancelled_slots(count, str(msg.get("reason") or "cancelled")))
        else:
            results = msg.get("results")
            box.append(results if isinstance(results, list) else [])
        done.set()


class Worker:
    def __init__(self, channel: Channel, sandbox_info: dict[str, Any]) -> None:
        self.channel = channel
        self.sandbox_info = sandbox_info
        self.ns = Namespace(channel.sub_call)
        self.cells = 0
        self.in_cell = False
        self._reserve: mmap.mmap | None = _new_reserve()

    # ---------------------------------------------------------------- loop

    def on_sigint(self, signum: int, frame: Any) -> None:
        if self.in_cell:
            if self.channel.main_sending:
                self.channel.interrupt_deferred = True
                return
            raise KeyboardInterrupt
        log.debug("SIGINT between cells, ignored")

    def serve(self) -> int:
        handlers = {P.HELLO: self.hello, P.LOAD_CONTEXT: self.load_context,
                    P.EXEC: self.exec_cell, P.GET_VAR: self.get_var}
        while True:
            try:
                msg = self.channel.requests.get()
                handler = handlers.get(msg["type"])
                if handler is None:
                    self.channel.reply(P.ERROR, msg["id"], message=f"unknown type {msg['type']!r}")
                    continue
                handler(msg)
            except KeyboardInterrupt:
                log.debug("late SIGINT outside a cell, ignored")

    def hello(self, msg: dict[str, Any]) -> None:
        if msg.get("version") != P.PROTOCOL_VERSION:
            self.channel.reply(P.ERROR, msg["id"], message=(
                f"protocol version mismatch: engine {msg.get('version')}, "
                f"worker {P.PROTOCOL_VERSION}"))
            os._exit(2)
        wait = msg.get("sub_call_wait_s")
        if isinstance(wait, (int, float)) and wait > 0:
            self.channel.wait_s = float(wait)
        self.channel.reply(P.HELLO_OK, msg["id"], version=P.PROTOCOL_VERSION,
                           pid=os.getpid(), sandbox=self.sandbox_info)
        _configure_logging()

    def load_context(self, msg: dict[str, Any]) -> None:
        try:
            context, documents = read_context(msg["path"], msg["index_path"], str(msg.get("form") or "str"))
        except (ContextFileError, KeyError) as exc:
            self.channel.reply(P.ERROR, msg["id"], message=str(exc))
            return
        self.ns.set_context(context, documents)
        self.channel.reply(P.CONTEXT_LOADED, msg["id"], chars=len(context), documents=len(documents))

    def get_var(self, msg: dict[str, Any]) -> None:
        found, value, error = self.ns.lookup(str(msg.get("name", "")))
        self.channel.reply(P.VAR_VALUE, msg["id"], found=found, value=value, error=error)

    # ---------------------------------------------------------------- cells

    def exec_cell(self, msg: dict[str, Any]) -> None:
        self.cells += 1
        self.channel.interrupt_deferred = False
        cell_origin.cover_pools()
        self.channel.cell = self.cells
        try:
            self._exec_cell(msg)
        finally:
            self.channel.cell = None

    def _exec_cell(self, msg: dict[str, Any]) -> None:
        filename = f"<cell {self.cells}>"
        code = str(msg.get("code", ""))
        out, err = CappedText(), CappedText()
        result: dict[str, Any] = {"error": None, "error_type": None, "is_syntax_error": False}
        self.ns.final = None
        started = time.monotonic()
        linecache.cache[filename] = (len(code), None, code.splitlines(True), filename)
        try:
            body, last, notes = self._compile(code, filename)
        except SyntaxError as exc:
            if exc.text is None and exc.lineno:
                lines = code.splitlines()
                exc.text = lines[exc.lineno - 1] if exc.lineno <= len(lines) else None
            result.update(error="".join(traceback.format_exception_only(type(exc), exc)),
                          error_type=type(exc).__name__, is_syntax_error=True)
        except (ValueError, RecursionError, MemoryError) as exc:   # null bytes, absurd nesting
            result.update(error=f"{type(exc).__name__}: {exc}", error_type=type(exc).__name__,
                          is_syntax_error=isinstance(exc, ValueError))
        else:
            for note in notes:         # a search served in the case it meant (core/repl/case_blind.py)
                print(note, file=err)
            self._run(body, last, out, err, result)
        restored = self.ns.restore()
        if restored:
            names = ", ".join(f"`{n}`" for n in restored)
            print(f"[REPL: {names} restored after this cell: these names belong to the REPL and "
                  "cannot be replaced; use new names for your own values]", file=err)
        self.channel.reply(
            P.EXEC_RESULT, msg["id"], stdout=out.getvalue(), stderr=err.getvalue(),
            stdout_chars=out.chars, stderr_chars=err.chars, duration_ms=int(
                (time.monotonic() - started) * 1000), final=self.ns.final, **result)
        self._refill_reserve()

    @staticmethod
    def _compile(code: str, filename: str) -> tuple[Any, Any, list[str]]:
        """Compile the cell; a trailing expression is compiled apart so its
        value can be echoed like an interactive prompt does. Also the notes of the
        case-blind searches it served in the case they meant (core/repl/case_blind.py)."""
        tree, notes = case_blind.fix(ast.parse(code, filename, "exec"))
        last = None
        if tree.body and isinstance(tree.body[-1], ast.Expr):
            last = compile(ast.Expression(tree.body.pop().value), filename, "eval")
        return compile(tree, filename, "exec"), last, notes

    def _run(self, body: Any, last: Any, out: CappedText, err: CappedText,
             result: dict[str, Any]) -> None:
        sys.stdout, sys.stderr = out, err
        try:
            self.in_cell = True
            try:
                exec(body, self.ns.globals)
                if last is not None:
                    value = eval(last, self.ns.globals)
                    if value is not None and not isinstance(value, VarListing):
                        print(repr(value))
            finally:
                self.in_cell = False
        except BaseException as exc:   # model code may raise anything, SystemExit included
            if isinstance(exc, MemoryError):
                if self._reserve is not None:
                    self._reserve.close()
                self._reserve = None
                gc.collect()
            result.update(error=_format_error(exc), error_type=type(exc).__name__)
            if isinstance(exc, MemoryError):
                limit = self.sandbox_info.get("memory_limit_mb")
                result["error"] += (f"\nThe cell ran out of memory (limit {limit} MB). Your variables "
                                    "are kept; free large ones with `del name`.")
        finally:
            # Threads the cell left running print into the void until the next cell.
            sys.stdout, sys.stderr = DiscardText(), DiscardText()

    def _refill_reserve(self) -> None:
        if self._reserve is None:
            try:
                self._reserve = _new_reserve()
            except (MemoryError, OSError):
                log.warning("memory reserve not refilled: still short of memory")


def _format_error(exc: BaseException) -> str:
    """The traceback without the worker's own frames."""
    te = traceback.TracebackException.from_exception(exc, limit=None)
    seen = set()
    node: traceback.TracebackException | None = te
    while node is not None and id(node) not in seen:
        seen.add(id(node))
        kept = [f for f in node.stack if os.path.abspath(f.filename) not in _OWN_FILES]
        node.stack = traceback.StackSummary.from_list(kept)
        node = node.__cause__ or node.__context__
    text = "".join(te.format())
    return text


def _configure_logging() -> None:
    """`logging` as model code finds it: warnings to the worker's stderr (the engine's output
    tail), not into a cell's output. Done just after hello_ok, before the next request is
    served: importing logging costs ~8 ms of CPU the start need not wait for."""
    import logging
    logging.basicConfig(level=logging.WARNING, stream=sys.__stderr__,
                        format="repl-worker: %(levelname)s %(message)s")


def main(argv: list[str], info: dict[str, Any] | None = None) -> int:
    """`info`: the box is built already (core/repl/boot.py), this is its report."""
    args = worker_args.parse(argv)
    if args.stdio:
        args.fd_in, args.fd_out = protocol_off_stdio()
    # No model code has run yet and we have one thread: build the box (this forks into a
    # PID namespace when it can; only the worker proper comes back here).
    if args.sandbox_fd is not None:       # started again from neutral paths (core/repl/neutral.py)
        from core.repl import neutral
        payload = neutral.read_payload(args.sandbox_fd)
        if payload["sys_path"]:
            sys.path[:] = payload["sys_path"]
        info = payload["info"]
        neutral.site_builtins()
    elif info is None:
        info = sandbox.build(
            memory_limit_mb=args.memory_limit_mb, allow_namespace=not args.no_namespace,
            fds=(args.fd_in, args.fd_out), context_dir=args.context_dir,
            forward_signals=args.forward_signals, dir_limit_mb=args.dir_limit_mb or sandbox.DIR_LIMIT_MB,
            audit_hook=not args.no_audit_hook)
    if sys.__stderr__ is not None:
        faulthandler.enable(file=sys.__stderr__)
    channel = Channel(args.fd_in, args.fd_out)
    cell_origin.install(lambda: channel.cell)    # threads' sub-calls name the cell that started them
    worker = Worker(channel, info)
    signal.signal(signal.SIGINT, worker.on_sigint)
    threading.Thread(target=channel.read_forever, name="repl-reader", daemon=True).start()
    return worker.serve()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
