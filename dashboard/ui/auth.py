"""Who may open what on ``python -m dashboard serve``: the class, the instructor, a rate limit.

:class:`ClassAuthProvider` is the Bokeh auth provider of a served class.  It knows two
credentials, each optional and each read from a file by the CLI:

* the class password (``--password-file``): every page except ``/instructor`` needs it (or the
  instructor's); without it those pages are open;
* the instructor password (``--instructor-password-file``): ``/instructor`` (its page, its
  websocket, its autoload script: every request under the path) needs it; the class password
  never opens it.  Without an instructor password ``/instructor`` answers only requests from
  the server machine itself (a loopback address), and the login page tells anyone else how to
  enable it.

The role is decided by which password was typed, never by a user name, and kept in Tornado's
signed ``user`` cookie (``student`` or ``instructor``), so it cannot be forged without the
server's cookie secret.  Failed logins are rate limited per client address
(:class:`LoginThrottle`): a few tries at once, then one every ``1 / rate`` seconds, answered
``429`` with ``Retry-After`` and checked before the password is looked at.
"""

from __future__ import annotations

import hmac
import html
import ipaddress
import math
import re
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any
from urllib.parse import unquote

from bokeh.server.auth_provider import AuthProvider
from tornado.web import RequestHandler

__all__ = [
    "INSTRUCTOR",
    "INSTRUCTOR_PATH",
    "STUDENT",
    "ClassAuthProvider",
    "LoginThrottle",
    "is_instructor_path",
    "is_loopback",
]

STUDENT = "student"
INSTRUCTOR = "instructor"
#: Every request whose path is this or below it needs the instructor's credential.
INSTRUCTOR_PATH = "/instructor"
#: Name of the signed cookie holding the role (Panel reads it as ``pn.state.user``).
ROLE_COOKIE = "user"
#: Days a login lasts.
LOGIN_DAYS = 1
#: Longest ``next`` link kept through a login (a longer one falls back to its page alone).
MAX_NEXT_CHARS = 100_000

_NEXT = re.compile(r"/(?![/\\])[^\x00-\x20\x7f\\]*\Z")


def is_instructor_path(path: str) -> bool:
    """Whether a request path (percent-encoded or not) is ``/instructor`` or below it."""
    p = unquote(str(path)).lower()
    while "//" in p:
        p = p.replace("//", "/")
    return p == INSTRUCTOR_PATH or p.startswith(INSTRUCTOR_PATH + "/")


def is_loopback(address: str | None) -> bool:
    """Whether a client address is this machine (``127.0.0.0/8``, ``::1``, IPv4-mapped)."""
    try:
        ip = ipaddress.ip_address(str(address).split("%", 1)[0])
    except ValueError:
        return False
    mapped = getattr(ip, "ipv4_mapped", None)
    return bool(ip.is_loopback or (mapped is not None and mapped.is_loopback))


