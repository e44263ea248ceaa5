"""A corpus too large for the REPL worker's memory is refused before the run, in words
(issue 26, item 2): through the CLI (its real stderr, exit code 2, nothing stored) and
the engine (ConfigError before any worker starts); the estimate follows CPython's string
widths, so one emoji widens `context` to 4 bytes per character."""

from __future__ import annotations

import subprocess
import sys

import pytest

from core.engine.corpus_fit import MB, CorpusTooLarge, check_fits, need_bytes, width
from core.repl.context_file import BLOCK_BYTES
from core.engine.run import ConfigError, Engine
from tests.integration.engine_helpers import KEY, Doc, code, config
from tests.integration.test_cli_ask import cli_env


def test_widths_follow_cpython():
    assert width("abc") == 1 and width("é" * 1000) == 1 and width("ā" * 1000) == 2
    assert width("a" * 10_000 + "\U0001F600") == 4


def test_one_emoji_widens_a_small_joined_context_to_four_bytes_per_character():
    ascii_docs = [Doc(f"{i}.txt", "x" * 1_000_000) for i in range(10)]
    wide_docs = ascii_docs[:9] + [Doc("9.txt", "x" * 999_999 + "\U0001F600")]
    narrow, _, _ = need_bytes(ascii_docs)
    wide, _, count = need_bytes(wide_docs)
    assert count == 1
    chars = 10 * (1_000_000 + len("0.txt") + 9)                # the joined context, headers included
    # Joined (small corpora stay one str): the string, its copy while small, a block and its decoding.
    assert narrow == 128 * MB + 2 * chars + 2 * min(BLOCK_BYTES, 10_000_000)
    assert wide == 128 * MB + 2 * 4 * chars + 5 * min(BLOCK_BYTES, 9_000_000 + 4 * 1_000_000)   # UTF-8 at most


def test_a_few_emoji_in_a_large_corpus_widen_only_their_own_documents():
    plain = "x" * 1_000_000                                      # one string, shared: widths are all that is read
    docs = [Doc(f"{i:03d}.txt", plain) for i in range(200)]
    docs[50] = docs[150] = Doc("wide.txt", "x" * 999_999 + "\U0001F600")
    peak, utf8, count = need_bytes(docs)
    assert count == 0                                          # held apart: nothing else widened
    apart = 198 * 1_000_000 + 2 * 4 * 1_000_000
    assert peak == 128 * MB + apart + 4 * 1_000_000 + 5 * BLOCK_BYTES
    assert peak < 128 * MB + 1.1 * 2 * (utf8 + 128 * MB)       # not 4 bytes for every character


def test_a_corpus_over_the_limit_is_refused_with_its_size_the_limit_and_what_to_do():
    docs = [Doc("mail.mbox", "y" * 20_000_000 + "\U0001F600")]
    with pytest.raises(CorpusTooLarge) as info:
        check_fits(docs, 150)
    text = str(info.value)
    assert "1 document, 20,000,001 characters" in text and "memory limit is 150 MB" in text
    assert "beyond U+FFFF" in text and "Settings > Caps" in text and ".rlmignore" in text
    need = int(text.split("at least ")[1].split(" MB")[0].replace(",", ""))
    check_fits(docs, need)                        # the limit it names is enough
    check_fits([Doc("a.txt", "y" * 1_000_000 + "\U0001F600")], 200)   # a smaller one fits


async def test_a_corpus_at_the_limit_the_refusal_names_really_loads_in_the_worker(server):
    docs = [Doc("mail.mbox", "y" * 20_000_000 + "\U0001F600"), Doc("notes.txt", "plain " * 100_000)]
    with pytest.raises(CorpusTooLarge) as info:
        check_fits(docs, 150)
    need = int(str(info.value).split("at least ")[1].split(" MB")[0].replace(",", ""))
    server.script("root", replies=[code("FINAL(str(len(context)))")])
    result = await Engine(config(server, memory_limit_mb=need), emit=[].append, key_for=lambda m: KEY).run(
        "q", docs)
    assert result.status == "finished", result.error
    assert int(result.answer) > 20_600_000


async def test_the_engine_refuses_before_any_worker_starts(server):
    server.script("root", replies=[code("FINAL('x')")])
    events = []
    engine = Engine(config(server, memory_limit_mb=150), emit=events.append, key_for=lambda m: KEY)
    with pytest.raises(ConfigError, match="too large for the REPL worker's memory"):
        await engine.run("q", [Doc("big.txt", "z" * 20_000_000 + "\U0001F600")])
    assert events == [] and server.requests_for("root") == []


def test_the_cli_says_so_in_words_and_stores_nothing(server, tmp_path):
    folder = tmp_path / "export"
    folder.mkdir()
    (folder / "mail.txt").write_text("m" * 20_000_000 + "\U0001F600\n", encoding="utf-8")
    env = cli_env(tmp_path)
    proc = subprocess.run([sys.executable, "-m", "app.main", "ask", "How many?", str(folder), "--root",
                           "openai/root", "--sub", "openai/sub", "--api-base", server.url,
                           "--memory-limit-mb", "150"], env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2, proc.stderr
    assert "too large for the REPL worker's memory" in proc.stderr and "Traceback" not in proc.stderr
    assert "memory limit is 150 MB" in proc.stderr and "--memory-limit-mb" in proc.stderr
    assert server.requests_for("root") == []
    listed = subprocess.run([sys.executable, "-m", "app.main", "runs", "list", "--json"], env=env,
                            capture_output=True, text=True, timeout=60)
    assert listed.returncode == 0 and listed.stdout.strip() in ("[]", "")


def test_the_window_explains_it_with_a_way_to_the_limit():
    from ui.notifier import explain_error
    docs = [Doc("mail.mbox", "y" * 20_000_000 + "\U0001F600")]
    with pytest.raises(CorpusTooLarge) as info:
        check_fits(docs, 150)
    note = explain_error(f"ConfigError: {info.value}")
    assert note.message.startswith("The documents are too large for the REPL worker's memory: 1 document")
    assert "memory limit is 150 MB" in note.message and note.action == "caps"
    assert "Settings > Caps" in note.advice and "--memory-limit-mb" not in note.advice
