"""Result containers of a simulation and their exports (JSON summary, text table, CSV)."""

from __future__ import annotations

import csv
import io
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..algorithms.base import ExpensiveLog, PolicyEvent

__all__ = ["AlgorithmResult", "SimulationResult", "merge_results"]


def _finite(x: float) -> float | None:
    return float(x) if math.isfinite(float(x)) else None


@dataclass
class AlgorithmResult:
    """Everything recorded for one algorithm over ``R`` repetitions.

    Curves are exact values at the rounds ``times`` (shape ``(G,)``): ``regret``, ``queries``
    and ``adaptivity`` have shape ``(R, G)``.
    """

    algorithm: str
    paper: str
    times: np.ndarray
    regret: np.ndarray
    queries: np.ndarray
    adaptivity: np.ndarray
    t: int
    wall_seconds: np.ndarray
    oracle_seconds: np.ndarray
    logs: list[ExpensiveLog] = field(repr=False, default_factory=list)
    events: list[list[PolicyEvent]] = field(repr=False, default_factory=list)
    declared_arm: np.ndarray | None = None
    declaration_time: np.ndarray | None = None
    best_arm: int | None = None
    params: dict[str, Any] = field(default_factory=dict)
    #: ``(R, G)`` alpha-regret ``sum_t alpha r(a*) - r(a_t)`` (Theorem 7 of the combinatorial
    #: paper) for algorithms with an approximate oracle (alpha-AROQ-CMAB); None for the others.
    alpha_regret: np.ndarray | None = None

    @property
    def runs(self) -> int:
        """Number of repetitions R."""
        return int(self.regret.shape[0])

    @property
    def final_regret(self) -> np.ndarray:
        """Cumulative regret at the last recorded round, per repetition."""
        return self.regret[:, -1] if self.regret.shape[1] else np.zeros(self.runs)

    def summary(self) -> dict[str, Any]:
        """The CLI's per-algorithm JSON object."""
        fr = self.final_regret
        out: dict[str, Any] = {
            "algorithm": self.algorithm,
            "paper": self.paper,
            "rounds": self.t,
            "final_regret_mean": float(fr.mean()),
            "final_regret_std": float(fr.std(ddof=1)) if fr.size > 1 else 0.0,
            "oracle_queries_mean": float(self.queries[:, -1].mean()) if self.queries.size else 0.0,
            "oracle_adaptivity_mean": float(self.adaptivity[:, -1].mean())
            if self.adaptivity.size
            else 0.0,
            "wall_seconds": float(self.wall_seconds.sum()),
            "oracle_seconds": float(self.oracle_seconds.sum()),
        }
        if self.alpha_regret is not None:
            fa = self.alpha_regret[:, -1] if self.alpha_regret.shape[1] else np.zeros(self.runs)
            out["final_alpha_regret_mean"] = float(fa.mean())
        if self.declared_arm is not None:
            declared = self.declared_arm >= 0
            out["best_arm_identified_rate"] = float(np.mean(self.declared_arm == self.best_arm))
            times = self.declaration_time[declared]
            out["declaration_time_mean"] = _finite(times.mean()) if times.size else None
        if self.params:
            out["params"] = self.params
        return out


