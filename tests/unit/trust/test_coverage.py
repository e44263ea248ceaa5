from core import events as ev
from core.trust.coverage import Coverage, Intervals
from tests.support.trust_runs import doc
from tests.unit.trust.events import Run

LINES = [f"line {i:03d} of the annual report says something long enough to count" for i in range(100)]
BOOK = doc("book.txt", "\n".join(LINES) + "\n")
SHORT = doc("short.txt", "tiny\n")


def test_intervals_merge_and_clip():
    iv = Intervals()
    assert iv.add(10, 20) and iv.add(30, 40) and iv.add(20, 25)
    assert not iv.add(12, 18)
    assert iv.add(24, 31)
    assert list(zip(iv.starts, iv.ends)) == [(10, 40)]
    assert iv.clipped(15, 35) == [(0, 20)] and iv.total() == 30


def test_printed_lines_count_as_read_and_short_ones_do_not():
    run = Run(docs=[BOOK, SHORT])
    run.turn(1, "x")
    cov = Coverage([BOOK, SHORT])
    output = "[cell output]\n" + "\n".join(LINES[10:20]) + "\ntiny\nfound 3 items"
    assert cov.apply(run.add(ev.CellExecuted, "R.t1.c1", "R.t1", index=1, code="", stdout="", stderr="",
                             error=None, is_syntax_error=False, duration_ms=1, output_for_model=output))
    report = cov.report()
    book = report.documents[0]
    start = BOOK.text.index(LINES[10])
    assert book.read == [(start, BOOK.text.index(LINES[19]) + len(LINES[19]))]
    assert book.unread[0] == (0, start) and round(book.percent) == 10
    assert report.documents[1].read == [] and report.documents[1].percent == 0.0
    assert not cov.apply(run.events[-1])      # the same output again changes nothing


def test_sub_call_prompts_count_and_a_whole_context_forward_warns():
    cov = Coverage([BOOK])
    chunk = "\n".join(LINES[:50])
    split = ev.SubCallStarted(run_id="r", call_id="R.s1", parent_id="R.t1.c1", kind="llm", model="m",
                              prompt="Summarise: " + chunk, depth=0)
    assert cov.apply(split) and 49 <= cov.report().percent <= 51
    assert cov.report().warnings == []
    whole = ev.SubCallStarted(run_id="r", call_id="R.s2", parent_id="R.t1.c1", kind="llm", model="m",
                              prompt="Read all of this:\n" + BOOK.text, depth=0)
    cov.apply(whole)
    report = cov.report()
    assert report.percent > 99 and len(report.warnings) == 1
    assert report.warnings[0].startswith("sub-call R.s2 forwards 100% of the context")


def test_a_long_line_with_words_around_it_is_grown_from_a_probe():
    flat = doc("flat.json", '{"items": [' + ", ".join(f'"entry number {i}"' for i in range(200)) + "]}")
    cov = Coverage([flat])
    piece = flat.text[1000:2000]
    cov.apply(ev.SubCallStarted(run_id="r", call_id="R.s1", parent_id=None, kind="llm", model="m",
                                prompt=f"Count the entries in: {piece} -- answer with a number", depth=0))
    (start, end), = cov.report().documents[0].read
    assert start <= 1000 + 2 and end >= 2000 - 2 and end - start <= 1010


def test_the_fold_is_the_same_live_and_replayed():
    run = Run(docs=[BOOK])
    run.turn(1, "x")
    run.cell(1, 1, "print(context[:500])", "\n".join(LINES[:5]), subs=[("Q: " + LINES[50] + "\n" + LINES[51], "ok")])
    events = run.finish("a")
    live = Coverage([BOOK])
    changed = [live.apply(e) for e in events]
    assert changed.count(True) == 2
    assert Coverage.of_events([BOOK], events).report() == live.report()


def test_a_document_printed_in_full_is_read_in_full_blank_lines_included():
    text = ("# Quarterly report, third quarter of the year 2024\n\n"
            "Revenue rose by twelve percent against the same quarter of 2023.\n\n"
            "short line\n\n"
            "Costs fell because the new roasting line used less gas than planned.\n")
    report_doc = doc("q3.md", text)
    cov = Coverage([report_doc])
    printed = ev.CellExecuted(run_id="r", call_id="R.t1.c1", parent_id="R.t1", index=1, code="", stdout="",
                              stderr="", error=None, is_syntax_error=False, duration_ms=1,
                              output_for_model="[cell output]\n" + text)
    assert cov.apply(printed)
    assert cov.report().documents[0].percent == 100.0


def test_forwarding_counts_each_document_character_once():
    cov = Coverage([BOOK])
    twice = ev.SubCallStarted(run_id="r", call_id="R.s1", parent_id="R.t1.c1", kind="llm", model="m",
                              prompt="A:\n" + BOOK.text + "\nB:\n" + BOOK.text, depth=0)
    cov.apply(twice)
    assert cov.report().warnings[0].startswith("sub-call R.s1 forwards 100% of the context")


async def test_a_document_whose_file_went_is_named_and_the_rest_measured(tmp_path):
    """Coverage of a finished run whose files were deleted (a refresh that lands after the unlink)
    measures what it can read and names the rest, instead of raising in the window's event loop."""
    from core.ingest import ingest

    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "kept.txt").write_text("\n".join(LINES) + "\n")
    (folder / "gone.txt").write_text("gone soon\n")
    docs = (await ingest([str(folder)])).documents
    (folder / "gone.txt").unlink()
    cov = Coverage(docs)
    report = cov.report()
    assert [w for w in report.warnings if w.startswith("gone.txt is not measured:")]
    assert "changed on disk" in report.warnings[0]
    kept = [d for d in report.documents if d.path == "kept.txt"][0]
    assert kept.chars == len("\n".join(LINES) + "\n")
