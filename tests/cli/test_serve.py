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
    """``python -m dashboard serve --port P ARGS`` (or ``command`` + ``--port P``) in a
    subprocess; with ``log`` its output goes to that file (readable while it runs)."""

    def __init__(self, *args: str, log: Path | None = None, command: list[str] | None = None):
        self.port = _free_port()
        env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONUNBUFFERED": "1"}
        env.pop("BANDIT_DASHBOARD_SCHEDULER", None)
        self.log = log
        out = open(log, "wb") if log is not None else subprocess.PIPE
        cmd = command or [sys.executable, "-m", "dashboard", "serve"]
        self.proc = subprocess.Popen(
            [*cmd, "--port", str(self.port), *args],
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        if log is not None:
            out.close()

    def output(self) -> str:
        return self.log.read_text(errors="replace") if self.log is not None else ""

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def wait(self, path: str, timeout: float = 90.0) -> tuple[int, str, str]:
        stop = time.monotonic() + timeout
        while time.monotonic() < stop:
            if self.proc.poll() is not None:
                out = self.output() or self.proc.stdout.read().decode(errors="replace")
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
        if self.log is not None:
            return self.output()
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
        (["serve", "--instructor-password-file", "/nonexistent/file"], "password file"),
    ],
)
def test_serve_bad_options_are_one_line_errors(capsys, argv, fragment):
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert len(err.strip().splitlines()) == 1 and err.startswith("error:")
    assert fragment in err


def test_serve_refuses_the_class_password_as_the_instructors(capsys, tmp_path):
    secret = tmp_path / "pw"
    secret.write_text("same words\n")
    argv = ["serve", "--password-file", str(secret), "--instructor-password-file", str(secret)]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("error:") and "instructor password" in err


# ----------------------------------------------------------- a served class's edges
ZEN = "Beautiful is better than ugly"
#: A real component resource (loads nothing, builds no session).
BOOTSTRAP_CSS = "/components/panel.template.bootstrap/BootstrapTemplate/_css/bootstrap.css"


def _http(
    server: _Server, method: str, path: str, body: str | None = None, cookie: str = "", **headers
) -> tuple[int, dict[str, str], str]:
    """One request, redirects not followed: (status, headers, body)."""
    import http.client

    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=60)
    hdrs = dict(headers)
    if cookie:
        hdrs["Cookie"] = cookie
    if body is not None:
        hdrs["Content-Type"] = "application/x-www-form-urlencoded"
    conn.request(method, path, body, hdrs)
    resp = conn.getresponse()
    data = resp.read().decode("utf-8", "replace")
    conn.close()
    return resp.status, {k.lower(): v for k, v in resp.getheaders()}, data


def _login(server: _Server, password: str, next_url: str = "/dashboard") -> tuple[int, str]:
    from urllib.parse import urlencode

    status, headers, _ = _http(
        server, "POST", "/login", urlencode({"password": password, "next": next_url})
    )
    cookie = headers.get("set-cookie", "").split(";", 1)[0]
    return status, cookie


@pytest.fixture(scope="module")
def class_server(tmp_path_factory):
    """``serve --in-process`` with a class and an instructor password."""
    folder = tmp_path_factory.mktemp("class")
    (folder / "class").write_text("class words\n")
    (folder / "teacher").write_text("teacher words\n")
    server = _Server(
        "--in-process",
        "--password-file",
        str(folder / "class"),
        "--instructor-password-file",
        str(folder / "teacher"),
        log=folder / "server.log",
    )
    try:
        assert server.wait("/login")[0] == 200
        yield server
    finally:
        log = server.stop()
    assert "Traceback" not in log and ZEN not in log, log[-3000:]


def test_the_components_route_imports_nothing_under_serve(class_server):
    """Issue: GET /components/this/a/b/c printed the Zen of Python; unittest.__main__ ran
    unittest's main() and the server exited."""
    for path in ("/components/this/a/b/c", "/components/unittest.__main__/a/b/c"):
        assert _http(class_server, "GET", path)[0] == 404, path
    time.sleep(0.5)
    assert class_server.proc.poll() is None, "the server exited"
    assert _http(class_server, "GET", "/login")[0] == 200
    ok = BOOTSTRAP_CSS
    assert _http(class_server, "GET", ok)[0] == 200  # real component resources still load
    log = class_server.output()
    assert ZEN not in log and "Traceback" not in log, log[-2000:]


def test_undecodable_query_and_a_200_kB_link_load_under_serve(class_server):
    status, cookie = _login(class_server, "class words")
    assert status == 302 and cookie.startswith("user=")
    status, _, page = _http(class_server, "GET", "/dashboard?d=%FF", cookie=cookie)
    assert status == 200 and "Traceback" not in page
    long_link = "/dashboard?d=5&junk=" + "x" * 200_000
    status, _, _ = _http(class_server, "GET", long_link, cookie=cookie)
    assert status == 200  # reset by the 64 kB header limit before
    log = class_server.output()
    assert "UnicodeDecodeError" not in log and "Traceback" not in log, log[-2000:]


