"""Files and folders -> the files to read, in a deterministic order.

Rules (see docs/documents.md): entries sorted by name (case-sensitive), depth
first; hidden names (".*") and junk skipped unless asked; `.rlmignore` files
(gitignore syntax) honoured at every level; symlinks followed only while they
stay inside the dropped folder, never twice into the same directory; FIFOs,
sockets and devices never opened.
"""

from __future__ import annotations

import errno
import logging
import os
import stat
from collections.abc import Iterable, Iterator

from core.ingest.model import (IGNORED, OUTSIDE_ROOT, SYMLINK_LOOP, UNREADABLE, UNSUPPORTED,
                               FileEntry, IngestOptions, Skip)

log = logging.getLogger(__name__)

IGNORE_FILE = ".rlmignore"
JUNK_DIRS = frozenset({
    ".git", ".hg", ".svn", ".bzr", "node_modules", "__pycache__", ".tox", ".nox",
    ".mypy_cache", ".pytest_cache", ".ruff_cache", ".ipynb_checkpoints", ".idea", ".vscode",
    ".gradle", ".terraform", "__MACOSX", ".Trash", ".Spotlight-V100", ".fseventsd",
})
JUNK_FILES = frozenset({".DS_Store", "Thumbs.db", "desktop.ini", "Icon\r", ".localized",
                        IGNORE_FILE})


def walk(paths: Iterable[str | os.PathLike], options: IngestOptions = IngestOptions()
         ) -> tuple[list[FileEntry], list[Skip]]:
    files: list[FileEntry] = []
    skips: list[Skip] = []
    for item in iter_walk(paths, options):
        (files if isinstance(item, FileEntry) else skips).append(item)
    return files, skips


def root_names(paths: list[str]) -> list[str]:
    """Prefix for each dropped path's documents: "" when one path was dropped
    (paths are relative to it), else its base name, made unique with " (2)"."""
    if len(paths) == 1:
        return [""]
    names: list[str] = []
    for path in paths:
        base = os.path.basename(os.path.normpath(path)) or "root"
        name, n = base, 1
        while name in names:
            n += 1
            name = f"{base} ({n})"
        names.append(name)
    return names


def iter_walk(paths: Iterable[str | os.PathLike], options: IngestOptions = IngestOptions()
              ) -> Iterator[FileEntry | Skip]:
    dropped = [os.path.abspath(os.path.expanduser(os.fspath(p))) for p in paths]
    dropped = list(dict.fromkeys(dropped))
    for source, prefix in zip(dropped, root_names(dropped)):
        yield from _walk_root(source, prefix, options)


def _walk_root(source: str, prefix: str, options: IngestOptions) -> Iterator[FileEntry | Skip]:
    name = prefix or os.path.basename(source) or source
    try:
        info = os.stat(source)
    except OSError as exc:
        yield Skip(name, source, _loop_or_unreadable(exc), _os_message(exc, source))
        return
    if stat.S_ISREG(info.st_mode):
        yield FileEntry(name, source, info.st_size, info.st_mtime_ns)
        return
    if not stat.S_ISDIR(info.st_mode):
        yield Skip(name, source, UNSUPPORTED, "not a regular file or folder")
        return
    yield from _walk_dir(source, prefix, options)


def _walk_dir(top: str, prefix: str, options: IngestOptions) -> Iterator[FileEntry | Skip]:
    root_real = os.path.realpath(top)
    top_info = os.stat(top)
    visited = {(top_info.st_dev, top_info.st_ino): ""}
    # Explicit stack (no recursion): each frame = (dir path, rel path, ignore rules, entries).
    stack = [(top, "", _rules_for(top, "", []), None)]
    while stack:
        path, rel, rules, entries = stack[-1]
        if entries is None:
            try:
                with os.scandir(path) as scan:
                    entries = iter(sorted(scan, key=lambda e: e.name))
            except OSError as exc:
                stack.pop()
                yield Skip(_join(prefix, rel) or os.path.basename(path), path, UNREADABLE,
                           _os_message(exc, path))
                continue
            stack[-1] = (path, rel, rules, entries)
        entry = next(entries, None)
        if entry is None:
            stack.pop()
            continue
        child_rel = f"{rel}/{entry.name}" if rel else entry.name
        shown = _join(prefix, child_rel)
        result = _visit(entry, child_rel, shown, rules, root_real, visited, options)
        if isinstance(result, tuple):
            stack.append((entry.path, child_rel, _rules_for(entry.path, child_rel, rules), None))
        elif result is not None:
            yield result


