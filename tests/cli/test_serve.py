"""``python -m dashboard serve``: an instructor's one command serves the app and /instructor,
with simulations on an embedded Dask cluster (default) or in-process, and an optional password."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from dashboard.cli import main

ROOT = Path(__file__).resolve().parents[2]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _get(url: str, timeout: float = 60.0) -> tuple[int, str, str]:
    req = urllib.request.Request(url)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, r.geturl(), r.read().decode("utf-8", "replace")
    except urllib.error.HTTPError as exc:
        return exc.code, url, ""


class _Server:
    def __init__(self, *args: str) -> None:
        self.port = _free_port()
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        env.pop("BANDIT_DASHBOARD_SCHEDULER", None)
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "dashboard", "serve", "--port", str(self.port), *args],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def wait(self, path: str, timeout: float = 90.0) -> tuple[int, str, str]:
        stop = time.monotonic() + timeout
        while time.monotonic() < stop:
            if self.proc.poll() is not None:
                out = self.proc.stdout.read().decode(errors="replace")
                raise AssertionError(f"server exited {self.proc.returncode}:\n{out[-3000:]}")
            try:
                return _get(self.url(path))
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                time.sleep(0.5)
        raise AssertionError(f"server did not answer {path} within {timeout} s")

    def stop(self) -> str:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=10)
        return self.proc.stdout.read().decode(errors="replace")


def test_serve_in_process_serves_app_and_instructor_page():
    server = _Server("--in-process")
    try:
        status, _, html = server.wait("/dashboard")
        assert status == 200 and "Bandit teaching dashboard" in html
        for page in ("/instructor", "/sweep", "/play", "/play?problem=semiparametric"):
            status, _, html = server.wait(page)
            assert status == 200, page
    finally:
        log = server.stop()
    assert "Traceback" not in log, log[-3000:]


def test_serve_embedded_dask_cluster_and_password(tmp_path):
    secret = tmp_path / "class-password"
    secret.write_text("correct horse\n")
    server = _Server("--workers", "1", "--password-file", str(secret))
    try:
        status, final_url, _ = server.wait("/dashboard")
        assert status in (200, 401, 403)
        assert "login" in final_url or status != 200, "the app must sit behind the login page"
        status, _, html = _get(server.url("/login"))
        assert status == 200 and "password" in html.lower()
    finally:
        log = server.stop()
    assert "Traceback" not in log, log[-3000:]


def test_serve_shortens_the_thread_switch_interval(monkeypatch):
    """The served loop gets the interpreter lock back soon after each socket write (see
    ``dashboard.serve.LOOP_SWITCH_INTERVAL``); set before the server is built."""
    import panel as pn

    from dashboard import serve as serve_module

    seen: dict[str, float] = {}
    monkeypatch.setattr(serve_module, "prepare_engine", lambda *a, **k: {})
    monkeypatch.setattr(serve_module, "_log_to_terminal", lambda: None)
    monkeypatch.setattr(pn, "serve", lambda *a, **k: seen.setdefault("at", sys.getswitchinterval()))
    before = sys.getswitchinterval()
    try:
        serve_module.serve(in_process=True, start=False)
    finally:
        sys.setswitchinterval(before)
    assert serve_module.LOOP_SWITCH_INTERVAL < before
    assert seen["at"] == pytest.approx(serve_module.LOOP_SWITCH_INTERVAL)


@pytest.mark.parametrize(
    "argv, fragment",
    [
        (["serve", "--port", "70000"], "port"),
        (["serve", "--port", "1" * 400], "port"),
        (["serve", "--scheduler", "tcp://host:notaport"], "tcp://HOST:PORT"),
        (["serve", "--scheduler", "localhost:8786"], "tcp://HOST:PORT"),
        (["serve", "--num-procs", "0"], "num-procs"),
        (["serve", "--workers", "1e9"], "workers"),
        (["serve", "--idle-minutes", "0"], "idle-minutes"),
        (["serve", "--idle-minutes", "soon"], "idle-minutes"),
        (["serve", "--in-process", "--scheduler", "tcp://a:1"], "not allowed"),
        (["serve", "--password-file", "/nonexistent/file"], "password file"),
    ],
)
def test_serve_bad_options_are_one_line_errors(capsys, argv, fragment):
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert len(err.strip().splitlines()) == 1 and err.startswith("error:")
    assert fragment in err
