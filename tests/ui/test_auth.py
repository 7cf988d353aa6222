"""The served class's logins (``dashboard.ui.auth``): the class password never opens
``/instructor``, without an instructor password only the server machine does, the role comes
from the password typed (not a user name), and failed logins are rate limited per client."""

from __future__ import annotations

import asyncio
import http.client
import socket
import threading
import time
from urllib.parse import urlencode

import pytest
import tornado.web
from hypothesis import given
from hypothesis import strategies as st
from tornado.httpserver import HTTPServer
from tornado.ioloop import IOLoop

from dashboard.ui.auth import (
    INSTRUCTOR,
    STUDENT,
    ClassAuthProvider,
    LoginThrottle,
    is_instructor_path,
    is_loopback,
    safe_next,
)


class _Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_throttle_allows_a_burst_then_one_try_per_interval():
    clock = _Clock()
    t = LoginThrottle(rate=2.0, burst=3, clock=clock)
    for _ in range(3):
        assert t.wait("a") == 0
        t.failed("a")
    assert t.wait("a") == pytest.approx(0.5)
    assert t.wait("b") == 0  # per client
    clock.now += 0.5
    assert t.wait("a") == 0
    t.failed("a")
    assert t.wait("a") > 0
    clock.now += 10
    assert t.wait("a") == 0


def test_throttle_remembers_a_bounded_number_of_clients():
    t = LoginThrottle(burst=1, max_clients=10, clock=_Clock())
    for i in range(1000):
        t.failed(f"10.0.{i // 250}.{i % 250}")
    assert len(t._buckets) == 10


@pytest.mark.parametrize(
    "path",
    [
        "/instructor",
        "/instructor/",
        "/instructor/ws",
        "/Instructor",
        "/%69nstructor/ws",
        "//instructor",
        "/instructor/autoload.js",
    ],
)
def test_instructor_paths(path):
    assert is_instructor_path(path)


@pytest.mark.parametrize("path", ["/dashboard", "/instructorx", "/play", "/", "/login"])
def test_other_paths(path):
    assert not is_instructor_path(path)


def test_loopback_addresses():
    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("::ffff:127.0.0.1")
    assert not is_loopback("192.168.1.20") and not is_loopback(None) and not is_loopback("x")


@given(st.text(max_size=200))
def test_next_links_stay_on_this_server(text):
    out = safe_next(text)
    assert out.startswith("/") and not out.startswith("//") and "\\" not in out
    assert not any(ord(c) <= 0x20 for c in out)


class _Request:
    def __init__(self, path: str, ip: str) -> None:
        self.path, self.remote_ip = path, ip


class _Handler:
    def __init__(self, path: str, role: str | None = None, ip: str = "10.0.0.7") -> None:
        self.request = _Request(path, ip)
        self.role = role

    def get_secure_cookie(self, name: str, max_age_days: float = 1) -> bytes | None:
        return None if self.role is None else self.role.encode()


def test_the_class_password_never_opens_the_instructor_page():
    p = ClassAuthProvider("class pw", "teacher pw")
    assert p.role_for("class pw") == STUDENT and p.role_for("teacher pw") == INSTRUCTOR
    assert p.role_for("") is None and p.role_for("class pw ") is None
    assert p.user_of(_Handler("/dashboard", STUDENT)) == STUDENT
    assert p.user_of(_Handler("/dashboard", INSTRUCTOR)) == INSTRUCTOR
    assert p.user_of(_Handler("/dashboard")) is None
    for path in ("/instructor", "/instructor/ws", "/instructor/autoload.js"):
        assert p.user_of(_Handler(path, STUDENT)) is None
        assert p.user_of(_Handler(path, STUDENT, ip="127.0.0.1")) is None
        assert p.user_of(_Handler(path, INSTRUCTOR)) == INSTRUCTOR
    assert p.user_of(_Handler("/dashboard", "instructorX")) is None  # unknown role


