"""Fixtures for the REPL tests: real worker processes, a recording sub-call handler."""

from __future__ import annotations

import asyncio
import inspect
from typing import Any, Callable

import pytest

from core.repl.client import ReplClient, SubCallRequest, default_worker_command

WORKER = default_worker_command()


class SubCalls:
    """An on_sub_call handler that records what it was asked.

    `reply(prompt) -> dict` makes one result slot (default: echo); `delay_s`
    sleeps per prompt. Prompts of one request are served concurrently, as the
    engine does."""

    def __init__(self, reply: Callable[[str], Any] | None = None, delay_s: float = 0.0) -> None:
        self.reply = reply or (lambda p: {"ok": f"echo:{p}"})
        self.delay_s = delay_s
        self.history: list[SubCallRequest] = []
        self.in_flight = 0
        self.max_in_flight = 0

    async def _one(self, prompt: str) -> dict:
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            if self.delay_s:
                await asyncio.sleep(self.delay_s)
            slot = self.reply(prompt)
            if inspect.isawaitable(slot):
                slot = await slot
            return slot
        finally:
            self.in_flight -= 1

    async def __call__(self, request: SubCallRequest) -> list[dict]:
        self.history.append(request)
        return list(await asyncio.gather(*(self._one(p) for p in request.prompts)))


DOCS = [{"path": "notes/a.txt", "text": "alpha line\nsecond line"},
        {"path": "b.md", "text": "# Bravo\nünïcödé ☃ text"}]


@pytest.fixture
def sub_calls() -> SubCalls:
    return SubCalls()


@pytest.fixture
async def make_repl(sub_calls: SubCalls):
    """make_repl(handler=None, docs=DOCS, **ReplClient kwargs) -> started client with context."""
    clients: list[ReplClient] = []

    async def make(handler: Any = None, docs: list | None = DOCS, **kwargs: Any) -> ReplClient:
        client = ReplClient(on_sub_call=handler or sub_calls, **kwargs)
        clients.append(client)
        await client.start()
        if docs is not None:
            await client.load_context(docs)
        return client

    yield make
    for client in clients:
        await client.close(grace_s=1.0)


@pytest.fixture
async def repl(make_repl):
    return await make_repl()


# Model code that defines peak_kb(): the worker's peak RSS (VmHWM). Not
# ru_maxrss, which on Linux also counts the parent's RSS at fork time.
PEAK_KB = ("def peak_kb():\n"
           "    for line in open('/proc/self/status'):\n"
           "        if line.startswith('VmHWM:'):\n"
           "            return int(line.split()[1])\n")


async def wait_dead(pid: int, timeout_s: float = 10.0) -> None:
    """Until the process is gone or a zombie (no reaping needed)."""
    deadline = asyncio.get_running_loop().time() + timeout_s
    while asyncio.get_running_loop().time() < deadline:
        try:
            with open(f"/proc/{pid}/stat") as f:
                if f.read().rsplit(")", 1)[1].split()[0] in ("Z", "X"):
                    return
        except (FileNotFoundError, ProcessLookupError):   # reaped meanwhile
            return
        await asyncio.sleep(0.02)
    raise AssertionError(f"process {pid} still alive after {timeout_s} s")
