"""A long paste into the question box is offered as a source (the real window, clipboard
and ingestion; the question box stays short)."""

from __future__ import annotations

from tests.support.gui_app import qloop, run_async, studio, studio_home, wait_until  # noqa: F401
from ui import confirm
from ui.question_panel import LONG_PASTE_CHARS

LONG = "".join(f"line {i}: the shipment of order {i} left the warehouse on day {i % 28 + 1}.\n"
               for i in range(4600))          # ~310,000 characters, like the paste in issue 27


def _paste(qapp, box, text: str) -> None:
    qapp.clipboard().setText(text)
    box.setFocus()
    box.paste()


def test_a_long_paste_becomes_a_source_and_the_question_stays_short(studio, qloop, qapp, monkeypatch,
                                                                    studio_home):
    window, controller = studio
    asked = []
    monkeypatch.setattr(confirm, "ask", lambda *a, **k: asked.append((a[1], a[2], a[3])) or "source")
    box = window.question_panel.question_box
    box.setPlainText("Which orders left late?")
    assert len(LONG) > 290_000

    async def body() -> None:
        _paste(qapp, box, LONG)
        await wait_until(lambda: window.sources_pane.rows(), timeout=20, what="the paste read as a source")
    run_async(qloop, body(), timeout=30)
    title, text, choices = asked[0]
    assert title == "Add the pasted text as a source?"
    assert f"{len(LONG):,} characters" in text
    assert [c[0] for c in choices] == ["source", "question", "cancel"]
    assert box.toPlainText() == "Which orders left late?"              # nothing pasted into it
    [row] = window.sources_pane.rows()
    assert row.status == "read" and row.chars == len(LONG)
    saved = list((studio_home / "pasted").glob("pasted-*.txt"))
    assert len(saved) == 1 and saved[0].read_text(encoding="utf-8") == LONG
    [doc] = controller.documents.values()
    assert doc.text == LONG


def test_a_short_paste_goes_into_the_question_and_a_long_one_can_too(studio, qloop, qapp, monkeypatch):
    window, controller = studio
    answers = iter(["question", "cancel"])
    asked = []
    monkeypatch.setattr(confirm, "ask", lambda *a, **k: asked.append(a[1]) or next(answers))
    box = window.question_panel.question_box
    _paste(qapp, box, "a short question?")
    assert box.toPlainText() == "a short question?" and asked == []
    box.clear()
    just_over = "x" * (LONG_PASTE_CHARS + 1)
    _paste(qapp, box, just_over)                       # "Paste into the question": as asked
    assert box.toPlainText() == just_over and len(asked) == 1
    box.clear()
    _paste(qapp, box, just_over)                       # Cancel: nothing anywhere
    assert box.toPlainText() == "" and window.sources_pane.rows() == [] and len(asked) == 2


def test_a_pasted_source_is_there_after_a_restart(studio, qloop, qapp, monkeypatch, studio_home, tmp_path):
    """The pasted text is listed again at the next start, beside a file added by hand (a new
    window over the same RLMSTUDIO_DESKTOP_HOME)."""
    window, controller = studio
    monkeypatch.setattr(confirm, "ask", lambda *a, **k: "source")
    notes = tmp_path / "notes.txt"
    notes.write_text("alpha beta gamma\n")

    async def body() -> None:
        await wait_until(lambda: controller.first_run.started, what="the start")
        window.sources_pane.paths_added.emit([str(notes)])                # Add files…
        await wait_until(lambda: len(window.sources_pane.rows()) == 1, timeout=20, what="the file")
        _paste(qapp, window.question_panel.question_box, LONG)
        await wait_until(lambda: len(window.sources_pane.rows()) == 2, timeout=20, what="the paste")
    run_async(qloop, body(), timeout=60)
    before = sorted((r.name, r.chars) for r in window.sources_pane.rows())
    window.close()                                    # saves the session, as quitting does

    from app.gui import build_window
    second, again = build_window(qapp)
    try:
        second.show()

        async def reopened() -> None:
            await wait_until(lambda: again.first_run.started, what="the second start")
            await wait_until(lambda: len(again.documents) == 2, timeout=60, what="re-reading")
        run_async(qloop, reopened(), timeout=90)
        assert sorted((r.name, r.chars) for r in second.sources_pane.rows()) == before
        assert any(d.text == LONG for d in again.documents.values())
    finally:
        qloop.run_until_complete(again.shutdown(timeout=5))
        second.close()
        second.deleteLater()
