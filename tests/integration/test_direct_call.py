"""The plain call beside the RLM, over real HTTP to the scripted server."""

from core.config import Price
from core.engine.direct import ask_directly, direct_fit
from core.llm.client import ModelClient
from core.llm.pricing import PriceBook
from tests.integration.engine_helpers import KEY, Doc
from tests.support.openai_server import Reply, Status

DOCS = [Doc("a.log", "09:42 ERROR payments failed\n"), Doc("notes/b.txt", "The certificate expired.")]
PRICES = PriceBook({"openai/plain": Price(1, 2)})


def client(server):
    return ModelClient(key_for=lambda m: KEY, api_base_for=lambda m: server.url, max_retries=0, timeout_s=20)


async def test_a_direct_call_sends_every_document_and_the_question_and_prices_the_reply(server):
    server.script("plain", replies=[Reply("The certificate expired.", usage=(400, 6))])
    result = await ask_directly(client(server), PRICES, "openai/plain", "Why did payments fail?", DOCS,
                                max_tokens=50, window=10_000)
    assert result.status == "answered" and result.answer == "The certificate expired."
    assert (result.input_tokens, result.output_tokens) == (400, 6)
    assert result.cost_usd == (400 * 1 + 6 * 2) / 1e6
    [request] = server.requests_for("plain")
    sent = request.messages[-1]["content"]
    assert "=== a.log ===\n09:42 ERROR payments failed" in sent and "=== notes/b.txt ===" in sent
    assert sent.rstrip().endswith("Question: Why did payments fail?")
    assert request.max_tokens == 50 and not request.stream


async def test_documents_that_do_not_fit_are_not_sent_and_the_numbers_are_given(server):
    fit = direct_fit("openai/plain", "Why?", DOCS, PRICES, max_tokens=50, window=60)
    assert fit.fits is False and fit.window == 60
    result = await ask_directly(client(server), PRICES, "openai/plain", "Why?", DOCS, max_tokens=50, window=60)
    assert result.status == "too_large" and result.answer is None and result.cost_usd == 0
    assert f"about {fit.prompt_tokens:,} tokens + 50 for the answer do not fit the 60-token window" in result.error
    assert "2 documents, 52 characters" in result.error
    assert server.history == []


async def test_an_unknown_window_is_tried_and_a_context_error_reported_as_too_large(server):
    server.script("plain", replies=[Status(400, message="This model's maximum context length is 16384 tokens")])
    result = await ask_directly(client(server), PRICES, "openai/plain", "Why?", DOCS, max_tokens=50)
    assert result.status == "too_large" and result.window is None
    assert "the context window of openai/plain is unknown (tried anyway)" in result.error
    assert len(server.requests_for("plain")) == 1
