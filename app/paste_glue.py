"""A long paste into the question box becomes a source (issue 27).

The question goes to the root model in every turn, so tens of thousands of characters
pasted there cost tokens each turn and end in the model's refusal ("A prompt was too
long"). QuestionBox does not insert a paste over LONG_PASTE_CHARS: it emits `long_paste`,
and this glue asks "Add the pasted text as a source?". Yes: the text is saved in the data
directory (core/ingest/pasted.py) and read like a dropped file; the question box stays
as it was. "Paste into the question" inserts it anyway; Cancel drops it.
"""

from __future__ import annotations

import logging
from typing import Any

from app.ports import PathsPort
from ui import confirm
from core.paths import data_dir

log = logging.getLogger(__name__)


class PasteGlue:
    def __init__(self, window: Any, notifier: Any, *, sources: PathsPort) -> None:
        self.window = window
        self.notifier = notifier
        self._add_paths = sources.add_paths
        window.question_panel.question_box.long_paste.connect(self.offer)

    def offer(self, text: str) -> str:
        """Ask what to do with `text`; returns the answer ("source", "question", "cancel")."""
        lines = text.count("\n") + 1
        answer = confirm.ask(
            self.window, "Add the pasted text as a source?",
            f"You pasted {len(text):,} characters ({lines:,} lines). The question goes to the root "
            "model in every turn, so long material belongs in Sources, where the model reads it "
            "piece by piece. It is saved in RLM Studio's data folder and listed in Sources.",
            [("source", "Add as a source"), ("question", "Paste into the question"), ("cancel", "Cancel")])
        if answer == "source":
            # lazy: +1 modules in the window (where it runs)
            from core.ingest.pasted import save_pasted
            try:
                path = save_pasted(text, data_dir() / "pasted")
            except (OSError, ValueError) as exc:
                self.notifier.error(f"The pasted text could not be saved as a source: {exc}",
                                    "Save it as a file and drop the file on Sources.")
                return "cancel"
            log.info("a paste of %d characters became the source %s", len(text), path.name)
            self._add_paths([str(path)])
        elif answer == "question":
            self.window.question_panel.insert_text(text)
        return answer
