"""The scripted OpenAI-compatible server (tests/support/openai_server.py) in its
own process, for benchmarks: its threads then do not compete with the engine
for the GIL, and its CPU is not counted as the engine's, as with a real provider.

    with ServerProcess() as server:
        server.script("sub", fn="ok", latency_s=0.5)
        server.script("root", replies=["```repl\\nFINAL('x')\\n```"])
        ... model "openai/sub", api_base=server.url ...
        server.stats()   # {"max_in_flight", "requests"}; resets both

Replies computed from the request are named functions here (FUNCTIONS), so
they can be chosen over the control pipe: one JSON command per line on stdin,
one JSON answer per line on stdout.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parents[2]

NESTED_CHILDREN = 8
NESTED_BATCH = 16


def _code(src: str) -> str:
    return f"```repl\n{src}\n```"


def _first_user(request: Any) -> str:
    for m in request.messages:
        if m.get("role") == "user":
            content = m.get("content")
            return content if isinstance(content, str) else str(content)
    return ""


def nested_root(request: Any) -> str:
    """Root replies keyed on the request: the top-level RLM (question NESTED-TOP)
    starts 8 nested RLMs in one batch, then answers; each child (question
    "child K ...") runs a batch of 16 sub-calls and answers in the same cell."""
    first = _first_user(request)
    turns = sum(1 for m in request.messages if m.get("role") == "assistant")
    child = re.search(r"child (\d+) of", first)
    if child:
        k = child.group(1)
        return _code(f"out = llm_query_batched([f'child {k} item {{j}}' for j in range({NESTED_BATCH})])\n"
                     f"FINAL('child {k}: ' + str(sum(1 for o in out if o.startswith('ok'))))")
    if "NESTED-TOP" in first:
        if turns == 0:
            return _code(f"parts = rlm_query_batched([f'child {{k}} of {NESTED_CHILDREN}: count the items' "
                         f"for k in range({NESTED_CHILDREN})])\nprint(parts)")
        return _code("FINAL('done')")
    return _code("FINAL('unexpected request')")


def _grid(name: str) -> Callable[[Any], Any]:
    def reply(request: Any) -> Any:
        from tests.support import grid_corpus
        return getattr(grid_corpus, name)(request)
    return reply


FUNCTIONS: dict[str, Callable[[Any], Any]] = {
    "ok": lambda request: "ok",
    "nested_root": nested_root,
    "grid_cell": _grid("answer_cell"),             # tests/support/grid_corpus.py
    "grid_document_root": _grid("document_root"),
    "grid_column_root": _grid("column_root"),
}


def child_main() -> None:
    sys.path.insert(0, str(ROOT))
    from tests.support import openai_server
    # Like providers' servers, answer without Nagle's algorithm: a stream's small
    # writes otherwise wait for the client's delayed ACK (~40 ms per streamed reply).
    openai_server._Handler.disable_nagle_algorithm = True
    server = openai_server.ScriptedOpenAI().start()
    print(json.dumps({"url": server.url}), flush=True)
    for line in sys.stdin:
        cmd = json.loads(line)
        if cmd["cmd"] == "script":
            fn = FUNCTIONS[cmd["fn"]] if cmd.get("fn") else None
            server.script(cmd["model"], replies=cmd.get("replies"), fn=fn,
                          latency_s=float(cmd.get("latency_s", 0.0)))
            answer: dict[str, Any] = {"ok": True}
        elif cmd["cmd"] == "stats":
            with server._lock:
                answer = {"max_in_flight": server.max_in_flight, "requests": len(server.history)}
                server.max_in_flight = 0
                server.history.clear()
        elif cmd["cmd"] == "log":
            # The request log as the provider sees it: arrival and end of every response,
            # on CLOCK_MONOTONIC (time.monotonic() is the same clock in every process on Linux).
            with server._lock:
                answer = {"requests": [{"model": r.model, "started": r.started, "finished": r.finished}
                                       for r in server.history]}
                server.history.clear()
        elif cmd["cmd"] == "stop":
            break
        else:
            answer = {"error": f"unknown command {cmd['cmd']!r}"}
        print(json.dumps(answer), flush=True)
    server.stop()


class ServerProcess:
    def __init__(self) -> None:
        self.proc: subprocess.Popen | None = None
        self.url = ""

    def __enter__(self) -> "ServerProcess":
        self.proc = subprocess.Popen([sys.executable, "-m", "tests.bench.server_proc"], cwd=ROOT,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.url = json.loads(self.proc.stdout.readline())["url"]
        return self

    def __exit__(self, *exc: object) -> None:
        if self.proc is None:
            return
        try:
            self.proc.stdin.write(json.dumps({"cmd": "stop"}) + "\n")
            self.proc.stdin.close()
            self.proc.wait(timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            self.proc.kill()
            self.proc.wait()
        self.proc = None

    def _command(self, **cmd: Any) -> dict:
        self.proc.stdin.write(json.dumps(cmd) + "\n")
        self.proc.stdin.flush()
        return json.loads(self.proc.stdout.readline())

    def script(self, model: str, *, replies: list[str] | None = None, fn: str | None = None,
               latency_s: float = 0.0) -> None:
        self._command(cmd="script", model=model, replies=replies, fn=fn, latency_s=latency_s)

    def log(self) -> list[dict]:
        """Every request served since the last call, in order of arrival (then cleared):
        {"model", "started", "finished"} on time.monotonic()'s clock, shared across processes."""
        return self._command(cmd="log")["requests"]

    def stats(self) -> dict:
        """Peak requests in flight and requests served since the last call (then reset)."""
        return self._command(cmd="stats")


if __name__ == "__main__":
    child_main()
