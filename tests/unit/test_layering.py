"""The house rules of DESIGN section 2, checked: core/ never imports Qt, ui or app, and
importing any of it loads no litellm (its ~2 s import stays off the GUI's start-up);
ui/ never talks to SQLite, litellm, the engine or processes directly."""

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def modules(package: str) -> list[str]:
    return sorted(".".join(p.relative_to(ROOT).with_suffix("").parts) for p in (ROOT / package).rglob("*.py")
                  if p.name != "__init__.py" and "__pycache__" not in p.parts)


def imported(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def test_importing_all_of_core_loads_no_qt_ui_app_or_litellm():
    code = ("import sys\n" + "".join(f"import {m}\n" for m in modules("core")) +
            "bad = sorted(m for m in sys.modules if m.split('.')[0] in "
            "('PySide6', 'qasync', 'app', 'ui', 'litellm'))\nprint(','.join(bad))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == ""


def test_ui_talks_to_no_database_model_engine_or_process():
    forbidden = ("sqlite3", "sqlite_utils", "litellm", "subprocess", "core.store", "core.engine", "core.llm",
                 "core.repl")
    offenders = {}
    for path in (ROOT / "ui").rglob("*.py"):
        bad = sorted(n for n in imported(path) if n.startswith(forbidden))
        if bad:
            offenders[str(path.relative_to(ROOT))] = bad
    assert offenders == {}
