"""The sample documents shipped in resources/samples/ and their suggested questions.

    samples = sample_set()
    samples.folder        # Path of the documents to read
    samples.questions     # ["Find the outage in the web shop log: ...", ...]
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path


class SamplesMissing(Exception):
    """The samples are not where they should be (a broken install)."""


@dataclass(frozen=True)
class SampleSet:
    title: str
    description: str
    folder: Path
    questions: tuple[str, ...]

    def files(self) -> list[Path]:
        return sorted(p for p in self.folder.rglob("*") if p.is_file())

    def size(self) -> int:
        return sum(p.stat().st_size for p in self.files())


def samples_dir() -> Path:
    from core.paths import resources_dir
    return resources_dir() / "samples"


def sample_set(root: Path | None = None) -> SampleSet:
    root = root or samples_dir()
    try:
        data = json.loads((root / "questions.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise SamplesMissing(f"the samples' questions.json cannot be read: {exc}") from exc
    folder = root / str(data.get("folder") or "documents")
    if not folder.is_dir():
        raise SamplesMissing(f"the sample documents are missing ({folder})")
    questions = tuple(str(q) for q in data.get("questions") or () if str(q).strip())
    return SampleSet(str(data.get("title") or "Samples"), str(data.get("description") or ""),
                     folder, questions)
