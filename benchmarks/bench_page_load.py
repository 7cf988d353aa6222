"""Benchmark: what a student waits for when opening the served dashboard, and after Run.

Serves ``panel serve dashboard`` from this checkout on a free port and drives headless
Chromium (``/usr/bin/chromium`` or ``$CHROMIUM_PATH``, through playwright) ``--loads`` times:

* **server build** -- the session's ``create_app()`` plus ``server_doc`` into a Bokeh Document,
  measured in this process (what the server does for every new page, before any byte goes out);
* **page load** -- ``page.goto`` (``?horizon=5000``, so each run ends soon) until the Run
  button and the regret plot exist in BokehJS;
* **first frame** -- Run clicked until the browser's regret curve of the first algorithm has
  data (the issue-9 target is within 1 s for a single user);
* **tab open** (when the page has tabs) -- clicking the Sweep tab / the Play tab until its
  content is shown (the tabs are built on first open, so page load does not pay for them).

Prints a JSON dict of medians (seconds).  Usage:
``python benchmarks/bench_page_load.py [--loads 3]``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
_READY_JS = """() => window.Bokeh !== undefined && Bokeh.documents.length > 0
    && [...Bokeh.documents[0].all_models].some((m) => m.name === 'regret-plot')"""
_HAS_DATA_JS = """() => { for (const m of Bokeh.documents[0].all_models)
    if (m.name && String(m.name).startsWith('regret-') && m.data_source
        && m.data_source.get_length() > 0) return true; return false; }"""


# text of an element through nested shadow roots (Panel widgets live in shadow DOM)
_DEEP_TEXT_JS = """(root) => { const parts = [];
    const walk = (n) => { if (n.nodeType === 3) { parts.push(n.textContent); return; }
        if (n.shadowRoot) walk(n.shadowRoot); for (const c of n.childNodes) walk(c); };
    walk(root); return parts.join(' '); }"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def server_build(repeats: int = 5) -> float:
    """Median seconds of ``create_app()`` + ``server_doc`` (headless, as a served session)."""
    from bokeh.document import Document
    from panel.io.state import set_curdoc

    from dashboard.ui.app import create_app

    def build() -> float:
        doc = Document()
        start = time.perf_counter()
        with set_curdoc(doc):
            create_app(autostart_timer=False).server_doc(doc)
        return time.perf_counter() - start

    build()  # imports and caches warm
    return statistics.median(build() for _ in range(repeats))


def browser(loads: int) -> dict[str, Any]:
    from playwright.sync_api import sync_playwright

    port = _free_port()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "panel",
            "serve",
            "dashboard",
            "--port",
            str(port),
            "--address",
            "127.0.0.1",
            "--allow-websocket-origin",
            f"127.0.0.1:{port}",
        ],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    keys = ("page_load", "first_frame", "sweep_tab", "play_tab")
    out: dict[str, list[float]] = {k: [] for k in keys}
    errors: list[str] = []
    try:
        deadline = time.time() + 90
        while True:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/static/js/bokeh.min.js", timeout=5)
                break
            except OSError:
                if time.time() > deadline:
                    raise RuntimeError("panel serve did not start") from None
                time.sleep(0.3)
        exe = os.environ.get("CHROMIUM_PATH") or shutil.which("chromium") or "/usr/bin/chromium"
        with sync_playwright() as pw:
            b = pw.chromium.launch(executable_path=exe, args=["--no-sandbox"], headless=True)
            for i in range(loads + 1):  # the first load warms the server's imports: dropped
                ctx = b.new_context(viewport={"width": 1600, "height": 1000})
                page = ctx.new_page()
                page.set_default_timeout(180_000)  # a loaded CI machine: slow, not broken
                start = time.perf_counter()
                page.goto(f"http://127.0.0.1:{port}/dashboard?horizon=5000", wait_until="commit")
                page.wait_for_selector(".run-button button", timeout=180_000)
                page.wait_for_function(_READY_JS, timeout=180_000, polling=20)
                loaded = time.perf_counter() - start
                start = time.perf_counter()
                page.locator(".run-button button").click()
                page.wait_for_function(_HAS_DATA_JS, timeout=180_000, polling=20)
                frame = time.perf_counter() - start
                if i:
                    out["page_load"].append(loaded)
                    out["first_frame"].append(frame)
                deadline = time.time() + 60  # the tabs open on an idle page
                progress = page.locator(".progress-text").first
                while "(done)" not in progress.evaluate(_DEEP_TEXT_JS) and time.time() < deadline:
                    time.sleep(0.2)
                for key, label, selector in (
                    ("sweep_tab", "Sweep", ".sweep-run-button button"),
                    ("play_tab", "Play", ".play-arms button"),
                ):
                    tab = page.locator(".bk-tab", has_text=label)
                    if not tab.count():
                        continue
                    start = time.perf_counter()
                    try:
                        tab.first.click()
                        page.locator(selector).first.wait_for(timeout=180_000)
                    except Exception as exc:  # report what was measured, and what was not
                        errors.append(f"{key}: {type(exc).__name__}")
                        continue
                    if i:
                        out[key].append(time.perf_counter() - start)
                ctx.close()
            b.close()
    finally:
        proc.terminate()
        proc.wait(timeout=20)
    medians: dict[str, Any] = {k: round(statistics.median(v), 3) for k, v in out.items() if v}
    return {**medians, **({"errors": errors} if errors else {})}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--loads", type=int, default=3)
    args = ap.parse_args()
    result = {"server_build": round(server_build(), 3), **browser(args.loads)}
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