def test_without_an_instructor_password_only_this_machine_opens_it():
    p = ClassAuthProvider(None, None)
    assert p.user_of(_Handler("/dashboard")) == "guest"
    assert p.user_of(_Handler("/instructor", ip="10.0.0.7")) is None
    assert p.user_of(_Handler("/instructor", STUDENT, ip="10.0.0.7")) is None
    assert p.user_of(_Handler("/instructor/ws", ip="127.0.0.1")) == INSTRUCTOR
    with_class = ClassAuthProvider("class pw", None)
    assert with_class.user_of(_Handler("/instructor", STUDENT)) is None
    assert with_class.user_of(_Handler("/instructor", ip="::1")) == INSTRUCTOR


def test_the_two_passwords_must_differ():
    with pytest.raises(ValueError, match="differ"):
        ClassAuthProvider("same", "same")


# ------------------------------------------------- the login page, on a real Tornado server
@pytest.fixture
def login_server():
    """The provider's login routes on a Tornado server in a thread; yields (port, clock)."""
    clock = _Clock()
    provider = ClassAuthProvider(
        "class pw", "teacher pw", LoginThrottle(rate=4.0, burst=3, clock=clock)
    )
    ready = threading.Event()
    box: dict = {}

    def run() -> None:
        asyncio.set_event_loop(asyncio.new_event_loop())
        loop = IOLoop.current()
        app = tornado.web.Application(provider.endpoints, cookie_secret="s" * 32)
        app.auth_provider = provider
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        sock.listen(16)
        sock.setblocking(False)
        server = HTTPServer(app)
        server.add_sockets([sock])
        box.update(port=sock.getsockname()[1], loop=loop, server=server)
        ready.set()
        loop.start()
        server.stop()
        loop.close()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    assert ready.wait(10)
    yield box["port"], clock
    box["loop"].add_callback(box["loop"].stop)
    thread.join(10)


def _post(port: int, password: str, next_url: str = "/dashboard") -> http.client.HTTPResponse:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    body = urlencode({"password": password, "next": next_url})
    conn.request("POST", "/login", body, {"Content-Type": "application/x-www-form-urlencoded"})
    resp = conn.getresponse()
    resp.body = resp.read().decode()
    conn.close()
    return resp


def test_fifty_wrong_passwords_are_throttled_then_the_right_one_works(login_server):
    port, clock = login_server
    statuses = [_post(port, f"guess {i}").status for i in range(50)]
    assert statuses[:3] == [401, 401, 401]
    assert statuses[3:] == [429] * 47  # checked before the password is looked at
    throttled = _post(port, "class pw")
    assert throttled.status == 429 and int(throttled.getheader("Retry-After")) >= 1
    assert "Too many tries" in throttled.body
    clock.now += 1.0
    ok = _post(port, "class pw")
    assert ok.status == 302 and ok.getheader("Location") == "/dashboard"
    assert "user=" in (ok.getheader("Set-Cookie") or "")


def test_the_class_password_at_the_instructor_login_is_refused(login_server):
    port, _ = login_server
    resp = _post(port, "class pw", "/instructor")
    assert resp.status == 403 and "instructor password" in resp.body
    ok = _post(port, "teacher pw", "/instructor")
    assert ok.status == 302 and ok.getheader("Location") == "/instructor"


def test_the_login_page_escapes_what_it_is_given(login_server):
    port, _ = login_server
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    conn.request("GET", "/login?next=/dashboard%3F%22%3E%3Cscript%3Ealert(1)%3C/script%3E")
    resp = conn.getresponse()
    body = resp.read().decode()
    conn.close()
    assert resp.status == 200 and "<script>alert" not in body
    assert 'name="password"' in body and "Class password" in body


def test_a_throttled_client_waits_about_the_interval(login_server):
    port, clock = login_server
    for i in range(4):
        _post(port, f"nope {i}")
    start = time.monotonic()
    assert _post(port, "class pw").status == 429
    clock.now += 0.25  # one try every 1 / rate = 0.25 s
    assert _post(port, "class pw").status == 302
    assert time.monotonic() - start < 5
