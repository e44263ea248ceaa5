"""Where RLM Studio keeps its data: one directory, overridable for tests."""

from __future__ import annotations

from pathlib import Path

from core.identity import APP_ID, OLD_APP_NAME, env, env_name

APP_NAME = APP_ID                    # the data directory's name (core/identity.py says why)
HOME_VAR = env_name("HOME")          # RLMSTUDIO_DESKTOP_HOME (the old RLM_STUDIO_HOME is still read)


def home_override() -> Path | None:
    """The directory RLMSTUDIO_DESKTOP_HOME (or the deprecated RLM_STUDIO_HOME) names, if set."""
    override = env("HOME")
    return Path(override).expanduser() if override else None


def default_data_dir(app_name: str = APP_NAME) -> Path:
    """The platform's user data directory for `app_name` (not created)."""
    import platformdirs
    return Path(platformdirs.user_data_dir(app_name, appauthor=False))


def old_default_data_dir() -> Path:
    """Where the data was kept before issue 27 (~/.local/share/rlm-studio on Linux)."""
    return default_data_dir(OLD_APP_NAME)


def data_dir() -> Path:
    """RLMSTUDIO_DESKTOP_HOME if set, else the platform's user data directory.
    Created on first use."""
    path = home_override() or default_data_dir()
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
