"""The dashboard shown inside a notebook: math is loaded and the output carries the app's model.

A three-cell notebook (the classroom notebooks' own setup cell, then notebook 01's cell that
displays :class:`~dashboard.ui.app.DashboardApp`) runs in a fresh kernel with nbclient; nothing
is simulated, so it stays small.  It proves that

* the setup cell sends Bokeh's MathJax bundle inline (the app's render script waits for
  ``root.MathJax``; without the bundle the dashboard would never appear), again when re-run
  (a browser reload), and a HoloViews plot's output names no CDN, and
* the app cell's rich output is a Panel/Bokeh model: the ``application/vnd.holoviews_exec``
  mimetype whose id is the root of the embedded Bokeh document, and that document holds the
  dashboard's own widgets.
"""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

pytestmark = pytest.mark.notebooks

ROOT = Path(__file__).resolve().parents[2]
NB_DIR = ROOT / "notebooks"
EXEC = "application/vnd.holoviews_exec.v0+json"


def _builder():
    spec = importlib.util.spec_from_file_location("build_notebooks", NB_DIR / "build_notebooks.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _bundle_sizes(cell) -> list[int]:
    """Sizes of the BokehJS load scripts a cell sent (the full inline bundle is megabytes)."""
    return [
        len(o["data"]["application/javascript"])
        for o in cell.outputs
        if "application/javascript" in o.get("data", {})
        and "Bokeh.set_log_level" in o["data"]["application/javascript"]
    ]


def test_setup_is_offline_and_resends_the_bundle_when_rerun(kernel_name: str) -> None:
    """The setup cell sends BokehJS, Panel and MathJax inline, a HoloViews plot's output
    names no CDN, and a re-run of the setup cell (what a browser reload needs) sends the whole
    bundle again instead of Panel's small "reloading" script."""
    from nbformat.v4 import new_code_cell, new_notebook

    setup = _builder().SETUP
    nb = new_notebook()
    nb.cells = [
        new_code_cell(setup),
        new_code_cell("hv.Curve([1, 2, 3])"),
        new_code_cell(setup),
    ]
    nbclient.NotebookClient(nb, timeout=150, kernel_name=kernel_name).execute()
    assert not [o for c in nb.cells for o in c.outputs if o.output_type == "error"]
    first, again = _bundle_sizes(nb.cells[0]), _bundle_sizes(nb.cells[2])
    assert max(first) > 1_000_000, "no inline BokehJS bundle"
    assert max(again) > 1_000_000, "a re-run sent only the reloading script"
    assert "BEGIN bokeh-mathjax" in json.dumps([o.get("data", {}) for o in nb.cells[2].outputs])
    plot = json.dumps([o.get("data", {}) for o in nb.cells[1].outputs])
    assert EXEC in plot
    assert not re.search(r"https?://(?:cdn\.holoviz\.org|cdn\.bokeh\.org|unpkg\.com)", plot)


def test_notebook_displays_the_app_with_its_model(kernel_name: str) -> None:
    from nbformat.v4 import new_code_cell, new_notebook

    builder = _builder()
    app_cells = [c.source for c in builder.NB01.cells if "DashboardApp()" in c.source]
    assert len(app_cells) == 1, "notebook 01 should display the dashboard once"
    nb = new_notebook()
    nb.cells = [new_code_cell(builder.SETUP), new_code_cell(builder.PARAMS)]
    # notebook 01's cell needs load_lesson from an earlier cell
    nb.cells.append(new_code_cell("from dashboard.ui.lessons import load_lesson"))
    nb.cells.append(new_code_cell(app_cells[0]))
    nbclient.NotebookClient(
        nb, timeout=150, kernel_name=kernel_name, resources={"metadata": {"path": str(NB_DIR)}}
    ).execute()
    outputs = [o for c in nb.cells for o in c.outputs]
    assert not [o for o in outputs if o.output_type == "error"]

    # the extension cell sends Bokeh's MathJax bundle, inline
    setup_out = json.dumps([o.get("data", {}) for o in nb.cells[0].outputs])
    assert "BEGIN bokeh-mathjax" in setup_out, "MathJax bundle missing (or not inline)"

    # the app cell's result is a Panel model, not text
    result = [o for o in nb.cells[-1].outputs if o.output_type == "execute_result"]
    assert len(result) == 1
    data, meta = result[0]["data"], result[0].get("metadata", {})
    assert EXEC in data and "text/html" in data
    root_id = meta[EXEC]["id"]
    html = data["text/html"]
    assert f'data-root-id="{root_id}"' in html or f"data-root-id='{root_id}'" in html
    # the embedded document's root is that model, and it holds the dashboard's widgets
    docs = re.search(r"var docs_json = (\{.*?\});\n", html, flags=re.S)
    assert docs, "no embedded Bokeh document"
    doc = json.loads(docs.group(1))
    roots = [r for d in doc.values() for r in d["roots"]]
    assert any(r.get("id") == root_id for r in roots)
    text = docs.group(1)
    assert "Run" in text and "Load this lesson" in text
    # and its render script waits for MathJax, which the setup cell provided
    assert "root.MathJax !== undefined" in html
