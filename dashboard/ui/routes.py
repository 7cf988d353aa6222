"""What a URL may name on a served dashboard: Panel's ``/components/`` route, guarded.

Panel serves the stylesheets and scripts its components declare from
``/components/<module>/<class>/<attribute>/<path>`` (``ComponentResourceHandler`` in
``panel/io/server.py``), under ``panel serve`` and :func:`panel.serve` alike.  Its
``parse_url_path`` calls :func:`importlib.import_module` on ``<module>`` before any check, so
one unauthenticated request could import any installed module: ``/components/this/a/b/c``
printed the Zen of Python, ``/components/unittest.__main__/a/b/c`` ran unittest's ``main()``
against the server's own arguments and the process exited with every session.

:func:`guard_component_route` wraps that method, on the handler class itself (every route and
every server of the process uses the class, whenever its routes were built), so that only a
module that is already loaded, or one under the packages whose components a page can use
(:data:`ALLOWED_PACKAGES`), is ever looked at; anything else is a 404 before any import.
The class attribute is then read only from the module's own namespace (a package's lazy
``__getattr__`` imports submodules too).  ``tests/ui/test_canaries.py`` fails if Panel moves
the import elsewhere or stops routing ``/components/`` through this class.

:func:`guard_autoload_route`: Panel's ``/<app>/autoload.js`` handler (``AutoloadJsHandler.get``)
has no login check, so anyone could have the server build a whole session of any app (the
dashboard's page costs about a second of CPU) without the class password.  The guard asks the
server's auth provider first, as every other per-app route does: 403 without a login.
"""

from __future__ import annotations

import importlib
import logging
import re
import sys
from typing import Any

__all__ = [
    "ALLOWED_PACKAGES",
    "component_module_allowed",
    "guard_autoload_route",
    "guard_component_route",
    "guard_routes",
]

#: Packages whose not-yet-loaded submodules may be imported for a component resource (a page
#: of another ``--num-procs`` process may name one this process has not used yet).
ALLOWED_PACKAGES = ("panel", "bokeh", "holoviews", "dashboard.ui")
#: Module name parts never looked at, loaded or not: scripts, test suites and sample data
#: run code or read files when imported, and serve no component.
_REFUSED_PARTS = frozenset(
    {"__main__", "tests", "test", "testing", "conftest", "examples", "sampledata"}
)
_MODULE = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,99}(?:\.[A-Za-z_][A-Za-z0-9_]{0,99}){0,9}\Z")
_ATTRIBUTE = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,99}\Z")

log = logging.getLogger(__name__)


def component_module_allowed(name: str) -> bool:
    """Whether ``/components/<name>/...`` may look at module ``name`` (never imports)."""
    if not isinstance(name, str) or not _MODULE.match(name):
        return False
    if _REFUSED_PARTS.intersection(name.split(".")):
        return False
    if name in sys.modules:
        return True
    return any(name == p or name.startswith(p + ".") for p in ALLOWED_PACKAGES)


def _checked_module(name: str, attribute: str) -> Any:
    """The module ``name`` if the route may use its ``attribute``; raise a 404 otherwise."""
    from tornado.web import HTTPError

    if not component_module_allowed(name) or not _ATTRIBUTE.match(attribute):
        raise HTTPError(404, "Module not found")
    module = sys.modules.get(name)
    if module is None:
        try:
            module = importlib.import_module(name)
        except Exception:  # an allowed package's module that does not import: not there
            raise HTTPError(404, "Module not found") from None
    if attribute not in getattr(module, "__dict__", {}):
        raise HTTPError(404, "Component not found")
    return module


def guard_component_route() -> bool:
    """Guard ``ComponentResourceHandler.parse_url_path`` (once per process); returns whether
    the guard was installed now."""
    from panel.io.server import ComponentResourceHandler
    from tornado.web import HTTPError

    original = ComponentResourceHandler.parse_url_path
    if getattr(original, "_dashboard_guard", False):
        return False

    def parse_url_path(self: Any, path: str) -> str:
        parts = str(path).split("/")
        if len(parts) < 4:
            raise HTTPError(400, "Malformed URL")
        _checked_module(parts[0], parts[1])
        try:
            return original(self, path)
        except HTTPError:
            raise
        except Exception as exc:  # e.g. a listed resource that does not resolve
            log.debug("component resource %r refused: %s", path[:200], type(exc).__name__)
            raise HTTPError(404, "Resource not found") from None

    parse_url_path._dashboard_guard = True  # type: ignore[attr-defined]
    parse_url_path._dashboard_original = original  # type: ignore[attr-defined]
    parse_url_path.__doc__ = original.__doc__
    ComponentResourceHandler.parse_url_path = parse_url_path  # type: ignore[method-assign]
    return True


def guard_autoload_route() -> bool:
    """Require the login on ``/<app>/autoload.js`` (once per process); returns whether the
    guard was installed now."""
    from panel.io.server import AutoloadJsHandler
    from tornado.web import HTTPError

    original = AutoloadJsHandler.get
    if getattr(original, "_dashboard_guard", False):
        return False

    async def get(self: Any, *args: Any, **kwargs: Any) -> None:
        if not self.current_user:  # the auth provider's answer ("default_user" without one)
            raise HTTPError(403)
        return await original(self, *args, **kwargs)

    get._dashboard_guard = True  # type: ignore[attr-defined]
    get._dashboard_original = original  # type: ignore[attr-defined]
    get.__doc__ = original.__doc__
    AutoloadJsHandler.get = get  # type: ignore[method-assign]
    return True


def guard_routes() -> None:
    """Every guard of this module (idempotent)."""
    guard_component_route()
    guard_autoload_route()
