"""Benchmark of the model-call layer (not collected by pytest; prints figures).

    .venv/bin/python tests/bench/bench_llm.py [--calls 200]

1. litellm's CPU time per acompletion (plain and streamed) against the scripted
   server running in a child process (so the server's CPU is not counted),
   next to a bare httpx POST of the same request.
   ModelClient.complete's CPU per call on the direct route (core/llm/openai_http.py)
   and on litellm's.
2. Wall time of 64 concurrent calls at 0.5 s server latency: ModelClient.complete
   vs a raw asyncio.gather of litellm.acompletion.
"""

from __future__ import annotations

import argparse
import asyncio
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from core.llm.client import ModelClient  # noqa: E402
from core.llm.litellm_import import litellm  # noqa: E402

SERVER = """
import sys
from tests.support.openai_server import ScriptedOpenAI
s = ScriptedOpenAI().start()
s.script("fast", fn=lambda r: "word " * 40)
s.script("slow", fn=lambda r: "word " * 40, latency_s=0.5)
print(s.url, flush=True)
sys.stdin.read()
"""
MESSAGES = [{"role": "system", "content": "You answer briefly."},
            {"role": "user", "content": "Summarise this chunk of text in one line. " * 20}]


async def cpu_per_call(url: str, calls: int, stream: bool) -> float:
    lm = litellm()

    async def one() -> None:
        resp = await lm.acompletion(model="openai/fast", api_base=url, api_key="k", messages=MESSAGES,
                                    max_tokens=64, num_retries=0, max_retries=0, stream=stream,
                                    **({"stream_options": {"include_usage": True}} if stream else {}))
        if stream:
            async for _ in resp:
                pass

    for _ in range(10):
        await one()
    start = time.process_time()
    for _ in range(calls):
        await one()
    return (time.process_time() - start) / calls * 1000


async def cpu_per_client_call(url: str, calls: int, stream: bool, route: str) -> float:
    """ModelClient.complete on one route: "direct" (core/llm/openai_http.py) or "litellm"."""
    import os
    os.environ["RLMSTUDIO_DESKTOP_HTTP"] = "litellm" if route == "litellm" else ""
    client = ModelClient(key_for=lambda m: "k", api_base_for=lambda m: url)
    try:
        for _ in range(10):
            await client.complete("openai/fast", MESSAGES, max_tokens=64, stream=stream)
        start = time.process_time()
        for _ in range(calls):
            await client.complete("openai/fast", MESSAGES, max_tokens=64, stream=stream)
        return (time.process_time() - start) / calls * 1000
    finally:
        os.environ.pop("RLMSTUDIO_DESKTOP_HTTP", None)


async def cpu_per_raw_post(url: str, calls: int) -> float:
    import httpx
    async with httpx.AsyncClient() as client:
        body = {"model": "fast", "messages": MESSAGES, "max_tokens": 64}
        for _ in range(10):
            (await client.post(url + "/chat/completions", json=body)).json()
        start = time.process_time()
        for _ in range(calls):
            (await client.post(url + "/chat/completions", json=body)).json()
        return (time.process_time() - start) / calls * 1000


async def concurrent(url: str, n: int = 64) -> tuple[float, float]:
    lm = litellm()
    client = ModelClient(key_for=lambda m: "k", api_base_for=lambda m: url)
    msgs = [[{"role": "user", "content": f"prompt {i}"}] for i in range(n)]
    await client.complete("openai/fast", msgs[0], max_tokens=64)         # warm the client pool
    start = time.perf_counter()
    await asyncio.gather(*(lm.acompletion(model="openai/slow", api_base=url, api_key="k", messages=m,
                                          max_tokens=64, num_retries=0, max_retries=0) for m in msgs))
    raw = time.perf_counter() - start
    start = time.perf_counter()
    await asyncio.gather(*(client.complete("openai/slow", m, max_tokens=64) for m in msgs))
    ours = time.perf_counter() - start
    return raw, ours


async def main(calls: int) -> None:
    proc = subprocess.Popen([sys.executable, "-c", SERVER], cwd=ROOT, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    try:
        url = proc.stdout.readline().strip()
        t = time.perf_counter()
        litellm()
        print(f"litellm import: {time.perf_counter() - t:.2f} s")
        print(f"CPU per call, bare httpx POST:         {await cpu_per_raw_post(url, calls):6.2f} ms")
        print(f"CPU per call, litellm.acompletion:     {await cpu_per_call(url, calls, False):6.2f} ms")
        print(f"CPU per call, litellm streamed (12 chunks): "
              f"{await cpu_per_call(url, calls, True):6.2f} ms")
        for stream in (False, True):
            got = {route: await cpu_per_client_call(url, calls, stream, route) for route in ("direct", "litellm")}
            print(f"CPU per ModelClient call{' streamed' if stream else ''}: direct route {got['direct']:.2f} ms, "
                  f"litellm route {got['litellm']:.2f} ms ({got['litellm'] / got['direct']:.1f}x)")
        for _ in range(2):
            raw, ours = await concurrent(url)
            print(f"64 concurrent calls at 0.5 s: raw gather {raw:.3f} s, ModelClient {ours:.3f} s "
                  f"({ours / raw:.2f}x)")
    finally:
        proc.stdin.close()
        proc.wait(timeout=10)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=200)
    asyncio.run(main(parser.parse_args().calls))
