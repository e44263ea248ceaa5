"""The house's size figures for docs/dev/house.md: lines of app/ and of its glue, the
largest modules and functions of app/, core/ and ui/, and the size of each docs page.

    .venv/bin/python scripts/house_figures.py              # this tree
    .venv/bin/python scripts/house_figures.py --rev d8db7ab  # another commit of it (git show)

Lines are physical lines (blank and comment lines included); a function's lines run from
its `def` to its last line (decorators excluded, nested functions counted in their outer one too).
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GLUE_EXTRA = {"controller.py", "limit_fixes.py", "trust_actions.py", "trust_shown.py", "ports.py", "run_store.py"}


def files(rev: str | None, pattern: str) -> dict[str, str]:
    if rev is None:
        return {str(p.relative_to(ROOT)): p.read_text(encoding="utf-8") for p in sorted(ROOT.glob(pattern))}
    names = subprocess.run(["git", "ls-tree", "-r", "--name-only", rev], capture_output=True, text=True,
                           cwd=ROOT, check=True).stdout.split()
    chosen = [n for n in names if Path(n).match(pattern)]
    return {n: subprocess.run(["git", "show", f"{rev}:{n}"], capture_output=True, text=True, cwd=ROOT,
                              check=True).stdout for n in chosen}


def is_glue(path: str) -> bool:
    name = Path(path).name
    return name.endswith("_glue.py") or name in GLUE_EXTRA


def main() -> None:
    rev = sys.argv[sys.argv.index("--rev") + 1] if "--rev" in sys.argv else None
    app = files(rev, "app/*.py")
    lines = {p: len(t.splitlines()) for p, t in app.items()}
    glue = {p: n for p, n in lines.items() if is_glue(p)}
    print(f"app/: {sum(lines.values()):,} lines in {len(lines)} modules; "
          f"glue: {sum(glue.values()):,} lines in {len(glue)} modules; controller.py {lines.get('app/controller.py')}")
    print("app/ over 300 lines:", ", ".join(f"{Path(p).name} {n}" for p, n in
                                             sorted(lines.items(), key=lambda x: -x[1]) if n > 300) or "none")
    code = {**app, **files(rev, "core/**/*.py"), **files(rev, "ui/**/*.py"), **files(rev, "core/*.py"),
            **files(rev, "ui/*.py")}
    biggest = sorted(((len(t.splitlines()), p) for p, t in code.items()), reverse=True)[:8]
    print("largest modules (app/, core/, ui/):", ", ".join(f"{p} {n}" for n, p in biggest))
    funcs = []
    for path, text in code.items():
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                funcs.append((node.end_lineno - node.lineno + 1, f"{path}:{node.name}"))
    print("largest functions:", ", ".join(f"{name} {n}" for n, name in sorted(funcs, reverse=True)[:8]))
    app_funcs = sorted((f for f in funcs if f[1].startswith("app/")), reverse=True)[:5]
    print("largest functions in app/:", ", ".join(f"{name} {n}" for n, name in app_funcs))
    docs = files(rev, "docs/*.md")
    sizes = sorted(((len(t.encode()), p) for p, t in docs.items()), reverse=True)
    print(f"docs/*.md: {sum(s for s, _ in sizes) / 1000:.0f} KB over {len(sizes)} pages:",
          ", ".join(f"{Path(p).name} {s / 1000:.1f}" for s, p in sizes))
    dev = files(rev, "docs/dev/*.md")
    print(f"docs/dev/*.md: {sum(len(t.encode()) for t in dev.values()) / 1000:.0f} KB over {len(dev)} pages")


if __name__ == "__main__":
    main()
