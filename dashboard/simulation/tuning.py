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

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from .results import SimulationResult
from .sweep import make_sweep, run_sweep

__all__ = ["TUNE_VALUES", "PanelRun", "run_panel"]

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


def run_panel(
    problem: str,
    spec: dict[str, Any],
    algorithms: Sequence[str],
    horizon: int,
    runs: int,
    seed: int,
    params: dict[str, dict[str, Any]] | None = None,
    tune: Sequence[str] = (),
    values: Sequence[float] = TUNE_VALUES,
    scheduler: str | None = None,
    client: Any = None,
) -> PanelRun:
    """Run one panel on the sweep engine; tune constant ``c`` of the algorithms in ``tune``."""
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
    res = run_sweep(sweep, scheduler=scheduler, client=client)
    if not res.complete:  # pragma: no cover - only when cancelled
        raise ValueError("the panel's sweep did not finish")
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
