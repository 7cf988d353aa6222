"""The Sweep tab's work limit and its stop, headless: a sweep is estimated with the Live tab's
estimate and refused above the class's ``--max-work`` (escaped notice, nothing started); on a
real ``distributed.LocalCluster`` Cancel, a closed page and an ended session free the workers
within seconds; :func:`largest_sweep` is the biggest sweep a limit allows."""

from __future__ import annotations

import re
import threading
import time

import pytest

from dashboard.ui.config import MAX_WORK_ENV, Config
from dashboard.ui.sweep_view import (
    CLOSED_SECONDS,
    MAX_TAB_CURVES,
    MAX_TAB_POINTS,
    SweepView,
    largest_sweep,
)

distributed = pytest.importorskip("distributed")

LIVE = ["CUCB", "AROQ-CMAB", "SROQ-CMAB"]
#: The red-team's sweep (issue finding 3): T = 10^7, R = 256 over 3 points.
FINDING = dict(
    problem="cmab", algorithms=LIVE, x_field="m", x_values="2, 3, 4", horizon=10**7, runs=256
)


def _live_estimate(**kw) -> str:
    """The Live tab's estimate for these settings, as its refusal words it ("21.9 h")."""
    errors = " ".join(Config(problem="cmab", algorithms=LIVE, **kw).errors)
    found = re.search(r"about (\S+ \S+) and", errors)
    assert found, errors
    return found.group(1)


def test_the_findings_sweep_is_refused_under_max_work_60_in_the_live_tabs_words(monkeypatch):
    monkeypatch.setenv(MAX_WORK_ENV, "60")
    view = SweepView(scheduler="inprocess", **FINDING)
    assert view.run() is False
    notice = view._notice.object
    per_point = _live_estimate(horizon=10**7, runs=256, m=3)  # what the Live tab refuses
    assert per_point == "21.9 h"
    assert f"3 points, the largest about {per_point} alone" in notice
    assert "this class allows at most 60 s per run: lower T, R or the number of points" in notice
    assert view.estimate.seconds == pytest.approx(3 * view.estimate.largest)
    # one escaped sentence in the alert, nothing started
    body = re.sub(r'^<div class="alert alert-danger" role="alert">|</div>$', "", notice)
    assert "<" not in body and ">" not in body
    assert view._thread is None and not view.running and view.status == ""


def test_without_max_work_the_default_limit_holds(monkeypatch):
    monkeypatch.delenv(MAX_WORK_ENV, raising=False)
    view = SweepView(scheduler="inprocess", **FINDING)
    assert view.run() is False
    assert "this class allows at most 10 min per run" in view._notice.object


def test_a_sweep_within_the_limit_starts_with_its_estimate(monkeypatch):
    monkeypatch.setenv(MAX_WORK_ENV, "60")
    view = SweepView(
        scheduler="inprocess",
        problem="semiparametric",
        algorithms=["SBE"],
        x_field="d",
        x_values="2, 3",
        horizon=100,
        runs=2,
    )
    statuses = []
    view.param.watch(lambda e: statuses.append(e.new), "status")
    assert view.run()
    view.wait(60)
    assert statuses[0].startswith("starting (about ") and "s of simulation" in statuses[0]
    assert "tasks (about " in statuses[1]
    assert view.status == "done: 2 points" and view._notice.object == ""


@pytest.mark.parametrize(
    ("kw", "message"),
    [
        ({"x_values": ", ".join(str(i) for i in range(2, 403))}, f"at most {MAX_TAB_POINTS}"),
        (
            {
                "x_values": "2, 3",
                "group_field": "K",
                "group_values": ", ".join(map(str, range(2, 300))),
            },
            "596 points",
        ),
        ({"x_values": "2," * 6000}, "at most 10,000"),
    ],
)
def test_grids_beyond_the_tab_are_refused_before_they_are_built(kw, message, monkeypatch):
    from dashboard.ui import sweep_view

    def never(*a, **k):  # pragma: no cover - reached only if the cap failed
        raise AssertionError("the grid was built")

    monkeypatch.setattr(sweep_view, "make_sweep", never)
    view = SweepView(scheduler="inprocess", problem="semiparametric", x_field="d", **kw)
    assert view.run() is False
    assert message in view._notice.object and view._thread is None