@pytest.mark.parametrize(
    "path",
    [
        "/static/..%2f..%2f..%2f..%2f..%2fetc%2fpasswd",
        "/static/extensions/panel/..%2f..%2f..%2f..%2f..%2f..%2fetc%2fpasswd",
        "/dashboard/static/..%2f..%2f..%2f..%2fsetup.py",
        "/components/panel.template.bootstrap/BootstrapTemplate/_css/..%2f..%2f__init__.py",
        "/login?next=//evil.example/",
    ],
)
def test_no_route_opens_a_file_or_site_a_url_names(class_server, path):
    status, headers, body = _http(class_server, "GET", path)
    assert status in (200, 400, 403, 404), (path, status)
    assert "root:" not in body and "import" not in body
    assert "evil.example" not in headers.get("location", "") + body


def _ws_upgrade(server: _Server, path: str, cookie: str) -> int:
    return _http(
        server,
        "GET",
        path,
        cookie=cookie,
        Connection="Upgrade",
        Upgrade="websocket",
        Origin=f"http://127.0.0.1:{server.port}",
        **{"Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==", "Sec-WebSocket-Version": "13"},
    )[0]


def test_the_class_password_never_reaches_the_instructor_page(class_server):
    status, student = _login(class_server, "class words")
    assert status == 302
    status, headers, _ = _http(class_server, "GET", "/instructor", cookie=student)
    assert status == 302 and "/login?next=%2Finstructor" in headers["location"]
    assert _ws_upgrade(class_server, "/instructor/ws", student) == 403
    autoload = "/instructor/autoload.js?bokeh-autoload-element=x"
    assert _http(class_server, "GET", autoload, cookie=student)[0] == 403
    # without a login no route builds a session (autoload.js had no check of its own)
    assert _http(class_server, "GET", "/dashboard/autoload.js?bokeh-autoload-element=x")[0] == 403
    assert (
        _http(
            class_server, "GET", "/dashboard/autoload.js?bokeh-autoload-element=x", cookie=student
        )[0]
        == 200
    )
    status, _ = _login(class_server, "class words", "/instructor")
    assert status == 403
    status, teacher = _login(class_server, "teacher words", "/instructor")
    assert status == 302
    status, _, page = _http(class_server, "GET", "/instructor", cookie=teacher)
    assert status == 200 and "<title>Instructor</title>" in page
    assert _http(class_server, "GET", "/dashboard", cookie=teacher)[0] == 200


def test_fifty_wrong_passwords_are_throttled_under_serve(class_server):
    """Issue: 50 wrong passwords in 0.58 s, then the right one accepted at once."""
    statuses = [_login(class_server, f"guess {i}")[0] for i in range(50)]
    assert statuses.count(429) >= 40, statuses
    status, headers, page = _http(
        class_server, "POST", "/login", "password=class+words&next=%2Fdashboard"
    )
    assert status == 429 and "Too many tries" in page
    time.sleep(float(headers["retry-after"]))
    assert _login(class_server, "class words")[0] == 302


def _texts(doc) -> list[str]:
    out = []
    for model in doc.models:
        for name in ("text", "object"):
            try:
                value = getattr(model, name)
            except Exception:
                continue
            if isinstance(value, str):
                out.append(value)
    return out


def test_instructor_page_counts_every_open_page(tmp_path):
    """Issue: the page said "0 session(s) open" while 4 were open."""
    import panel.models  # noqa: F401  (the client must know Panel's models)
    from bokeh.client import pull_session

    server = _Server("--in-process", log=tmp_path / "server.log")
    try:
        assert server.wait(BOOTSTRAP_CSS)[0] == 200  # (without a password /login opens a page)
        assert _http(server, "GET", "/dashboard?d=%FF")[0] == 200
        for _ in range(2):
            assert _http(server, "GET", "/play")[0] == 200
        with pull_session(url=server.url("/instructor")) as s:
            text = " ".join(_texts(s.document))
        assert "page(s) open" in text
        assert "dashboard 1" in text and "play 2" in text and "instructor 1" in text, text
        assert "listens only on this machine" in text  # 127.0.0.1: nobody else can reach it
    finally:
        log = server.stop()
    assert "Traceback" not in log, log[-3000:]


def test_panel_serve_dashboard_imports_nothing_a_url_names(tmp_path):
    """The same route under ``panel serve dashboard`` (guarded by dashboard/app_hooks.py)."""
    server = _Server(
        command=[sys.executable, "-m", "panel", "serve", "dashboard"], log=tmp_path / "log"
    )
    ok = BOOTSTRAP_CSS
    try:
        assert server.wait(ok)[0] == 200
        for path in ("/components/this/a/b/c", "/components/unittest.__main__/a/b/c"):
            assert _http(server, "GET", path)[0] == 404, path
        time.sleep(0.5)
        assert server.proc.poll() is None, "the server exited"
        assert _http(server, "GET", ok)[0] == 200
    finally:
        log = server.stop()
    assert ZEN not in log and "Traceback" not in log, log[-3000:]


def test_serve_without_a_password_imports_nothing_a_url_names(tmp_path):
    """The same route under ``python -m dashboard serve`` without ``--password-file`` (the
    embedded Dask cluster, one worker): no login stands in front of it."""
    server = _Server("--workers", "1", log=tmp_path / "server.log")
    try:
        assert server.wait(BOOTSTRAP_CSS)[0] == 200
        for path in ("/components/this/a/b/c", "/components/unittest.__main__/a/b/c"):
            assert _http(server, "GET", path)[0] in (403, 404), path
        time.sleep(0.5)
        assert server.proc.poll() is None, "the server exited"
        assert _http(server, "GET", BOOTSTRAP_CSS)[0] == 200  # it still answers
    finally:
        log = server.stop()
    assert ZEN not in log and "Traceback" not in log, log[-3000:]
