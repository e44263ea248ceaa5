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


# ---- import cycles ------------------------------------------------------------------------
PACKAGES = ("app", "core", "ui")


def module_files() -> dict[str, Path]:
    """Every module of app/, core/, ui/ by dotted name (a package by its __init__)."""
    found = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            if "__pycache__" in path.parts:
                continue
            parts = path.relative_to(ROOT).with_suffix("").parts
            found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def import_graph(files: dict[str, Path], *, lazy: bool) -> dict[str, set[str]]:
    """module -> the modules of ours it imports: at module level only (the top of the file,
    also inside `if`/`try` there), or with `lazy` also those inside functions.
    `from pkg import name` counts as pkg.name when that is a module, else as pkg."""
    graph: dict[str, set[str]] = {}
    for name, path in files.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        nodes = ast.walk(tree) if lazy else _module_level(tree.body)
        deps: set[str] = set()

        def add(target: str) -> None:
            while target and target not in files:
                target = target.rpartition(".")[0]
            if target and target != name:
                deps.add(target)
        for node in nodes:
            if isinstance(node, ast.Import):
                for alias in node.names:
                    add(alias.name)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
                    package = package[:len(package) - (node.level - 1)]
                    base = ".".join(package + ([base] if base else []))
                for alias in node.names:
                    full = f"{base}.{alias.name}" if base else alias.name
                    add(full if full in files else base)
        graph[name] = deps
    return graph


def _module_level(body: list) -> list:
    """Statements run at import: the body, and the bodies of top-level if/try/with blocks
    (not `if TYPE_CHECKING:`, which never runs)."""
    out = []
    for node in body:
        out.append(node)
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            out += _module_level(node.orelse)
        elif isinstance(node, (ast.If, ast.Try, ast.With)):
            for field in ("body", "orelse", "finalbody"):
                out += _module_level(getattr(node, field, []) or [])
            for handler in getattr(node, "handlers", []) or []:
                out += _module_level(handler.body)
    return out


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan), sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(found)


def test_the_cycle_finder_finds_a_cycle_through_a_package_and_a_lazy_import(tmp_path):
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "__init__.py").write_text("")
    (tmp_path / "app" / "a.py").write_text("from app import b\n")
    (tmp_path / "app" / "b.py").write_text("def f():\n    from app.a import x\n")
    (tmp_path / "app" / "c.py").write_text("import app.a\n")
    files = {"app": tmp_path / "app" / "__init__.py", **{f"app.{m}": tmp_path / "app" / f"{m}.py" for m in "abc"}}
    assert cycles(import_graph(files, lazy=False)) == []
    assert cycles(import_graph(files, lazy=True)) == [["app.a", "app.b"]]


def test_no_import_cycles_at_module_level():
    """No cycle among the module-level imports of app/, core/ and ui/."""
    assert cycles(import_graph(module_files(), lazy=False)) == []


def test_no_import_cycles_anywhere_even_lazily():
    """A lazy import (inside a function, or under `if TYPE_CHECKING:`) does not hide a
    cycle: none at all in app/, core/ and ui/ (issue 28: the engine's rlm/run/subcalls and
    the store's CSV export through trust/results were two)."""
    assert cycles(import_graph(module_files(), lazy=True)) == []


def test_the_store_imports_neither_trust_nor_the_exports():
    """The exports read the store and the trust checks, so they sit above both (core/exports/);
    the store imports neither, lazily or not (issue 28: it imported trust for its exports)."""
    graph = import_graph(module_files(), lazy=True)
    found = {name: sorted(d for d in deps if d.startswith(("core.trust", "core.exports")))
             for name, deps in graph.items() if name == "core.store" or name.startswith("core.store.")}
    assert {name: deps for name, deps in found.items() if deps} == {}


# ---- the engine's layer, and folders ---------------------------------------------------------
# The engine (core/engine) runs a question; evaluation, trust, the store and the exports read
# or drive what it does, so they sit above it and it imports none of them, lazily or not.
ENGINE_MAY_NOT_IMPORT = ("core.evaluation", "core.trust", "core.store", "core.exports")
# Edges allowed, each named (none: the plain call is the engine's, core/engine/direct.py).
ALLOWED_EDGES: set[tuple[str, str]] = set()


def folder(module: str, files: dict[str, Path]) -> str:
    """What a module counts as between folders: a package's modules count as the package
    (core.engine.rlm -> core.engine, app.gui -> app); a module directly in core/ is its own
    (core.providers), since the rest of the house imports those leaves."""
    parts = module.split(".")
    if parts[0] != "core" or len(parts) >= 3:
        return ".".join(parts[:2]) if parts[0] == "core" else parts[0]
    return module


def folder_graph(graph: dict[str, set[str]], files: dict[str, Path]) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for name, deps in graph.items():
        for dep in deps:
            if (name, dep) in ALLOWED_EDGES:
                continue
            a, b = folder(name, files), folder(dep, files)
            if a != b:
                out.setdefault(a, set()).add(b)
    return out