@dataclass
class SimulationResult:
    """Results of several algorithms on one instance (possibly truncated at round ``t``).

    ``reps`` are the repetition ids held (row ``i`` of every curve is repetition ``reps[i]``);
    a full run holds ``0 .. runs-1``, a run of a subset (``Simulation(..., reps=...)``) fewer,
    and :func:`merge_results` joins disjoint subsets.
    """

    spec: dict[str, Any]
    horizon: int
    runs: int
    seed: int
    t: int
    results: list[AlgorithmResult]
    instance: dict[str, Any] = field(default_factory=dict)
    #: ``(X, theta*)`` of a semiparametric instance (arrays for plots; not exported)
    features: tuple[np.ndarray, np.ndarray] | None = field(default=None, repr=False)
    #: ``(t, nu_t)`` over the most recent rounds of run 1 (semiparametric; not exported)
    shift: tuple[np.ndarray, np.ndarray] | None = field(default=None, repr=False)
    reps: list[int] | None = None

    def __post_init__(self) -> None:
        if self.reps is None:
            self.reps = list(range(self.runs))

    @property
    def done(self) -> bool:
        """Whether every algorithm has played the whole horizon."""
        return self.t >= self.horizon

    def __getitem__(self, name: str) -> AlgorithmResult:
        for r in self.results:
            if r.algorithm.lower() == name.lower():
                return r
        raise KeyError(name)

    def to_dict(self) -> dict[str, Any]:
        """The CLI's JSON output."""
        return {
            "problem": self.spec.get("problem"),
            "spec": self.spec,
            "horizon": self.horizon,
            "runs": self.runs,
            "seed": self.seed,
            "instance": self.instance,
            "results": [r.summary() for r in self.results],
        }

    def to_table(self) -> str:
        """A plain-text table of the summaries."""
        rows = [r.summary() for r in self.results]
        cols = [
            ("algorithm", "algorithm", "{}"),
            ("regret (mean)", "final_regret_mean", "{:.1f}"),
            ("regret (std)", "final_regret_std", "{:.1f}"),
            ("queries", "oracle_queries_mean", "{:.0f}"),
            ("adaptivity", "oracle_adaptivity_mean", "{:.0f}"),
            ("wall s", "wall_seconds", "{:.2f}"),
        ]
        if any("final_alpha_regret_mean" in r for r in rows):
            cols.insert(3, ("alpha-regret (mean)", "final_alpha_regret_mean", "{:.1f}"))
        if any("best_arm_identified_rate" in r for r in rows):
            cols.append(("best arm found", "best_arm_identified_rate", "{:.0%}"))
            cols.append(("declared at (mean t)", "declaration_time_mean", "{:.0f}"))

        def fmt(row: dict[str, Any], key: str, f: str) -> str:
            v = row.get(key)
            return "-" if v is None else f.format(v)

        table = [[c[0] for c in cols]] + [[fmt(r, k, f) for _, k, f in cols] for r in rows]
        widths = [max(len(row[i]) for row in table) for i in range(len(cols))]
        lines = ["  ".join(cell.rjust(w) for cell, w in zip(row, widths)) for row in table]
        lines.insert(1, "  ".join("-" * w for w in widths))
        head = (
            f"{self.spec.get('problem')} problem, horizon {self.horizon}, "
            f"{self.runs} run(s), seed {self.seed}"
        )
        return head + "\n" + "\n".join(lines)

    def to_csv(self, band: str | None = None) -> str:
        """Long-format CSV: one row per algorithm, repetition and recorded round.

        When an algorithm reports an alpha-regret (an approximate oracle), an
        ``alpha_regret`` column is added (empty for the other algorithms).  With ``band``
        (``sd``, ``se``, ``ci95``, ``q10-90``; see :mod:`dashboard.simulation.bands`) one row
        per algorithm and round instead, with ``<metric>_mean/_lo/_hi`` columns; ``runs`` is
        the per-run format.
        """
        buf = io.StringIO()
        w = csv.writer(buf)
        if band is not None:
            from .bands import band_csv_rows, check_band

            if check_band(band) != "runs":
                head, rows = band_csv_rows(self, band)
                w.writerow(head)
                w.writerows(rows)
                return buf.getvalue()
        with_alpha = any(r.alpha_regret is not None for r in self.results)
        head = ["algorithm", "run", "t", "cumulative_regret", "queries", "adaptivity"]
        w.writerow([*head, "alpha_regret"] if with_alpha else head)
        for r in self.results:
            for i, rep in enumerate(self.reps or range(r.runs)):
                for j, t in enumerate(r.times):
                    row = [
                        r.algorithm,
                        rep,
                        int(t),
                        f"{r.regret[i, j]:.10g}",
                        int(r.queries[i, j]),
                        int(r.adaptivity[i, j]),
                    ]
                    if with_alpha:
                        a = r.alpha_regret
                        row.append("" if a is None else f"{a[i, j]:.10g}")
                    w.writerow(row)
        return buf.getvalue()


