"""Take the README's screenshots again: ``.venv/bin/python docs/screenshots.py``.

Serves the dashboard (``panel serve dashboard``) and a JupyterLab on free local ports, drives
Debian's headless Chromium (``/usr/bin/chromium``) at a projector's 1280x720, and writes
into ``docs/``:

* ``screenshot-lesson.png``: lesson 1 open beside its running preset;
* ``screenshot-present.png``: present mode (``?present=1``) during a run;
* ``screenshot-dark.png``: the dark theme (``?theme=dark``) during a run;
* ``screenshot-notebook-01.png`` and ``screenshot-notebook-04.png``: two classroom notebooks
  after *Run All Cells* in JupyterLab (``--no-notebooks`` skips them).

Nothing leaves the machine: every request to another host is aborted, as in the tests.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
SIZE = {"width": 1280, "height": 720}
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run"]


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def _server(cmd: list[str], probe: str, cwd: Path, env: dict[str, str] | None = None):
    proc = subprocess.Popen(
        cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        deadline = time.time() + 120
        while True:
            try:
                with urllib.request.urlopen(probe, timeout=5):
                    break
            except OSError:
                if proc.poll() is not None or time.time() > deadline:
                    raise SystemExit(f"error: {' '.join(cmd[:4])} did not start") from None
                time.sleep(0.5)
        yield
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()


#: An element's text through every shadow root below it (Panel's widgets live in them).
_DEEP_TEXT = """(root) => {
  const parts = [];
  const walk = (n) => {
    if (n.nodeType === 3) { parts.push(n.textContent); return; }
    if (n.shadowRoot) walk(n.shadowRoot);
    for (const c of n.childNodes) walk(c);
  };
  walk(root);
  return parts.join(" ");
}"""


def _page(browser, origin: str):
    page = browser.new_page(viewport=SIZE)
    page.route(
        re.compile(rf"^(?!{re.escape(origin)}/|ws://{re.escape(origin[7:])}/|data:|blob:)"),
        lambda route: route.abort(),
    )
    return page


def _dashboard(browser) -> None:
    port = _port()
    origin = f"http://127.0.0.1:{port}"
    cmd = [sys.executable, "-m", "panel", "serve", "dashboard", "--port", str(port)]
    cmd += ["--address", "127.0.0.1", "--allow-websocket-origin", f"127.0.0.1:{port}"]
    with _server(cmd, f"{origin}/static/js/bokeh.min.js", ROOT):
        shots = {
            "screenshot-lesson.png": "lesson=1&autorun=1",
            "screenshot-present.png": "lesson=2&autorun=1&present=1",
            "screenshot-dark.png": "lesson=3&autorun=1&theme=dark",
        }
        for name, query in shots.items():
            page = _page(browser, origin)
            page.goto(f"{origin}/dashboard?{query}")
            progress = page.locator(".progress-text").first
            progress.wait_for(timeout=120_000)
            deadline = time.time() + 120
            while not re.search(r"t = [1-9]", progress.evaluate(_DEEP_TEXT)):
                if time.time() > deadline:
                    raise SystemExit(f"error: the run of {name} did not start")
                time.sleep(0.5)
            time.sleep(6)  # a few seconds of the run
            page.screenshot(path=str(DOCS / name))
            page.close()
            print(f"wrote docs/{name}")


def _notebooks(browser) -> None:
    from dashboard.shipped import copy_notebooks

    base = Path(tempfile.mkdtemp())
    try:
        copy_notebooks(base / "work")
        settings = base / "settings" / "@jupyterlab"
        (settings / "notebook-extension").mkdir(parents=True)
        (settings / "notebook-extension" / "tracker.jupyterlab-settings").write_text(
            '{"windowingMode": "none"}'
        )
        (settings / "apputils-extension").mkdir(parents=True)
        (settings / "apputils-extension" / "notification.jupyterlab-settings").write_text(
            '{"fetchNews": "false"}'
        )
        port = _port()
        origin = f"http://127.0.0.1:{port}"
        env = dict(os.environ, JUPYTERLAB_SETTINGS_DIR=str(base / "settings"))
        cmd = [sys.executable, "-m", "jupyterlab", "--no-browser", "--ip=127.0.0.1"]
        cmd += [f"--port={port}", "--ServerApp.token=", "--allow-root"]
        with _server(cmd, f"{origin}/api/status", base / "work", env):
            for stem, scroll_to in (("01", "The same thing, live"), ("04", "Definition 2")):
                (name,) = [p.name for p in (base / "work").glob(f"{stem}-*.ipynb")]
                page = _page(browser, origin)
                page.goto(f"{origin}/lab/tree/{name}?reset")  # (a fresh workspace)
                try:  # a kernel dialog, if JupyterLab asks
                    page.get_by_role("button", name="Select", exact=True).click(timeout=5_000)
                except Exception:
                    pass
                page.wait_for_selector(
                    ".jp-Notebook-ExecutionIndicator[data-status='idle']", timeout=90_000
                )
                page.get_by_role("menuitem", name="Run", exact=True).click()
                page.get_by_role("menuitem", name="Run All Cells", exact=True).click()
                for _ in range(300):
                    prompts = page.evaluate(
                        "() => [...document.querySelectorAll('.jp-CodeCell .jp-InputPrompt')]"
                        ".map((e) => e.textContent.trim())"
                    )
                    if prompts and prompts[-1] and "[*]:" not in prompts:
                        break
                    time.sleep(1)
                time.sleep(4)
                heading = page.locator(".jp-MarkdownOutput", has_text=scroll_to).first
                heading.evaluate("(e) => e.scrollIntoView()")
                time.sleep(2)
                out = DOCS / f"screenshot-notebook-{stem}.png"
                page.screenshot(path=str(out))
                page.close()
                print(f"wrote docs/{out.name}")
    finally:
        shutil.rmtree(base, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-notebooks", action="store_true", help="only the dashboard's")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path="/usr/bin/chromium", args=ARGS)
        _dashboard(browser)
        if not args.no_notebooks:
            _notebooks(browser)
        browser.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
