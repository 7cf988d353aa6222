"""The architecture, checked on the source (by AST, nothing is imported):

* dependencies point one way: ui -> simulation -> algorithms; ``dashboard/ui`` imports nothing
  from ``dashboard.algorithms`` (it goes through ``dashboard.simulation.catalogue``);
* ``dashboard/algorithms`` is pure numpy/scipy: no param, panel, holoviews, bokeh or dask;
* no import cycles among the dashboard's modules (module-level or function-level imports);
* no module over :data:`MAX_LINES` lines unless its docstring says why it is one idea.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2] / "dashboard"


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _package(path: Path) -> str:
    name = _module_name(path)
    return name if path.name == "__init__.py" else name.rpartition(".")[0]


def _resolve(path: Path, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    base = _package(path).split(".")
    base = base[: len(base) - node.level + 1]
    return ".".join(base + ([node.module] if node.module else []))


def _imports(path: Path, tree: ast.AST | None = None) -> list[tuple[int, str]]:
    """Absolute module names imported anywhere in ``path`` (relative imports resolved)."""
    out = []
    for node in ast.walk(tree or ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            module = _resolve(path, node)
            out.append((node.lineno, module))
            # ``from .. import algorithms`` names the package as an attribute
            out += [(node.lineno, f"{module}.{a.name}") for a in node.names]
    return out


UI_FILES = sorted((ROOT / "ui").rglob("*.py"))
ALGORITHM_FILES = sorted((ROOT / "algorithms").rglob("*.py"))
ALL_FILES = sorted(ROOT.rglob("*.py"))


@pytest.mark.parametrize("path", UI_FILES, ids=lambda p: str(p.relative_to(ROOT / "ui")))
def test_the_ui_imports_nothing_from_the_algorithms_layer(path):
    bad = [(n, m) for n, m in _imports(path) if m.startswith("dashboard.algorithms")]
    assert bad == [], f"{path.name} imports {bad}; go through dashboard.simulation.catalogue"


@pytest.mark.parametrize("path", ALGORITHM_FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_the_algorithms_layer_imports_no_ui_simulation_or_dask(path):
    third_party = ("param", "panel", "holoviews", "bokeh", "dask", "distributed")
    ours = ("dashboard.ui", "dashboard.simulation", "dashboard.plugins")
    bad = [
        (n, m) for n, m in _imports(path) if m.split(".")[0] in third_party or m.startswith(ours)
    ]
    assert bad == [], f"{path} imports {bad}"


def test_the_scan_sees_relative_imports():
    """Guard against a scan that passes vacuously."""
    found = _imports(ROOT / "ui" / "config.py")  # (ui/model.py re-exports it)
    assert any(m == "dashboard.simulation.catalogue" for _, m in found)
    assert len(UI_FILES) >= 5 and len(ALGORITHM_FILES) >= 20
    assert any(p.parent.name == "plots" for p in UI_FILES)  # sub-packages are scanned too


# ----------------------------------------------------------------------------- import cycles
def _runtime_imports(tree: ast.Module) -> list[ast.Import | ast.ImportFrom]:
    """Every import that can run: at module level and inside functions (a function-level
    import that closes a loop is still a cycle, only hidden), but not under
    ``if TYPE_CHECKING:``."""
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skipped |= {id(n) for stmt in node.body for n in ast.walk(stmt)}
    return [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Import | ast.ImportFrom) and id(node) not in skipped
    ]


def import_graph() -> dict[str, set[str]]:
    """``module -> modules of the dashboard it imports``.  ``from P import x`` is an edge to
    ``P.x`` when that is a module, else to ``P``."""
    modules = {_module_name(p): p for p in ALL_FILES}
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        edges: set[str] = set()
        for node in _runtime_imports(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                edges |= {a.name for a in node.names if a.name in modules}
                continue
            module = _resolve(path, node)
            for alias in node.names:
                sub = f"{module}.{alias.name}"
                if sub in modules:
                    edges.add(sub)
                elif module in modules:
                    edges.add(module)
        edges.discard(name)
        graph[name] = edges
    return graph


def import_cycles(graph: dict[str, set[str]]) -> list[set[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[set[str]] = []

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
            component = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.add(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(component)

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


#: Cycles still allowed, each with a comment saying why (none today: every cycle was broken; the
#: test fails if a cycle outside these groups appears).
ALLOWED_CYCLES: list[set[str]] = []


def test_no_import_cycles_among_the_dashboards_modules():
    cycles = import_cycles(import_graph())
    bad = [sorted(c) for c in cycles if not any(c <= allowed for allowed in ALLOWED_CYCLES)]
    assert bad == [], f"import cycles (dependencies must point one way): {bad}"


def test_the_cycle_finder_finds_a_cycle():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert import_cycles(graph) == [{"a", "b", "c"}]
    src = (
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    import a\n"
        "def f():\n    import b\n"
    )
    seen = [a.name for n in _runtime_imports(ast.parse(src)) for a in n.names]
    assert seen == ["TYPE_CHECKING", "b"]  # a function-level import counts, a typing-only one not
    real = import_graph()
    assert "dashboard.simulation.store" in real["dashboard.simulation.sweep"]
    assert "dashboard.cli_args" in real["dashboard.cli"]


# ----------------------------------------------------------------------------- module size
#: Most lines a module may have unless its docstring has a line starting "One idea:".
MAX_LINES = 550
#: Modules over the limit while being split, each with who splits it (none today).
OVERSIZE_PENDING: dict[str, str] = {}


@pytest.mark.parametrize("path", ALL_FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_module_is_over_the_size_limit_unless_it_is_one_idea(path):
    n = len(path.read_text().splitlines())
    if n <= MAX_LINES or str(path.relative_to(ROOT)) in OVERSIZE_PENDING:
        return
    doc = ast.get_docstring(ast.parse(path.read_text())) or ""
    assert any(line.strip().startswith("One idea:") for line in doc.splitlines()), (
        f"{path.relative_to(ROOT)} has {n} lines (> {MAX_LINES}): split it along its ideas, "
        "or say why it is one idea in a 'One idea: ...' line of its docstring"
    )


# ---------------------------------------------------------------- textbook and fast engines
#: The fast machinery (batched lock-step engines, certified arg-maxima, table normals, caches):
#: a textbook engine imports none of it, directly or through another module.  The modules of
#: the registered fast engines are added to it below.
FAST_MODULES = {
    f"dashboard.algorithms.{m}"
    for m in (
        "cmab.policies.batched",
        "cmab.policies.beta_levels",
        "cmab.policies.covariance",
        "cmab.policies.covariance_index",
        "cmab.policies.covariance_pairs",
        "cmab.policies.cucb",
        "cmab.policies.disc_batched",
        "cmab.policies.disc_sroq_batched",
        "cmab.policies.gr_batch",
        "cmab.policies.lockstep",
        "cmab.rewards.aggregate",
        "cmab.rewards.reference",
        "semiparametric.policies.bose",
        "semiparametric.policies.certified_argmax",
        "semiparametric.policies.elimination_bound",
        "semiparametric.policies.linear_foils",
        "semiparametric.policies.per_round",
        "semiparametric.policies.spts",
    )
}
#: Longest textbook file: a student reads it in one sitting.
TEXTBOOK_MAX_LINES = 300
#: Algorithms whose registered class is not yet a textbook engine by these rules (they share
#: a file with other algorithms or use fast machinery); each must leave this list when its
#: textbook file is written (the xfail is strict).
TEXTBOOK_PENDING: set[str] = set()


def _builtin_infos():
    from dashboard.algorithms import registry

    return [i for i in registry.algorithms_for(None) if not i.plugin]


def _module_path(module: str) -> Path | None:
    base = ROOT.parent.joinpath(*module.split("."))
    for p in (base.with_suffix(".py"), base / "__init__.py"):
        if p.exists():
            return p
    return None


def _closure(path: Path) -> dict[str, Path]:
    """Every dashboard module ``path`` imports, directly or through other modules."""
    seen: dict[str, Path] = {}
    todo = [path]
    while todo:
        for _, m in _imports(todo.pop()):
            p = _module_path(m) if m.startswith("dashboard.") else None
            if p is not None and m not in seen:
                seen[m] = p
                todo.append(p)
    return seen


def _textbook_problems(info) -> list[str]:
    import sys

    path = ROOT / info.textbook_file
    fast = FAST_MODULES | ({info.fast.__module__} if info.fast is not None else set())
    problems = []
    lines = len(path.read_text().splitlines())
    if lines > TEXTBOOK_MAX_LINES:
        problems.append(f"{lines} lines (at most {TEXTBOOK_MAX_LINES})")
    allowed = {"numpy", "scipy", "dashboard", *sys.stdlib_module_names}
    problems += [f"imports {m}" for _, m in _imports(path) if m.split(".")[0] not in allowed]
    problems += [f"imports {m}" for m in sorted(set(_closure(path)) & fast)]
    sharing = [i.name for i in _builtin_infos() if i.textbook_file == info.textbook_file]
    if sharing != [info.name] and not all(
        issubclass(i.cls, info.cls) or issubclass(info.cls, i.cls)
        for i in _builtin_infos()
        if i.name in sharing
    ):
        problems.append(f"shares its file with {', '.join(n for n in sharing if n != info.name)}")
    return problems


@pytest.mark.parametrize("name", [i.name for i in _builtin_infos()])
def test_each_textbook_file_is_short_and_imports_only_numpy_scipy_and_the_problem_model(name):
    """The textbook engine (the registered class) of every algorithm: one file of at most
    300 lines, importing only the standard library, numpy, scipy and the problem model,
    never the fast machinery (not even through another module)."""
    from dashboard.algorithms import registry

    if name in TEXTBOOK_PENDING:
        pytest.xfail(f"{name}'s textbook engine is not written yet")
    problems = _textbook_problems(registry.algorithm_info(name))
    assert problems == [], f"{name}: {'; '.join(problems)}"


@pytest.mark.parametrize("name", sorted(TEXTBOOK_PENDING))
def test_the_pending_textbook_list_is_current(name):
    """An algorithm leaves :data:`TEXTBOOK_PENDING` as soon as its textbook file passes."""
    from dashboard.algorithms import registry

    assert _textbook_problems(registry.algorithm_info(name)) != []


def test_every_fast_engine_names_the_textbook_algorithm_it_speeds_up():
    infos = _builtin_infos()
    assert len(infos) == 17 and len({i.textbook_file for i in infos}) >= 9
    fast = [i for i in infos if i.fast is not None]
    assert {"CUCB", "BOSE", "SP-TS", "LinUCB"} <= {i.name for i in fast}
    for i in fast:
        assert i.fast.speeds_up == i.name
        assert i.fast.__module__ in FAST_MODULES or i.fast.__module__.endswith(".general")
