"""The model picker (ui/model_picker.py): local models first, cloud models under provider
headers, typing filters over litellm's whole catalogue, and the name stays the one picked;
in the question panel and in the fork dialog (offscreen)."""

from __future__ import annotations

from PySide6.QtCore import Qt

from app.settings import Endpoint
from tests.support.gui_app import qloop, run_async, studio, studio_home, wait_until  # noqa: F401
from ui.model_picker import LOCAL_GROUP, ModelChoice, ModelPicker

MIXED = [ModelChoice("openai/gpt-4o-mini", "$0.15 in", provider="openai"),
         ModelChoice("groq/llama-3.3-70b-versatile", provider="groq"),
         ModelChoice("lab/qwen3-14b", "free", local=True),
         ModelChoice("anthropic/claude-haiku-4-5", provider="anthropic"),
         ModelChoice("openai/gpt-4o", provider="openai"),
         ModelChoice("zz-cloud/m1"),                      # no provider given: its prefix
         ModelChoice("lab/coder-7b", "free", local=True),
         ModelChoice("openai/gpt-4o", provider="openai")]   # listed twice: once


def test_local_models_first_then_providers_under_headers(qtbot):
    picker = ModelPicker()
    qtbot.addWidget(picker)
    picker.set_choices(MIXED)
    assert picker.groups() == [
        (LOCAL_GROUP, ["lab/qwen3-14b", "lab/coder-7b"]),          # as given
        ("OpenAI", ["openai/gpt-4o", "openai/gpt-4o-mini"]),       # A-Z within a provider
        ("Anthropic", ["anthropic/claude-haiku-4-5"]),
        ("Groq", ["groq/llama-3.3-70b-versatile"]),
        ("zz-cloud", ["zz-cloud/m1"])]
    assert picker.choices() == ["lab/qwen3-14b", "lab/coder-7b", "openai/gpt-4o", "openai/gpt-4o-mini",
                                "anthropic/claude-haiku-4-5", "groq/llama-3.3-70b-versatile", "zz-cloud/m1"]
    model = picker.model()
    headers = [r for r in range(model.rowCount()) if model.index(r, 0).data() in
               (LOCAL_GROUP, "OpenAI", "Anthropic", "Groq", "zz-cloud")]
    assert len(headers) == 5 and model.rowCount() == 5 + 7
    for row in headers:                                        # shown, never picked
        index = model.index(row, 0)
        assert model.flags(index) == Qt.ItemFlag.NoItemFlags
        assert index.data(Qt.ItemDataRole.FontRole).bold()
    picker.setCurrentIndex(headers[1])                          # a header is never the current row
    picker.set_model_id("openai/gpt-4o")
    assert picker.currentIndex() == headers[1] + 1 and picker.itemText(picker.currentIndex()) == "openai/gpt-4o"
    assert picker.price_of("lab/coder-7b") == "free" and picker.price_of("OpenAI") == ""


def test_typing_filters_the_whole_catalogue(qtbot):
    from core.catalog import litellm_models
    catalogue = [ModelChoice.of_entry(e) for e in litellm_models()]
    assert len(catalogue) > 1000
    picker = ModelPicker()
    qtbot.addWidget(picker)
    picker.set_choices([ModelChoice("lab/coder-7b", "free", local=True), *catalogue])
    picker.show()
    found = picker.matches("CODER-7")                        # any case, anywhere in the id
    assert found[0] == "lab/coder-7b" and len(found) > 1      # the local one first
    assert all("coder-7" in m.lower() for m in found)
    haiku = picker.matches("haiku")
    assert haiku and all("haiku" in m.lower() for m in haiku)
    assert len(haiku) < 100
    picker.lineEdit().clear()
    qtbot.keyClicks(picker.lineEdit(), "coder-7")             # what the user types
    popup = picker.completer().popup()
    qtbot.waitUntil(popup.isVisible, timeout=3000)
    shown = [popup.model().index(r, 0).data() for r in range(popup.model().rowCount())]
    assert shown == found
    activated = []
    picker.activated.connect(activated.append)
    popup.setCurrentIndex(popup.model().index(0, 0))
    qtbot.keyClick(popup, Qt.Key.Key_Return)                  # Enter on the first row shown
    assert picker.model_id() == "lab/coder-7b"
    assert activated and picker.itemText(activated[-1]) == "lab/coder-7b"


def test_the_question_panel_lists_the_endpoint_model_by_its_picked_name(studio, qloop, server):
    window, controller = studio
    controller.settings.endpoints = [Endpoint("lab", server.url, ["coder-7b"])]
    controller.choices.fill()
    qp = window.question_panel
    groups = dict(qp.root_picker.groups())
    assert groups[LOCAL_GROUP][0] == "lab/coder-7b"
    assert "openai/coder-7b" not in qp.root_picker.choices()
    assert qp.root_picker.groups()[0][0] == LOCAL_GROUP        # local first, cloud after
    qp.root_picker.set_model_id("lab/coder-7b")
    assert qp.root_model() == "lab/coder-7b" and qp.root_picker.currentText() == "lab/coder-7b"
    from app.settings import build_run_config
    config = build_run_config(controller.settings, root=qp.root_model())
    assert config.root_model == "openai/coder-7b"              # routed for litellm ...
    assert config.label(config.root_model) == "lab/coder-7b"   # ... shown as picked


def test_the_fork_dialog_has_the_same_pickers(qtbot):
    from ui.fork_dialog import ForkDialog
    dialog = ForkDialog(None, run_title="run a1b2", turns=[(1, "print(1)")], turn=1,
                        root_model="lab/root", sub_model="openai/gpt-4o", caps={}, choices=MIXED)
    qtbot.addWidget(dialog)
    assert isinstance(dialog.root_picker, ModelPicker) and isinstance(dialog.sub_picker, ModelPicker)
    assert dialog.root_picker.groups()[0] == (LOCAL_GROUP, ["lab/root", "lab/qwen3-14b", "lab/coder-7b"])
    assert dialog.sub_picker.groups()[0] == (LOCAL_GROUP, ["lab/qwen3-14b", "lab/coder-7b"])   # listed once
    assert dialog.sub_picker.model_id() == "openai/gpt-4o"
    assert dialog.root_picker.matches("gpt-4o") == ["openai/gpt-4o", "openai/gpt-4o-mini"]
    dialog.sub_picker.set_model_id("lab/coder-7b")
    choice = dialog.values()
    assert (choice.root_model, choice.sub_model) == ("lab/root", "lab/coder-7b")
