"""A read-back text read by offsets (core/ingest/text_window.py) when its characters are not all
ASCII: every read agrees with the same read of the whole str; the sparse index is built once,
kept beside the sidecar, and rebuilt when it does not match; coverage and the sub-call sources
over read-back documents are found without joining their texts."""

from __future__ import annotations

import os
import random

from core import events as ev
from core.ingest import IngestOptions, ingest_sync
from core.ingest.address import locate_in
from core.ingest.text_window import STEP, TextWindow, text_window
from core.trust.coverage import Coverage
from core.trust.joined import JoinedText
from core.trust.results import SourceFinder
from tests.support.big_files import log_line, write_log, write_mbox
from tests.unit.trust.events import Run


def _read(tmp_path, *names):
    options = IngestOptions(workers=1, stream_min_bytes=100_000, spool_dir=str(tmp_path / "texts"))
    docs = ingest_sync([tmp_path / n for n in names], options).documents
    held = [type(d)(**{**{f: getattr(d, f) for f in d.__dataclass_fields__}, "text": d.text}) for d in docs]
    assert not any(d.held for d in docs) and all(d.held for d in held)
    return docs, held


def test_every_read_of_a_non_ascii_text_agrees_with_the_whole_str(tmp_path, monkeypatch):
    monkeypatch.setenv("RLMSTUDIO_DESKTOP_HOME", str(tmp_path / "home"))
    write_log(tmp_path / "server.log", 1_500_000, intl=True)
    write_mbox(tmp_path / "export.mbox", 900_000, body=3_000, intl=True)
    docs, held = _read(tmp_path, "server.log", "export.mbox")
    rng = random.Random(7)
    for doc, whole in zip(docs, held):
        window, text = text_window(doc), whole.text
        assert isinstance(window, TextWindow) and window.marks is not None, doc.path   # bytes != characters
        assert len(window) == len(text) and window.size > len(text)
        for _ in range(200):
            a = rng.randrange(len(text))
            b = min(len(text), a + rng.randrange(3 * STEP))
            assert window[a:b] == text[a:b] and window[a] == text[a]
            needle = text[max(a, b - 12):b] or "x"
            assert window.find(needle, a) == text.find(needle, a)
            assert window.count("\n", a, b) == text.count("\n", a, b)
        for address in ("line 1", "line 7", "line 9000", "line 99999999", "message 3, line 7", "message 40"):
            assert locate_in(window, doc.spans, address) == locate_in(text, doc.spans, address), address
    log_doc = docs[0]
    start, end = locate_in(text_window(log_doc), (), "line 9000")
    assert held[0].text[start:end] == log_line(8999, intl=True)


def test_the_index_is_kept_beside_the_sidecar_and_rebuilt_when_it_does_not_match(tmp_path, monkeypatch):
    monkeypatch.setenv("RLMSTUDIO_DESKTOP_HOME", str(tmp_path / "home"))
    write_mbox(tmp_path / "export.mbox", 600_000, body=3_000, intl=True)
    (doc,), (whole,) = _read(tmp_path, "export.mbox")
    index = tmp_path / "texts" / f"{doc.text_sha256}.idx"
    assert not index.exists()                           # built on first need, not while reading
    first = text_window(doc)
    assert index.exists() and index.stat().st_size == 8 * (4 + len(first.marks))
    os.utime(index, ns=(1, 1))
    again = text_window(doc)
    assert index.stat().st_mtime_ns == 1 and list(again.marks) == list(first.marks)   # read, not rebuilt
    index.write_bytes(b"\0" * 64)                       # not an index of this text: built again
    rebuilt = text_window(doc)
    assert list(rebuilt.marks) == list(first.marks) and index.stat().st_size > 64
    assert rebuilt[len(whole.text) - 50:] == whole.text[-50:]


def test_a_changed_own_file_gives_no_window(tmp_path, monkeypatch):
    monkeypatch.setenv("RLMSTUDIO_DESKTOP_HOME", str(tmp_path / "home"))
    write_log(tmp_path / "server.log", 400_000, intl=True)
    (doc,), _ = _read(tmp_path, "server.log")
    assert text_window(doc) is not None and doc.text_sha256 == doc.sha256      # its own file
    st = os.stat(tmp_path / "server.log")
    os.utime(tmp_path / "server.log", ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    assert text_window(doc) is None


def test_coverage_and_sources_over_read_back_texts(tmp_path, monkeypatch):
    monkeypatch.setenv("RLMSTUDIO_DESKTOP_HOME", str(tmp_path / "home"))
    write_log(tmp_path / "server.log", 1_200_000, intl=True)
    write_mbox(tmp_path / "export.mbox", 600_000, body=3_000, intl=True)
    docs, held = _read(tmp_path, "server.log", "export.mbox")
    log_text, mail_text = held[0].text, held[1].text
    printed = "\n".join(log_line(i, intl=True) for i in range(5000, 5020))
    message = mail_text[mail_text.index("--- message 30 ---"):][:900]
    run = Run(docs=held)
    run.turn(1, "x")
    run.cell(1, 1, "print(context[a:b])", "[cell output]\n" + printed + "\nfound 20",
             subs=[("Summarise: " + message, "fine")])
    reports, sources = [], []
    for documents in (held, docs):
        cov = Coverage.of_events(documents, run.events)
        reports.append(cov.report())
        prompt = next(e.prompt for e in run.events if isinstance(e, ev.SubCallStarted))
        sources.append(SourceFinder(documents).find(prompt))
    assert isinstance(Coverage(docs).matcher.context, JoinedText)     # read by offsets, not joined
    assert reports[1] == reports[0]
    log_cov, mail_cov = reports[1].documents
    start = log_text.index(printed)
    assert log_cov.read == [(start, start + len(printed))]
    assert mail_cov.read and mail_cov.read_chars > 0.9 * len(message)
    # The sub-call's source: the message it quotes (held, its repeated body lines are first
    # looked up in an index of whole lines, which may name an earlier message's line).
    label, path, a, b = sources[1]
    assert path == "export.mbox" and (a, b) == mail_cov.read[0]
    assert label == "export.mbox:message 30 (Report 29), line 1 - export.mbox:message 30 (Report 29), line 8"
