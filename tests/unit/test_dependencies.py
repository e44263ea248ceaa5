"""Every third-party package the code imports is declared in pyproject.toml (not only
pulled in by another package that might drop it): app/, core/ and ui/ in the dependencies,
tests/ in the test extra or the dependencies."""

import ast
import re
import sys
import tomllib
from importlib.metadata import packages_distributions
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
OURS = {"app", "core", "ui", "tests", "resources", "packaging", "scripts", "__future__"}
# Files run by another interpreter: the reference implementation's driver runs in rlms' own venv.
OTHER_INTERPRETER = {"tests/bench/ref_driver.py"}


def imported_top_levels(folder: str) -> set[str]:
    names = set()
    for path in (ROOT / folder).rglob("*.py"):
        if path.relative_to(ROOT).as_posix() in OTHER_INTERPRETER:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names |= {a.name.split(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names.add(node.module.split(".")[0])
    return {n for n in names if n not in sys.stdlib_module_names and n not in OURS}


def declared(*groups: str) -> set[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    specs = list(project["dependencies"])
    for group in groups:
        specs += project["optional-dependencies"][group]
    return {_norm(re.split(r"[\s=<>!~;\[]", spec, maxsplit=1)[0]) for spec in specs}


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def undeclared(folders: tuple[str, ...], names: set[str]) -> list[str]:
    owners = packages_distributions()
    missing = []
    for module in sorted(set().union(*(imported_top_levels(f) for f in folders))):
        # a module of an extra that is not installed here (ray) is known by its own name
        dists = {_norm(d) for d in owners.get(module, [])} or {_norm(module)}
        if not dists & names:
            missing.append(f"{module} ({', '.join(sorted(dists)) or 'not installed'})")
    return missing


def test_the_app_declares_what_it_imports():
    """The dependencies, and the extras the app imports only when asked (ray for a grid on a cluster)."""
    assert undeclared(("app", "core", "ui"), declared("ray")) == []


def test_the_tests_declare_what_they_import():
    assert undeclared(("tests",), declared("test", "ray")) == []
