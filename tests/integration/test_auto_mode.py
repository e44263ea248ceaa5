"""Auto: one plain call when the documents take at most a quarter of the root's window, the
RLM otherwise; chosen, said and recorded. Real engine, real worker, litellm-free direct route."""

import re

import pytest

from app.runner import QuestionRun
from core.config import Price
from core.store import RunStore
from tests.integration.engine_helpers import KEY, ROOT, Doc, code, of_type, run

SMALL = [Doc("orders.txt", "order 1: 3 apples\norder 2: 4 pears\n")]
WINDOW = 4_000                                   # tokens: the scripted root's window in these tests
LARGE = [Doc("big.log", "line of a long log\n" * 2_000)]      # 38,000 characters: ~9,500 tokens


def notices(events):
    return [n.message for n in of_type(events, "Notice")]


async def test_auto_sends_a_small_document_as_one_plain_call(server):
    server.script("root", replies=["There are 3 apples and 4 pears."])
    result, events = await run(server, "How many fruits of each kind?", SMALL, mode="auto",
                               context_windows={ROOT: WINDOW}, root_max_tokens=500)
    assert result.status == "finished" and result.answer == "There are 3 apples and 4 pears."
    [request] = server.requests_for("root")
    assert "order 2: 4 pears" in request.messages[-1]["content"] and request.stream     # the documents themselves
    assert not of_type(events, "CellExecuted") and result.totals["mode"] == "direct"
    [said] = [m for m in notices(events) if m.startswith("One plain call: ")]
    assert re.fullmatch(rf"One plain call: the documents \(\d+ tokens\) fit easily in the 4k-token window of {ROOT}\.",
                        said), said
    assert result.totals["mode_reason"] == said[:1].lower() + said[1:-1]
    assert of_type(events, "RootReplied")[0].text == result.answer
    assert of_type(events, "RootTokens")                                            # streamed as a turn


async def test_auto_runs_the_rlm_for_a_document_larger_than_the_window(server):
    server.script("root", replies=[code("print(len(context))"), code("FINAL('a long log')")])
    result, events = await run(server, "What is this?", LARGE, mode="auto", context_windows={ROOT: WINDOW})
    assert result.answer == "a long log" and result.totals["mode"] == "rlm"
    assert len(of_type(events, "CellExecuted")) == 2
    assert len(server.requests_for("root")[0].messages[-1]["content"]) < 3_000    # metadata, not the log
    from core.engine.direct import direct_messages
    from core.engine.mode import short
    from core.token_count import prompt_tokens
    size = short(prompt_tokens(direct_messages("What is this?", LARGE)))     # the one estimate (core/token_count.py)
    assert f"The RLM: the documents ({size} tokens) do not fit in the 4k-token window of openai/root." \
        in notices(events), notices(events)


async def test_auto_runs_the_rlm_when_the_window_is_unknown_and_says_so(server):
    server.script("root", replies=[code("FINAL('ok')")])
    result, events = await run(server, "What is this?", SMALL, mode="auto")
    assert result.totals["mode"] == "rlm" and len(of_type(events, "CellExecuted")) == 1
    assert ("The RLM: the context window of openai/root is unknown (its server does not report it; give the "
            "model a context window in Settings and Auto can choose).") in notices(events)


async def test_a_plain_call_is_costed_and_recorded_as_any_run(server, tmp_path):
    server.script("root", replies=["3 apples."])
    server.price("root", 1.0, 2.0)
    store = RunStore.open()
    try:
        from tests.integration.engine_helpers import config
        cfg = config(server, mode="direct", prices={ROOT: Price(1.0, 2.0), "openai/sub": Price(1.0, 2.0)},
                     max_cost_usd=1.0)
        result = await QuestionRun("How many apples?", documents=SMALL, config=cfg, key_for=lambda m: KEY,
                                   store=store).execute()
        assert result.status == "finished" and result.answer == "3 apples."
        assert result.totals["cost_usd"] == pytest.approx(server.billed_usd()) and result.totals["cost_usd"] > 0
        run_row = store.get_run(result.run_id)
        assert run_row["answer"] == "3 apples." and run_row["totals"]["mode"] == "direct"
        calls = [c for c in store.calls(result.run_id) if c["kind"] == "root"]
        assert len(calls) == 1 and calls[0]["cost_usd"] == pytest.approx(result.totals["cost_usd"])
        assert "unknown" in run_row["totals"]["mode_reason"]           # forced, with the window unknown
        from core.exports import export_html, export_md
        export_md.write(store, result.run_id, tmp_path / "r.md")
        export_html.write(store, result.run_id, tmp_path / "r.html")
        assert "3 apples." in (tmp_path / "r.md").read_text() and "3 apples." in (tmp_path / "r.html").read_text()
    finally:
        store.close()


