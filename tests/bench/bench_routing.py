"""What the routing and the engine-process hardening cost (issue 13, items 5 and 6).

    .venv/bin/python tests/bench/bench_routing.py

- route(): one call's model, URL and key, with a real file-backed keyring (KeyStore's
  60 s cache warm, as during a run), median of 20,000 calls;
- the sub-call admission (allow-list, price, context window) for a 300 MB prompt against a
  128k-token window, and litellm's token_counter on a 4 MB prompt (what counting every
  oversized prompt would cost), each timed once with time.perf_counter;
- prepare_engine_process() in a fresh interpreter, its own modules' import included (median
  of 5 processes);
- the prctl prefix on a helper's `-c` code: a fresh `python -c pass` with and without it
  (median of 10 starts each).
"""

from __future__ import annotations

import asyncio
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))


def bench_route() -> float:
    from app.settings import Endpoint
    from core.routing import route
    from core.secrets import SERVICE, KeyStore
    from tests.support.test_keyring import FileKeyring
    backend = FileKeyring(Path(tempfile.mkdtemp()) / "keys.cfg")
    backend.set_password(SERVICE, "lab", "lab-key-0000000000")
    keys = KeyStore(backend)
    endpoints = [Endpoint("lab", "http://127.0.0.1:8000/v1", ["qwen3"], needs_key=True)]
    route("openai/qwen3", api_base="http://127.0.0.1:8000/v1", endpoints=endpoints, keys=keys)
    times = []
    for _ in range(20_000):
        t = time.perf_counter()
        route("openai/qwen3", api_base="http://127.0.0.1:8000/v1", endpoints=endpoints, keys=keys)
        times.append(time.perf_counter() - t)
    return statistics.median(times) * 1e6


def bench_admission() -> tuple[float, float]:
    from core.config import Price, RunConfig
    from core.engine.admission import admit_sub_call
    from core.engine.budget import Budget
    from core.llm.pricing import PriceBook

    class Ctx:
        config = RunConfig(root_model="openai/gpt-4o", sub_model="openai/gpt-4o-mini")
        prices = PriceBook({"openai/gpt-4o-mini": Price(0.15, 0.6)})
        budget = Budget(max_cost_usd=1.0, max_sub_calls=None)
    Ctx.prices.context_window("openai/gpt-4o-mini")   # litellm imported and its map loaded first
    huge = "x" * 300_000_000
    t = time.perf_counter()
    admission = asyncio.run(admit_sub_call(Ctx, None, huge))
    admit_ms = (time.perf_counter() - t) * 1000
    assert admission.error_type == "ContextWindowExceeded"
    del huge
    four_mb = "word " * 800_000
    t = time.perf_counter()
    Ctx.prices.estimate_tokens("openai/gpt-4o-mini", [{"role": "user", "content": four_mb}])
    return admit_ms, (time.perf_counter() - t) * 1000


def bench_prepare() -> float:
    # the stdlib modules it needs (ctypes, logging, multiprocessing.util) are loaded by the app anyway
    code = ("import time, os, ctypes, logging, multiprocessing.util; "
            "os.environ['OPENAI_API_KEY']='sk-bench-000000000000'; t=time.perf_counter(); "
            "from core.engine_process import prepare_engine_process; prepare_engine_process(); "
            "print((time.perf_counter()-t)*1000)")
    runs = [float(subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True,
                                 check=True).stdout) for _ in range(5)]
    return statistics.median(runs)


def bench_prefix() -> tuple[float, float]:
    from core.engine_process import NO_DUMP_PREFIX

    def start(code: str) -> float:
        t = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], check=True)
        return (time.perf_counter() - t) * 1000
    plain = statistics.median(start("pass") for _ in range(10))
    prefixed = statistics.median(start(NO_DUMP_PREFIX + "pass") for _ in range(10))
    return plain, prefixed


def main() -> None:
    import os
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    print(f"route(): {bench_route():.1f} µs per call (median of 20,000)")
    admit_ms, count_ms = bench_admission()
    print(f"admission of a 300 MB prompt (128k window): {admit_ms:.1f} ms; "
          f"litellm token_counter on 4 MB: {count_ms:.0f} ms")
    print(f"prepare_engine_process(): {bench_prepare():.1f} ms (median of 5 fresh processes)")
    plain, prefixed = bench_prefix()
    print(f"helper start, python -c pass: {plain:.1f} ms; with the prctl prefix: {prefixed:.1f} ms")


if __name__ == "__main__":
    main()
