"""Property test of the algorithm picker's input boundary (issues 8 and 12): whatever list of
strings a link gives for ``algorithms`` (with or without a ``problem`` / ``reward`` of its
own), applying it raises nothing, the picker's options stay exactly the registered algorithms
the problem offers (Bokeh's MultiChoice renders option labels as HTML), and the names are
either all applied, in their registered spelling, or refused with a notice naming the key.

The picker is rendered (it has a Bokeh model) so Panel's own handling of option changes runs
too; the model's options and value are what a browser would be sent."""

from __future__ import annotations

import json
from urllib.parse import urlencode

import pytest
from bokeh.document import Document
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from panel.io.location import Location

from dashboard.simulation import catalogue
from dashboard.ui.app import DashboardApp
from dashboard.ui.model import MAX_ALGORITHMS
from dashboard.ui.urlstate import UrlSync

IMG = "<img src=x onerror=alert(document.domain)>"
REGISTERED = catalogue.algorithm_names()
#: Registered names (some in odd case or with spaces), markup, paths, and any text at all.
NAMES = st.one_of(
    st.sampled_from(REGISTERED),
    st.sampled_from(REGISTERED).map(lambda n: f" {n.swapcase()} "),
    st.sampled_from([IMG, "<script>alert(1)</script>", "", "json", "os:system", "x.py"]),
    st.text(max_size=30),
)
#: A JSON list of names, a bare JSON string, or any text (broken JSON included).
RAW = st.one_of(
    st.lists(NAMES, max_size=2 * MAX_ALGORITHMS + 2).map(json.dumps),
    NAMES.map(json.dumps),
    st.text(max_size=60),
)


@pytest.fixture(scope="module")
def app():
    app = DashboardApp(autostart_timer=False)
    app.algorithm_select.get_root(Document())
    yield app
    app.dispose()


def _expected(raw: str, problem: str, reward: str) -> list[str] | None:
    """The names the link should apply (registered spelling), or None if it must be refused."""
    try:
        value = json.loads(raw)
    except ValueError:
        return None
    value = [value] if isinstance(value, str) else value
    if not isinstance(value, list) or not 1 <= len(value) <= 2 * MAX_ALGORITHMS:
        return None
    offer = {n.lower(): n for n in catalogue.algorithm_names(problem, reward)}
    if not all(isinstance(a, str) and a.strip().lower() in offer for a in value):
        return None
    return [offer[a.strip().lower()] for a in value]


@settings(
    max_examples=120,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    problem=st.sampled_from([None, "cmab", "semiparametric"]),
    reward=st.sampled_from([None, "linear", "covariance", "general"]),
    raw=RAW,
    names_first=st.booleans(),
)
@example(problem="cmab", reward=None, raw=json.dumps(["SBE"]), names_first=False)
@example(problem=None, reward=None, raw=json.dumps([IMG]), names_first=True)
@example(problem="semiparametric", reward=None, raw='["sbe", " LINUCB "]', names_first=True)
@example(problem=None, reward="general", raw='["CUCB"]', names_first=False)
def test_link_algorithms_never_reach_the_picker_options(app, problem, reward, raw, names_first):
    c, picker = app.config, app.algorithm_select
    pairs = [(k, v) for k, v in (("problem", problem), ("reward", reward)) if v is not None]
    pairs = [("algorithms", raw), *pairs] if names_first else [*pairs, ("algorithms", raw)]
    target = (problem or c.problem, reward or c.reward)
    expected = _expected(raw, target[0], target[1] if target[0] == "cmab" else None)
    notices: list[str] = []
    sync = UrlSync(c, Location(search=""), notices.extend)
    try:
        sync.apply("?" + urlencode(pairs))  # never raises
    finally:
        sync.close()
    assert (c.problem, c.reward if c.problem == "cmab" else None) == (
        target[0],
        target[1] if target[0] == "cmab" else None,
    )
    offer = catalogue.algorithm_names(c.problem, c.reward if c.problem == "cmab" else None)
    # the options are the problem's registered algorithms, nothing of the link
    assert list(picker.options) == offer == list(c.param.algorithms.objects)
    for model, _parent in picker._models.values():
        assert list(model.options) == offer and list(model.value) == c.algorithms
    assert set(offer) <= set(REGISTERED)
    # the value: the link's names if all are offered, else the key is named in a notice
    assert picker.value == c.algorithms and c.algorithms and set(c.algorithms) <= set(offer)
    refused = [n for n in notices if n.startswith("Ignored algorithms=")]
    if expected is None:
        assert len(refused) == 1 and "allowed: " in refused[0], notices
    else:
        assert c.algorithms == expected and refused == [], notices