def test_the_engine_imports_no_evaluation_trust_store_or_exports():
    """Lazy imports included: a function-local import ties the two folders as much as one at the top."""
    graph = import_graph(module_files(), lazy=True)
    bad = sorted((name, dep) for name, deps in graph.items() if name.startswith("core.engine")
                 for dep in deps if dep.startswith(ENGINE_MAY_NOT_IMPORT) and (name, dep) not in ALLOWED_EDGES)
    assert bad == []


def test_the_allowed_edges_still_exist():
    """An allowance for an edge that is gone is deleted, not kept as a hole."""
    graph = import_graph(module_files(), lazy=True)
    assert sorted(e for e in ALLOWED_EDGES if e[1] not in graph.get(e[0], set())) == []


def test_no_circles_between_folders_even_lazily():
    """No two folders (core/engine, core/llm, app ...; a module directly in core/ counts alone)
    import each other, directly or around a loop, lazily or not."""
    files = module_files()
    assert cycles(folder_graph(import_graph(files, lazy=True), files)) == []


def test_the_folder_rule_finds_a_circle_through_a_lazy_import(tmp_path):
    for package in ("core", "core/engine", "core/llm"):
        (tmp_path / package).mkdir()
        (tmp_path / package / "__init__.py").write_text("")
    (tmp_path / "core" / "providers.py").write_text("def f():\n    from core.llm.price import x\n")
    (tmp_path / "core" / "llm" / "price.py").write_text("")
    (tmp_path / "core" / "llm" / "errors.py").write_text("from core import providers\n")
    files = {"core": tmp_path / "core" / "__init__.py", "core.engine": tmp_path / "core/engine/__init__.py",
             "core.llm": tmp_path / "core/llm/__init__.py", "core.providers": tmp_path / "core/providers.py",
             "core.llm.price": tmp_path / "core/llm/price.py", "core.llm.errors": tmp_path / "core/llm/errors.py"}
    graph = import_graph(files, lazy=True)
    assert cycles(graph) == []                                   # no circle between modules
    assert cycles(folder_graph(graph, files)) == [["core.llm", "core.providers"]]   # one between folders


def glue_violations(source: str) -> list[str]:
    """What app/ code may not do (issue 15 item 3): touch another object's private
    attributes (`other._x`; `self._x` and a module's `argparse._SubParsersAction` are fine), or
    take the whole controller (an `__init__` parameter named `controller`)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__"):
            base = node.value
            if not (isinstance(base, ast.Name) and (base.id in ("self", "cls") or base.id in sys.modules)):
                found.append(f"line {node.lineno}: {ast.unparse(node)}")
        if isinstance(node, ast.FunctionDef) and node.name == "__init__":
            if "controller" in [a.arg for a in node.args.args + node.args.kwonlyargs]:
                found.append(f"line {node.lineno}: __init__ takes the controller")
    return found


def test_the_glue_rule_finds_what_it_forbids():
    assert sorted(glue_violations("class G:\n    def __init__(self, controller):\n        controller._pending = 1\n")) \
        == ["line 2: __init__ takes the controller", "line 3: controller._pending"]
    assert glue_violations("import argparse\nx: argparse._SubParsersAction\nself._ok = 1\n") == []


def test_app_glue_touches_no_private_fields_and_takes_no_controller():
    bad = {str(p.relative_to(ROOT)): v for p in sorted((ROOT / "app").glob("*.py"))
           if (v := glue_violations(p.read_text(encoding="utf-8")))}
    assert bad == {}


def is_glue(path: Path) -> bool:
    return path.name.endswith("_glue.py") or path.name in ("limit_fixes.py", "trust_actions.py")


def port_violations(source: str) -> list[str]:
    """What a glue object may not do: take callables where a port belongs (an `__init__`
    parameter annotated Callable: the napari pattern hands a narrow object, app/ports.py), or
    read back with getattr an attribute of its own (one set from outside or maybe never)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef) and node.name == "__init__":
            for arg in node.args.args + node.args.kwonlyargs:
                if arg.annotation is not None and "Callable" in ast.unparse(arg.annotation):
                    found.append(f"line {node.lineno}: __init__ takes a callable {arg.arg}")
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("getattr", "hasattr") \
                and node.args and isinstance(node.args[0], ast.Name) and node.args[0].id == "self":
            found.append(f"line {node.lineno}: {ast.unparse(node)}")
    return found


def test_the_port_rule_finds_what_it_forbids():
    source = ("class G:\n    def __init__(self, *, settings: Callable[[], Any], store: StorePort):\n"
              "        self.x = getattr(self, 'badge', None)\n")
    assert port_violations(source) == ["line 2: __init__ takes a callable settings",
                                       "line 3: getattr(self, 'badge', None)"]


