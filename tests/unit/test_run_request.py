"""What a RunRequest refuses when it is made (core/engine/request.py): each with the reason."""

from __future__ import annotations

import pytest


@pytest.mark.parametrize("fields, message", [
    (dict(kind="guess"), "unknown run kind"),
    (dict(kind="follow-up", parent_run_id="r1", question="q"), "live session"),
    (dict(kind="fork", parent_run_id="r1"), "turn to fork from"),
    (dict(kind="re-run", question="q"), "needs the run it comes from"),
    (dict(kind="rebuild", parent_run_id="r1", question="q"), "needs the config its follow-up runs with"),
    (dict(kind="ask", question="  "), "the question is empty"),
    (dict(kind="ask", question="q"), "no readable documents"),
])
def test_a_request_that_cannot_run_says_why(fields, message):
    from app.run_service import RunRequest
    with pytest.raises(ValueError, match=message):
        RunRequest(**fields)
