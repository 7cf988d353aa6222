"""``benchmarks/bench_reproduce_tasks.py`` (where ``reproduce all`` spends its CPU, task by
task) and the two functions it reads the pool from: ``experiments.panel_jobs`` and
``sweep.task_plan``, which must be what ``run_experiments`` / ``run_sweeps`` really run."""

from __future__ import annotations

import pytest

from dashboard.simulation import experiments, sweep
from dashboard.simulation.figures import get_figure
from dashboard.simulation.sweep import task_plan
from tests.conftest import load_benchmark


def test_panel_jobs_are_the_figures_non_pac_panels_in_order():
    names = ["semi-pac", "semi-regret", "cmab-fig2"]
    jobs = experiments.panel_jobs(names, "test", tune=True)
    panels = [p for n in names for p in get_figure(n).panels if get_figure(n).kind != "pac"]
    assert len(jobs) == len(panels)
    tuned = [job.tuned for job in jobs]
    assert tuned[: len(get_figure("semi-regret").panels)] == [
        tuple(a for a in p.algorithms if a in get_figure("semi-regret").tuned)
        for p in get_figure("semi-regret").panels
    ]
    assert experiments.panel_jobs(["semi-pac"], "test") == []
    with pytest.raises(ValueError, match="scale"):
        experiments.panel_jobs(["semi-regret"], "huge")


def test_run_sweeps_submits_exactly_the_task_plan(monkeypatch):
    """The pool run in process goes through run_tasks once per entry of task_plan, in its
    order, with its units and repetitions."""
    jobs = experiments.panel_jobs(["semi-regret"], "test", horizon=60, runs=2, tune=True)
    sweeps = [job.sweep for job in jobs]
    planned = [(units, list(reps)) for units, reps, _ in task_plan(sweeps, 1, [0] * len(sweeps))]
    seen = []
    real = sweep.run_tasks

    def spy(units, reps):
        seen.append((list(units), list(reps)))
        return real(units, reps)

    monkeypatch.setattr(sweep, "run_tasks", spy)
    sweep.run_sweeps(sweeps, scheduler="inprocess")
    assert seen == planned
    assert any(len(units) > 1 for units, _ in planned)  # Appendix I's c merged in one engine


def test_task_plan_covers_every_unit_and_repetition_once():
    jobs = experiments.panel_jobs(["semi-regret", "cmab-fig3"], "test", horizon=60, runs=4)
    sweeps = [job.sweep for job in jobs]
    for workers in (1, 2, 8):
        got: dict[tuple[int, str], list[int]] = {}
        for units, reps, tags in task_plan(sweeps, workers, [0] * len(sweeps)):
            assert len(units) == len(tags) >= 1
            for unit, tag in zip(units, tags):
                assert sweeps[tag[0]].units[tag[1]] is unit
                got.setdefault(tag, []).extend(reps)
        want = {(i, u): list(range(sw.runs)) for i, sw in enumerate(sweeps) for u in sw.units}
        assert {k: sorted(v) for k, v in got.items()} == want


def test_the_benchmark_times_every_task_and_its_shares_add_up():
    out = load_benchmark("bench_reproduce_tasks").run(
        ["semi-regret", "cmab-fig4"], "test", horizon=80, runs=2, tune=True, workers=2
    )
    assert out["blas_threads"] is not None
    assert out["tasks"] and all(t["cpu_s"] >= 0 and t["reps"] >= 1 for t in out["tasks"])
    groups = out["groups"]
    assert sum(g["tasks"] for g in groups) == len(out["tasks"])
    assert sum(g["share"] for g in groups) == pytest.approx(1.0, abs=1e-3)
    assert [g["cpu_s"] for g in groups] == sorted((g["cpu_s"] for g in groups), reverse=True)
    names = {g["group"] for g in groups}
    assert {"SP-TS (d=20, K=30)", "BOSE (d=5, K=10)", "SDCB (d=5, m=2, reward=general)"} <= names
    # every repetition-round of the pool is counted once: 2 runs x 80 rounds per unit
    units = sum(
        len(job.sweep.units)
        for job in experiments.panel_jobs(
            ["semi-regret", "cmab-fig4"], "test", horizon=80, runs=2, tune=True
        )
    )
    assert sum(g["rep_rounds"] for g in groups) == units * 2 * 80
