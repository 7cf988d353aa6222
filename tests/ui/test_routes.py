"""Panel's ``/components/<module>/...`` route imports nothing a URL names
(``dashboard.ui.routes``): only loaded modules or the allowed packages are looked at, anything
else is a 404 before any import; legitimate component resources still resolve."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from panel.io.server import ComponentResourceHandler
from tornado.web import HTTPError

from dashboard.ui.routes import component_module_allowed, guard_component_route

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module", autouse=True)
def guarded():
    guard_component_route()
    assert guard_component_route() is False  # idempotent: the second call changes nothing


def _parse(path: str) -> str:
    return ComponentResourceHandler.parse_url_path(ComponentResourceHandler, path)


@pytest.mark.parametrize(
    "path", ["this/a/b/c", "unittest.__main__/a/b/c", "antigravity/a/b/c", "__main__/x/y/z"]
)
def test_a_module_named_by_a_url_is_never_imported(path):
    module = path.split("/")[0]
    before = module in sys.modules
    with pytest.raises(HTTPError) as err:
        _parse(path)
    assert err.value.status_code == 404
    assert (module in sys.modules) == before


def test_the_exact_inputs_in_a_fresh_interpreter_import_nothing():
    code = (
        "import sys\n"
        "from panel.io.server import ComponentResourceHandler as H\n"
        "from tornado.web import HTTPError\n"
        "from dashboard.ui.routes import guard_component_route\n"
        "guard_component_route()\n"
        "for p in ('this/a/b/c', 'unittest.__main__/a/b/c'):\n"
        "    try:\n"
        "        H.parse_url_path(H, p)\n"
        "    except HTTPError as e:\n"
        "        print(p, e.status_code)\n"
        "print('imported:', 'this' in sys.modules, 'unittest.__main__' in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert "this/a/b/c 404" in out.stdout and "unittest.__main__/a/b/c 404" in out.stdout
    assert "imported: False False" in out.stdout
    assert "Beautiful is better" not in out.stdout + out.stderr


def test_a_real_component_resource_still_resolves():
    path = _parse("panel.template.bootstrap/BootstrapTemplate/_css/bootstrap.css")
    assert Path(path).is_file() and path.endswith("bootstrap.css")


@pytest.mark.parametrize(
    "path",
    [
        "panel.template.bootstrap/BootstrapTemplate/_css/../../../../../etc/passwd",
        "panel.template.bootstrap/BootstrapTemplate/__init__/x",
        "panel/__getattr__/__css__/x",
        "os/environ/__css__/x",
        "scipy/stats/__css__/x",  # scipy's lazy __getattr__ would import scipy.stats
    ],
)
def test_other_names_are_refused(path):
    with pytest.raises(HTTPError) as err:
        _parse(path)
    assert err.value.status_code in (403, 404)


def test_the_allow_list():
    assert component_module_allowed("panel.template.bootstrap")
    assert component_module_allowed("sys")  # loaded: looked at, nothing imported
    assert not component_module_allowed("this") or "this" in sys.modules
    for refused in ("unittest.__main__", "dashboard.__main__", "panel.tests", "a..b", "", "x/y"):
        assert not component_module_allowed(refused), refused


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.one_of(
            st.text(max_size=30),
            st.sampled_from(["this", "unittest.__main__", "panel", "__css__", "_css", ".."]),
        ),
        max_size=6,
    )
)
def test_any_path_is_an_http_answer_and_loads_nothing_new(parts):
    before = set(sys.modules)
    path = "/".join(parts)
    try:
        _parse(path)
    except HTTPError as exc:
        assert exc.status_code in (400, 403, 404)
    new = {m for m in set(sys.modules) - before if not m.startswith(("panel", "bokeh"))}
    assert not new, new