def test_glue_takes_ports_not_callables():
    glue = [p for p in sorted((ROOT / "app").glob("*.py")) if is_glue(p)]
    assert len(glue) >= 12
    bad = {p.name: v for p in glue if (v := port_violations(p.read_text(encoding="utf-8")))}
    assert bad == {}


# The objects app/ may set a field on, besides itself: its own plain data, by the name it
# always has there (argparse's args; the settings and their entries; the run's RunHandle,
# app/run_service.py; the log handler app/gui.py tags) and the interpreter's hooks.
OWN_DATA = {"sys", "threading", "args", "s", "settings", "entry", "endpoint", "handle", "handler"}


def field_assignments(source: str) -> list[str]:
    """Where app/ code sets a field of another object (`window.x = ...`, `self.view.x = ...`):
    a widget (or any object app/ does not own as data) is told through a method or a
    signal, never edited from outside."""
    found = []
    for node in ast.walk(ast.parse(source)):
        targets = node.targets if isinstance(node, ast.Assign) else \
            [node.target] if isinstance(node, (ast.AugAssign, ast.AnnAssign)) else []
        for target in targets:
            for each in (target.elts if isinstance(target, ast.Tuple) else [target]):
                if not isinstance(each, ast.Attribute):
                    continue
                base = each.value
                if isinstance(base, ast.Name) and (base.id in ("self", "cls") or base.id in OWN_DATA):
                    continue
                found.append(f"line {node.lineno}: {ast.unparse(each)}")
    return found


def test_the_field_rule_finds_what_it_forbids():
    source = ("def wire(w, glue):\n    w.close_guard = glue.may_close\n    self.citations.color = 'red'\n"
              "    dialog.run_id, self.ok = 'r1', 1\n    args.paths = []\n    handle.run = None\n")
    assert field_assignments(source) == ["line 2: w.close_guard", "line 3: self.citations.color",
                                         "line 4: dialog.run_id"]


def test_app_sets_no_field_of_a_widget_or_another_object():
    """The glue wires signals and calls methods; it does not set another object's fields
    (a window's close guard, a dialog's run id): the widget offers a method for each."""
    bad = {p.name: v for p in sorted((ROOT / "app").glob("*.py")) if (v := field_assignments(p.read_text(encoding="utf-8")))}
    assert bad == {}


def test_app_modules_stay_small():
    """app/ is a thin composition root: no module over 400 lines, the controller under 300."""
    lines = {p.name: len(p.read_text(encoding="utf-8").splitlines()) for p in (ROOT / "app").glob("*.py")}
    assert {name: n for name, n in lines.items() if n > 400} == {}
    assert lines["controller.py"] < 300


def imported_names(path: Path) -> set[tuple[str, str]]:
    """(module, name) of every `from module import name` in the file, lazy ones included."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            found |= {(node.module, a.name) for a in node.names}
    return found


def test_app_has_one_hardening_and_one_key_routing_entry_point():
    """Issue 28: hardening is core.engine_process.prepare_engine_process (not also a run
    service's own harden_once or eval's harden_engine_process); which key a call carries is
    app.key_routing.route_key_for (not also a runner default or the controller's own route)."""
    hardening = {("core.repl.sandbox", "harden_engine_process")}
    run_routing = {("core.routing", "RunRoutes"), ("app.runner", "default_key_for")}
    bad = {}
    for path in sorted((ROOT / "app").glob("*.py")):
        names = imported_names(path)
        found = sorted(names & hardening) + (sorted(names & run_routing) if path.name != "key_routing.py" else [])
        defined = {n.name for n in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
                   if isinstance(n, ast.FunctionDef)}
        found += sorted(defined & {"harden_once", "default_key_for"})
        if found:
            bad[path.name] = found
    assert bad == {}


def test_every_lazy_import_in_app_says_why():
    """Issue 28: a function-local import in app/ only where a measured cost (or an import
    circle) says so, and the comment on its line or the line above says which."""
    bare = []
    for path in sorted((ROOT / "app").glob("*.py")):
        lines = path.read_text(encoding="utf-8").splitlines()
        for fn in ast.walk(ast.parse("\n".join(lines))):
            if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for node in ast.walk(fn):
                if isinstance(node, (ast.Import, ast.ImportFrom)):
                    here = lines[node.lineno - 1] + (lines[node.lineno - 2] if node.lineno > 1 else "")
                    if "lazy" not in here:
                        bare.append(f"{path.name}:{node.lineno}")
    assert sorted(set(bare)) == []


def test_migrations_import_no_live_code():
    """What a shipped migration does cannot change when a module it borrowed from changes:
    core/store/migrations.py imports nothing of app/, core/ or ui/, lazily or not."""
    ours = sorted(n for n in imported(ROOT / "core" / "store" / "migrations.py") if n.split(".")[0] in PACKAGES)
    assert ours == []
