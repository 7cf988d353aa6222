"""The classroom notebooks in a real JupyterLab, on a machine without internet.

One ``jupyter lab`` server on localhost (shared by every notebook of the module) serves copies
of the classroom notebooks (``bandit-dashboard notebooks DIR``'s copy); headless Chromium opens
each with every request that would leave the machine aborted and counted, runs *Run All
Cells*, and checks what a student would see: no error output, Bokeh figures drawn on their
canvases, maths typeset by Jupyter's MathJax, no request off the machine, no console error.
Notebook 01's embedded dashboard must stream after its Run button is pressed, and a browser
reload followed by *Run All* in the same kernel must draw the figures again.

Settings the test gives JupyterLab (``JUPYTERLAB_SETTINGS_DIR``): every cell in the DOM
(``windowingMode: none``) and no news or update check.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("jupyterlab")

from test_dashboard import _DEEP_TEXT_JS

from dashboard.shipped import NOTEBOOK_GLOB, copy_notebooks, notebooks_dir

pytestmark = [pytest.mark.browser, pytest.mark.notebooks]

NOTEBOOKS = sorted(p.name for p in notebooks_dir().glob(NOTEBOOK_GLOB))

#: Figures BokehJS built in the page, with whether their canvas has painted pixels.
_FIGURES_JS = """() => {
  if (!window.Bokeh || !Bokeh.index) return [];
  const views = [...Bokeh.index.query((v) => v.model && v.model.type === "Figure")];
  return views.filter((v) => v.el.isConnected).map((v) => {
    const canvas = v.canvas_view.primary.canvas;
    let painted = 0;
    if (canvas.width > 0 && canvas.height > 0) {
      const px = canvas.getContext("2d").getImageData(0, 0, canvas.width, canvas.height).data;
      for (let i = 3; i < px.length; i += 16) if (px[i] > 0) painted++;
    }
    return {name: v.model.name, title: v.model.title ? v.model.title.text : null,
            fw: v.frame.bbox.width, fh: v.frame.bbox.height, painted};
  });
}"""

_PROMPTS_JS = """() => [...document.querySelectorAll('.jp-CodeCell .jp-InputPrompt')]
  .map((e) => e.textContent.trim())"""

_ERRORS_JS = """() => [...document.querySelectorAll(
  '.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]')]
  .map((e) => e.textContent).filter((t) => /Traceback|Error/.test(t))"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _settings(folder: Path) -> None:
    for plugin, values in (
        ("@jupyterlab/notebook-extension/tracker", {"windowingMode": "none"}),
        ("@jupyterlab/apputils-extension/notification", {"fetchNews": "false"}),
    ):
        path = folder / f"{plugin}.jupyterlab-settings"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(values))


@pytest.fixture(scope="module")
def lab(tmp_path_factory, artifacts) -> dict[str, Any]:
    """A JupyterLab server on localhost serving copies of the classroom notebooks."""
    base = tmp_path_factory.mktemp("lab")
    work = base / "work"
    copy_notebooks(work)
    _settings(base / "settings")
    port = _free_port()
    env = dict(os.environ, JUPYTERLAB_SETTINGS_DIR=str(base / "settings"))
    env.pop("NOTEBOOK_SCALE", None)  # the classroom sizes
    log = artifacts / "jupyterlab.log"
    out = log.open("w")
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "jupyterlab",
            "--no-browser",
            "--ip=127.0.0.1",
            f"--port={port}",
            "--ServerApp.token=",
            "--ServerApp.password=",
            "--allow-root",
            "--ServerApp.disable_check_xsrf=True",  # (the test shuts kernels down by REST)
            f"--ServerApp.root_dir={work}",
        ],
        cwd=work,
        env=env,
        stdout=out,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.time() + 120
    while True:
        try:
            with urllib.request.urlopen(f"{url}/api/status", timeout=5) as resp:
                if resp.status == 200:
                    break
        except OSError:
            pass
        if proc.poll() is not None or time.time() > deadline:
            proc.kill()
            pytest.fail(f"jupyter lab did not start:\n{log.read_text()[-3000:]}")
        time.sleep(0.5)
    try:
        yield {"url": url, "port": port, "log": log}
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
        out.close()


@pytest.fixture
def lab_page(chromium, lab):
    """A page whose requests off this machine are aborted and recorded."""
    context = chromium.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.external = []  # type: ignore[attr-defined]
    page.console_errors = []  # type: ignore[attr-defined]
    port = lab["port"]

    def refuse(route) -> None:
        page.external.append(route.request.url)
        route.abort()

    here = rf"^(?!https?://(127\.0\.0\.1|localhost):{port}/|wss?://(127\.0\.0\.1|localhost):{port}/"
    page.route(re.compile(here + r"|data:|blob:)"), refuse)
    page.on(
        "console",
        lambda m: page.console_errors.append(m.text) if m.type == "error" else None,
    )
    page.on("pageerror", lambda exc: page.console_errors.append(str(exc)))
    yield page
    context.close()
    _shut_kernels(lab["url"])


