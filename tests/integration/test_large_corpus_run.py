"""Runs over large corpora (issue 26), a real engine, worker and scripted server:

- a corpus whose joined `context` would widen (a few emoji in a large corpus) is a list of
  per-document strings, and the root's first turn says so and how to search it;
- the root's first call does not wait for the context to be written and loaded;
- the Auto mode's size estimate does not join the corpus.
"""

from __future__ import annotations

import threading
import tracemalloc

from core.engine import mode
from core.engine.direct import direct_messages
from core.repl import client as repl_client
from core.repl import context_file
from core.token_count import prompt_tokens
from tests.integration.engine_helpers import Doc, code, root_prompts, run

COUNT = code("import re\nn = sum(len(re.findall('PLANTED', c)) for c in "
             "([context] if isinstance(context, str) else context))\nprint(n)")


def _corpus(files: int, wide_at: tuple[int, ...] = ()) -> list[Doc]:
    docs = []
    for i in range(files):
        text = f"file {i}\n" + ("word " * 20_000) + ("PLANTED\n" if i % 10 == 0 else "")
        if i in wide_at:
            text += "a smile \U0001F600\n"
        docs.append(Doc(f"f{i:03d}.txt", text))
    return docs


async def test_a_wide_large_corpus_is_a_list_and_the_root_is_told(server, monkeypatch):
    monkeypatch.setattr(context_file, "JOIN_SLACK_BYTES", 0)     # as for a corpus of gigabytes
    server.script("root", replies=[COUNT, code("print(type(context).__name__, len(context))\nFINAL(str(n))")])
    result, events = await run(server, docs=_corpus(40, wide_at=(7, 23)))
    assert result.status == "finished", result.error
    assert result.answer == "4"
    first = root_prompts(server)[0]
    assert "Here `context` is a list of 40 str, one per document" in first
    outputs = [e.stdout for e in events if e.type == "CellExecuted"]
    assert outputs[1].split() == ["list", "40"]


async def test_an_ascii_corpus_stays_one_string_and_nothing_is_said(server, monkeypatch):
    monkeypatch.setattr(context_file, "JOIN_SLACK_BYTES", 0)
    server.script("root", replies=[COUNT, code("print(type(context).__name__)\nFINAL(str(n))")])
    result, events = await run(server, docs=_corpus(40))
    assert result.status == "finished" and result.answer == "4"
    assert "is a list of" not in root_prompts(server)[0]
    assert [e.stdout for e in events if e.type == "CellExecuted"][1].strip() == "str"


async def test_the_first_root_call_does_not_wait_for_the_context(server, monkeypatch):
    asked = threading.Event()
    seen = []

    def root(request):
        asked.set()
        return COUNT if len(seen) == 0 and not seen.append(1) else code("FINAL(str(n))")
    server.script("root", fn=root)
    original = repl_client.write_context

    def write_when_asked(docs, directory):        # the context is written only once the root was asked
        seen_in_time = asked.wait(30)
        write_when_asked.in_time = seen_in_time
        return original(docs, directory)
    monkeypatch.setattr(repl_client, "write_context", write_when_asked)
    result, _ = await run(server, docs=_corpus(20))
    assert write_when_asked.in_time is True       # before: the root was asked only after the load
    assert result.status == "finished" and result.answer == "2"


def test_the_auto_estimate_does_not_join_the_corpus():
    docs = [Doc(f"{i}.txt", "x" * 2_000_000 + "\U0001F600") for i in range(10)]   # 20 M chars, 4 bytes each
    tracemalloc.start()
    try:
        tokens = mode.plain_call_tokens("How many?", docs)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert abs(tokens - prompt_tokens(direct_messages("How many?", docs))) <= 0.01 * tokens  # as if joined
    assert peak < 1_000_000, f"estimating took {peak:,} bytes"   # joined: 80 MB


async def test_a_large_load_is_told_when_it_starts_and_ends(server, monkeypatch):
    from core.engine import loading
    monkeypatch.setattr(loading, "NOTICE_CHARS", 1_000_000)
    server.script("root", replies=[COUNT, code("FINAL(str(n))")])
    result, events = await run(server, docs=_corpus(20))
    assert result.status == "finished" and result.answer == "2"
    kinds = [(e.type, getattr(e, "message", "")) for e in events
             if e.type in ("Notice", "RootTurnStarted", "CellExecuted")]
    told = [i for i, (t, m) in enumerate(kinds) if t == "Notice" and "into the REPL" in m]
    loaded = [i for i, (t, m) in enumerate(kinds) if t == "Notice" and m.startswith("The documents are loaded")]
    first_cell = next(i for i, (t, _) in enumerate(kinds) if t == "CellExecuted")
    assert len(told) == 1 and "Loading 20 documents (2,000," in kinds[told[0]][1]
    assert len(loaded) == 1 and told[0] < loaded[0] < first_cell


async def test_a_small_load_says_nothing(server):
    server.script("root", replies=[COUNT, code("FINAL(str(n))")])
    _, events = await run(server, docs=_corpus(3))
    assert not [e for e in events if e.type == "Notice" and "REPL" in e.message and "load" in e.message.lower()]
