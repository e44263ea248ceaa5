import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


import pytest  # noqa: E402


@pytest.fixture(autouse=True)
def answered_questions(monkeypatch):
    """A modal question would hang an offscreen test: every confirm.ask is answered
    with its first choice (go ahead) and recorded here; a test may set its own."""
    from ui import confirm
    asked: list[tuple[str, str]] = []

    def answer(_parent, title, text, choices, destructive=False):
        asked.append((title, text))
        return choices[0][0]
    monkeypatch.setattr(confirm, "ask", answer)
    return asked