def _shut_kernels(url: str) -> None:
    """Shut down every kernel of the server (each notebook's test starts its own)."""
    with urllib.request.urlopen(f"{url}/api/kernels", timeout=10) as resp:
        kernels = json.loads(resp.read())
    for k in kernels:
        req = urllib.request.Request(f"{url}/api/kernels/{k['id']}", method="DELETE")
        with contextlib.suppress(OSError):
            urllib.request.urlopen(req, timeout=30).close()


def _open(page: Any, lab: dict[str, Any], name: str) -> None:
    # ?reset: a fresh workspace, so the notebooks of earlier tests are not reopened beside it
    page.goto(f"{lab['url']}/lab/tree/{name}?reset")
    page.wait_for_selector(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Cell", timeout=90_000)
    select = page.get_by_role("button", name="Select", exact=True)  # a kernel dialog, if asked
    try:
        select.click(timeout=3_000)
    except Exception:  # no dialog: the kernel starts by itself
        pass
    page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle']", timeout=90_000)


def _run_all(page: Any, timeout: float = 300) -> list[str]:
    """Run All Cells from the Run menu; wait until every code cell has run."""
    page.get_by_role("menuitem", name="Run", exact=True).click()
    page.get_by_role("menuitem", name="Run All Cells", exact=True).click()
    deadline = time.time() + timeout
    prompts: list[str] = []
    while time.time() < deadline:
        prompts = page.evaluate(_PROMPTS_JS)
        # (a solution cell's input is collapsed: its prompt is empty; Run All runs the cells
        # in order, so a numbered last cell and no other waiting or running one means all ran)
        shown = [p for p in prompts if p]
        if prompts and prompts[-1] and all(re.fullmatch(r"\[\d+\]:", p) for p in shown):
            return prompts
        if page.evaluate(_ERRORS_JS):  # Run All stops at an error
            break
        time.sleep(1)
    raise AssertionError(f"not every cell ran: {prompts}; errors: {page.evaluate(_ERRORS_JS)}")


def _drawn(page: Any) -> list[dict[str, Any]]:
    """The notebook's Bokeh figures once they are all painted (waits a little for layout)."""
    figures: list[dict[str, Any]] = []
    for _ in range(30):
        figures = page.evaluate(_FIGURES_JS)
        if figures and all(f["painted"] > 50 for f in figures):
            return figures
        time.sleep(0.5)
    return figures


def _check_page(page: Any, name: str, figures: list[dict[str, Any]]) -> None:
    assert page.evaluate(_ERRORS_JS) == [], name
    assert figures, f"{name}: no Bokeh figure drawn"
    blank = [f for f in figures if f["painted"] <= 50]
    assert blank == [], f"{name}: blank figures {blank}"
    assert page.locator("mjx-container").count() >= 1, f"{name}: no maths typeset"
    assert page.external == [], f"{name}: requests left the machine: {page.external[:5]}"
    panel_errors = [e for e in page.console_errors if re.search(r"Bokeh|Panel|bokeh|panel", e)]
    assert panel_errors == [], f"{name}: {panel_errors}"


@pytest.mark.timeout(900)
@pytest.mark.parametrize("name", NOTEBOOKS)
def test_each_notebook_runs_offline_with_figures_and_maths(lab_page, lab, name):
    _open(lab_page, lab, name)
    _run_all(lab_page)
    _check_page(lab_page, name, _drawn(lab_page))


def _progress(page: Any) -> int:
    """The embedded dashboard's ``t`` (its progress text, read through the shadow DOM)."""
    text = page.locator(".progress-text").last.evaluate(_DEEP_TEXT_JS)
    match = re.search(r"t = ([\d,]+)", text)
    return int(match.group(1).replace(",", "")) if match else -1


@pytest.mark.timeout(900)
def test_the_embedded_dashboard_streams_and_a_reload_draws_again(lab_page, lab):
    name = NOTEBOOKS[0]
    _open(lab_page, lab, name)
    _run_all(lab_page)
    app = lab_page.locator(".jp-OutputArea-output").last
    app.scroll_into_view_if_needed()
    # the dashboard fits the cell: its board figures keep readable frames
    board = [f for f in _drawn(lab_page) if str(f["name"] or "").endswith("-plot")]
    assert board, "the embedded dashboard drew no board figure"
    for f in board:
        assert f["fw"] >= 300 and f["fh"] >= 180, f
    width = app.evaluate("(e) => [e.scrollWidth, e.clientWidth]")
    assert width[0] <= width[1] + 2, f"the dashboard overflows its cell: {width}"
    app.locator(".run-button button").click()
    first = _progress(lab_page)
    deadline = time.time() + 60
    while _progress(lab_page) <= max(first, 0) and time.time() < deadline:
        time.sleep(0.5)
    assert _progress(lab_page) > max(first, 0), "the embedded dashboard did not stream"
    # a browser reload, then Run All in the same kernel: drawn again, still offline
    lab_page.reload()
    _open(lab_page, lab, name)
    _run_all(lab_page)
    _check_page(lab_page, f"{name} after a reload", _drawn(lab_page))
