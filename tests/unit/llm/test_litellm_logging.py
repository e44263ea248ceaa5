"""litellm's per-call logging work is skipped while no callback is registered, and runs
unchanged when one is (core/llm/litellm_import.py). Real litellm, real HTTP, the scripted
server on 127.0.0.1."""

import asyncio
import time

from core.llm.litellm_import import CALLBACK_LISTS, litellm

MESSAGES = [{"role": "user", "content": "Name a prime number."}]


async def plain(server, model="gpt-4o-mini"):
    return await litellm().acompletion(model=f"openai/{model}", api_base=server.url, api_key="sk-test",
                                       messages=MESSAGES, max_tokens=16, num_retries=0, max_retries=0)


async def streamed(server, model="gpt-4o-mini"):
    stream = await litellm().acompletion(model=f"openai/{model}", api_base=server.url, api_key="sk-test",
                                         messages=MESSAGES, max_tokens=16, num_retries=0, max_retries=0,
                                         stream=True, stream_options={"include_usage": True})
    text = []
    async for chunk in stream:
        if chunk.choices and chunk.choices[0].delta.content:
            text.append(chunk.choices[0].delta.content)
    return "".join(text)


async def test_without_callbacks_calls_work_and_litellm_prices_nothing(openai_server):
    openai_server.script("gpt-4o-mini", replies=["Seven.", "Eleven."])
    lm = litellm()
    assert not any([lm.callbacks, lm.success_callback, lm._async_success_callback])
    response = await plain(openai_server)
    assert response.choices[0].message.content == "Seven."
    assert response._hidden_params.get("response_cost") is None      # litellm's own pricing skipped
    assert await streamed(openai_server) == "Eleven."


async def test_with_a_callback_registered_litellm_does_its_own_work_again(openai_server):
    openai_server.script("gpt-4o-mini", replies=["Seven.", "Eleven.", "Thirteen."])
    lm = litellm()
    from litellm.integrations.custom_logger import CustomLogger
    recorder = CustomLogger()
    lm.callbacks.append(recorder)
    try:
        response = await plain(openai_server)
        assert response._hidden_params.get("response_cost") > 0         # priced by litellm again
        assert await streamed(openai_server) == "Eleven."
    finally:            # litellm copies a callback into its other lists on first use
        for name in CALLBACK_LISTS:
            while recorder in (getattr(lm, name, None) or []):
                getattr(lm, name).remove(recorder)
    response = await plain(openai_server)
    assert response._hidden_params.get("response_cost") is None         # and skipped once it is gone
