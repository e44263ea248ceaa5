"""Column presets: a grid's questions saved under a name and reused, in one JSON file in
the settings folder (`grid_presets.json`, beside settings.json).

    save_preset(path, "contracts", columns)        # replaces a preset of that name
    columns = preset_columns(path, "contracts")    # PresetError: a sentence saying why not
    preset_names(path)                             # sorted

The file holds {"version": 1, "presets": {NAME: [{"name", "question", "type", "instruction"}]}};
each column is checked again when it is read (parse_columns' rules), so a hand-edited
file cannot give a grid an empty question or an unknown type.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Sequence

from core.grid.model import Column, ColumnError, column

PRESETS_FILE = "grid_presets.json"
NAME_MAX = 80


class PresetError(ValueError):
    """A preset that cannot be saved or used (the message says why)."""


def presets_path(settings_file: Path) -> Path:
    return Path(settings_file).with_name(PRESETS_FILE)


def _read(path: Path) -> dict[str, list]:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError) as exc:
        raise PresetError(f"the presets file {path} cannot be read: {exc}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise PresetError(f"the presets file {path} is not valid JSON ({exc.msg}, line {exc.lineno})") from None
    presets = data.get("presets") if isinstance(data, dict) else None
    if not isinstance(presets, dict):
        raise PresetError(f"the presets file {path} has no \"presets\" object")
    return presets


def preset_names(path: Path) -> list[str]:
    return sorted(_read(path))


def preset_columns(path: Path, name: str) -> list[Column]:
    """The columns saved as `name`, checked as a COLUMNS file's are."""
    presets = _read(path)
    if name not in presets:
        known = ", ".join(sorted(presets)) or "none saved yet"
        raise PresetError(f"no column preset named {name!r} (presets: {known})")
    items = presets[name]
    if not isinstance(items, list) or not items:
        raise PresetError(f"column preset {name!r} in {path} has no columns")
    columns = []
    for i, item in enumerate(items, 1):
        where = f"column preset {name!r} column {i}"
        if not isinstance(item, dict):
            raise PresetError(f"{where}: expected a JSON object")
        try:
            columns.append(column(str(item.get("question") or ""), name=str(item.get("name") or ""),
                                  type=str(item.get("type") or "text"),
                                  instruction=str(item.get("instruction") or ""), where=where))
        except ColumnError as exc:
            raise PresetError(str(exc)) from None
        if any(c.name == columns[-1].name for c in columns[:-1]):
            raise PresetError(f"{where}: two columns are named {columns[-1].name!r}")
    return columns


def save_preset(path: Path, name: str, columns: Sequence[Column]) -> Path:
    """Save `columns` as preset `name` (replacing one of that name), atomically."""
    name = (name or "").strip()
    if not name:
        raise PresetError("a column preset needs a name")
    if len(name) > NAME_MAX or any(ord(ch) < 32 for ch in name):
        raise PresetError(f"a column preset's name is one line of at most {NAME_MAX} characters")
    if not columns:
        raise PresetError("a column preset needs at least one column")
    presets = _read(path)
    presets[name] = [c.public_dict() for c in columns]
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump({"version": 1, "presets": presets}, f, indent=2, ensure_ascii=False)
            f.write("\n")
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path
