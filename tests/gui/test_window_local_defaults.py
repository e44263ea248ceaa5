"""Picking a local root model proposes caps from its size, says so in the panel, and the next
run takes them (the real window and controller; nothing is sent to a model)."""

from __future__ import annotations

from app.settings import Endpoint, ModelSettings
from tests.support.gui_app import qloop, run_async, studio, studio_home, wait_until  # noqa: F401
from ui.question_panel import ModelChoice


def pick(picker, model_id):
    picker.set_choices([ModelChoice(model_id), ModelChoice("openai/gpt-4o-mini")])
    index = next(i for i in range(picker.count()) if picker.itemData(i) == model_id or picker.itemText(i) == model_id)
    picker.setCurrentIndex(index)
    picker.activated.emit(index)               # what a pick from the list does


def test_a_local_model_picked_gets_caps_for_its_size(studio, qloop, server):
    window, controller = studio
    controller.settings.endpoints = [Endpoint("lab", server.url, ["qwen2.5-coder:1.5b"])]
    qp = window.question_panel
    qp.set_caps({"max_depth": 2, "max_cost_usd": 0, "max_iterations": 20})
    pick(qp.root_picker, "lab/qwen2.5-coder:1.5b")
    assert qp.root_model() == "lab/qwen2.5-coder:1.5b"
    assert qp.caps()["max_depth"] == 1 and qp.caps()["max_iterations"] == 6
    assert qp.status_label.text().startswith("Proposed for a local 1.5B model: depth 1, at most 6 turns, 1,024")
    from app.settings import build_run_config
    config = build_run_config(controller.settings, root=qp.root_model(), overrides={**qp.caps(), **qp.run_overrides()})
    assert config.root_max_tokens == 1024 and config.max_iterations == 6
    # the model's own max_tokens setting wins; a model that is not local proposes nothing
    controller.settings.models["lab/qwen2.5-coder:1.5b"] = ModelSettings(max_tokens=3000)
    pick(qp.root_picker, "lab/qwen2.5-coder:1.5b")
    assert "root_max_tokens" not in qp.run_overrides() and "3,000 output tokens (its setting)" in qp.status_label.text()
    qp.set_caps({"max_iterations": 20})
    pick(qp.root_picker, "openai/gpt-4o-mini")
    assert qp.caps()["max_iterations"] == 20 and "root_max_tokens" not in qp.run_overrides()
