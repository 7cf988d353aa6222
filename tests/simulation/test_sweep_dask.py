"""Sweeps on a real ``distributed.LocalCluster`` with 2 worker processes: same rows as
in-process and as ``simulate`` whatever the split, cancel and resume, and a worker killed
mid-sweep loses and duplicates nothing (Dask reschedules its task)."""

from __future__ import annotations

import os
import signal
import threading
import time

import pytest

distributed = pytest.importorskip("distributed")

from same_numbers import assert_same_numbers  # noqa: E402

from dashboard.simulation import make_spec, simulate  # noqa: E402
from dashboard.simulation.cluster import MALLOC_ENV, QUIET_MONITORS  # noqa: E402
from dashboard.simulation.engine import local_cluster  # noqa: E402
from dashboard.simulation.store import read_experiment  # noqa: E402
from dashboard.simulation.sweep import (  # noqa: E402
    ENV_SCHEDULER,
    close_clients,
    get_client,
    make_sweep,
    run_sweep,
)


@pytest.fixture(scope="module")
def client():
    cluster = local_cluster(2)  # a distributed.LocalCluster of 2 single-threaded processes
    assert isinstance(cluster, distributed.LocalCluster)
    c = distributed.Client(cluster, set_as_default=False)
    yield c
    c.close()
    cluster.close()


@pytest.fixture(scope="module")
def sweep_and_reference():
    sweep = make_sweep(
        "semiparametric",
        ["SBE", "LinUCB"],
        horizon=300,
        runs=4,
        seed=3,
        grid={"d": [2, 3], "SBE:c": [0.5, 1.0]},
        K=5,
        shift="sine",
    )
    return sweep, run_sweep(sweep, scheduler="inprocess")


def _malloc_env() -> dict[str, str | None]:
    return {k: os.environ.get(k) for k in MALLOC_ENV}


def test_workers_start_with_the_malloc_settings(client):
    # set before the worker processes start (glibc reads them once): Dask's own
    # MALLOC_TRIM_THRESHOLD_=65536 would make every array above 128 KB a fresh mmap
    for env in client.run(_malloc_env).values():
        assert env == {k: os.environ.get(k, v) for k, v in MALLOC_ENV.items()}


def test_dasks_monitors_run_at_the_quiet_intervals(client):
    # the scheduler and the nannies live in the web server's process: their psutil sampling
    # takes the interpreter lock the pages' event loop needs (cluster.QUIET_MONITORS)
    cluster = client.cluster
    assert QUIET_MONITORS["distributed.worker.memory.monitor-interval"] == "1s"
    for nanny in cluster.workers.values():
        assert nanny.memory_manager.memory_monitor_interval == 1.0
    assert cluster.scheduler.periodic_callbacks["monitor"].callback_time == 2000


def _same_rows(a, b):
    assert a.complete and b.complete
    assert [r.point for r in a.rows] == [r.point for r in b.rows]
    for x, y in zip(a.rows, b.rows):
        assert_same_numbers(x.result, y.result)


@pytest.mark.parametrize("block", [None, 1, 3])
def test_cluster_rows_equal_inprocess_for_any_split(client, sweep_and_reference, block):
    sweep, ref = sweep_and_reference
    res = run_sweep(sweep, client=client, block=block)
    _same_rows(res, ref)
    n_units = len(sweep.units)  # 4 SBE (d x c) + 2 LinUCB (d)
    assert res.tasks_run == {None: n_units, 1: 4 * n_units, 3: 2 * n_units}[block]


def test_cluster_rows_equal_simulate_for_a_point(client, sweep_and_reference):
    sweep, _ = sweep_and_reference
    res = run_sweep(sweep, client=client, block=2)
    row = res.rows[3]
    assert row.point == {"d": 3, "SBE:c": 1.0}
    spec = make_spec("semiparametric", d=3, K=5, shift="sine")
    alone = simulate(spec, ["SBE", "LinUCB"], 300, runs=4, seed=3, params={"SBE": {"c": 1.0}})
    assert_same_numbers(row.result, alone)


def test_environment_variable_sends_the_sweep_to_a_running_cluster(
    client, sweep_and_reference, monkeypatch
):
    sweep, ref = sweep_and_reference
    monkeypatch.setenv(ENV_SCHEDULER, client.scheduler.address)
    try:
        res = run_sweep(sweep)  # tiny, but the variable asks for the cluster
        _same_rows(res, ref)
        shared = get_client()
        assert shared.scheduler.address == client.scheduler.address
        assert shared is get_client()  # one client per address, reused
    finally:
        close_clients()


