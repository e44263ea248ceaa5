from core.repl.context_file import read_context, write_context
from core.ingest.citations import context_offsets, parse_citations, resolve_citations, split_reference
from tests.support.trust_runs import DOCS, doc


def test_citations_resolve_to_the_passage_they_name():
    answer = "Revenue was 42M [doc:report.pdf:page 2, line 1]; see also [doc:notes.txt:lines 2-3]."
    first, second = resolve_citations(answer, DOCS)
    assert first.ok and DOCS[1].text[first.start:first.end] == "Revenue in Q3 was 42 million dollars."
    assert answer[first.answer_start:first.answer_end] == "[doc:report.pdf:page 2, line 1]"
    assert second.ok and DOCS[0].text[second.start:second.end] == "beta line two\ngamma line three"


def test_citations_that_point_to_nothing_are_flagged():
    answer = "[doc:missing.txt:line 1] [doc:notes.txt:line 40] [doc:report.pdf:page 9] [doc:notes.txt:line 1]"
    cites = resolve_citations(answer, DOCS)
    assert [c.ok for c in cites] == [False, False, False, True]
    assert "no document 'missing.txt'" in cites[0].problem
    assert cites[1].problem == "notes.txt has no 'line 40'" and cites[1].document == 0
    assert cites[2].start is None


def test_several_references_in_one_bracket_and_a_path_with_a_colon():
    docs = [doc("logs/12:00.txt", "first\nsecond\n"), doc("b.txt", "x\n")]
    refs = parse_citations("It says so [doc:logs/12:00.txt:line 2; doc:b.txt:line 1].")
    assert [r[0] for r in refs] == ["doc:logs/12:00.txt:line 2", "doc:b.txt:line 1"]
    assert split_reference(refs[0][0], [d.path for d in docs]) == ("logs/12:00.txt", "line 2")
    cites = resolve_citations("[doc:logs/12:00.txt:line 2; doc:b.txt:line 1]", docs)
    assert all(c.ok for c in cites) and docs[0].text[cites[0].start:cites[0].end] == "second"


def test_context_offsets_match_what_the_repl_sees(tmp_path):
    files = write_context(DOCS, tmp_path)
    context, documents = read_context(files.path, files.index_path)
    assert context_offsets(DOCS) == [d["offset"] for d in documents]
    cite = resolve_citations("[doc:report.pdf:page 2, line 2]", DOCS)[0]
    assert context[cite.context_start:cite.context_end] == "Costs stayed flat."


def test_citations_to_a_big_file_read_it_by_offsets_not_whole(tmp_path, monkeypatch):
    from core.ingest import IngestOptions, ingest_sync
    from core.ingest.bigfile import SidecarText
    from core.ingest.citations import cited_passages, resolve_citations
    from core.ingest.text_back import FileText
    from tests.support.big_files import write_log, write_mbox
    write_mbox(tmp_path / "export.mbox", 400_000, body=2_000)
    write_log(tmp_path / "server.log", 400_000)
    options = IngestOptions(workers=1, stream_min_bytes=100_000, spool_dir=str(tmp_path / "texts"))
    docs = ingest_sync([tmp_path / "export.mbox", tmp_path / "server.log"], options).documents
    held = [type(d)(**{**{f: getattr(d, f) for f in d.__dataclass_fields__}, "text": d.text}) for d in docs]
    assert not any(d.held for d in docs) and all(d.held for d in held)
    answer = ("Seven [doc:export.mbox:message 7], its second line [doc:export.mbox:message 7, line 2], "
              "a log line [doc:server.log:line 1000], lines [doc:server.log:lines 20-22], "
              "none [doc:server.log:line 99999999]")
    whole = [(c.ok, c.start, c.end) for c in resolve_citations(answer, held)]
    passages = cited_passages(answer, held)

    def never(self, doc):
        raise AssertionError(f"{doc.path} read whole")
    monkeypatch.setattr(SidecarText, "__call__", never)
    monkeypatch.setattr(FileText, "__call__", never)
    assert [(c.ok, c.start, c.end) for c in resolve_citations(answer, docs)] == whole
    assert whole[-1][0] is False and all(ok for ok, _, _ in whole[:-1])
    assert cited_passages(answer, docs) == passages
    assert passages[0].startswith("--- message 7 ---") and passages[2].endswith(" ms")