def _visit(entry: os.DirEntry, rel: str, shown: str, rules: list, root_real: str,
           visited: dict, options: IngestOptions):
    """A FileEntry or Skip to report, a tuple to descend into a directory, or None."""
    ignored = ignored_name(entry.name, options)
    try:
        is_link = entry.is_symlink()
        if is_link and not options.follow_symlinks:
            return _ignored(shown, entry.path, "symlink (following symlinks is off)", options)
        info = os.stat(entry.path) if is_link else entry.stat(follow_symlinks=False)
    except OSError as exc:
        if ignored:
            return _ignored(shown, entry.path, ignored, options)
        return Skip(shown, entry.path, _loop_or_unreadable(exc), _os_message(exc, entry.path))
    is_dir = stat.S_ISDIR(info.st_mode)
    ignored = ignored or _ignored_by_rules(rel, is_dir, rules) or (is_dir and _junk_dir(entry.path))
    if ignored:
        return _ignored(shown, entry.path, ignored, options)
    if is_link:
        real = os.path.realpath(entry.path)
        if real != root_real and not real.startswith(root_real.rstrip(os.sep) + os.sep):
            return Skip(shown, entry.path, OUTSIDE_ROOT,
                        f"symlink to {real} leads outside the dropped folder")
    if is_dir:
        key = (info.st_dev, info.st_ino)
        if key in visited:
            first = visited[key] or "the dropped folder itself"
            return Skip(shown, entry.path, SYMLINK_LOOP,
                        f"same folder as {first}; not walked twice")
        visited[key] = rel
        return (rel,)
    if stat.S_ISREG(info.st_mode):
        return FileEntry(shown, entry.path, info.st_size, info.st_mtime_ns)
    kind = "FIFO" if stat.S_ISFIFO(info.st_mode) else "socket" if stat.S_ISSOCK(info.st_mode) \
        else "device"
    return Skip(shown, entry.path, UNSUPPORTED, f"{kind}, not a regular file")


def ignored_name(name: str, options: IngestOptions) -> str | None:
    if name in JUNK_DIRS:
        return f"junk folder {name}"
    if name in JUNK_FILES or name.startswith("~$"):
        return f"junk file {name}"
    if name.startswith(".") and not options.include_hidden:
        return "hidden"
    return None


def _junk_dir(path: str) -> str | None:
    if os.path.exists(os.path.join(path, "pyvenv.cfg")):
        return "Python virtualenv (pyvenv.cfg)"
    if os.path.isdir(os.path.join(path, "conda-meta")):
        return "conda environment (conda-meta)"
    return None


def _rules_for(path: str, rel: str, parent_rules: list) -> list:
    """Parent rules plus this folder's .rlmignore, if any: [(base rel, spec)]."""
    ignore = os.path.join(path, IGNORE_FILE)
    try:
        with open(ignore, encoding="utf-8", errors="replace") as handle:
            lines = handle.read().splitlines()
    except FileNotFoundError:
        return parent_rules
    except OSError as exc:
        log.warning("cannot read %s: %s", ignore, exc)
        return parent_rules
    import pathspec
    spec = pathspec.GitIgnoreSpec.from_lines(lines)
    return parent_rules + [(rel, spec)]


def _ignored_by_rules(rel: str, is_dir: bool, rules: list) -> str | None:
    """Gitignore semantics across nested .rlmignore files: the deepest file with
    a matching pattern decides (a later "!pattern" re-includes)."""
    decision = None
    for base, spec in rules:
        sub = rel[len(base) + 1:] if base else rel
        result = spec.check_file(sub + "/" if is_dir else sub)
        if result.include is not None:
            decision = (result.include, base)
    if decision and decision[0]:
        where = f"{decision[1]}/{IGNORE_FILE}" if decision[1] else IGNORE_FILE
        return f"matched by {where}"
    return None


def _ignored(shown: str, source: str, why: str, options: IngestOptions) -> Skip | None:
    return Skip(shown, source, IGNORED, why) if options.report_ignored else None


def _join(prefix: str, rel: str) -> str:
    return f"{prefix}/{rel}" if prefix and rel else prefix or rel


def _loop_or_unreadable(exc: OSError) -> str:
    return SYMLINK_LOOP if exc.errno == errno.ELOOP else UNREADABLE


def _os_message(exc: OSError, path: str) -> str:
    message = exc.strerror or str(exc)
    if os.path.islink(path):
        try:
            return f"{message} (symlink to {os.readlink(path)})"
        except OSError as inner:
            log.debug("readlink failed for %s: %s", path, inner)
    return message

