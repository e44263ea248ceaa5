"""The names this app uses where other programs could use the same ones.

    APP_ID                       # "io.github.rlm-studio-desktop": the data directory's name and
                                 # the keychain service
    env("HOME")                  # RLMSTUDIO_DESKTOP_HOME, else the old RLM_STUDIO_HOME (deprecated)
    env_name("HOME")             # "RLMSTUDIO_DESKTOP_HOME"

Another project calls itself "RLM Studio" and uses the keychain service "rlm-studio",
~/.rlm-studio/ and RLM_STUDIO_* variables: the names this app used until issue 27. With
both installed, each could read, overwrite or delete the other's keys. So this app's names
are now its own: a reverse-DNS id for the keychain service and the data directory, and the
prefix RLMSTUDIO_DESKTOP_ for its environment variables (docs/storage.md says why these).
The old variable names are still read, with one deprecation line on stderr per name and
process, so scripts keep working; the new name wins when both are set.
core/identity_migration.py moves the keys and data kept under the old names, once.
"""

from __future__ import annotations

import logging
import os
import sys

log = logging.getLogger(__name__)

APP_ID = "io.github.rlm-studio-desktop"
OLD_APP_NAME = "rlm-studio"          # the keychain service and data directory name until issue 27
ENV_PREFIX = "RLMSTUDIO_DESKTOP_"
OLD_ENV_PREFIX = "RLM_STUDIO_"       # shared with the other project: read, deprecated

_WARNED: set[str] = set()


def env_name(name: str) -> str:
    """The variable's name today: env_name("HOME") -> "RLMSTUDIO_DESKTOP_HOME"."""
    return ENV_PREFIX + name


def old_env_name(name: str) -> str:
    return OLD_ENV_PREFIX + name


def env(name: str, environ: dict | None = None) -> str | None:
    """RLMSTUDIO_DESKTOP_<name>, else RLM_STUDIO_<name> (said once to be deprecated), else None."""
    environ = os.environ if environ is None else environ
    value = environ.get(env_name(name))
    if value is not None:
        return value
    value = environ.get(old_env_name(name))
    if value is not None:
        deprecated(old_env_name(name), env_name(name))
    return value


def deprecated(old: str, new: str) -> None:
    """One line on stderr (and in the log) the first time an old variable name is used."""
    if old in _WARNED:
        return
    _WARNED.add(old)
    line = (f"rlm-studio: {old} is deprecated, use {new} (the RLM_STUDIO_ names are shared with "
            "another application)")
    log.info("%s", line)
    try:
        print(line, file=sys.stderr)
    except (OSError, ValueError):       # no stderr (a windowed app): the log has it
        pass
