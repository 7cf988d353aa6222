"""Fuzz the Sweep tab's inputs (its lists of values, fields, T and R) against its contract: Run
either starts a sweep within the class's work limit and the tab's point cap, or starts nothing
and shows one escaped sentence; never an exception."""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from dashboard.simulation.budget import duration_text
from dashboard.ui.config import MAX_WORK_ENV
from dashboard.ui.sweep_view import MAX_TAB_POINTS, SweepView

ITEM = st.one_of(
    st.integers(-10, 10**8).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.sampled_from(["sine", "none", "<b>x</b>", "1e400", "1_000", "٣", "", " "]),
    st.text(max_size=8),
)
VALUES = st.lists(ITEM, max_size=12).map(", ".join)
FIELDS = ["horizon", "d", "m", "K", "shift", "alpha", "noise", "reward"]


@pytest.fixture(autouse=True)
def _no_work(monkeypatch):
    monkeypatch.setenv(MAX_WORK_ENV, "60")
    monkeypatch.setattr(SweepView, "_work", lambda self, sweep: None)  # checks only


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    problem=st.sampled_from(["cmab", "semiparametric"]),
    x_field=st.sampled_from(FIELDS),
    x_values=VALUES,
    group=st.sampled_from(["(none)", *FIELDS]),
    group_values=VALUES,
    horizon=st.integers(1, 10_000_000),
    runs=st.integers(1, 256),
)
@example(
    problem="cmab",
    x_field="m",
    x_values="2, 3, 4",
    group="(none)",
    group_values="",
    horizon=10_000_000,
    runs=256,
)
@example(
    problem="semiparametric",
    x_field="d",
    x_values=", ".join(map(str, range(2, 30))),
    group="K",
    group_values=", ".join(map(str, range(2, 30))),
    horizon=100,
    runs=1,
)
@example(  # starts
    problem="semiparametric",
    x_field="d",
    x_values="2, 3",
    group="shift",
    group_values="none, sine",
    horizon=100,
    runs=2,
)
def test_run_starts_within_the_limits_or_shows_one_escaped_sentence(
    problem, x_field, x_values, group, group_values, horizon, runs
):
    view = SweepView(scheduler="inprocess", problem=problem)
    fields = view.param.x_field.objects
    view.param.update(
        x_field=x_field if x_field in fields else "horizon",
        x_values=x_values,
        group_field=group if group in view.param.group_field.objects else "(none)",
        group_values=group_values,
        horizon=horizon,
        runs=runs,
    )
    started = view.run()
    notice = view._notice.object
    if started:
        view.wait(5)
        assert notice == ""
        assert view.estimate.seconds <= 60 and view.estimate.points <= MAX_TAB_POINTS
        assert view.status.startswith(f"starting (about {duration_text(view.estimate.seconds)}")
    else:
        body = re.sub(r'^<div class="alert alert-danger" role="alert">|</div>$', "", notice)
        assert body.startswith("Cannot run this sweep: ")
        assert "<" not in body and ">" not in body and "\n" not in body
        assert view._thread is None
