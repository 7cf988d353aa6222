"""Bands over repetitions: how the spread of R runs is summarised around their mean.

One function, :func:`band`, used by the CSV export (``simulate --csv ... --band``), by
``reproduce --band`` and by any plot that wants a band:

* ``sd``: mean +- one sample standard deviation (``ddof = 1``; the ``ddof = 0`` estimate
  underestimates the spread by a factor ``sqrt((R-1)/R)``, about 18% at R = 3);
* ``se``: mean +- one standard error ``sd / sqrt(R)``;
* ``ci95``: the 95% confidence interval of the mean, ``mean +- t_{0.975, R-1} sd / sqrt(R)``
  (Student's t quantile: with R = 3 it is 4.30 standard errors, not 1.96);
* ``q10-90``: the 10% and 90% quantiles of the runs (linear interpolation), around the mean;
* ``runs``: no band, every run as its own trace.

With a single run (R = 1) every band is degenerate: ``lo = hi = mean`` (nothing is known
about the spread), never NaN.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

__all__ = ["BANDS", "Band", "band", "band_csv_rows", "check_band", "experiment_band_csv"]

#: The band kinds, and a one-line description of each (CLI help, dashboard labels).
BANDS: dict[str, str] = {
    "sd": "mean ± 1 sd over runs (ddof = 1)",
    "se": "mean ± 1 standard error",
    "ci95": "95% confidence interval of the mean (Student t)",
    "q10-90": "10%-90% quantiles of the runs",
    "runs": "every run as a thin trace",
}


def check_band(kind: Any) -> str:
    """The band kind ``kind`` normalised (ValueError naming the allowed ones)."""
    k = str(kind).strip().lower()
    if k not in BANDS:
        raise ValueError(f"unknown band {kind!r}; choose from: {', '.join(BANDS)}")
    return k


@dataclass(frozen=True)
class Band:
    """A band over repetitions at ``G`` rounds: ``mean``, ``lo``, ``hi`` have shape ``(G,)``;
    ``runs`` is the ``(R, G)`` input (the traces of the ``runs`` kind, where lo = hi = mean)."""

    kind: str
    mean: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    runs: np.ndarray

    @property
    def label(self) -> str:
        """Human description, e.g. for a plot title or a CSV comment."""
        return BANDS[self.kind]


def _quantiles(v: np.ndarray, qs: tuple[float, ...]) -> list[np.ndarray]:
    """Quantiles of the runs at each round, linear interpolation between order statistics
    (numpy's default ``"linear"`` method, Hyndman & Fan type 7), from one sort of the columns:
    several times faster than ``np.quantile(..., axis=0)`` on a live frame's (R, G) curves."""
    s = np.sort(v, axis=0)
    last = s.shape[0] - 1
    out = []
    for q in qs:
        pos = q * last
        i = int(np.floor(pos))
        j = min(i + 1, last)
        out.append(s[i] + (pos - i) * (s[j] - s[i]))
    return out


@lru_cache(maxsize=64)
def _t975(dof: int) -> float:
    """Student's t quantile t_{0.975, dof} (cached: a live frame asks for it per curve)."""
    from scipy.stats import t as student_t

    return float(student_t.ppf(0.975, dof))


def band(values: Any, kind: str = "sd") -> Band:
    """The band ``kind`` of ``values`` (shape ``(R, G)``: R runs at G rounds).

    Raises
    ------
    ValueError
        Unknown kind, or values that are not a non-empty 2-d array of finite numbers.
    """
    k = check_band(kind)
    v = np.asarray(values, dtype=float)
    if v.ndim == 1:
        v = v[None, :]
    if v.ndim != 2 or v.shape[0] == 0:
        raise ValueError(f"band needs an (R, G) array with R >= 1, got shape {v.shape}")
    if not np.isfinite(v).all():
        raise ValueError("band needs finite values")
    R = v.shape[0]
    mean = v.mean(axis=0)
    if R == 1 or k == "runs":
        return Band(k, mean, mean.copy(), mean.copy(), v)
    if k == "q10-90":
        lo, hi = _quantiles(v, (0.1, 0.9))
        return Band(k, mean, lo, hi, v)
    sd = v.std(axis=0, ddof=1)
    if k == "sd":
        half = sd
    else:
        half = sd / np.sqrt(R)
        if k == "ci95":
            half = half * _t975(R - 1)
    return Band(k, mean, mean - half, mean + half, v)


def band_csv_rows(result: Any, kind: str) -> tuple[list[str], list[list[Any]]]:
    """Header and rows of a banded CSV of a :class:`SimulationResult`: one row per algorithm
    and recorded round, ``algorithm, t, band, <metric>_mean, <metric>_lo, <metric>_hi`` for
    the cumulative regret, the oracle queries and the adaptivity (and the alpha-regret when
    an algorithm reports one).  ``kind = "runs"`` is the per-run long format instead (see
    :meth:`SimulationResult.to_csv`)."""
    k = check_band(kind)
    metrics = ["cumulative_regret", "queries", "adaptivity"]
    if any(r.alpha_regret is not None for r in result.results):
        metrics.append("alpha_regret")
    head = ["algorithm", "t", "band"] + [f"{m}_{s}" for m in metrics for s in ("mean", "lo", "hi")]
    rows: list[list[Any]] = []
    for r in result.results:
        if not r.times.size:
            continue
        arrays = {
            "cumulative_regret": r.regret,
            "queries": r.queries,
            "adaptivity": r.adaptivity,
            "alpha_regret": r.alpha_regret,
        }
        bands = {m: None if arrays[m] is None else band(arrays[m], k) for m in metrics}
        for j, t in enumerate(r.times):
            row: list[Any] = [r.algorithm, int(t), k]
            for m in metrics:
                b = bands[m]
                row += ["", "", ""] if b is None else [f"{x[j]:.10g}" for x in (b.mean, b.lo, b.hi)]
            rows.append(row)
    return head, rows


def experiment_band_csv(res: Any, kind: str) -> str:
    """Banded CSV of an :class:`~dashboard.simulation.experiments.ExperimentResult` (what
    ``reproduce --band`` writes next to the per-run CSV): one row per panel, algorithm, round
    and metric, ``figure,panel,algorithm,t,metric,band,mean,lo,hi``.  ``runs`` is refused
    here: the figure's own CSV already holds every run."""
    import csv
    import io

    k = check_band(kind)
    if k == "runs":
        raise ValueError("band 'runs' is the figure's own CSV (every run); choose another band")
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["figure", "panel", "algorithm", "t", "metric", "band", "mean", "lo", "hi"])
    for key, panel in res.panels.items():
        if hasattr(panel, "scaled"):  # a PAC panel: DEO's error curves
            series = [("DEO", panel.times, {"e_t": panel.errors, "sqrt_t_e_t": panel.scaled})]
        else:
            series = [
                (
                    r.algorithm,
                    r.times,
                    {
                        "cumulative_regret": r.regret,
                        "queries": r.queries,
                        "adaptivity": r.adaptivity,
                        **({} if r.alpha_regret is None else {"alpha_regret": r.alpha_regret}),
                    },
                )
                for r in panel.results
            ]
        for name, times, metrics in series:
            if not len(times):
                continue
            for metric, values in metrics.items():
                b = band(values, k)
                for j, t in enumerate(times):
                    w.writerow(
                        [res.name, key, name, int(t), metric, k]
                        + [f"{x[j]:.10g}" for x in (b.mean, b.lo, b.hi)]
                    )
    return buf.getvalue()
