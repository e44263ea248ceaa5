"""Where RLM Studio keeps its data: one directory, overridable for tests."""

from __future__ import annotations

import os
from pathlib import Path

APP_NAME = "rlm-studio"


def data_dir() -> Path:
    """`RLM_STUDIO_HOME` if set, else the platform's user data directory.
    Created on first use."""
    override = os.environ.get("RLM_STUDIO_HOME")
    if override:
        path = Path(override).expanduser()
    else:
        import platformdirs
        path = Path(platformdirs.user_data_dir(APP_NAME, appauthor=False))
    path.mkdir(parents=True, exist_ok=True)
    return path


def database_path() -> Path:
    return data_dir() / "runs.db"


def settings_path() -> Path:
    return data_dir() / "settings.json"


def resources_dir() -> Path:
    """resources/ next to the packages (also inside a PyInstaller bundle)."""
    import resources
    return Path(resources.__file__).resolve().parent