def test_cancel_then_resume_on_the_cluster(client, sweep_and_reference, tmp_path):
    sweep, ref = sweep_and_reference
    out = tmp_path / "sweep.jsonl"
    stop = threading.Event()

    def progress(p):
        if p.tasks_done >= 2:
            stop.set()

    part = run_sweep(sweep, client=client, block=1, out=out, progress=progress, cancel=stop)
    assert part.cancelled and 2 <= part.tasks_run < 4 * len(sweep.units)
    _, pieces, _ = read_experiment(out)
    assert len(pieces) == part.tasks_run
    again = run_sweep(sweep, client=client, block=1, out=out)
    assert again.tasks_skipped == part.tasks_run
    assert again.tasks_run == 4 * len(sweep.units) - part.tasks_run
    _same_rows(again, ref)
    _, pieces, _ = read_experiment(out)
    keys = [(p["piece"]["unit"], r) for p in pieces for r in p["piece"]["reps"]]
    assert len(keys) == len(set(keys)) == 4 * len(sweep.units)


def test_a_worker_killed_mid_sweep_loses_and_duplicates_nothing(client, tmp_path):
    sweep = make_sweep(
        "semiparametric", ["BOSE"], horizon=1000, runs=2, seed=0, grid={"d": [2, 3, 4]}, K=5
    )
    ref = run_sweep(sweep, scheduler="inprocess")
    pids = client.run(os.getpid)
    out = tmp_path / "killed.jsonl"
    killed = []

    def progress(p):
        # once work is under way, kill the worker process that is running a task
        if killed or p.tasks_done < 1:
            return
        processing = client.processing()
        busy = [w for w, keys in processing.items() if keys and w in pids]
        if busy:
            os.kill(pids[busy[0]], signal.SIGKILL)
            killed.append(busy[0])

    res = run_sweep(sweep, client=client, block=1, out=out, progress=progress)
    assert killed, "no worker was busy to be killed"
    _same_rows(res, ref)
    _, pieces, _ = read_experiment(out)
    keys = [(p["piece"]["unit"], r) for p in pieces for r in p["piece"]["reps"]]
    assert len(keys) == len(set(keys)) == 3 * 2
    # the nanny restarted the killed worker: the cluster is whole again for later tests
    deadline = time.monotonic() + 30
    while len(client.scheduler_info()["workers"]) < 2 and time.monotonic() < deadline:
        time.sleep(0.2)
    assert len(client.scheduler_info()["workers"]) == 2


def test_paper_protocol_panel_on_the_cluster_equals_in_process(client):
    from dashboard.simulation.tuning import run_panel

    args = ("semiparametric", {"d": 3, "K": 5, "shift": "log"}, ["SBE", "BOSE"], 200, 2, 0)
    here = run_panel(*args, tune=("SBE", "BOSE"), scheduler="inprocess")
    there = run_panel(*args, tune=("SBE", "BOSE"), client=client)
    assert there.chosen == here.chosen and there.regret_by_c == here.regret_by_c
    assert_same_numbers(there.result, here.result)


def test_pooled_panels_on_the_cluster_equal_separate_panels(client):
    """A figure's panels run as one pool of tasks (longest first, whole batches) give each
    panel exactly its own run's numbers and tuning choices."""
    from dashboard.simulation.tuning import panel_job, run_panel, run_panels

    algs, tune = ["SBE", "BOSE", "SP-TS"], ("BOSE",)
    shifts = ("log", "sine")
    args = [("semiparametric", {"d": 3, "K": 5, "shift": s}, algs, 150, 3, 1) for s in shifts]
    pooled = run_panels([panel_job(*a, tune=tune) for a in args], client=client)
    here = run_panels([panel_job(*a, tune=tune) for a in args], scheduler="inprocess")
    for a, there, mine in zip(args, pooled, here):
        alone = run_panel(*a, tune=tune, scheduler="inprocess")
        for run in (there, mine):
            assert run.chosen == alone.chosen and run.regret_by_c == alone.regret_by_c
            assert_same_numbers(run.result, alone.result)


