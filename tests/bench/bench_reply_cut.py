"""How soon a degenerate root reply is cut (issue 25), on both model routes.

    .venv/bin/python tests/bench/bench_reply_cut.py [--quick] [--json OUT]

The root's reply is a short code block and then ">>> " 4,000 times, streamed by the
scripted server in 16-character chunks 4 ms apart (over 4 s for all of it). Measured from
the server's side (its request log: when the client hung up, what it had sent) and beside
them the engine's own figures (RootReplied.duration_ms, the run's wall time). The
behaviour itself (the connection closed early, a fraction of the reply sent) is
asserted in tests/integration/test_reply_reading.py; the times are here.
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.bench.report import median, row, standalone  # noqa: E402
from tests.integration.engine_helpers import of_type, run as engine_run  # noqa: E402
from tests.integration.test_reply_reading import CHUNK, DEGENERATE, DOCS, PAUSE, code  # noqa: E402
from tests.support.openai_server import ScriptedOpenAI  # noqa: E402


async def one(route: str) -> dict[str, float]:
    os.environ.pop("RLMSTUDIO_DESKTOP_HTTP", None)
    if route == "litellm":
        os.environ["RLMSTUDIO_DESKTOP_HTTP"] = "litellm"
    server = ScriptedOpenAI().start()
    try:
        server.script("root", replies=[DEGENERATE, code("FINAL('done')")], chunk_chars=CHUNK,
                      chunk_delay_s=PAUSE)
        started = time.monotonic()
        result, events = await engine_run(server, "What is SECRET_CODE?", DOCS, mode="rlm")
        wall = time.monotonic() - started
        first = server.requests_for("root")[0]
        assert result.answer == "done" and first.disconnected, (result.status, result.error)
        return {"hang_up_s": first.disconnected_at - first.started, "sent_chars": len(first.sent_text),
                "root_call_ms": of_type(events, "RootReplied")[0].duration_ms, "run_s": wall}
    finally:
        server.stop()
        os.environ.pop("RLMSTUDIO_DESKTOP_HTTP", None)


def run(quick: bool = False) -> dict:
    from core.llm.litellm_import import litellm_async      # its import (seconds) is not measured here
    asyncio.run(litellm_async())
    rounds = 1 if quick else 3
    full_s = len(DEGENERATE) / CHUNK * PAUSE
    rows, details = [], {}
    for route in ("direct", "litellm"):
        got = [asyncio.run(one(route)) for _ in range(rounds)]
        details[route] = got
        hang_up = median([g["hang_up_s"] for g in got])
        rows += [
            row(f"{route}: server saw the hang-up after", hang_up, "s", bound=f"whole reply {full_s:.1f} s",
                ratio=hang_up / full_s, goal=f"< {full_s / 3:.1f} s", met=hang_up < full_s / 3),
            row(f"  {route}: characters sent", int(median([g["sent_chars"] for g in got])), "",
                bound=f"of {len(DEGENERATE):,}"),
            row(f"  {route}: root call (engine's RootReplied)", median([g["root_call_ms"] for g in got]), "ms"),
            row(f"  {route}: whole run", median([g["run_s"] for g in got]), "s", goal=f"< {full_s / 2:.1f} s",
                met=median([g["run_s"] for g in got]) < full_s / 2),
        ]
    return {"name": "reply cut (a block, then repetition)", "rows": rows, "details": details}


if __name__ == "__main__":
    standalone("reply cut", run)
