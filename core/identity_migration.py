"""Moving what was kept under the old, shared names to this app's own ones, once.

    note = migrate_data()              # at start-up, before anything opens the data directory
    note = migrate_keys(key_store)     # when the keychain is first opened (a thread in the window)
    # each returns "" or one sentence for the window's banner and the CLI's stderr

Until issue 27 this app kept its data in the platform directory "rlm-studio"
(~/.local/share/rlm-studio on Linux) and its keys under the keychain service "rlm-studio":
names another app ("RLM Studio", a web workbench) now uses too (core/identity.py).

Data: when no RLMSTUDIO_DESKTOP_HOME (or old RLM_STUDIO_HOME) names a directory, the new
platform directory has no runs.db and no settings.json, and the old one has either, the old
directory is copied: runs.db through SQLite's backup (one consistent file, whatever its WAL
held), everything else as files, into a temporary sibling that is then renamed into place, so
an interrupted copy leaves nothing half-done. The old directory is left as it was, with a
MOVED-TO.txt that says where the data went. A directory named by the variable is the user's
own choice and is used as it is.

Keys: only entries this app wrote are moved. keyring cannot list a service's entries, so this
app always kept an index, the entry "__providers__" of the old service, with the names it
stored; the other app has no reason to write an entry of that name. Each name in that index
that is a valid provider or endpoint name is copied to the new service (unless the new
service has a key of that name already: then both are left alone), read back, and only then
deleted from the old service; the old index goes when every name in it has moved. Entries of
the old service that are not in the index (the other app's, possibly) are never read.

A marker in the data directory (identity-migration.json) records each step once done, so
neither is tried again and the notice shows once.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import sqlite3
import time
from pathlib import Path
from typing import Any

from core.identity import OLD_APP_NAME

log = logging.getLogger(__name__)

MARKER = "identity-migration.json"
_NOTES: list[str] = []                    # said once: the window's banner or the CLI's stderr
_TRIED = False                            # the platform directories were looked at in this process
OURS = ("runs.db", "settings.json")       # a directory with either holds this app's data


def _read_marker(folder: Path) -> dict:
    try:
        data = json.loads((folder / MARKER).read_text(encoding="utf-8"))
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


def _write_marker(folder: Path, **fields: Any) -> None:
    data = {**_read_marker(folder), **fields}
    folder.mkdir(parents=True, exist_ok=True)
    tmp = folder / (MARKER + ".tmp")
    tmp.write_text(json.dumps(data, indent=2, sort_keys=True), encoding="utf-8")
    os.replace(tmp, folder / MARKER)


def take_notes() -> list[str]:
    """What migrate_data and migrate_keys did and have not said yet (then forgotten)."""
    notes = list(_NOTES)
    _NOTES.clear()
    return notes


def _said(note: str) -> str:
    if note:
        _NOTES.append(note)
    return note


def keys_done(folder: Path | None = None) -> bool:
    """The keys were moved before (no need to open the keychain for it)."""
    from core.paths import data_dir
    return bool(_read_marker(folder or data_dir()).get("keys"))


def _holds_data(folder: Path) -> bool:
    return any((folder / name).is_file() for name in OURS)


# --- the data directory -----------------------------------------------------------------
def migrate_data(new: Path | None = None, old: Path | None = None) -> str:
    """Copy the old default data directory to the new one, once; "" when nothing was done.
    Defaults: the platform directories (core/paths.py); nothing when a variable names one."""
    global _TRIED
    from core import paths
    if new is None or old is None:
        if paths.home_override() is not None or _TRIED:
            return ""                     # the user's own folder, or tried once already (run_gui)
        _TRIED = True
        new, old = paths.default_data_dir(), paths.old_default_data_dir()
    if _read_marker(new).get("data") or not old.is_dir() or not _holds_data(old) or _holds_data(new):
        return ""
    started = time.monotonic()
    staging = new.parent / f".{new.name}.migrating-{os.getpid()}"
    shutil.rmtree(staging, ignore_errors=True)
    try:
        _copy_tree(old, staging)
        if new.exists():                 # made meanwhile (e.g. a log folder): move ours in
            for entry in sorted(staging.iterdir(), key=lambda p: p.name == "runs.db"):   # runs.db last
                if (new / entry.name).is_dir():
                    shutil.copytree(entry, new / entry.name, dirs_exist_ok=True)
                else:
                    os.replace(entry, new / entry.name)
            shutil.rmtree(staging, ignore_errors=True)
        else:
            os.rename(staging, new)
    except (OSError, sqlite3.Error) as exc:
        shutil.rmtree(staging, ignore_errors=True)
        log.warning("could not copy the data from %s to %s: %s", old, new, exc)
        return _said(f"Your runs and settings in {old} could not be copied to {new} ({exc}); "
                "the old folder is unchanged, and the copy is tried again at the next start.")
    _write_marker(new, data={"from": str(old), "at_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())})
    try:
        (old / "MOVED-TO.txt").write_text(
            f"RLM Studio (the desktop app) now keeps its data in\n{new}\n(copied there on "
            f"{time.strftime('%Y-%m-%d %H:%M')}). This folder is no longer used; you may delete it.\n",
            encoding="utf-8")
    except OSError as exc:
        log.info("no MOVED-TO.txt in %s: %s", old, exc)
    log.info("data copied from %s to %s in %.0f ms", old, new, (time.monotonic() - started) * 1000)
    return _said(f"RLM Studio now keeps its data in {new} (its own name: another app also uses "
            f"\"{OLD_APP_NAME}\"). Your runs and settings were copied there from {old}, "
            "which is left as it was.")


def _copy_tree(old: Path, staging: Path) -> None:
    """old -> staging: runs.db by SQLite's backup (WAL included), the rest as files."""
    staging.mkdir(parents=True)
    for entry in old.iterdir():
        if entry.name in ("runs.db-wal", "runs.db-shm", "MOVED-TO.txt", MARKER):
            continue
        target = staging / entry.name
        if entry.name == "runs.db":
            source = sqlite3.connect(f"file:{entry}?mode=ro", uri=True)
            try:
                copy = sqlite3.connect(target)
                try:
                    source.backup(copy)
                finally:
                    copy.close()
            finally:
                source.close()
        elif entry.is_dir() and not entry.is_symlink():
            shutil.copytree(entry, target, symlinks=True)
        else:
            shutil.copy2(entry, target, follow_symlinks=False)


