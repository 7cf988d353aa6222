"""A sweep on a real ``distributed.LocalCluster`` (2 single-threaded worker processes) shares it
with a class: its work is estimated as the Live tab's and refused above a limit, a sharing
sweep leaves a worker free for a student's live run, and Cancel or a closed tab stop the
running tasks on the workers within seconds (the task checks its stop flag between slices),
not hours later.  Slicing a task changes no number."""

from __future__ import annotations

import re
import threading
import time

import pytest

distributed = pytest.importorskip("distributed")

from same_numbers import assert_same_numbers  # noqa: E402

from dashboard.simulation import make_spec  # noqa: E402
from dashboard.simulation.engine import local_cluster  # noqa: E402
from dashboard.simulation.records import result_from_record  # noqa: E402
from dashboard.simulation.remote import DaskRun, RunRequest  # noqa: E402
from dashboard.simulation.shared_batch import run_alone  # noqa: E402
from dashboard.simulation.sweep import (  # noqa: E402
    SWEEP_PRIORITY,
    check_sweep_work,
    estimate_sweep,
    fair_share,
    make_sweep,
    run_sweep,
)

#: The red-team's sweep: the Live tab's default algorithms, T = 10^7, R = 256, 3 points.
FINDING = dict(horizon=10_000_000, runs=256, grid={"m": [2, 3, 4]})
LIVE = ["CUCB", "AROQ-CMAB", "SROQ-CMAB"]


@pytest.fixture(scope="module")
def client():
    cluster = local_cluster(2)
    c = distributed.Client(cluster, set_as_default=False)
    yield c
    c.close()
    cluster.close()


def _busy_threads(client) -> int:
    """Worker threads running a task function right now (on the workers themselves: the
    scheduler forgets a cancelled task at once, while its worker may still run it)."""
    return sum(client.run(lambda dask_worker: len(dask_worker.active_threads)).values())


def _wait(predicate, timeout: float) -> float:
    """Seconds until ``predicate()`` held (AssertionError after ``timeout``)."""
    start = time.monotonic()
    while not predicate():
        assert time.monotonic() - start < timeout, "timed out"
        time.sleep(0.05)
    return time.monotonic() - start


def _long_sweep(points: int = 3):
    # allowed under the default limit (about 1.2 min per point as estimated), and far longer
    # than any test waits: a task that does not stop keeps its worker busy for many seconds
    return make_sweep(
        "cmab", ["CUCB"], horizon=1_000_000, runs=16, grid={"d": [18, 19, 20][:points]}
    )


def _start(sweep, client, **kw):
    stop = threading.Event()
    out: dict = {}

    def work():
        out["result"] = run_sweep(sweep, client=client, cancel=stop, **kw)

    thread = threading.Thread(target=work, daemon=True)
    thread.start()
    return stop, thread, out


def test_the_findings_sweep_is_refused_with_its_estimate():
    sweep = make_sweep("cmab", LIVE, **FINDING)
    est = estimate_sweep(sweep)
    with pytest.raises(ValueError) as info:
        check_sweep_work(sweep, 60)
    message = str(info.value)
    # each point alone as the Live tab estimates it (tests/ui: its "about 21.9 h"), the sweep
    # their sum
    assert est.points == 3 and est.seconds == pytest.approx(3 * est.largest)
    assert "about 21.9 h alone" in message and "3 points" in message
    assert "above the limit of 60 s" in message
    assert "lower T, R or the number of points" in message
    assert re.search(r"about [\d.]+ (h|days) of simulation", message)


def test_a_point_is_estimated_as_the_same_run_would_be():
    from dashboard.simulation.budget import estimate_run
    from dashboard.simulation.selection import resolve_info

    sweep = make_sweep("cmab", LIVE, **FINDING)
    spec = make_spec("cmab", m=3)
    infos = [resolve_info(a, "cmab") for a in LIVE]
    run = estimate_run(spec, infos, 10_000_000, 256)
    est = estimate_sweep(sweep)
    assert est.largest == pytest.approx(run.seconds)
    assert est.memory == pytest.approx(run.memory)


def test_shared_units_count_once():
    # AROQ-CMAB's constant is swept: SROQ-CMAB's unit is the same at every point, run once
    sweep = make_sweep(
        "cmab", ["AROQ-CMAB", "SROQ-CMAB"], horizon=5000, runs=4, grid={"AROQ-CMAB:C": [1, 2]}
    )
    est = estimate_sweep(sweep)
    one = make_sweep("cmab", ["AROQ-CMAB", "SROQ-CMAB"], horizon=5000, runs=4)
    alone = estimate_sweep(one).seconds
    sroq = estimate_sweep(make_sweep("cmab", ["SROQ-CMAB"], horizon=5000, runs=4)).seconds
    assert est.seconds == pytest.approx(2 * alone - sroq)


