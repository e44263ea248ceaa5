"""The walk: order, hidden and junk, .rlmignore, symlinks, odd files, many roots."""

from __future__ import annotations

import os

import pytest

from core.ingest import IngestOptions, walk


def touch(path, data=b"x"):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def paths(files):
    return [f.path for f in files]


def test_sorted_depth_first_case_sensitive(tmp_path):
    for name in ("b.txt", "A.txt", "a/z.txt", "a/B.txt", "c.txt", "a.txt"):
        touch(tmp_path / name)
    files, skips = walk([tmp_path])
    assert paths(files) == ["A.txt", "a/B.txt", "a/z.txt", "a.txt", "b.txt", "c.txt"]
    assert skips == []
    assert files[0].source_path == str(tmp_path / "A.txt") and files[0].size == 1


def test_hidden_and_junk_skipped_by_default(tmp_path):
    touch(tmp_path / "keep.txt")
    for junk in (".hidden.txt", ".git/config", "node_modules/x/index.js", "__pycache__/m.pyc",
                 ".DS_Store", "~$draft.docx", "sub/.cache/data", ".tox/log.txt"):
        touch(tmp_path / junk)
    touch(tmp_path / "myenv/pyvenv.cfg", b"home = /usr")
    touch(tmp_path / "myenv/lib/site.py")
    touch(tmp_path / "build/output.txt")          # build/ and dist/ are kept on purpose
    files, skips = walk([tmp_path])
    assert paths(files) == ["build/output.txt", "keep.txt"]
    assert skips == []
    _, reported = walk([tmp_path], IngestOptions(report_ignored=True))
    reasons = {s.path: s.detail for s in reported}
    assert {s.reason for s in reported} == {"ignored"}
    assert reasons["myenv"] == "Python virtualenv (pyvenv.cfg)"
    assert reasons[".git"] == "junk folder .git"
    assert reasons[".hidden.txt"] == "hidden"
    included, _ = walk([tmp_path], IngestOptions(include_hidden=True))
    assert ".hidden.txt" in paths(included) and "sub/.cache/data" in paths(included)
    assert not any(p.startswith((".git/", "node_modules")) for p in paths(included))


def test_rlmignore_at_root_and_nested(tmp_path):
    touch(tmp_path / ".rlmignore", b"*.log\nsecret/\n!keep.log\n")
    for name in ("a.log", "keep.log", "secret/s.txt", "notes.txt", "docs/b.log",
                 "docs/draft.md", "docs/final.md"):
        touch(tmp_path / name)
    touch(tmp_path / "docs/.rlmignore", b"draft.md\n!b.log\n")
    files, _ = walk([tmp_path])
    assert paths(files) == ["docs/b.log", "docs/final.md", "keep.log", "notes.txt"]
    _, reported = walk([tmp_path], IngestOptions(report_ignored=True))
    assert {s.path: s.detail for s in reported}["docs/draft.md"] == "matched by docs/.rlmignore"


def test_symlink_loop_dangling_and_outside_root(tmp_path):
    root = tmp_path / "root"
    touch(root / "a/file.txt")
    touch(tmp_path / "outside.txt")
    os.symlink(root, root / "a/loop")                      # back to the top
    os.symlink(root / "a", root / "again")                 # same folder twice
    os.symlink(tmp_path / "missing.txt", root / "dangling.txt")
    os.symlink(tmp_path / "outside.txt", root / "escape.txt")
    os.symlink(tmp_path, root / "up")
    os.symlink(root / "a/file.txt", root / "inside-link.txt")
    os.symlink("self", root / "self")                      # ELOOP
    files, skips = walk([root])
    assert paths(files) == ["a/file.txt", "inside-link.txt"]
    by_path = {s.path: (s.reason, s.detail) for s in skips}
    assert by_path["a/loop"][0] == "symlink_loop"
    assert by_path["again"][0] == "symlink_loop"
    assert by_path["dangling.txt"][0] == "unreadable"
    assert "No such file or directory" in by_path["dangling.txt"][1]
    assert "missing.txt" in by_path["dangling.txt"][1]
    assert by_path["escape.txt"][0] == "outside_root"
    assert by_path["up"][0] == "outside_root"
    assert by_path["self"][0] == "symlink_loop"
    files, skips = walk([root], IngestOptions(follow_symlinks=False))
    assert paths(files) == ["a/file.txt"] and skips == []


def test_deep_nesting(tmp_path):
    deep = tmp_path
    for level in range(100):
        deep = deep / f"d{level}"
    touch(deep / "bottom.txt")
    files, skips = walk([tmp_path])
    assert len(files) == 1 and files[0].path.count("/") == 100 and skips == []


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_fifo_is_never_opened(tmp_path):
    os.mkfifo(tmp_path / "pipe")
    files, skips = walk([tmp_path])
    assert files == [] and [(s.path, s.reason) for s in skips] == [("pipe", "unsupported")]


def test_several_roots_get_prefixes_and_missing_paths_are_skips(tmp_path):
    touch(tmp_path / "one/x.txt")
    touch(tmp_path / "two/one/y.txt")
    touch(tmp_path / "single.txt")
    files, skips = walk([tmp_path / "one", tmp_path / "two/one", tmp_path / "single.txt",
                         tmp_path / "nope"])
    assert paths(files) == ["one/x.txt", "one (2)/y.txt", "single.txt"]
    assert [(s.path, s.reason) for s in skips] == [("nope", "unreadable")]
    alone, _ = walk([tmp_path / "single.txt"])
    assert paths(alone) == ["single.txt"]


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads everything")
def test_unreadable_folder_is_a_skip(tmp_path):
    touch(tmp_path / "locked/x.txt")
    (tmp_path / "locked").chmod(0)
    try:
        files, skips = walk([tmp_path])
    finally:
        (tmp_path / "locked").chmod(0o755)
    assert files == [] and skips[0].reason == "unreadable" and "Permission" in skips[0].detail


def test_rlmignore_doc_example_and_never_read_itself(tmp_path):
    touch(tmp_path / ".rlmignore", b"*.log\ndrafts/\n!drafts/final.md\nraw-exports/**/*.csv\n")
    for name in ("a.log", "drafts/final.md", "raw-exports/2024/x.csv", "raw-exports/2024/x.txt",
                 "raw-exports/top.csv", "report.md"):
        touch(tmp_path / name)
    files, _ = walk([tmp_path], IngestOptions(include_hidden=True))
    assert paths(files) == ["raw-exports/2024/x.txt", "report.md"]
    alone, _ = walk([tmp_path / "a.log"])
    assert paths(alone) == ["a.log"]                  # dropped directly: always read