async def test_auto_counts_digits_high_so_a_table_of_numbers_goes_to_the_rlm(server):
    # 3,600 characters (900 tokens at characters / 4, under a quarter of the window) but 3,000
    # digits: Qwen's tokenizer reads each as a token, so it is over a quarter.
    table = [Doc("numbers.csv", "".join(f"{n:05d}\n" for n in range(600)))]
    server.script("root", replies=[code("print(len(documents[0]['text'].splitlines()))"), code("FINAL('600 rows')")])
    result, events = await run(server, "How many rows?", table, mode="auto", context_windows={ROOT: WINDOW})
    assert result.totals["mode"] == "rlm" and result.answer == "600 rows"
    assert any(m.startswith("The RLM: the documents (3.") for m in notices(events)), notices(events)


# ---- the window as the model's own server reports it (core/llm/server_window.py) -------------

@pytest.fixture(autouse=True)
def _fresh_window_cache():
    from core.llm import server_window
    server_window.forget()
    yield
    server_window.forget()


@pytest.mark.parametrize("kind, source", [("llama.cpp", "llama.cpp"), ("vllm", "vLLM"), ("ollama", "Ollama"),
                                          ("lmstudio", "LM Studio")])
async def test_auto_reads_the_window_from_the_server_and_says_which_and_why(server, kind, source):
    server.report_window("root", 33_000, kind)
    server.script("root", replies=["3 apples and 4 pears."])
    result, events = await run(server, "How many fruits of each kind?", SMALL, mode="auto", root_max_tokens=500)
    assert result.totals["mode"] == "direct" and result.answer == "3 apples and 4 pears."
    [said] = [m for m in notices(events) if m.startswith("One plain call")]
    assert re.fullmatch(rf"One plain call: the documents \(\d+ tokens\) fit easily in the 33k-token window of "
                        rf"openai/root, as {source} reports it\.", said), said
    assert result.totals["mode_reason"].startswith("one plain call: the documents (")


async def test_a_reported_window_too_small_sends_the_documents_to_the_rlm(server):
    server.report_window("root", 2_000, "llama.cpp")
    server.script("root", replies=[code("print(len(context))"), code("FINAL('a long log')")])
    result, events = await run(server, "What is this?", LARGE, mode="auto")
    assert result.totals["mode"] == "rlm"
    assert any(m.startswith("The RLM: the documents (") and "do not fit in the 2k-token window of openai/root, "
               "as llama.cpp reports it." in m for m in notices(events))


async def test_the_window_is_asked_once_per_endpoint_and_model(server):
    server.report_window("root", 33_000, "llama.cpp")
    server.script("root", replies=["one", "two"])
    await run(server, "How many fruits?", SMALL, mode="auto", root_max_tokens=500)
    asked = len(server.window_asks)
    assert asked >= 1
    await run(server, "How many fruits?", SMALL, mode="auto", root_max_tokens=500)
    assert len(server.window_asks) == asked                  # cached: not asked again
    result, _ = await run(server, "How many fruits?", SMALL, mode="rlm")
    assert len(server.window_asks) == asked                  # mode rlm never asks


async def test_a_server_that_does_not_answer_in_time_costs_about_a_second_and_auto_runs_the_rlm(server):
    import time
    server.report_window("root", 33_000, "llama.cpp")
    server.window_delay_s = 5.0
    server.script("root", replies=[code("FINAL('ok')")])
    started = time.monotonic()
    result, events = await run(server, "How many fruits?", SMALL, mode="auto")
    assert result.totals["mode"] == "rlm" and "is unknown" in result.totals["mode_reason"]
    assert time.monotonic() - started < 5.0                 # the window routes were not waited for


async def test_a_stop_while_the_server_is_asked_for_the_window_ends_the_run_as_cancelled(server):
    import asyncio
    from core.engine.run import Engine
    from tests.integration.engine_helpers import config
    server.report_window("root", 33_000, "llama.cpp")
    server.window_delay_s = 3.0
    events = []
    engine = Engine(config(server, mode="auto"), emit=events.append, key_for=lambda m: KEY)
    task = asyncio.ensure_future(engine.run("How many fruits?", SMALL))
    for _ in range(200):
        if server.window_asks:
            break
        await asyncio.sleep(0.01)
    assert server.window_asks                                # the window is being asked for
    engine.cancel()
    result = await asyncio.wait_for(task, timeout=2.0)       # not after the 3 s the server takes
    assert result.status == "cancelled"
    assert not server.requests_for("root")                   # no model call was made
    assert of_type(events, "RunFinished") or of_type(events, "RunFailed")
