"""Helpers for tests/gui/test_trust_*.py: the real window, models served by the
scripted OpenAI-compatible server on 127.0.0.1 (endpoint "lab"), documents set
as a re-run would set them, runs started with the Run button."""

from __future__ import annotations

import re
from typing import Any

from tests.support.gui_app import wait_until
from tests.support.trust_runs import DOCS, KEY, code, doc, report_pdf  # noqa: F401

_HREF = re.compile(r'href="(doc:[^"]*)"')


def setup_lab(window: Any, controller: Any, server: Any, question: str, docs: list | None = None,
              caps: dict | None = None) -> None:
    from app.settings import Endpoint
    controller.settings.endpoints = [Endpoint("lab", server.url, ["root", "sub"], needs_key=True)]
    controller.settings.caps["cell_timeout_s"] = 30
    controller.keys().set("lab", KEY)
    controller.set_documents(list(docs or DOCS))
    qp = window.question_panel
    qp.set_models("lab/root", "lab/sub")
    qp.set_caps(caps or {"max_depth": 1, "max_cost_usd": 0, "max_iterations": 6})
    qp.set_question(question)


async def run_in_window(window: Any, controller: Any, timeout: float = 90) -> Any:
    window.question_panel.run_button.click()
    await wait_until(lambda: controller.running, what="the run to start")
    await wait_until(lambda: not controller.running, timeout=timeout, what="the run to end")
    window.run_panes.flush()
    return controller.last_outcome


def hrefs(label: Any) -> list[str]:
    """The doc: links of a rich-text label, in order."""
    return _HREF.findall(label.text())