def test_a_sweep_whose_curves_would_crowd_the_server_is_refused(monkeypatch):
    monkeypatch.delenv(MAX_WORK_ENV, raising=False)
    # cheap to simulate (about 3 min in all), but 300 points x 2 algorithms x 256 runs of
    # curves: about 1.4 GB in the server's process (Sweep.memory)
    kw = dict(problem="cmab", algorithms=["AROQ-CMAB", "SROQ-CMAB"], horizon=20, runs=256)
    values = ", ".join(f"{a / 1000}" for a in range(1, 301))
    view = SweepView(scheduler="inprocess", x_field="alpha", x_values=values, **kw)
    assert view.run() is False
    assert "the Sweep tab holds at most 128.0 MB" in view._notice.object
    assert view.estimate.seconds < 600 and view._thread is None
    assert view.build().memory() > MAX_TAB_CURVES


def test_largest_sweep_is_just_within_the_limit(monkeypatch):
    monkeypatch.setenv(MAX_WORK_ENV, "60")
    settings = largest_sweep()  # the class's limit
    view = SweepView(scheduler="inprocess", **settings)
    assert view.refusal(view.build()) is None
    assert 0.95 * 60 <= view.estimate.seconds <= 60
    values = [int(v) for v in settings["x_values"].split(",")]
    assert len(values) == 3 and settings["runs"] == 256
    bigger = dict(settings, x_values=", ".join(str(int(v * 1.01) + 1) for v in values))
    other = SweepView(scheduler="inprocess", **bigger)
    assert "this class allows at most 60 s" in other.refusal(other.build())
    assert largest_sweep(10**9)["x_values"].endswith("10000000")  # T capped at 10^7


# ------------------------------------------------------------------ stopping on a cluster
@pytest.fixture(scope="module")
def client():
    from dashboard.simulation.engine import local_cluster

    cluster = local_cluster(2)
    c = distributed.Client(cluster, set_as_default=False)
    yield c
    c.close()
    cluster.close()


def _busy_threads(client) -> int:
    """Worker threads running a task function now (the workers' own count: the scheduler
    forgets a cancelled task at once while its worker may still run it)."""
    return sum(client.run(lambda dask_worker: len(dask_worker.active_threads)).values())


def _wait(predicate, timeout: float) -> float:
    start = time.monotonic()
    while not predicate():
        assert time.monotonic() - start < timeout, "timed out"
        time.sleep(0.05)
    return time.monotonic() - start


def _served_long_sweep(client):
    """A served view (a stand-in document) running a sweep allowed by the default limit but
    far longer than any test waits, on its share of the cluster (one task at a time)."""
    from test_app import _ServedDoc

    view = SweepView(
        client=client,
        problem="cmab",
        algorithms=["CUCB"],
        x_field="d",
        x_values="18, 19, 20",
        horizon=1_000_000,
        runs=16,
    )
    doc = view._doc = _ServedDoc()
    view._served = True
    assert view.run(), view._notice.object
    _wait(lambda: _busy_threads(client) == 1, 60)
    time.sleep(0.3)
    assert _busy_threads(client) == 1  # its fair share: a thread stays free for live runs
    return view, doc


def _stops(view, client) -> float:
    took = _wait(lambda: _busy_threads(client) == 0, 5)
    view._thread.join(5)
    assert not view._thread.is_alive()
    return took


def test_cancel_frees_the_worker_within_seconds(client, monkeypatch):
    monkeypatch.delenv(MAX_WORK_ENV, raising=False)
    view, doc = _served_long_sweep(client)
    view.cancel()
    assert _stops(view, client) < 5
    doc.run_queued()  # the updates the session's loop would apply
    assert view.status.startswith("cancelled") and not view.running


def test_a_closed_page_frees_the_worker_within_seconds(client, monkeypatch):
    monkeypatch.delenv(MAX_WORK_ENV, raising=False)
    view, doc = _served_long_sweep(client)
    doc.session_context.session.connection_count = 0  # the tab closed
    took = _stops(view, client)
    assert CLOSED_SECONDS <= took + 0.2 and took < CLOSED_SECONDS + 5
    assert view._cancel.is_set()


def test_an_ended_session_and_the_destroy_hook_free_the_worker(client, monkeypatch):
    monkeypatch.delenv(MAX_WORK_ENV, raising=False)
    view, doc = _served_long_sweep(client)
    doc.session_context.session.destroyed = True  # Bokeh destroyed the session
    assert _stops(view, client) < 5
    view, doc = _served_long_sweep(client)
    hook = threading.Thread(target=view.dispose)  # what on_session_destroyed calls
    hook.start()
    hook.join(5)
    assert not hook.is_alive()
    assert _stops(view, client) < 5
