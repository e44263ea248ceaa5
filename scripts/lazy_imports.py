"""Measure app/'s function-local ("lazy") imports where their code runs.

    QT_QPA_PLATFORM=offscreen .venv/bin/python scripts/lazy_imports.py          # report
    QT_QPA_PLATFORM=offscreen .venv/bin/python scripts/lazy_imports.py --write  # rewrite the notes

A lazy import's cost is what it adds to the process it runs in, not to a cold
interpreter. Two places are measured, each in its own fresh process:
  window   the window built and started (app.gui.build_window, then its controller's
           start), the state every glue module of the window runs in;
  cli      app.cli and the command's own module imported (app/cli_*.py), the state a
           command runs in; modules both run (the run service, settings...) are measured
           in the window and in `ask`; app/main.py against `import app.main` alone.
A target already loaded there is free: its note says so. Otherwise the note says how
many modules it adds there (counted in a fresh process per target with that
baseline loaded first). Milliseconds are not written: under this machine's load they
vary by 2-3x from run to run; the module count does not.
"""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NOTE = re.compile(r"(#\s*)lazy: (\+\d+ modules,|\+\d+ modules in|free in)[^\n]*")

WINDOW = """
import os, sys, json, asyncio, tempfile
os.environ.setdefault("RLMSTUDIO_DESKTOP_HOME", tempfile.mkdtemp())
os.environ["PYTHON_KEYRING_BACKEND"] = "keyring.backends.null.Keyring"
from PySide6.QtWidgets import QApplication
app = QApplication([])
from app.gui import build_window
window, controller = build_window(app)
window.show()
for _ in range(50):
    app.processEvents()
"""
CLI = "import app.cli\nimport {module}\n"
# app/ modules both the window and the CLI run (the CLI imports them).
SHARED = {"app.settings", "app.run_service", "app.runner", "app.key_routing", "app.eval_runs",
          "app.transcript_printer", "app.version"}


def baseline(code: str) -> set[str]:
    out = subprocess.run([sys.executable, "-c", code + "\nimport sys, json\nprint(json.dumps(sorted(sys.modules)))"],
                         capture_output=True, text=True, timeout=300, cwd=ROOT)
    if out.returncode != 0:
        raise SystemExit(out.stderr[-2000:])
    return set(json.loads(out.stdout.strip().splitlines()[-1]))


def added(code: str, target: str) -> int:
    probe = (code + "\nimport sys, importlib\nbefore = set(sys.modules)\nimportlib.import_module(%r)\n"
             "print(len(set(sys.modules) - before))" % target)
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=300, cwd=ROOT)
    return int(out.stdout.strip().splitlines()[-1]) if out.returncode == 0 else -1


def lazy_imports(path: Path) -> list[tuple[int, str]]:
    """(line, module imported) of every import inside a function."""
    found = []
    for fn in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for node in ast.walk(fn):
                if isinstance(node, ast.Import):
                    found += [(node.lineno, a.name) for a in node.names]
                elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                    for alias in node.names:     # `from core import identity_migration` is that module
                        sub = f"{node.module}.{alias.name}"
                        is_module = (ROOT / sub.replace(".", "/")).with_suffix(".py").is_file()
                        found.append((node.lineno, sub if is_module else node.module))
    return sorted(set(found))


def main() -> None:
    write = "--write" in sys.argv
    window = baseline(WINDOW)
    results: dict[tuple[str, int], str] = {}
    ask = baseline(CLI.format(module="app.cli_ask"))
    for path in sorted((ROOT / "app").glob("*.py")):
        name = "app." + path.stem
        if name == "app.main":                       # main() runs before anything else is imported
            places = [("the start", "import app.main\n")]
        elif path.stem.startswith("cli"):
            places = [("the command", CLI.format(module=name))]
        elif name in SHARED:                         # both processes run it
            places = [("the window", WINDOW), ("ask", CLI.format(module="app.cli_ask"))]
        else:
            places = [("the window", WINDOW)]
        for line, target in lazy_imports(path):
            parts = []
            for where, code in places:
                base = window if code is WINDOW else ask if code == CLI.format(module="app.cli_ask") \
                    else baseline(code)
                if target in base:
                    parts.append(f"free in {where}")
                else:
                    n = added(code, target)
                    parts.append(f"+{n} modules in {where}" if n >= 0 else f"not measurable in {where}")
            note = "lazy: " + ", ".join(parts) + " (where it runs)"
            results[(str(path.relative_to(ROOT)), line)] = note
            print(f"{path.relative_to(ROOT)}:{line} {target}: {note}", flush=True)
    if write:
        for rel in sorted({r for r, _ in results}):
            path = ROOT / rel
            lines = path.read_text(encoding="utf-8").split("\n")
            for (r, line), note in results.items():
                if r != rel:
                    continue
                for i in (line - 1, line - 2):          # the import's line or the comment above it
                    if 0 <= i < len(lines) and NOTE.search(lines[i]):
                        lines[i] = NOTE.sub(lambda m: m.group(1) + note, lines[i])
                        break
            path.write_text("\n".join(lines), encoding="utf-8")


if __name__ == "__main__":
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    main()
