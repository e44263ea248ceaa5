"""How the worker holds the corpus (issue 26): once. Real workers; memory read from the
worker's own /proc (VmHWM, its peak resident set).

- `context` one str: each of `documents` cuts its "text" from it when read (DocumentDict)
  and still reads as the plain dict it was;
- a large corpus whose joined string would widen (a few emoji) is a list of per-document
  strings, each at its own width; the engine decides and the worker follows;
- the file is read a block at a time into the growing string, not mapped beside it.
"""

from __future__ import annotations

import json

from core.repl import context_file

from .conftest import PEAK_KB

MB = 1024 * 1024

RSS_KB = ("def rss_kb():\n"
          "    for line in open('/proc/self/status'):\n"
          "        if line.startswith('VmRSS:'):\n"
          "            return int(line.split()[1])\n")


def _docs(count: int, chars: int, wide_at: tuple[int, ...] = ()) -> list[dict]:
    docs = []
    for i in range(count):
        body = (f"doc {i:04d} " + "plain words " * (chars // 12 + 1))[:chars]
        if i in wide_at:
            body = body[:-1] + "\U0001F600"
        docs.append({"path": f"d{i:04d}.txt", "text": body})
    return docs


async def _run(repl, code: str):
    result = await repl.execute(code, timeout_s=60)
    assert result.error is None, result.error
    return result.stdout


async def test_documents_read_as_plain_dicts_without_holding_their_text(repl):
    out = await _run(repl, (
        "import copy, json, pickle\n"
        "d = documents[1]\n"
        "plain = {'path': d['path'], 'text': context[d['offset']:d['offset'] + d['chars']], "
        "'chars': d['chars'], 'offset': d['offset']}\n"
        "checks = {\n"
        " 'stored': dict.__contains__(d, 'text'),\n"
        " 'text': d['text'] == plain['text'] == d.get('text'),\n"
        " 'isdict': isinstance(d, dict),\n"
        " 'eq': d == plain and plain == d and not (d != plain),\n"
        " 'json': json.dumps(d) == json.dumps(plain),\n"
        " 'dict': dict(d) == plain and {**d} == plain and d.copy() == plain,\n"
        " 'copies': copy.copy(d) == plain and copy.deepcopy(d) == plain,\n"
        " 'pickle': pickle.loads(pickle.dumps(d)) == plain,\n"
        " 'keys': list(d) == list(plain) and list(d.keys()) == list(plain),\n"
        " 'items': d.items() == list(plain.items()) and d.values() == list(plain.values()),\n"
        " 'len': len(d) == 4 and 'text' in d and 'nope' not in d,\n"
        " 'repr': repr(d) == repr(plain) and str(d) == str(plain),\n"
        " 'or': (d | {'x': 1}) == {**plain, 'x': 1},\n"
        " 'format': '{text}'.format(**d) == plain['text'],\n"
        "}\n"
        "d['text'] = 'replaced'\n"
        "checks['assigned'] = d['text'] == 'replaced' and documents[1]['text'] == 'replaced'\n"
        "print(json.dumps(checks))"))
    checks = json.loads(out)
    assert checks.pop("stored") is False                 # the text is not a second copy
    assert all(checks.values()), checks


async def test_a_joined_context_costs_the_corpus_once(make_repl):
    repl = await make_repl(docs=None)
    before = int(await _run(repl, RSS_KB + "print(rss_kb())"))
    docs = _docs(60, 1_000_000)                          # 60 MB of ASCII
    await repl.load_context(docs)
    out = await _run(repl, PEAK_KB + "print(peak_kb(), type(context).__name__, len(documents),"
                                     " documents[7]['text'][:3])")
    peak, kind, count, head = out.split()
    assert (kind, count, head) == ("str", "60", "doc")
    grew = (int(peak) - before) * 1024
    # context once, one block read and decoded, the string's early copies: not file + context +
    # documents (3x before).
    assert grew < 1.5 * 60 * MB, f"the worker grew by {grew / MB:.0f} MB for 60 MB of text"


async def test_one_big_document_costs_its_text_once(make_repl):
    # One document is the whole of `context`: cutting its "text" once while loading (its
    # length) held the corpus twice at the load's peak.
    repl = await make_repl(docs=None)
    before = int(await _run(repl, RSS_KB + "print(rss_kb())"))
    await repl.load_context([{"path": "big.log", "text": "a line of the log\n" * (60 * MB // 18)}])
    out = await _run(repl, PEAK_KB + "found = (documents[0]['offset'] + documents[0]['chars'] + 2 == len(context),"
                                     " where(len(context) // 2), where(18 * 1000, 'big.log'))\n"
                                     "print(*found, peak_kb(), sep='|')")
    same, middle, thousand, peak = out.strip().split("|")
    assert (same, thousand) == ("True", "big.log:line 1001")
    assert middle == f"big.log:line {60 * MB // 18 // 2 + 1}"    # where() cuts no copy either
    grew = (int(peak) - before) * 1024
    assert grew < 1.4 * 60 * MB, f"the worker grew by {grew / MB:.0f} MB for 60 MB of text"   # not twice


async def test_a_large_corpus_with_a_few_emoji_is_held_per_document(make_repl, monkeypatch):
    monkeypatch.setattr(context_file, "JOIN_SLACK_BYTES", 0)      # as a corpus of gigabytes would
    repl = await make_repl(docs=None)
    before = int(await _run(repl, RSS_KB + "print(rss_kb())"))
    docs = _docs(20, 1_000_000, wide_at=(13,))
    await repl.load_context(docs)
    out = await _run(repl, PEAK_KB + (
        "import json, re, sys\n"
        "print(json.dumps({'peak': peak_kb(), 'list': isinstance(context, list), 'n': len(context),\n"
        "  'same': all(d['text'] is c for d, c in zip(documents, context)),\n"
        "  'narrow': sys.getsizeof(context[0]) < 1_100_000, 'wide': sys.getsizeof(context[13]) > 3_900_000,\n"
        "  'emoji': context[13][-1] == '\\U0001F600', 'hits': sum(len(re.findall('doc 00', c)) for c in context),\n"
        "  'where': where(4, documents[13]['path'])}))"))
    got = json.loads(out)
    assert got.pop("where") == "d0013.txt:line 1"
    grew = (got.pop("peak") - before) * 1024
    assert got == {"list": True, "n": 20, "same": True, "narrow": True, "wide": True, "emoji": True,
                   "hits": 20}
    held_apart = 19 * 1_000_000 + 4 * 1_000_000          # joined it would be 4 x 20 MB, twice while read
    assert grew < 1.5 * held_apart, f"the worker grew by {grew / MB:.0f} MB"
    refused = await repl.execute("where(4)", timeout_s=10)
    assert "`context` is a list here" in (refused.error or "")


async def test_small_corpora_stay_one_string_whatever_their_characters(make_repl):
    repl = await make_repl(docs=_docs(3, 1000, wide_at=(1,)))
    out = await _run(repl, "print(type(context).__name__, context.count('\\U0001F600'), "
                           "documents[1]['text'][-1] == '\\U0001F600')")
    assert out.split() == ["str", "1", "True"]


def test_the_form_the_engine_picks():
    narrow, wide = 1_000_000, 1_000_000
    assert context_file.context_form([(1, narrow)] * 500 + [(4, wide)] * 2) == "list"
    assert context_file.context_form([(1, narrow)] * 5 + [(4, wide)]) == "str"        # small: joined
    assert context_file.context_form([(2, narrow)] * 500) == "str"                    # all wide alike
    assert context_file.context_form([(1, narrow)] * 500) == "str"
    assert [context_file.text_width(t) for t in ("ab", "é", "é" * 9, "ā", "x" * 99 + "\U0001F600")] == \
        [1, 1, 1, 2, 4]
