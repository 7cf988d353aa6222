"""Fixtures for real-browser tests: a served dashboard and headless Chromium (Debian's).

`playwright install` cannot download browsers here, so we drive the system Chromium. On a
laptop without it the browser tests skip with a reason; in CI (CI=true) a missing browser is a
failure, because these tests must run there.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]


def _chromium_path() -> str | None:
    for candidate in (os.environ.get("CHROMIUM_PATH"), "/usr/bin/chromium"):
        if candidate and Path(candidate).exists():
            return candidate
    return shutil.which("chromium") or shutil.which("chromium-browser")


def _missing(reason: str) -> None:
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        pytest.fail(f"{reason} (browser tests must run in CI)")
    pytest.skip(reason)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def chromium():
    """A headless Chromium browser (playwright), shared by the tests of one module.

    Not session scoped: playwright's sync API keeps its asyncio loop *running* in the main
    thread while it is started, so every later test that calls ``asyncio.run`` (the classroom
    benchmark's smoke test, the Bokeh lock canary, the loop pacer) would fail after the browser
    modules.  Module scope stops it when the last browser module ends."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _missing("the playwright package is not installed (pip install -e '.[test]')")
    path = _chromium_path()
    if path is None:
        _missing("Chromium not found; install Debian's 'chromium' package")
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=path, args=CHROMIUM_ARGS, headless=True)
        yield browser
        browser.close()


@pytest.fixture(scope="session")
def artifacts() -> Path:
    """The git-ignored folder for test artefacts (screenshots, the server log)."""
    ARTIFACTS.mkdir(exist_ok=True)
    return ARTIFACTS


@pytest.fixture(scope="module")
def server_log(request) -> Path:
    """The served process's stdout + stderr of this test module (one file per module, and per
    pytest-xdist worker: two servers never write one file, whatever xdist's scheduling)."""
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    name = request.module.__name__.rsplit(".", 1)[-1] + (f"-{worker}" if worker else "")
    return ARTIFACTS / f"panel-serve-{name}.log"


@pytest.fixture(scope="module")
def served_app(server_log) -> Iterator[str]:
    """`panel serve dashboard` on a free local port; yields the app URL.

    Module scoped, so the server (and any run it is still streaming) is gone before the
    non-browser tests that follow use the CPU.  Its output goes to ``server_log``."""
    port = _free_port()
    log = server_log
    ARTIFACTS.mkdir(exist_ok=True)
    with log.open("w") as out:
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
                "--num-procs",
                "1",
                # destroy the sessions of closed pages within a second (their runs stop)
                "--check-unused-sessions",
                "500",
                "--unused-session-lifetime",
                "500",
            ],
            cwd=ROOT,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
        url = f"http://127.0.0.1:{port}/dashboard"
        # Poll a static file, not the app: every GET of the app builds a whole session
        # (seconds on a loaded machine), and timed-out polls would pile sessions up.
        probe = f"http://127.0.0.1:{port}/static/js/bokeh.min.js"
        deadline = time.time() + 90
        while True:
            try:
                with urllib.request.urlopen(probe, timeout=5) as resp:
                    if resp.status == 200:
                        break
            except OSError:
                pass
            if proc.poll() is not None or time.time() > deadline:
                proc.kill()
                pytest.fail(f"panel serve did not start; see {log}:\n{log.read_text()[-2000:]}")
            time.sleep(0.3)
        try:
            yield url
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()


@pytest.fixture
def page(chromium, served_app):
    """A fresh browser context and page on the served app.

    ``page.console_errors`` collects console errors and uncaught page errors.
    ``page.external_requests`` records every request that leaves the served app (fonts, CDNs);
    they are answered with an empty response so that the tests behave the same with and
    without internet access (``test_page_needs_no_external_resources`` asserts there are
    none; hiding them here keeps the other tests about the app itself).
    """
    origin = served_app.split("/dashboard")[0]
    context = chromium.new_context(viewport={"width": 1600, "height": 1000}, accept_downloads=True)
    pg = context.new_page()
    pg.console_errors = []  # type: ignore[attr-defined]
    pg.external_requests = []  # type: ignore[attr-defined]

    def off_host(route) -> None:
        pg.external_requests.append(route.request.url)
        route.fulfill(status=200, body="", content_type="text/plain")

    # a regular expression is matched inside the browser driver: same-origin requests never
    # make a round trip through Python
    pg.route(re.compile(rf"^(?!{re.escape(origin)}/|data:|blob:)"), off_host)
    pg.on(
        "console",
        lambda msg: pg.console_errors.append(msg.text) if msg.type == "error" else None,
    )
    pg.on("pageerror", lambda exc: pg.console_errors.append(str(exc)))
    yield pg
    # stop a run the test left going, so it does not slow the next tests down
    try:
        reset = pg.locator(".reset-button button")
        if reset.count() and reset.is_enabled():
            reset.click(timeout=2000)
    except Exception:  # the page may be gone or broken: closing is what matters
        pass
    context.close()
