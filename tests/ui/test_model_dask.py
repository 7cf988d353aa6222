"""Served-class sessions: the headless run model with its runs on a real Dask LocalCluster.

Several sessions at once give exactly ``simulate``'s numbers; Pause, Step and Reset answer
without waiting for a worker; a killed worker shows its sessions one clear sentence and Run
works again; a closed session leaves nothing on the workers.
"""

from __future__ import annotations

import os
import signal
import time

import numpy as np
import pytest

from dashboard.simulation.runner import simulate
from dashboard.ui.model import Config, RunModel

distributed = pytest.importorskip("distributed")


@pytest.fixture(scope="module")
def cluster():
    from dashboard.simulation.cluster import SCHEDULER_ENV, close_client

    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
    ) as c:
        old = os.environ.get(SCHEDULER_ENV)
        os.environ[SCHEDULER_ENV] = c.scheduler_address
        try:
            yield c
        finally:
            close_client()
            if old is None:
                os.environ.pop(SCHEDULER_ENV, None)
            else:
                os.environ[SCHEDULER_ENV] = old


def _client():
    from dashboard.simulation.cluster import get_client

    return get_client()


def _actors() -> int:
    return sum(_client().run(lambda dask_worker: len(dask_worker.state.actors)).values())


CONFIGS = [
    dict(problem="cmab", d=8, m=2, algorithms=["CUCB", "AROQ-CMAB", "SROQ-CMAB"], horizon=3000),
    dict(problem="cmab", d=6, m=2, reward="general", algorithms=["AROQ-GR-CMAB"], horizon=400),
    dict(problem="semiparametric", d=4, K=8, shift="log", algorithms=["SBE", "BOSE"], horizon=2000),
]


def _model(i: int, **extra) -> RunModel:
    cfg = {**CONFIGS[i % len(CONFIGS)], "runs": 2, "seed": 10 + i, **extra}
    return RunModel(Config(**cfg), engine="dask")


def _tick_until(models, cond, timeout=120.0):
    stop = time.monotonic() + timeout
    while time.monotonic() < stop:
        for m in models:
            t0 = time.perf_counter()
            m.tick(0.03)
            assert time.perf_counter() - t0 < 2.0, "tick waited for a worker"
        if cond():
            return
        time.sleep(0.01)
    raise AssertionError("timed out")


def _expected(model: RunModel):
    c = model.config
    return simulate(
        c.spec(), list(c.algorithms), c.horizon, c.runs, c.seed, params=c.algorithm_constants()
    )


def test_concurrent_sessions_equal_simulate(cluster):
    models = [_model(i) for i in range(4)]
    for m in models:
        m.run()
        assert m.status == "running" and m.engine == "dask"
    _tick_until(models, lambda: all(m.status == "done" for m in models))
    for m in models:
        exp = _expected(m)
        for got, want in zip(m.result.results, exp.results):
            np.testing.assert_array_equal(got.regret, want.regret)
            np.testing.assert_array_equal(got.queries, want.queries)
        m.close()


def test_pause_step_and_reset_answer_at_once(cluster):
    m = _model(0, horizon=10**6, runs=8, d=12, m=3, algorithms=["CUCB"])
    m.run()
    _tick_until([m], lambda: m.t > 0)
    t0 = time.perf_counter()
    m.pause()
    assert m.status == "paused" and time.perf_counter() - t0 < 0.05
    _tick_until([m], lambda: not m.busy)  # a frame in flight is still shown
    t_paused = m.t
    m.step()
    assert m.status == "paused"
    _tick_until([m], lambda: not m.busy)
    assert m.t > t_paused and m.status == "paused"
    t0 = time.perf_counter()
    m.reset()
    assert m.status == "idle" and m.result is None and time.perf_counter() - t0 < 0.5
    stop = time.monotonic() + 10
    while _actors() and time.monotonic() < stop:
        time.sleep(0.1)
    assert _actors() == 0, "a reset session's run must leave the workers"