def _cat(parts: list[np.ndarray | None], order: np.ndarray) -> np.ndarray | None:
    if any(p is None for p in parts):
        return None
    return np.concatenate([np.asarray(p) for p in parts], axis=0)[order]


def _merge_algorithm(parts: list[AlgorithmResult], order: np.ndarray) -> AlgorithmResult:
    first = parts[0]
    for p in parts[1:]:
        if p.t != first.t or not np.array_equal(p.times, first.times):
            raise ValueError(f"{first.algorithm}: parts stop at different rounds")
        if p.params != first.params:
            raise ValueError(f"{first.algorithm}: parts were run with different constants")

    def listed(name: str) -> list[Any]:
        out: list[Any] = []
        for p in parts:
            out.extend(getattr(p, name))
        return [out[i] for i in order] if len(out) == len(order) else []

    return AlgorithmResult(
        algorithm=first.algorithm,
        paper=first.paper,
        times=first.times,
        regret=_cat([p.regret for p in parts], order),
        queries=_cat([p.queries for p in parts], order),
        adaptivity=_cat([p.adaptivity for p in parts], order),
        t=first.t,
        wall_seconds=_cat([p.wall_seconds for p in parts], order),
        oracle_seconds=_cat([p.oracle_seconds for p in parts], order),
        logs=listed("logs"),
        events=listed("events"),
        declared_arm=_cat([p.declared_arm for p in parts], order),
        declaration_time=_cat([p.declaration_time for p in parts], order),
        best_arm=first.best_arm,
        params=dict(first.params),
        alpha_regret=_cat([p.alpha_regret for p in parts], order),
    )


def merge_results(
    parts: list[SimulationResult], algorithms: list[str] | None = None
) -> SimulationResult:
    """Join results of the same spec, seed and horizon run on disjoint pieces.

    Each piece holds some repetition ids (``reps``) of some algorithms.  Every algorithm must
    be present for the same repetition ids in the union, and no (algorithm, repetition) twice.
    The merged result lists repetitions in increasing id and algorithms in the order given by
    ``algorithms`` (default: first appearance).  When the pieces cover ``0 .. R-1`` the merged
    result equals one run of all R (counter-based randomness), wall times aside.
    """
    if not parts:
        raise ValueError("nothing to merge")
    first = parts[0]
    for p in parts[1:]:
        if (p.spec, p.horizon, p.seed, p.t) != (first.spec, first.horizon, first.seed, first.t):
            raise ValueError("cannot merge results of different specs, seeds or horizons")
    by_alg: dict[str, list[tuple[list[int], AlgorithmResult]]] = {}
    for p in parts:
        for r in p.results:
            by_alg.setdefault(r.algorithm, []).append((list(p.reps or []), r))
    names = list(by_alg) if algorithms is None else list(algorithms)
    if sorted(names) != sorted(by_alg):
        raise ValueError(f"algorithms {sorted(by_alg)} do not match the requested {names}")
    reps: list[int] | None = None
    merged = []
    for name in names:
        ids = [i for ids, _ in by_alg[name] for i in ids]
        if len(set(ids)) != len(ids):
            raise ValueError(f"{name}: a repetition appears in two pieces")
        if reps is None:
            reps = sorted(ids)
        elif sorted(ids) != reps:
            raise ValueError(f"{name}: repetitions {sorted(ids)} differ from {reps}")
        order = np.argsort(np.array(ids), kind="stable")
        merged.append(_merge_algorithm([r for _, r in by_alg[name]], order))
    assert reps is not None
    return SimulationResult(
        spec=first.spec,
        horizon=first.horizon,
        runs=len(reps),
        seed=first.seed,
        t=first.t,
        results=merged,
        instance=first.instance,
        reps=reps,
        features=first.features,
        shift=first.shift,
    )