class LoginThrottle:
    """Failed logins per client: ``burst`` at once, then one every ``1 / rate`` seconds.

    A token bucket per client address, at most ``max_clients`` remembered (the oldest
    forgotten first), with an injectable ``clock`` for tests.
    """

    def __init__(
        self,
        rate: float = 2.0,
        burst: int = 5,
        max_clients: int = 10_000,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if not (rate > 0 and burst >= 1 and max_clients >= 1):
            raise ValueError("rate must be > 0, burst and max_clients >= 1")
        self.rate = float(rate)
        self.burst = int(burst)
        self.max_clients = int(max_clients)
        self.clock = clock
        self._buckets: OrderedDict[str, tuple[float, float]] = OrderedDict()

    def _tokens(self, client: str) -> float:
        tokens, at = self._buckets.get(client, (float(self.burst), self.clock()))
        return min(float(self.burst), tokens + (self.clock() - at) * self.rate)

    def wait(self, client: str) -> float:
        """Seconds until ``client`` may try again (0: now)."""
        tokens = self._tokens(client)
        return 0.0 if tokens >= 1.0 else (1.0 - tokens) / self.rate

    def failed(self, client: str) -> None:
        """Count one failed try of ``client``."""
        tokens = max(0.0, self._tokens(client) - 1.0)
        self._buckets[client] = (tokens, self.clock())
        self._buckets.move_to_end(client)
        while len(self._buckets) > self.max_clients:
            self._buckets.popitem(last=False)


def _same(typed: str, secret: str | None) -> bool:
    return secret is not None and hmac.compare_digest(
        typed.encode("utf-8", "replace"), secret.encode("utf-8", "replace")
    )


def safe_next(value: Any, default: str = "/dashboard") -> str:
    """A local link to return to after the login (never another site)."""
    text = str(value or "")
    if not _NEXT.match(text):
        return default
    if len(text) > MAX_NEXT_CHARS:
        text = text.split("?", 1)[0]
        return text if len(text) <= 2000 else default
    return text


_PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title>
<style>
body {{ font-family: system-ui, sans-serif; background: #f4f5f7; color: #1d2330;
       display: flex; justify-content: center; padding-top: 12vh; margin: 0; }}
main {{ background: #fff; padding: 2rem 2.5rem; border-radius: 8px; width: 22rem;
       box-shadow: 0 2px 10px rgba(0,0,0,.12); }}
h1 {{ font-size: 1.3rem; margin-top: 0; }}
label {{ display: block; margin: 1rem 0 .3rem; font-weight: 600; }}
input[type=password] {{ width: 100%; box-sizing: border-box; padding: .55rem;
       font-size: 1rem; border: 1px solid #9aa3b2; border-radius: 4px; }}
button {{ margin-top: 1.2rem; padding: .55rem 1.4rem; font-size: 1rem; border: 0;
       border-radius: 4px; background: #1f5fbf; color: #fff; cursor: pointer; }}
.error {{ color: #a4161a; font-weight: 600; }}
</style></head>
<body><main>
<h1>{title}</h1>
{body}
</main></body></html>
"""


def _page(title: str, body: str) -> str:
    return _PAGE.format(title=html.escape(title), body=body)


class _LoginHandler(RequestHandler):
    """``/login``: one password field; the role follows from the password typed."""

    @property
    def provider(self) -> ClassAuthProvider:
        return self.application.auth_provider  # type: ignore[attr-defined]

    def _client(self) -> str:
        return str(self.request.remote_ip or "?")

    def _render(self, next_url: str, error: str = "", status: int = 200) -> None:
        provider = self.provider
        self.set_status(status)
        self.set_header("Cache-Control", "no-store")
        self.set_header("Content-Type", "text/html; charset=utf-8")
        instructor = is_instructor_path(next_url.split("?", 1)[0])
        if instructor and provider.instructor_password is None:
            self.set_status(403 if status == 200 else status)
            self.write(
                _page(
                    "Instructor page",
                    "<p>The instructor page opens only on the server machine itself "
                    "(<code>http://localhost:PORT/instructor</code>).</p><p>To open it from "
                    "another computer, restart the server with "
                    "<code>--instructor-password-file FILE</code>.</p>",
                )
            )
            return
        if not instructor and provider.class_password is None:
            self.redirect(next_url)
            return
        what = "Instructor password" if instructor else "Class password"
        msg = f'<p class="error" role="alert">{html.escape(error)}</p>' if error else ""
        self.write(
            _page(
                "Bandit teaching dashboard: log in",
                f'{msg}<form method="post" action="{html.escape(provider.login_url)}">'
                f'<input type="hidden" name="next" value="{html.escape(next_url)}">'
                f'<label for="password">{what}</label>'
                f'<input id="password" name="password" type="password" autofocus '
                f'autocomplete="current-password" required>'
                f"<button type=submit>Log in</button></form>",
            )
        )

    def get(self) -> None:
        self._render(safe_next(self.get_argument("next", "")))

    def post(self) -> None:
        provider = self.provider
        next_url = safe_next(self.get_argument("next", ""))
        client = self._client()
        wait = provider.throttle.wait(client)
        if wait > 0:
            self.set_header("Retry-After", str(max(1, math.ceil(wait))))
            self._render(
                next_url,
                f"Too many tries: wait {max(1, math.ceil(wait))} s and try again.",
                status=429,
            )
            return
        role = provider.role_for(self.get_argument("password", ""))
        if role is None:
            provider.throttle.failed(client)
            self._render(next_url, "Wrong password.", status=401)
            return
        self.set_secure_cookie(
            ROLE_COOKIE, role, expires_days=LOGIN_DAYS, httponly=True, samesite="Lax"
        )
        if is_instructor_path(next_url.split("?", 1)[0]) and role != INSTRUCTOR:
            self._render(next_url, "This page needs the instructor password.", status=403)
            return
        self.redirect(next_url)


class _LogoutHandler(RequestHandler):
    """``/logout``: forget the login."""

    def get(self) -> None:
        self.clear_cookie(ROLE_COOKIE)
        self.set_header("Cache-Control", "no-store")
        self.write(
            _page("Logged out", '<p>You are logged out. <a href="/login">Log in again</a>.</p>')
        )


class ClassAuthProvider(AuthProvider):
    """Bokeh auth provider of a served class (see the module docstring).

    Parameters
    ----------
    class_password, instructor_password : str or None
        The two credentials (``None``: that login is not used); they must differ.
    throttle : LoginThrottle, optional
        The failed-login limit (default: 5 at once, then 2 a second per client).
    """

    def __init__(
        self,
        class_password: str | None = None,
        instructor_password: str | None = None,
        throttle: LoginThrottle | None = None,
    ) -> None:
        if class_password is not None and _same(class_password, instructor_password):
            raise ValueError("the instructor password must differ from the class password")
        self.class_password = class_password
        self.instructor_password = instructor_password
        self.throttle = throttle or LoginThrottle()
        super().__init__()

    def role_for(self, password: str) -> str | None:
        """The role a typed password gives, or ``None``."""
        if _same(password, self.instructor_password):
            return INSTRUCTOR
        if _same(password, self.class_password):
            return STUDENT
        return None

    def user_of(self, handler: RequestHandler) -> str | None:
        """The user of a request (``None``: it must log in first)."""
        role: str | None = None
        raw = handler.get_secure_cookie(ROLE_COOKIE, max_age_days=LOGIN_DAYS)
        if raw is not None:
            text = raw.decode("utf-8", "replace")
            role = text if text in (STUDENT, INSTRUCTOR) else None
        if is_instructor_path(handler.request.path):
            if self.instructor_password is not None:
                return role if role == INSTRUCTOR else None
            return INSTRUCTOR if is_loopback(handler.request.remote_ip) else None
        if self.class_password is None:
            return role or "guest"
        return role

    @property
    def get_user(self) -> Callable[[RequestHandler], str | None]:
        return self.user_of

    @property
    def login_url(self) -> str:
        return "/login"

    @property
    def login_handler(self) -> type[RequestHandler]:
        return _LoginHandler

    @property
    def logout_url(self) -> str:
        return "/logout"

    @property
    def logout_handler(self) -> type[RequestHandler]:
        return _LogoutHandler
