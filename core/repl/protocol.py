"""The REPL protocol: engine <-> worker. Imported by both sides; the only spec.

Transport: JSON objects, one per line (UTF-8, "\\n"-terminated), on a dedicated
pipe pair that is NOT the worker's stdin/stdout (the worker captures user-code
output itself). The worker gets the two file descriptors on its command line.

Envelope: every message is {"id": str, "type": str, ...}. A reply carries
"re": <id of the request it answers>. Ids are unique per sender ("e1", "e2" ...
from the engine, "w1", "w2" ... from the worker).

engine -> worker
  hello        {version, sub_call_wait_s?}       first message; worker answers hello_ok.
                                                 sub_call_wait_s bounds how long a thread waits
                                                 for one sub_call's reply (default 3600)
  load_context {path, index_path, form?}         documents written by the engine to a file:
                                                 `path` holds, per document in order,
                                                 "=== {path} ===\\n{text}\\n\\n" (UTF-8): the
                                                 `context` string itself; `index_path` a JSON list
                                                 [{"path", "offset", "chars"}], offset = character
                                                 index of the text in `context`
                                                 (see core/repl/context_file.py). form "str"
                                                 (default): `context` is that string; "list":
                                                 one str per document text (context_form)
                                                 Reply: context_loaded {chars, documents}
  exec         {code}                            reply: exec_result
  get_var      {name}                            reply: var_value {found, value, error}
  sub_result   {re: <sub_call id>, results: [{"ok": str} | {"error": {"type", "message"}}]}
               or {re, cancelled: true, reason: str}: the sub-call was cancelled (its
               slots become {"error": {"type": "Cancelled", "message": reason}})
  shutdown     {}                                reply: bye, then the worker exits

worker -> engine
  hello_ok     {re, version, pid, sandbox: {network: "namespace"|"audit-hook", missing: [layer names],
                full: bool, one entry per layer: see core/repl/sandbox.py build() and docs/sandbox.md}}
  context_loaded {re, chars, documents}
  exec_result  {re, stdout, stderr, error, error_type, is_syntax_error, duration_ms,
                stdout_chars, stderr_chars, final: null | {"kind": "FINAL"|"FINAL_VAR", "value": str}}
  var_value    {re, found, value, error}
  sub_call     {kind: "llm"|"rlm", prompts: [str], model: str|null, context: str|null,
                cell: int|null}
               answered by the engine with sub_result; the asking thread blocks until then.
               Many sub_calls may be outstanding at once (threads in user code).
               `cell` is the worker's number (its count of exec requests) of the cell that
               made it: the cell the main thread runs, for a thread the cell that started
               it, for a thread-pool item the cell that submitted it (null: no cell,
               core/repl/cell_origin.py). The engine answers a sub_call whose cell is not
               the one running now with cancelled slots.
  cancel       {re: <sub_call id>}               the asking thread stopped waiting (the cell
                                                 was interrupted, or its wait ran out): the
                                                 engine stops that work. It still answers the
                                                 sub_call (with cancelled, or a result that
                                                 crossed the cancel; the worker drops it).
  error        {re?, message}                     a request the worker could not understand
  bye          {re}

A version mismatch in the handshake is fatal for that worker.

Sub-calls: every sub_call gets exactly one reply
  The engine answers each sub_call exactly once: a sub_result with results (one slot
  per prompt: a result or an error with its type) or with cancelled. Nothing the
  engine does leaves a sub_call unanswered, so no worker thread stays blocked:
  - sub-calls belong to the cell that made them and end with it. When a cell ends,
    however it ends (exec_result, timeout and interrupt, crash, the engine cancelling
    the cell), the engine cancels that cell's outstanding sub-calls (their model calls
    stop; their reservations and concurrency slots are freed) and answers each with
    cancelled before it reports the cell;
  - a sub_call made between cells, or by a cell that has ended (a thread a cell left
    running), is answered at once with Cancelled error slots: its cell is over;
  - a worker-side `cancel` (the thread was interrupted) makes the engine stop that
    call's work; the reply still comes and is dropped by the worker;
  - the worker's wait is bounded (sub_call_wait_s) as a safety net: when it runs out
    the thread sends `cancel` and gets SubCallTimeout error slots.
  A dead worker needs no replies: the engine cancels the work when the pipe closes.
"""

from __future__ import annotations

import itertools
import json
TYPE_CHECKING = False
if TYPE_CHECKING:   # (typing costs the worker's start ~8 ms of CPU)
    from typing import Any

PROTOCOL_VERSION = 1

# engine -> worker
HELLO = "hello"
LOAD_CONTEXT = "load_context"
EXEC = "exec"
GET_VAR = "get_var"
SUB_RESULT = "sub_result"
SHUTDOWN = "shutdown"
CANCEL = "cancel"             # worker -> engine: stop the work of a sub_call (re: its id)

# worker -> engine
HELLO_OK = "hello_ok"
CONTEXT_LOADED = "context_loaded"
EXEC_RESULT = "exec_result"
VAR_VALUE = "var_value"
SUB_CALL = "sub_call"
ERROR = "error"
BYE = "bye"

# Names the REPL gives model code (restored after every cell if overwritten).
REPL_NAMES = (
    "context", "documents", "llm_query", "llm_query_batched", "rlm_query",
    "rlm_query_batched", "FINAL", "FINAL_VAR", "SHOW_VARS",
)

MAX_LINE_BYTES = 512 * 1024 * 1024   # a single message never exceeds this
# The engine reads no line longer than this (a worker running model code is not trusted to
# keep to the spec; 300 MB in one line would otherwise be buffered whole). Cell output is
# capped well below it (core/repl/capture.py); the worker refuses to send more.
LINE_CAP_BYTES = 16 * 1024 * 1024
SUB_CALL_WAIT_S = 3600.0             # the worker's bound on one sub_call's wait (safety net)


def cancelled_slots(count: int, reason: str) -> list[dict[str, Any]]:
    """The slots of a sub_call answered with cancelled."""
    return [{"error": {"type": "Cancelled", "message": reason}} for _ in range(count)]


class ProtocolError(Exception):
    """A message that does not follow this spec."""


class IdCounter:
    def __init__(self, prefix: str) -> None:
        self._prefix = prefix
        self._n = itertools.count(1)

    def __call__(self) -> str:
        return f"{self._prefix}{next(self._n)}"


def message(type_: str, id_: str, re: str | None = None, **fields: Any) -> dict[str, Any]:
    msg: dict[str, Any] = {"id": id_, "type": type_}
    if re is not None:
        msg["re"] = re
    msg.update(fields)
    return msg


def encode(msg: dict[str, Any]) -> bytes:
    return json.dumps(msg, ensure_ascii=False, separators=(",", ":")).encode("utf-8") + b"\n"


def decode(line: bytes) -> dict[str, Any]:
    try:
        msg = json.loads(line)
    except (ValueError, UnicodeDecodeError) as exc:
        raise ProtocolError(f"not a JSON line: {exc}") from exc
    if not isinstance(msg, dict) or "type" not in msg or "id" not in msg:
        raise ProtocolError(f"message without id/type: {str(msg)[:200]}")
    return msg