def test_closed_sessions_leave_the_workers(cluster):
    models = [_model(i) for i in range(3)]
    for m in models:
        m.run()
    _tick_until(models, lambda: all(m.t > 0 for m in models))
    for m in models:
        m.close()
    stop = time.monotonic() + 10
    while _actors() and time.monotonic() < stop:
        time.sleep(0.1)
    assert _actors() == 0


def test_a_killed_worker_gives_a_clear_message_and_run_works_again(cluster):
    models = [_model(0, horizon=10**6, runs=8, d=12, m=3, algorithms=["CUCB"]) for _ in range(4)]
    for m in models:
        m.run()
    _tick_until(models, lambda: all(m.t > 0 for m in models))
    where = _client().run(lambda dask_worker: list(dask_worker.state.actors))
    victim = next(addr for addr, keys in where.items() if keys)
    pid = _client().run(os.getpid, workers=[victim])[victim]
    os.kill(pid, signal.SIGKILL)
    _tick_until(models, lambda: any(m.status == "error" for m in models), timeout=120)
    hit = [m for m in models if m.status == "error"]
    for m in hit:
        assert "press Run to start again" in m.error and "\n" not in m.error
    for m in models:
        m.close()
    _client().wait_for_workers(2, timeout=120)
    again = _model(1)
    again.run()
    _tick_until([again], lambda: again.status == "done")
    exp = _expected(again)
    np.testing.assert_array_equal(again.result.results[0].regret, exp.results[0].regret)
    again.close()


def test_the_instructor_work_limit_disables_big_runs(monkeypatch):
    from dashboard.ui.model import MAX_WORK_ENV

    config = Config(problem="cmab", d=20, m=3, algorithms=["CUCB"], horizon=10**6, runs=16)
    assert config.valid  # within the default limit
    monkeypatch.setenv(MAX_WORK_ENV, "1")
    strict = Config(problem="cmab", d=20, m=3, algorithms=["CUCB"], horizon=10**6, runs=16)
    assert not strict.valid and any(
        "max" in e.lower() or "limit" in e.lower() for e in strict.errors
    )
    monkeypatch.setenv(MAX_WORK_ENV, "not a number")
    assert Config(problem="cmab", d=20, m=3, algorithms=["CUCB"], horizon=10**6, runs=16).valid


def _no_actors_within(seconds: float) -> float:
    start = time.monotonic()
    while _actors() and time.monotonic() - start < seconds:
        time.sleep(0.05)
    assert _actors() == 0, f"the run's state is still on the workers after {seconds} s"
    return time.monotonic() - start


def test_a_finished_run_gives_its_worker_back_at_once(cluster):
    m = _model(0)
    m.run()
    _tick_until([m], lambda: m.status == "done")
    assert m.handle is None and not m.busy  # the result is here, the worker state is not
    _no_actors_within(5.0)
    np.testing.assert_array_equal(m.result.results[0].regret, _expected(m).results[0].regret)
    m.step()  # Step after the end loads a new run, as before
    _tick_until([m], lambda: not m.busy)
    assert m.status == "paused" and m.handle is not None and m.t < m.horizon
    m.close()


class _Session:
    def __init__(self) -> None:
        self.destroyed = False
        self.connection_count = 1


class _Context:
    def __init__(self) -> None:
        self.session = _Session()


class _Doc:
    def __init__(self) -> None:
        self.session_context = _Context()


def test_a_page_still_loading_keeps_its_reaper():
    from dashboard.ui.lifecycle import SessionReaper

    m = _model(0, horizon=1000, runs=1, d=6, m=2, algorithms=["CUCB"])
    doc = _Doc()
    doc.session_context.session.connection_count = 0  # HTTP request served, socket not yet
    now = [0.0]
    reaper = SessionReaper(m, doc, idle=3600, closed_seconds=1.0, clock=lambda: now[0])
    for _ in range(10):  # a slow page load: 5 s without a socket
        assert reaper.check() is None
        now[0] += 0.5
    assert not reaper.finished  # still watching: the page has not opened yet
    doc.session_context.session.connection_count = 1  # it connects
    assert reaper.check() is None and not reaper.finished
    doc.session_context.session.connection_count = 0  # and later closes
    reaper.check()
    now[0] += 1.1
    reaper.check()
    assert reaper.finished