def test_tuning_batched_over_c_and_cut_by_repetitions_equals_separate_runs(client, monkeypatch):
    """Appendix I's four values of c run as one engine per algorithm (shared_batch.py), the
    SP-TS group of 4 c x 2 panels x 8 repetitions cut by repetitions between the 2 workers:
    every panel's numbers and choices are those of unmerged tasks run in process."""
    from dashboard.simulation import sweep as sweep_mod
    from dashboard.simulation.tuning import panel_job, run_panels

    algs = tune = ("BOSE", "SP-TS")
    args = [
        ("semiparametric", {"d": 3, "K": 5, "shift": s}, algs, 120, 8, 2) for s in ("log", "sine")
    ]
    plans = []
    real = sweep_mod.merge_plan

    def spy(tasks, workers=1):
        plans.append(real(tasks, workers))
        return plans[-1]

    monkeypatch.setattr(sweep_mod, "merge_plan", spy)
    pooled = run_panels([panel_job(*a, tune=tune) for a in args], client=client)
    (plan,) = plans
    groups = [tuple(g) for g, _ in plan]
    cut = [g for g in set(groups) if groups.count(g) > 1]
    assert cut and all(len(g) == 8 for g in cut)  # 4 c x 2 panels, in pieces
    assert all(len(g) == 8 for g in groups)  # BOSE: one task over its 4 c x 2 panels
    monkeypatch.setattr(
        sweep_mod, "merge_plan", lambda tasks, w=1: [([i], t[3]) for i, t in enumerate(tasks)]
    )
    alone = run_panels([panel_job(*a, tune=tune) for a in args], scheduler="inprocess")
    for there, here in zip(pooled, alone):
        assert there.chosen == here.chosen and there.regret_by_c == here.regret_by_c
        assert_same_numbers(there.result, here.result)


def test_a_served_class_embedded_cluster_is_reused_by_sweeps(sweep_and_reference, monkeypatch):
    """``serve`` starts the embedded cluster and exports its address in the environment; a
    sweep (or any later get_client()) must reuse that client, not close the cluster."""
    from dashboard.simulation import cluster

    sweep, ref = sweep_and_reference
    try:
        embedded = get_client(workers=1)
        monkeypatch.setenv(ENV_SCHEDULER, embedded.scheduler.address)
        assert get_client() is embedded and embedded.status == "running"
        _same_rows(run_sweep(sweep), ref)
        assert cluster.get_client() is embedded
    finally:
        close_clients()


def test_cli_embedded_cluster_needs_no_set_up(capsys):
    """``sweep --workers 2`` starts its own local cluster, prints the rows computed in-process,
    and shuts the cluster down."""
    import json

    from dashboard.cli import main
    from dashboard.simulation import cluster

    argv = ["sweep", "--problem", "semiparametric", "--algorithm", "SBE", "--K", "5"]
    argv += ["--grid", "d=2,3", "--horizon", "200", "--runs", "2", "--format", "json"]
    assert main([*argv, "--workers", "2"]) == 0
    on_cluster = json.loads(capsys.readouterr().out)
    assert cluster._state["client"] is None  # closed after the command
    assert main([*argv, "--scheduler", "inprocess"]) == 0
    here = json.loads(capsys.readouterr().out)

    def strip(rows):
        for r in rows:
            r["results"] = [
                {k: v for k, v in x.items() if not k.endswith("seconds")} for x in r["results"]
            ]
        return rows

    assert strip(on_cluster) == strip(here)


def test_tasks_in_flight_start_in_the_given_order(client):
    # run_on_dask(in_flight=n): at most n tasks on the cluster, the next submitted as one
    # completes (reproduce's pool, longest first: list scheduling on the free worker)
    from dashboard.simulation.engine import run_on_dask

    done: list[int] = []
    one_at_a_time = [(time.sleep, (s,), i) for i, s in enumerate([0.3, 0.05, 0.05, 0.05])]
    run_on_dask(client, one_at_a_time, lambda tag, _: done.append(tag), in_flight=lambda: 1)
    assert done == [0, 1, 2, 3]  # one at a time: the given order, the long one first

    done.clear()
    pool = [(time.sleep, (s,), i) for i, s in enumerate([3.0, 0.05, 0.05, 0.05, 0.05])]
    run_on_dask(client, pool, lambda tag, _: done.append(tag), in_flight=2)
    # the short ones ran on the other worker while the long one ran, in the given order (3 s:
    # room for four round trips to the scheduler on a loaded machine; 0.8 s was not enough)
    assert done == [1, 2, 3, 4, 0]
