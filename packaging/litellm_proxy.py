"""Which modules of litellm's proxy server package can never be imported here?

litellm's SDK imports a few modules of `litellm.proxy` at run time (for
example `litellm.proxy._types` on every completion), so the package cannot be
left out of the bundle whole. Most of it, though, needs the proxy extra
(fastapi, starlette, uvicorn, orjson, ...), which is not installed: those
modules fail to import in any SDK-only install, so leaving them out of the
bundle changes no behaviour and saves megabytes.

A module is unimportable when one of its unconditional module-level imports
(not inside try/if/def/class) names a top-level package that is not installed,
or a litellm module that is itself unimportable, or when its parent package is.
The analysis reads the source (no litellm import), in a second or two.

    build-venv/bin/python packaging/litellm_proxy.py      # prints the modules
"""

from __future__ import annotations

import ast
import importlib.util
import sys
from functools import lru_cache
from pathlib import Path


def _module_files(root: Path, package: str) -> dict[str, Path]:
    """module name -> file, for every .py under `root` (namespace dirs included)."""
    files: dict[str, Path] = {}
    for path in root.rglob("*.py"):
        rel = path.relative_to(root).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        files[".".join([package, *parts])] = path
    return files


def _is_package(path: Path) -> bool:
    return path.name == "__init__.py"


def _top_level_imports(name: str, path: Path) -> list[str]:
    """Absolute module names imported unconditionally at module level."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    except (SyntaxError, UnicodeDecodeError, ValueError):
        return ["<syntax error>"]
    package = name if _is_package(path) else name.rpartition(".")[0]
    found: list[str] = []
    for node in tree.body:
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - (node.level - 1)] if node.level > 1 else base
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            found.append(target)
            found += [f"{target}.{alias.name}" for alias in node.names]   # maybe submodules
    return found


@lru_cache(maxsize=None)
def _installed(top: str) -> bool:
    if top in sys.builtin_module_names or top in sys.stdlib_module_names:
        return True
    try:
        return importlib.util.find_spec(top) is not None
    except (ImportError, ValueError):
        return False


def unimportable_modules(package: str = "litellm.proxy") -> list[str]:
    """The smallest list of module names under `package` that cover every
    unimportable module (a listed package covers its submodules)."""
    spec = importlib.util.find_spec("litellm")
    if spec is None or not spec.submodule_search_locations:
        return []
    litellm_root = Path(next(iter(spec.submodule_search_locations)))
    files = _module_files(litellm_root, "litellm")
    imports = {name: _top_level_imports(name, path) for name, path in files.items()
               if name == package or name.startswith(package + ".")}
    bad: set[str] = set()
    for name, targets in imports.items():
        for target in targets:
            top = target.split(".")[0]
            if target == "<syntax error>" or (top != "litellm" and not _installed(top)):
                bad.add(name)
                break
    changed = True
    while changed:
        changed = False
        for name, targets in imports.items():
            if name in bad:
                continue
            parent = name.rpartition(".")[0]
            if parent in bad or any(t in bad for t in targets):
                bad.add(name)
                changed = True
    return sorted(n for n in bad if not any(n.startswith(b + ".") for b in bad))


if __name__ == "__main__":
    names = unimportable_modules()
    print("\n".join(names))
    print(f"{len(names)} modules (with their submodules) cannot be imported", file=sys.stderr)
