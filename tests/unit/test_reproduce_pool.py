"""``reproduce all`` as one pool of tasks (issue 9): every figure's numbers are those of its
own run, each figure is handed over exactly once as soon as its tasks are done, and the
grouped order submits a group's tasks before the next group's.

``run_sweeps(groups=..., on_sweep=...)`` and ``run_experiments`` are checked in process
and on a real ``distributed.LocalCluster`` with 2 worker processes.
"""

from __future__ import annotations

import pytest

from dashboard.simulation import experiments
from dashboard.simulation.experiments import run_experiment, run_experiments
from dashboard.simulation.sweep import make_sweep, run_sweep, run_sweeps

FIGS = ["cmab-fig2", "semi-pac", "semi-regret"]


def _sweeps():
    a = make_sweep("semiparametric", ["SBE", "LinUCB"], horizon=120, runs=3, seed=1, d=2, K=4)
    b = make_sweep("cmab", ["CUCB"], horizon=100, runs=2, seed=2, grid={"d": [4, 5]}, m=2)
    return [a, b]


def _same_rows(x, y) -> bool:
    if len(x.rows) != len(y.rows):
        return False
    for rx, ry in zip(x.rows, y.rows):
        if rx.point != ry.point:
            return False
        for ax, ay in zip(rx.result.results, ry.result.results):
            if ax.algorithm != ay.algorithm or ax.regret.tolist() != ay.regret.tolist():
                return False
    return True


def test_grouped_sweeps_run_in_group_order_and_report_each_once(monkeypatch):
    from dashboard.simulation import sweep as sweep_mod

    order: list[str] = []
    real = sweep_mod.run_task

    def spy(unit, reps):
        order.append(unit["problem"])
        return real(unit, reps)

    monkeypatch.setattr(sweep_mod, "run_task", spy)
    sweeps = _sweeps()
    seen: list[tuple[int, int]] = []
    res = run_sweeps(
        sweeps,
        scheduler="inprocess",
        groups=[1, 0],  # the second sweep first
        on_sweep=lambda i, r: seen.append((i, len(order))),
    )
    n_cmab = order.count("cmab")
    assert order[:n_cmab] == ["cmab"] * n_cmab  # group 0's tasks all before group 1's
    assert seen == [(1, n_cmab), (0, len(order))]  # each once, right after its last task
    for sw, got in zip(sweeps, res):
        assert got.complete and _same_rows(got, run_sweep(sw, scheduler="inprocess"))
    with pytest.raises(ValueError, match="groups"):
        run_sweeps(sweeps, scheduler="inprocess", groups=[0])


def _csvs(results):
    return {r.name: r.to_csv() for r in results}


@pytest.fixture(scope="module")
def separate():
    return {n: run_experiment(n, "test", seed=4, horizon=150).to_csv() for n in FIGS}


def test_pooled_figures_equal_separate_runs_in_process(separate):
    handed: list[str] = []
    res = run_experiments(
        FIGS, "test", seed=4, horizon=150, on_result=lambda r: handed.append(r.name)
    )
    assert [r.name for r in res] == FIGS  # returned in the order asked
    assert _csvs(res) == separate
    assert sorted(handed) == sorted(FIGS) and len(handed) == len(FIGS)
    # the PAC figure (no tasks) is finished at the first completed task, then each figure
    # when its last task is done; the tasks run longest first whatever their figure, and
    # semi-regret's shortest (SBE at d = 5) come after all of cmab-fig2's
    assert handed == ["semi-pac", "cmab-fig2", "semi-regret"]


def test_pooled_figures_equal_separate_runs_on_a_local_cluster(separate):
    distributed = pytest.importorskip("distributed")
    from dashboard.simulation.engine import local_cluster

    cluster = local_cluster(2)
    client = distributed.Client(cluster, set_as_default=False)
    try:
        handed: list[str] = []
        res = run_experiments(
            FIGS,
            "test",
            seed=4,
            horizon=150,
            client=client,
            on_result=lambda r: handed.append(r.name),
        )
        assert _csvs(res) == separate
        assert sorted(handed) == sorted(FIGS)
    finally:
        client.close()
        cluster.close()


def test_nothing_runs_before_every_figure_is_validated(monkeypatch):
    def started(*_a, **_k):
        raise AssertionError("work started")

    monkeypatch.setattr(experiments, "run_panels", started)
    monkeypatch.setattr(experiments, "pure_exploration_errors", started)
    with pytest.raises(ValueError, match="unknown figure"):
        run_experiments(["cmab-fig2", "fig9"], "test")
    with pytest.raises(ValueError, match="DEO"):
        run_experiments(["cmab-fig2", "semi-pac"], "test", params={"DEO": {"bogus": 1}})
