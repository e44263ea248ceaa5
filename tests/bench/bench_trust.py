"""Bench: the trust features (prints figures; asserts nothing).

    .venv/bin/python -m tests.bench.bench_trust

- coverage fold over a 5,000-event run (cells printing slices of a 1 MB context,
  sub-calls carrying 20,000-character chunks), and over a 20 MB context;
- verify of a stored 8-turn run with 40 sub-calls (scripted server, real worker);
- the results table of that run.
"""

from __future__ import annotations

import asyncio
import os
import random
import tempfile
import time

os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"


def _documents(total_chars: int) -> list:
    from tests.support.trust_runs import doc
    rnd = random.Random(7)
    words = "revenue cost growth risk market north south quarter report contract supplier delay".split()
    docs, size, n = [], 0, 0
    while size < total_chars:
        lines = [" ".join(rnd.choice(words) for _ in range(rnd.randint(4, 16))) for _ in range(2000)]
        text = "\n".join(lines) + "\n"
        docs.append(doc(f"doc{n:03d}.txt", text))
        size += len(text)
        n += 1
    return docs


def _events(docs: list, n_events: int) -> list:
    from core import events as ev
    from core.ingest.citations import context_offsets
    context = "".join(f"=== {d.path} ===\n{d.text}\n\n" for d in docs)
    rnd = random.Random(3)
    out = []
    for i in range(n_events):
        kind = i % 10
        if kind == 0:
            start = rnd.randrange(0, len(context) - 3000)
            out.append(ev.CellExecuted(run_id="b", seq=i, call_id=f"R.t{i}.c1", parent_id=f"R.t{i}", index=1,
                                       code="print(...)", stdout="", stderr="", error=None,
                                       is_syntax_error=False, duration_ms=1,
                                       output_for_model="[cell output]\n" + context[start:start + 2500]))
        elif kind == 1:
            start = rnd.randrange(0, len(context) - 20_000)
            out.append(ev.SubCallStarted(run_id="b", seq=i, call_id=f"R.s{i}", parent_id="R.t1.c1", kind="llm",
                                         model="m", prompt="Summarise:\n" + context[start:start + 20_000], depth=0))
        else:
            out.append(ev.RootTokens(run_id="b", seq=i, call_id="R.t1", parent_id="R", delta="tok "))
    assert context_offsets(docs)
    return out


def bench_coverage() -> None:
    from core.trust.coverage import Coverage
    for total in (1_000_000, 20_000_000):
        docs = _documents(total)
        events = _events(docs, 5000)
        t = time.perf_counter()
        cov = Coverage(docs)
        for e in events:
            cov.apply(e)
        report = cov.report()
        took = time.perf_counter() - t
        print(f"coverage fold, 5,000 events, {total / 1e6:4.0f} MB context: {took * 1000:8.1f} ms "
              f"({report.percent:.1f}% read, {len(report.documents)} documents)")


async def bench_verify() -> None:
    from app.runner import QuestionRun
    from core.store import RunStore
    from core.trust.results import results_of_run
    from core.trust.verify import verify_run
    from tests.support.openai_server import ScriptedOpenAI
    from tests.support.trust_runs import KEY, code, config
    docs = _documents(200_000)
    with tempfile.TemporaryDirectory() as home, ScriptedOpenAI() as server:
        os.environ["RLMSTUDIO_DESKTOP_HOME"] = home
        server.start()
        turns = [code(f"chunks = [context[i:i+5000] for i in range({k * 25_000}, {(k + 1) * 25_000}, 5000)]\n"
                      "out = llm_query_batched(['Summarise: ' + c for c in chunks])\nprint(len(out), out[0][:40])")
                 for k in range(8)]
        server.script("root", replies=turns + ["FINAL(done)"])
        server.script("sub", fn=lambda r: "summary of " + r.prompt[11:40])
        with RunStore.open() as store:
            outcome = await QuestionRun("Summarise", documents=docs, config=config(server, max_iterations=10),
                                        store=store, key_for=lambda m: KEY).execute()
            t = time.perf_counter()
            report = await verify_run(store, outcome.run_id)
            took = time.perf_counter() - t
            print(f"verify: {len(report.cells)} cells, {report.sub_calls_served} sub-calls from the record, "
                  f"200 kB context: {took * 1000:8.1f} ms (matches: {report.matches}); "
                  f"the run itself took {outcome.totals['wall_ms']} ms")
            t = time.perf_counter()
            rows = results_of_run(store, outcome.run_id)
            print(f"results table: {len(rows)} rows in {(time.perf_counter() - t) * 1000:8.1f} ms")


def main() -> None:
    from tests.bench.machine import machine_info
    print(machine_info())
    bench_coverage()
    asyncio.run(bench_verify())


if __name__ == "__main__":
    main()