# --- the keychain -----------------------------------------------------------------------
def migrate_keys(store: Any, folder: Path | None = None) -> str:
    """Move the keys this app stored under the old keychain service to the new one, once
    (see the module); "" when there was nothing to move. `store`: a core.secrets.KeyStore."""
    from core import providers
    from core.paths import data_dir
    from core.secrets import INDEX_ENTRY, OLD_SERVICE, SERVICE
    folder = folder or data_dir()
    if _read_marker(folder).get("keys") or not store.usable:
        return ""                       # done before, or no keychain now (tried again next time)
    backend, errors = store.backend, store._errors
    try:
        raw = backend.get_password(OLD_SERVICE, INDEX_ENTRY) or ""
    except errors as exc:
        log.warning("cannot read the old keychain index (%s): %s", store.backend_name, type(exc).__name__)
        return ""
    names = [n for n in dict.fromkeys(raw.split(",")) if providers.is_valid_name(n) and n != INDEX_ENTRY]
    moved, kept, failed = [], [], []
    for name in names:
        try:
            key = backend.get_password(OLD_SERVICE, name)
            if not key:
                continue
            if backend.get_password(SERVICE, name):
                kept.append(name)          # a key under the new name already: both stay
                continue
            backend.set_password(SERVICE, name, key)
            if backend.get_password(SERVICE, name) != key:
                raise OSError("the copy did not read back")
            backend.delete_password(OLD_SERVICE, name)
            store._cache.pop(name, None)
            store._update_index(add=name)
            moved.append(name)
        except errors as exc:
            failed.append(name)
            log.warning("cannot move the %s key to %s (%s): %s", name, SERVICE, store.backend_name,
                        type(exc).__name__)
    if failed:
        return _said(f"The keys of {', '.join(failed)} could not be moved to the keychain entry "
                f"\"{SERVICE}\"; they stay under \"{OLD_SERVICE}\" and are tried again at the next start.")
    if names and not kept:
        try:
            backend.delete_password(OLD_SERVICE, INDEX_ENTRY)
        except errors as exc:
            log.info("the old keychain index stays: %s", type(exc).__name__)
    _write_marker(folder, keys={"moved": moved, "kept": kept, "from": OLD_SERVICE, "to": SERVICE,
                                "at_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())})
    if not moved and not kept:
        return ""
    text = (f"Your API keys ({', '.join(moved)}) moved to RLM Studio's own keychain entry \"{SERVICE}\" "
            f"(another app also uses \"{OLD_SERVICE}\")." if moved else "")
    if kept:
        text += (f" The old keys of {', '.join(kept)} were left under \"{OLD_SERVICE}\": the new entry "
                 "has a key for them already.")
    return _said(text.strip())
