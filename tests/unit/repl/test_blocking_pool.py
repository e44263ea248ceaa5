"""The engine's blocking work (core/blocking.py) does not queue behind the loop's default
executor, which litellm's call setups use and which the window keeps at one thread
(app/engine_thread.py): with that thread held, a context still loads into a real worker,
and a large prompt's size is still checked."""

import asyncio
import concurrent.futures
import threading
from types import SimpleNamespace

from core.config import RunConfig
from core.engine.admission import _too_large
from core.llm.pricing import PriceBook
from tests.unit.repl.conftest import DOCS


async def _with_default_executor_held(body):
    """Run `body()` while the loop's one default-executor thread is busy (as with a burst of
    litellm call setups); the thread is let go afterwards."""
    loop = asyncio.get_running_loop()
    loop.set_default_executor(concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="default"))
    held = threading.Event()
    busy = loop.run_in_executor(None, held.wait, 60)
    try:
        return await asyncio.wait_for(body(), timeout=20)
    finally:
        held.set()
        await busy


async def test_a_context_loads_while_the_default_executor_is_busy(make_repl):
    repl = await make_repl(docs=None)
    await _with_default_executor_held(lambda: repl.load_context(DOCS))
    result = await repl.execute("print(documents[0]['text'])", timeout_s=20)
    assert result.stdout.strip() == DOCS[0]["text"]


async def test_a_large_prompt_is_measured_while_the_default_executor_is_busy():
    ctx = SimpleNamespace(prices=PriceBook(RunConfig(root_model="openai/r", sub_model="openai/s").prices))
    prompt = "word " * 400_000                       # 2 MB: counted off the loop (COUNT_IN_THREAD_CHARS)
    why = await _with_default_executor_held(lambda: _too_large(ctx, "openai/s", prompt, 300_000, 1000))
    assert why is not None and "prompt too large for openai/s" in why