def test_run_sweep_refuses_above_max_work_before_any_work(client):
    sweep = make_sweep("cmab", LIVE, **FINDING)
    with pytest.raises(ValueError, match="or override with max_work=None"):
        run_sweep(sweep, client=client, max_work=600)
    assert _busy_threads(client) == 0


def test_fair_share_keeps_a_thread_for_live_runs():
    assert [fair_share(t, 1) for t in (1, 2, 3, 8)] == [1, 1, 2, 7]
    assert [fair_share(t, 2) for t in (1, 2, 3, 8)] == [1, 1, 1, 3]
    assert SWEEP_PRIORITY < 0  # below a live run's (Dask's default 0)


def test_slices_with_stop_checks_give_the_same_record():
    sweep = make_sweep("cmab", ["AROQ-CMAB", "CUCB"], horizon=1500, runs=3, d=5)
    calls = []

    def never() -> bool:
        calls.append(1)
        return False

    for unit in sweep.units.values():
        whole = run_alone(unit, [0, 1, 2])
        sliced = run_alone(unit, [0, 1, 2], stop=never, slice_seconds=0.002)
        assert_same_numbers(result_from_record(whole), result_from_record(sliced))
    assert calls  # the flag was asked between slices
    stopped = run_alone(next(iter(sweep.units.values())), [0], stop=lambda: True, slice_seconds=0)
    assert stopped is None


def test_cancel_stops_the_running_tasks_on_the_workers_within_seconds(client):
    stop, thread, out = _start(_long_sweep(), client)
    _wait(lambda: _busy_threads(client) == 2, 60)  # both workers run a long task
    # every task of the sweep waits and runs below a live run's priority (Dask's default 0;
    # the scheduler keeps the user's priority negated, first in its priority tuple)
    tasks = client.cluster.scheduler.tasks
    priorities = {ts.priority[0] for k, ts in list(tasks.items()) if "run_task" in str(k)}
    assert priorities == {-SWEEP_PRIORITY}
    time.sleep(0.5)
    stop.set()
    took = _wait(lambda: _busy_threads(client) == 0, 5)
    print(f"the workers were free {took:.2f} s after Cancel")
    thread.join(5)
    assert not thread.is_alive() and out["result"].cancelled
    assert took < 5
    assert not client.processing() or not any(client.processing().values())


def test_a_sharing_sweep_leaves_a_worker_for_a_live_run(client):
    sweep = _long_sweep()
    stop, thread, out = _start(sweep, client, share=True)
    try:
        _wait(lambda: _busy_threads(client) >= 1, 60)
        time.sleep(1.0)  # a second task would have started by now
        assert _busy_threads(client) == 1  # the sweep's share: one of two threads
        spec = make_spec("cmab", d=8, m=2)
        run = DaskRun(client, RunRequest(spec, ("CUCB",), 20_000, runs=2))
        try:
            frames = 0
            start = time.monotonic()
            while frames < 3:  # the run's first frames come while the sweep runs
                assert time.monotonic() - start < 20, "the live run did not start"
                if run.poll() is not None:
                    frames += 1
                    run.request(20_000, 0.05)
                time.sleep(0.02)
        finally:
            run.close()
        assert thread.is_alive()  # the sweep was still running all along
    finally:
        stop.set()
        _wait(lambda: _busy_threads(client) == 0, 5)
        thread.join(5)
    assert out["result"].cancelled


def test_sharing_cuts_long_tasks_by_repetitions_and_keeps_the_rows(client, monkeypatch):
    from dashboard.simulation import sweep as sweep_mod

    sweep = make_sweep("semiparametric", ["SBE"], horizon=60, runs=128, seed=2, K=5, d=3)
    unit = next(iter(sweep.units.values()))
    # on 2 workers one unit goes as 4 tasks of 32 repetitions; those are "too long" here: cut
    # into 8 of 16 (never below sweep.MIN_SHARE_BLOCK)
    monkeypatch.setattr(sweep_mod, "SHARE_TASK_SECONDS", sweep_mod._task_seconds(unit, 16))
    shared = run_sweep(sweep, client=client, share=True)
    plain = run_sweep(sweep, client=client)
    whole = run_sweep(sweep, scheduler="inprocess")
    assert plain.tasks_run == 4 and shared.tasks_run == 8
    assert_same_numbers(shared.rows[0].result, whole.rows[0].result)
    assert_same_numbers(plain.rows[0].result, whole.rows[0].result)
