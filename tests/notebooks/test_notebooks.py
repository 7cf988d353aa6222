"""The classroom notebooks run top to bottom and are committed without outputs.

Each notebook is executed with nbclient in a fresh ``python3`` kernel (the interpreter running
the tests) at the classroom scale, with a per-notebook timeout.  If no ``python3`` kernelspec
is installed (a bare venv), a session fixture installs one for ``sys.executable`` into a
temporary directory and points ``JUPYTER_PATH`` at it (``conftest.py``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

pytestmark = pytest.mark.notebooks

ROOT = Path(__file__).resolve().parents[2]
NB_DIR = ROOT / "notebooks"
NOTEBOOKS = sorted(NB_DIR.glob("*.ipynb"))
TIMEOUT = 150  # seconds per cell; a whole classroom notebook takes well under a minute


def test_there_are_lesson_and_reproduction_notebooks() -> None:
    names = {p.name for p in NOTEBOOKS}
    assert {"10-reproduce-combinatorial.ipynb", "11-reproduce-semiparametric.ipynb"} <= names
    assert len(names) >= 7


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_committed_without_outputs(path: Path) -> None:
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code, "a notebook without code"
    for cell in code:
        assert cell.outputs == [], f"{path.name}: cell {cell.id} has outputs"
        assert cell.execution_count is None, f"{path.name}: cell {cell.id} has a count"
    params = "\n".join(c.source for c in code[:3])
    assert 'SCALE = os.environ.get("NOTEBOOK_SCALE", "classroom")' in params
    assert "hv.extension" in code[0].source or "pn.extension" in code[0].source


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_solutions_are_hidden_and_tagged(path: Path) -> None:
    nb = nbformat.read(path, as_version=4)
    for i, cell in enumerate(nb.cells):
        if "solution" in cell.metadata.get("tags", []):
            assert cell.metadata["jupyter"]["source_hidden"] is True
            assert "Solution" in nb.cells[i - 1].source  # a markdown "Solution" header


def test_notebooks_are_generated_by_the_builder() -> None:
    """The committed files equal what notebooks/build_notebooks.py writes."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("build_notebooks", NB_DIR / "build_notebooks.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert set(module.NOTEBOOKS) == {p.name for p in NOTEBOOKS}
    for name, nb in module.NOTEBOOKS.items():
        committed = (NB_DIR / name).read_text(encoding="utf-8")
        assert nbformat.writes(nb).rstrip("\n") == committed.rstrip("\n"), (
            f"{name} is stale: run python notebooks/build_notebooks.py"
        )


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_executes(path: Path, kernel_name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NOTEBOOK_SCALE", "classroom")
    nb = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(
        nb,
        timeout=TIMEOUT,
        kernel_name=kernel_name,
        resources={"metadata": {"path": str(NB_DIR)}},
    )
    client.execute()
    errors = [
        out
        for cell in nb.cells
        if cell.cell_type == "code"
        for out in cell.outputs
        if out.output_type == "error"
    ]
    assert not errors
    # every plot cell produced a rich (HTML / Bokeh) output, not just text
    rich = [
        out
        for cell in nb.cells
        if cell.cell_type == "code"
        for out in cell.outputs
        if out.output_type in ("display_data", "execute_result")
        and any(k.startswith(("text/html", "application/vnd")) for k in out.get("data", {}))
    ]
    assert rich, f"{path.name} displayed no plot"