def test_a_closed_page_releases_its_run_within_seconds(cluster):
    from dashboard.ui.lifecycle import SessionReaper

    m = _model(0, horizon=10**6, runs=8, d=12, m=3, algorithms=["CUCB"])
    doc = _Doc()
    now = [time.monotonic()]
    reaper = SessionReaper(m, doc, idle=3600, closed_seconds=2.0, clock=lambda: now[0])
    m.run()
    _tick_until([m], lambda: m.t > 0)
    assert reaper.check() is None and _actors() == 1  # open page, running: kept
    doc.session_context.session.connection_count = 0  # the tab closed
    assert reaper.check() is None  # a reconnecting page gets a moment
    now[0] += 2.5
    assert reaper.check() == "closed"
    assert m.status == "stopped" and m.handle is None and m.result is not None
    assert _no_actors_within(5.0) < 5.0
    assert reaper.finished  # nothing left to check: serve stops its periodic callback
    assert reaper.check() is None  # idempotent


def test_an_idle_paused_run_is_released_and_run_works_again(cluster):
    from dashboard.ui.lifecycle import SessionReaper

    m = _model(0, horizon=10**6, runs=8, d=12, m=3, algorithms=["CUCB"])
    reaper = SessionReaper(m, None, idle=60.0)
    m.run()
    _tick_until([m], lambda: m.t > 0)
    m.pause()
    _tick_until([m], lambda: not m.busy)
    shown = m.t
    assert reaper.check() is None  # paused a moment ago: kept
    assert not m.release_if_idle(60.0, now=time.monotonic() + 30)
    assert reaper.check() is None
    reaper.clock = lambda: time.monotonic() + 61
    assert reaper.check() == "idle"
    assert (m.status, m.t) == ("stopped", shown) and m.result is not None
    assert any("released after 1 minute without activity" in n for n in m.notices())
    _no_actors_within(5.0)
    m.resume()  # nothing to resume
    assert m.status == "stopped"
    m.run()
    assert m.status == "running" and not m.released
    _tick_until([m], lambda: m.t > 0)
    m.close()
    _no_actors_within(5.0)


def test_a_running_run_is_never_released_as_idle(cluster):
    m = _model(0, horizon=10**6, runs=8, d=12, m=3, algorithms=["CUCB"])
    m.run()
    _tick_until([m], lambda: m.t > 0)
    assert not m.release_if_idle(0.0, now=time.monotonic() + 10**6)
    assert m.status == "running" and m.handle is not None
    m.close()
    _no_actors_within(5.0)


def test_idle_limit_from_the_environment(monkeypatch):
    from dashboard.ui.lifecycle import DEFAULT_IDLE_MINUTES, IDLE_ENV, idle_seconds

    monkeypatch.setenv(IDLE_ENV, "3")
    assert idle_seconds() == 180.0
    for bad in ("", "0", "-2", "nan", "inf", "ten"):
        monkeypatch.setenv(IDLE_ENV, bad)
        assert idle_seconds() == 60.0 * DEFAULT_IDLE_MINUTES


def test_frames_wait_while_the_server_loop_is_behind(cluster, monkeypatch):
    from dashboard.ui.pacing import PACER

    m = _model(0, horizon=10**6, runs=8, d=12, m=3, algorithms=["CUCB"])
    m.run()
    _tick_until([m], lambda: m.t > 0)
    monkeypatch.setattr(PACER, "interval", 3600.0)
    shown = m.t
    # the next frame is computed meanwhile (ready when due) but not shown, and no further
    # frame is asked for: one frame per interval, as many requests as frames shown
    _tick_until([m], lambda: m.handle.ready)
    asked = m._asked_at
    for _ in range(3):
        m.tick(0.02)
        assert m.t == shown and m.busy and m.handle.ready and m._asked_at == asked
        assert not m.queued  # a frame waiting to be shown is not a queued run
    assert m.status == "running"
    monkeypatch.setattr(PACER, "interval", 0.0)
    _tick_until([m], lambda: m.t > shown)
    m.close()
