"""Dependencies point one way: ui -> simulation -> algorithms (checked on the source, by AST)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2] / "dashboard"


def _imports(path: Path) -> list[tuple[int, str]]:
    """Absolute module names imported by ``path`` (relative imports resolved)."""
    package = ".".join(path.relative_to(ROOT.parent).with_suffix("").parts[:-1])
    out = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            out.append((node.lineno, module))
            # ``from .. import algorithms`` names the package as an attribute
            out += [(node.lineno, f"{module}.{a.name}") for a in node.names]
    return out


UI_FILES = sorted((ROOT / "ui").glob("*.py"))
ALGORITHM_FILES = sorted((ROOT / "algorithms").rglob("*.py"))


@pytest.mark.parametrize("path", UI_FILES, ids=lambda p: p.name)
def test_the_ui_imports_nothing_from_the_algorithms_layer(path):
    bad = [(n, m) for n, m in _imports(path) if m.startswith("dashboard.algorithms")]
    assert bad == [], f"{path.name} imports {bad}; go through dashboard.simulation.catalogue"


@pytest.mark.parametrize("path", ALGORITHM_FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_the_algorithms_layer_imports_no_ui_or_simulation(path):
    banned = (
        "param",
        "panel",
        "holoviews",
        "bokeh",
        "dashboard.ui",
        "dashboard.simulation",
        "dashboard.plugins",
    )
    bad = [
        (n, m)
        for n, m in _imports(path)
        if m.split(".")[0] in banned[:4] or m.startswith(banned[4:])
    ]
    assert bad == [], f"{path} imports {bad}"


def test_the_scan_sees_relative_imports():
    """Guard against a scan that passes vacuously."""
    found = _imports(ROOT / "ui" / "model.py")
    assert any(m == "dashboard.simulation.catalogue" for _, m in found)
    assert len(UI_FILES) >= 5 and len(ALGORITHM_FILES) >= 20
