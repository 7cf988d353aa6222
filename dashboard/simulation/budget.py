"""Work and memory estimates made before a run or a design solve starts.

A run costs about ``T x R x sum over algorithms of (per-round cost)`` plus the simulated oracle
delay, and holds the feature matrix, the per-run policy states and the recorded curves in
memory.  :func:`estimate_run` and :func:`estimate_design` compute both from a per-algorithm
cost model (measured on a 2-core laptop-class machine; the model is deliberately rough, within a
factor of a few, and errs on the slow side), and :func:`enforce` refuses work above a limit
with the estimate and the override in the message:

* API: ``Simulation(..., max_work=SECONDS)`` / ``simulate(..., max_work=...)`` (``None``: no
  limit), ``deo_design`` callers go through :func:`check_design`;
* CLI: ``--max-work SECONDS`` or ``--force``.

Per-round algorithms (an oracle call or an optimisation every round: CUCB, OLS-UCB-C, SDCB,
BOSE, SP-TS, LinUCB) cost far more per round than the rare-query ones (AROQ, SROQ, SBE,
G-elimination), whose rounds are simulated in vectorised blocks between decisions.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

__all__ = [
    "DEFAULT_MAX_MEMORY",
    "DEFAULT_MAX_WORK",
    "Estimate",
    "bytes_text",
    "check_limit",
    "duration_text",
    "enforce",
    "estimate_design",
    "estimate_run",
]

#: Default limit on the estimated run time, in seconds (10 minutes).
DEFAULT_MAX_WORK = 600.0
#: Default limit on the estimated memory, in bytes (2 GB).
DEFAULT_MAX_MEMORY = 2 * 1024**3

# name (lower case) -> (microseconds per round per run at the reference size, exponent of
# the size ratio).  Reference size: d = 20 (cmab), d * K = 50 (semiparametric).  Measured with
# the classroom defaults; SP-TS scales with its Monte Carlo draws n_mc as well.
_COST_US: dict[str, tuple[float, float]] = {
    "cucb": (35.0, 1.0),
    "aroq-cmab": (10.0, 1.0),
    "alpha-aroq-cmab": (12.0, 1.0),
    "sroq-cmab": (12.0, 1.0),
    # re-measured 2026-12-01 at d = 20, m = 3, R = 16 (vectorised covariance index, issue 9),
    # machine at load 3: AROQ-C 29 us (T = 5000) / 8 us (T = 2x10^4), SROQ-C 37 / 13 us per
    # round per run, start-up included (the warm-up dominates); was 220 us before those engines
    "aroq-c-cmab": (60.0, 2.0),
    "sroq-c-cmab": (60.0, 2.0),
    # re-measured 2026-12-01 (second round) at d = 20, m = 3, one run, T = 1000, CPU time:
    # OLS-UCB-C 721 us, SDCB 1,527 us per round (R = 16 batched: 98 / 106 us per round per run);
    # estimates ~2.6x above the single runs (were 5000 / 19000 us: 7-12x, so runs well within
    # the limit were refused)
    "ols-ucb-c": (2000.0, 3.0),
    "aroq-gr-cmab": (300.0, 1.0),
    "sroq-gr-cmab": (450.0, 1.0),
    "sdcb": (4000.0, 1.0),
    # single runs, d = 20: ~80 us (T = 5000) / ~50 us (T = 2e4) per round after the issue-9
    # engines; batched (R = 16) ~10 us
    "disc-aroq-gr-cmab": (150.0, 1.0),
    "disc-sroq-gr-cmab": (100.0, 1.0),
    # semiparametric, re-measured 2026-12-01 at d = 20, K = 30, R = 16, T = 10^4 (batched
    # engines): SBE 7 us, BOSE 23 us, SP-TS 134 us, LinUCB 11 us per round per run; the
    # estimates below stay 1.4x (SP-TS) to 5x above that
    "sbe": (10.0, 0.5),
    "g-elimination": (30.0, 0.5),
    "bose": (100.0, 0.3),
    "sp-ts": (350.0, 0.3),
    "linucb": (60.0, 0.3),
}
# a per-round oracle on these families costs more than on m-sets
_FAMILY_FACTOR = {"m-sets": 1.0, "paths": 2.0, "matchings": 15.0, "explicit": 3.0}


@dataclass(frozen=True)
class Estimate:
    """Estimated wall time (seconds) and peak memory (bytes) of a run or a design solve."""

    seconds: float
    memory: float
    what: str

    def describe(self) -> str:
        return f"{self.what}: about {_duration(self.seconds)} and {_bytes(self.memory)}"


def duration_text(seconds: float) -> str:
    """``seconds`` as the estimates say it: ``"45 s"``, ``"12 min"``, ``"21.9 h"``,
    ``"3 days"`` (the same words in every refusal, whichever tab or command made it)."""
    return _duration(seconds)


def bytes_text(size: float) -> str:
    """``size`` bytes as the estimates say it: ``"108.0 MB"``."""
    return _bytes(size)


def _duration(s: float) -> str:
    if not math.isfinite(s):
        return "forever"
    if s < 90:
        return f"{s:.0f} s"
    if s < 5400:
        return f"{s / 60:.0f} min"
    if s < 48 * 3600:
        return f"{s / 3600:.1f} h"
    return f"{s / 86400:,.0f} days"


def _bytes(b: float) -> str:
    for unit, size in (("GB", 1024**3), ("MB", 1024**2), ("kB", 1024)):
        if b >= size:
            return f"{b / size:,.1f} {unit}"
    return f"{b:.0f} B"


def _per_round_us(info: Any, spec: Any, params: dict[str, Any], d: int, K: int) -> float:
    base, expo = _COST_US.get(info.name.lower(), (1000.0 if info.per_round else 100.0, 1.0))
    if spec.problem == "cmab":
        ratio = max(d, 1) / 20.0
        factor = _FAMILY_FACTOR.get(spec.actions, 1.0) if info.per_round else 1.0
    else:
        ratio = max(d * K, 1) / 50.0
        factor = 1.0
        if info.name.lower() == "sp-ts":
            n_mc = params.get("n_mc", 100)
            factor = max(float(n_mc), 1.0) / 100.0 if isinstance(n_mc, int | float) else 1.0
    return base * factor * max(ratio, 0.05) ** expo


def _batch_speedup(info: Any, runs: int) -> float:
    """Throughput factor of an algorithm's batched engine (all repetitions in one numpy pass)
    over ``runs`` separate runs: measured at R = 16 between 3.6x (SP-TS) and 28x
    (Disc-SROQ-GR) (README, Benchmarks); counted conservatively as 4x at R >= 16, linearly
    less below, 1 without an engine (or with one playing R one-repetition policies side by
    side: ``batches = False``)."""
    declaration = getattr(info, "declaration", info)  # a registry entry or a declaration
    engine = getattr(declaration, "batched", None)
    if runs <= 1 or engine is None or not getattr(engine, "batches", True):
        return 1.0
    return 1.0 + 3.0 * (min(int(runs), 16) - 1) / 15.0


def estimate_run(
    spec: Any,
    infos: list[Any],
    horizon: int,
    runs: int,
    params: dict[str, dict[str, Any]] | None = None,
    grid_points: int = 400,
    dims: tuple[int, int] | None = None,
) -> Estimate:
    """Estimate a run of ``infos`` (registry entries) on ``spec`` for ``horizon`` x ``runs``.

    ``dims`` is the built instance's ``(d, K)`` when it is known (a features CSV sets its own
    sizes); otherwise the spec's."""
    params = params or {}
    if dims is not None:
        d, K = dims
    elif spec.problem == "cmab":
        d, K = spec.d, 0
    else:
        d = spec.K if spec.instance == "multi-armed" else spec.d
        K = spec.K
    seconds = 0.0
    delay = float(getattr(spec, "oracle_delay", 0.0) or 0.0)
    for info in infos:
        us = _per_round_us(info, spec, params.get(info.name.lower(), {}), d, K)
        seconds += horizon * runs * us * 1e-6 / _batch_speedup(info, runs)
        if delay > 0:
            calls = horizon if info.per_round else 4 * d * math.log2(horizon + 1)
            seconds += runs * min(calls, horizon) * delay
    if spec.problem == "cmab":
        state = d * d if getattr(spec, "reward", "") == "covariance" else 8 * d
        features = 8 * d * d
    else:
        state = d * d + K * d
        features = K * d
    n_alg = max(len(infos), 1)
    memory = 8.0 * (features + n_alg * runs * (state + 4 * (grid_points + 1)))
    # per-round algorithms log one oracle record per round (compact ranges, ~40 bytes each)
    memory += sum(40.0 * runs * min(horizon, 10_000) for i in infos if i.per_round)
    what = f"{n_alg} algorithm(s) x {runs} run(s) x T = {horizon:,}"
    return Estimate(seconds, memory, what)


