"""A paper panel run through the sweep engine, with Appendix I's tuning protocol.

Appendix I.1 of the semiparametric paper runs each algorithm with its exploration constant
``c`` in {1, 2, 4, 8} (SBE's phase length multiplier, BOSE's gamma multiplier, semiparametric
TS's v multiplier) and reports the best one.  :func:`run_panel` expresses this as a sweep whose
grid is ``ALG:c = 1, 2, 4, 8`` for each tuned algorithm (each algorithm's runs do not depend on
the other algorithms' constants, so the sweep runs 4 x (tuned algorithms) units, not 4^k),
picks per algorithm the ``c`` with the lowest mean final regret (ties: the smaller ``c``) and
returns the panel's result with those constants together with the table of what each ``c``
gave.  Without tuning it is one sweep point, i.e. exactly ``simulate``'s result.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from .results import SimulationResult
from .sweep import Sweep, SweepResult, make_sweep, run_sweep, run_sweeps

__all__ = ["TUNE_VALUES", "PanelJob", "PanelRun", "panel_job", "run_panel", "run_panels"]

#: Appendix I's values of the exploration constant c.
TUNE_VALUES: tuple[float, ...] = (1.0, 2.0, 4.0, 8.0)


@dataclass
class PanelRun:
    """A panel's result and, when tuned, the constant chosen per algorithm."""

    result: SimulationResult
    chosen: dict[str, float] = field(default_factory=dict)
    regret_by_c: dict[str, dict[float, float]] = field(default_factory=dict)

    def describe(self, key: str) -> str:
        """One line: the chosen c per algorithm and the mean final regret each c gave."""
        if not self.chosen:
            return ""
        parts = []
        for alg, c in self.chosen.items():
            tried = ", ".join(f"{v:g}: {r:,.1f}" for v, r in self.regret_by_c[alg].items())
            parts.append(f"{alg} c = {c:g} (final regret by c: {tried})")
        return (
            f"[{key}] Appendix I tuning, best c in {{1, 2, 4, 8}} by mean final regret: "
            + "; ".join(parts)
            + "."
        )

    def summary(self) -> dict[str, Any]:
        return {
            alg: {
                "chosen_c": c,
                "final_regret_mean_by_c": {f"{v:g}": r for v, r in self.regret_by_c[alg].items()},
            }
            for alg, c in self.chosen.items()
        }


@dataclass(frozen=True)
class PanelJob:
    """One panel to run: its sweep (``ALG:c`` grid for the tuned algorithms) and the tuned
    algorithms' names (:func:`panel_job`; run by :func:`run_panels`)."""

    sweep: Sweep
    tuned: tuple[str, ...]


def panel_job(
    problem: str,
    spec: dict[str, Any],
    algorithms: Sequence[str],
    horizon: int,
    runs: int,
    seed: int,
    params: dict[str, dict[str, Any]] | None = None,
    tune: Sequence[str] = (),
    values: Sequence[float] = TUNE_VALUES,
) -> PanelJob:
    """The sweep of one panel, tuning constant ``c`` of the algorithms in ``tune``."""
    tuned = [a for a in algorithms if a.lower() in {t.lower() for t in tune}]
    grid = {f"{a}:c": list(values) for a in tuned}
    sweep = make_sweep(
        problem,
        list(algorithms),
        horizon=horizon,
        runs=runs,
        seed=seed,
        grid=grid,
        params=params,
        **spec,
    )
    return PanelJob(sweep, tuple(tuned))


def _panel_run(job: PanelJob, res: SweepResult) -> PanelRun:
    """The panel's result from its sweep's rows: the best ``c`` per tuned algorithm."""
    if not res.complete:  # pragma: no cover - only when cancelled
        raise ValueError("the panel's sweep did not finish")
    tuned = list(job.tuned)
    if not tuned:
        return PanelRun(res.rows[0].result)
    regret: dict[str, dict[float, float]] = {a: {} for a in tuned}
    for row in res.rows:
        for a in tuned:
            c = float(row.point[f"{a}:c"])
            regret[a].setdefault(c, float(row.result[a].final_regret.mean()))
    chosen = {a: min(regret[a], key=lambda c, a=a: (regret[a][c], c)) for a in tuned}
    for row in res.rows:
        if all(float(row.point[f"{a}:c"]) == chosen[a] for a in tuned):
            return PanelRun(row.result, chosen, regret)
    raise AssertionError("the chosen constants are a grid point")  # pragma: no cover


def run_panels(
    jobs: Sequence[PanelJob],
    scheduler: str | None = None,
    client: Any = None,
    groups: Sequence[int] | None = None,
    on_done: Callable[[int, PanelRun], None] | None = None,
) -> list[PanelRun]:
    """Run several panels' sweeps as one pool of tasks (:func:`.sweep.run_sweeps`: no worker
    idles at the end of a panel while the next has work); the same results as
    :func:`run_panel` on each.  ``groups`` (one priority per job) and ``on_done(i, run)``
    (called as soon as job ``i`` is complete) are :func:`.sweep.run_sweeps`'s ``groups`` and
    ``on_sweep``."""
    jobs = list(jobs)
    done: dict[int, PanelRun] = {}

    def on_sweep(i: int, res: SweepResult) -> None:
        done[i] = _panel_run(jobs[i], res)
        if on_done is not None:
            on_done(i, done[i])

    results = run_sweeps(
        [job.sweep for job in jobs],
        scheduler=scheduler,
        client=client,
        groups=groups,
        on_sweep=on_sweep,
    )
    return [done.get(i) or _panel_run(job, res) for i, (job, res) in enumerate(zip(jobs, results))]


def run_panel(
    *args: Any, scheduler: str | None = None, client: Any = None, **kwargs: Any
) -> PanelRun:
    """Run one panel on the sweep engine (the arguments of :func:`panel_job`: problem, spec,
    algorithms, horizon, runs, seed, params, tune, values); tune constant ``c`` of the
    algorithms in ``tune``."""
    job = panel_job(*args, **kwargs)
    return _panel_run(job, run_sweep(job.sweep, scheduler=scheduler, client=client))
