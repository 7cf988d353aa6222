"""The classroom notebooks run top to bottom and are committed without outputs.

Each notebook is executed with nbclient in a fresh ``python3`` kernel (the interpreter running
the tests) at the classroom scale, with a per-notebook timeout.  If no ``python3`` kernelspec
is installed (a bare venv), a session fixture installs one for ``sys.executable`` into a
temporary directory and points ``JUPYTER_PATH`` at it (``conftest.py``).

One notebook is also served with ``panel serve`` (what an instructor does to show a notebook as
an app): the page answers, the last, ``.servable()`` cell ran and nothing failed.  The fast,
non-executing checks (LaTeX maths, servable last cells) are in ``test_notebook_maths.py``.
"""

from __future__ import annotations

import html
import os
import re
import socket
import subprocess
import sys
import time
import urllib.request
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


#: The notebook served by ``panel serve`` (its server starts in about 5-15 s and builds the page,
#: running the whole notebook at the classroom scale, in about 10-20 s).
SERVED = "01-oracle-calls.ipynb"
SERVE_TIMEOUT = 120  # seconds for start-up and the first page together


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.mark.timeout(SERVE_TIMEOUT + 60)
def test_panel_serve_serves_the_last_cell(tmp_path: Path) -> None:
    """``panel serve notebooks/01-oracle-calls.ipynb``: HTTP 200, the page carries the title of
    the last cell's ``.servable(title=...)`` (so the whole notebook ran), and neither the page
    nor the server's log shows a traceback."""
    pytest.importorskip("nbconvert")  # Panel's notebook handler needs it
    nb = nbformat.read(NB_DIR / SERVED, as_version=4)
    last = [c for c in nb.cells if c.cell_type == "code"][-1].source
    title = re.search(r'\.servable\(title="([^"]+)"\)', last)
    assert title, f"{SERVED}: the last code cell has no .servable(title=...)"
    port = _free_port()
    log = tmp_path / "serve.log"
    command = [sys.executable, "-m", "panel", "serve", str(NB_DIR / SERVED)]
    command += ["--port", str(port), "--address", "127.0.0.1"]
    command += ["--allow-websocket-origin", f"127.0.0.1:{port}"]
    env = {**os.environ, "NOTEBOOK_SCALE": "classroom"}
    deadline = time.monotonic() + SERVE_TIMEOUT
    with log.open("w") as out:
        server = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, env=env, cwd=ROOT)
    try:
        while "Bokeh app running" not in log.read_text():
            assert server.poll() is None, f"panel serve exited:\n{log.read_text()}"
            assert time.monotonic() < deadline, f"panel serve did not start:\n{log.read_text()}"
            time.sleep(0.25)
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # no proxy
        url = f"http://127.0.0.1:{port}/{Path(SERVED).stem}"
        with opener.open(url, timeout=max(1.0, deadline - time.monotonic())) as response:
            status, page = response.status, response.read().decode("utf-8")
    finally:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
    text = log.read_text()
    assert status == 200
    assert "Traceback" not in page
    assert "Traceback" not in text and "Error running application handler" not in text, text
    served = re.search(r"<title>([^<]*)</title>", page)
    assert served and html.unescape(served.group(1)) == title.group(1), (
        "the servable cell did not run"
    )