def estimate_design(K: int, d: int) -> Estimate:
    """Estimate a DEO design solve (Algorithm 1) on ``K`` arms in dimension ``d``: the inner
    Wolfe-Atwood solver does about ``10 d`` iterations of ``O(K d^2)`` work."""
    r = max(min(d, K - 1), 1)
    seconds = 2e-9 * K * r * r * 10 * r + 0.01
    memory = 8.0 * (6 * K * d + 4 * d * d)
    return Estimate(seconds, memory, f"DEO design of K = {K:,} arms in d = {d}")


def check_limit(name: str, value: Any) -> float | None:
    """A work limit as given by a user: ``None`` (no limit) or a positive number."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"{name} must be a number of seconds > 0 or None, got {value!r}")
    try:
        v = float(value)
    except OverflowError:
        v = math.inf
    if not v > 0:
        raise ValueError(f"{name} must be a number of seconds > 0 or None, got {value!r}")
    return v


def enforce(
    estimate: Estimate,
    max_work: float | None = DEFAULT_MAX_WORK,
    max_memory: float | None = DEFAULT_MAX_MEMORY,
    override: str | None = "max_work=None",
) -> None:
    """Raise ValueError when ``estimate`` exceeds a limit, naming the estimate and the override
    (``override=None``: there is none, only smaller sizes)."""
    how = "" if override is None else f", or override with {override}"
    if max_work is not None and estimate.seconds > max_work:
        raise ValueError(
            f"this would take {estimate.describe()}, above the limit of "
            f"{_duration(max_work)}; reduce T, R, d or K{how}"
        )
    if max_memory is not None and estimate.memory > max_memory:
        raise ValueError(
            f"this would need {estimate.describe()}, above the memory limit of "
            f"{_bytes(max_memory)}; reduce the sizes{how}"
        )
