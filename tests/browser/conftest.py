"""Fixtures for real-browser tests: a served dashboard and headless Chromium (Debian's).

`playwright install` cannot download browsers here, so we drive the system Chromium. On a
laptop without it the browser tests skip with a reason; in CI (CI=true) a missing browser is a
failure, because these tests must run there.
"""

from __future__ import annotations

import os
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


@pytest.fixture(scope="session")
def chromium():
    """A headless Chromium browser (playwright), shared by the session."""
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
def served_app() -> Iterator[str]:
    """`panel serve dashboard` on a free local port; yields the app URL."""
    port = _free_port()
    log = ARTIFACTS / "panel-serve.log"
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
            ],
            cwd=ROOT,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
        url = f"http://127.0.0.1:{port}/dashboard"
        deadline = time.time() + 60
        while True:
            try:
                with urllib.request.urlopen(url, timeout=2) as resp:
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
    """A fresh browser context and page on the served app, collecting console errors."""
    context = chromium.new_context(viewport={"width": 1600, "height": 1000})
    pg = context.new_page()
    pg.console_errors = []  # type: ignore[attr-defined]
    pg.on(
        "console",
        lambda msg: pg.console_errors.append(msg.text) if msg.type == "error" else None,
    )
    pg.on("pageerror", lambda exc: pg.console_errors.append(str(exc)))
    yield pg
    context.close()
