"""The papers' experiments as named, runnable settings (``python -m dashboard reproduce``).

Each entry of :data:`FIGURES` describes one figure of a paper: the problem spec(s), the
algorithms compared, and the horizon ``T`` / repetitions ``R`` at three scales:

``"test"``
    tiny (a second or two; used by the test-suite);
``"classroom"``
    small (tens of seconds on a laptop; the notebooks' default);
``"paper"``
    the full setting (minutes to an hour: the per-round baselines dominate).

Neither paper states ``T`` or ``R`` for its regret figures (only the PAC plot's 10 repetitions),
so the "paper" scale uses ``T = 10^5`` and ``R = 10`` (see docs/DIFFERENCES.md).

:func:`run_experiment` returns an :class:`ExperimentResult` holding one
:class:`~dashboard.simulation.results.SimulationResult` per panel (or a :class:`PACResult` for
the PAC plot), a short text of what the paper shows and a text of what we get, computed from
the numbers.

Combinatorial paper (oracle-efficient semi-bandits), Section 6 and Appendix A.11:

* ``cmab-fig2``: linear rewards, d = 20, m = 3, means ~ U[0, 1]: CUCB vs AROQ-CMAB vs SROQ-CMAB;
* ``cmab-fig3``: covariance-adaptive, d = 10, m = 3, Gaussian noise with
  Sigma = normalised(A A^T + I): OLS-UCB-C vs AROQ-C-CMAB vs SROQ-C-CMAB;
* ``cmab-fig4``: general rewards, d = 5, m = 2, outcomes on {0.2, ..., 1} with mass 0.99 on
  one value, reward sqrt(sum of outcomes): SDCB vs AROQ-GR-CMAB vs SROQ-GR-CMAB.

Semiparametric paper (experimental design), Appendix I:

* ``semi-regret``: d = 5, K = 10 and d = 20, K = 30, gap Delta* = 1/2, sigma = 1, shifts
  nu^1_t = 1 + sin(2t) and nu^2_t = max(log(t+1)/5, 2) (-1)^(t mod 3) (as printed): SBE vs BOSE
  vs SP-TS;
* ``semi-pac``: pure exploration with the DEO design (Section 4.2), ``sqrt(t) e_t`` with
  ``e_t = max_i |(x_i - x_1)^T (theta_hat_t - theta*)|``, d = 5 and d = 30 with K = 30, 10
  repetitions, against the line ``10 sqrt(d log K)`` (:func:`pure_exploration_errors`).
"""

from __future__ import annotations

import csv
import io
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..algorithms import randomness as rnd
from ..algorithms.base import validate_int
from .results import SimulationResult
from .runner import time_grid
from .specs import FIELDS, SemiparametricSpec, make_spec
from .theory import estimation_error, pac_bound
from .tuning import run_panel

__all__ = [
    "FIGURES",
    "SCALES",
    "ExperimentResult",
    "Figure",
    "PACResult",
    "Panel",
    "Scale",
    "figure_names",
    "get_figure",
    "pure_exploration_errors",
    "run_experiment",
]

#: Scales every figure defines, smallest first.
SCALES: tuple[str, ...] = ("test", "classroom", "paper")


@dataclass(frozen=True)
class Scale:
    """Horizon ``T`` and repetitions ``R`` of one scale of a figure."""

    horizon: int
    runs: int


@dataclass(frozen=True)
class Panel:
    """One sub-plot of a figure: a problem spec and the algorithms run on it.

    Parameters
    ----------
    key : str
        Short identifier used in CSV rows (e.g. ``"d=5,K=10,sine"``).
    title : str
        Human-readable title.
    spec : dict
        Keyword arguments of :func:`~dashboard.simulation.specs.make_spec`, including
        ``problem``.
    algorithms : tuple of str
        Registered algorithm names (empty for the PAC experiment, which is not a policy run).
    params : dict
        Per-algorithm constructor arguments.
    """

    key: str
    title: str
    spec: dict[str, Any]
    algorithms: tuple[str, ...] = ()
    params: dict[str, dict[str, Any]] = field(default_factory=dict)


@dataclass(frozen=True)
class Figure:
    """A figure of a paper: its panels, scales and what the paper reports."""

    name: str
    title: str
    source: str
    kind: str  # "simulation" or "pac"
    panels: tuple[Panel, ...]
    scales: dict[str, Scale]
    paper_shows: str
    baseline: str | None = None  # the per-round benchmark the others are compared with
    #: algorithms whose constant c the paper tunes over {1, 2, 4, 8} (Appendix I's protocol)
    tuned: tuple[str, ...] = ()

    def scale(self, scale: str) -> Scale:
        """The :class:`Scale` named ``scale`` (ValueError lists the allowed names)."""
        key = str(scale).strip().lower()
        if key not in self.scales:
            raise ValueError(f"unknown scale {scale!r}; choose from: {', '.join(SCALES)}")
        return self.scales[key]


# ------------------------------------------------------------------------------------ registry
def _cmab_panel(key: str, title: str, d: int, m: int, reward: str, algs: Sequence[str]) -> Panel:
    spec = {"problem": "cmab", "d": d, "m": m, "actions": "m-sets", "reward": reward}
    return Panel(key, title, spec, tuple(algs))


_SEMI_ALGS = ("SBE", "BOSE", "SP-TS")
#: Appendix I's phase length for SBE (the ``min(...)`` formula printed there), c = 1.
_SEMI_PARAMS = {"SBE": {"n_rule": "appendix-i", "c": 1.0}}
_SHIFT_NAMES = {"sine": "ν¹ = 1 + sin(2t)", "log": "ν² = max(log(t+1)/5, 2)·(-1)^(t mod 3)"}


def _semi_panel(d: int, K: int, shift: str, algs: Sequence[str] = _SEMI_ALGS) -> Panel:
    spec = {
        "problem": "semiparametric",
        "d": d,
        "K": K,
        "instance": "gap",
        "gap": 0.5,
        "noise": 1.0,
        "shift": shift,
    }
    params = {k: dict(v) for k, v in _SEMI_PARAMS.items() if k in algs}
    title = f"d = {d}, K = {K}, {_SHIFT_NAMES[shift]}"
    return Panel(f"d={d},K={K},{shift}", title, spec, tuple(algs), params)


FIGURES: dict[str, Figure] = {
    "cmab-fig2": Figure(
        name="cmab-fig2",
        title="Combinatorial semi-bandits, Figure 2: linear rewards, d = 20, m = 3",
        source="Oracle-efficient combinatorial semi-bandits, Section 6, Figure 2",
        kind="simulation",
        panels=(
            _cmab_panel(
                "linear,d=20,m=3",
                "linear rewards, d = 20, m = 3",
                20,
                3,
                "linear",
                ("CUCB", "AROQ-CMAB", "SROQ-CMAB"),
            ),
        ),
        scales={
            "test": Scale(600, 2),
            "classroom": Scale(50_000, 5),
            "paper": Scale(100_000, 10),
        },
        paper_shows=(
            "AROQ-CMAB and SROQ-CMAB use far fewer oracle queries and far fewer adaptive rounds "
            "than CUCB (one query per round), and run faster; SROQ-CMAB has the lowest "
            "adaptivity (a handful of parallel rounds), hence the fastest runtime with a "
            "parallel oracle. AROQ-CMAB's regret is slightly above CUCB's (an extra log factor "
            "in its bound) and SROQ-CMAB's somewhat larger (a sqrt(m) factor)."
        ),
        baseline="CUCB",
    ),
    "cmab-fig3": Figure(
        name="cmab-fig3",
        title="Combinatorial semi-bandits, Figure 3: covariance-adaptive, d = 10, m = 3",
        source="Oracle-efficient combinatorial semi-bandits, Appendix A.11.1, Figure 3",
        kind="simulation",
        panels=(
            _cmab_panel(
                "covariance,d=10,m=3",
                "covariance-adaptive (Gaussian, Σ = normalised(AAᵀ + I)), d = 10, m = 3",
                10,
                3,
                "covariance",
                ("OLS-UCB-C", "AROQ-C-CMAB", "SROQ-C-CMAB"),
            ),
        ),
        scales={
            "test": Scale(300, 1),
            "classroom": Scale(2_000, 2),
            "paper": Scale(100_000, 10),
        },
        paper_shows=(
            "The covariance-adaptive AROQ-C-CMAB and SROQ-C-CMAB need far fewer oracle queries "
            "and adaptive rounds than OLS-UCB-C (one query per round) and run faster, while "
            "keeping regret close to it."
        ),
        baseline="OLS-UCB-C",
    ),
    "cmab-fig4": Figure(
        name="cmab-fig4",
        title="Combinatorial semi-bandits, Figure 4: general (non-linear) rewards, d = 5, m = 2",
        source="Oracle-efficient combinatorial semi-bandits, Appendix A.11.2, Figure 4",
        kind="simulation",
        panels=(
            _cmab_panel(
                "general,d=5,m=2",
                "general rewards √(sum of outcomes), outcomes on {0.2, …, 1}, d = 5, m = 2",
                5,
                2,
                "general",
                ("SDCB", "AROQ-GR-CMAB", "SROQ-GR-CMAB"),
            ),
        ),
        scales={
            "test": Scale(300, 1),
            "classroom": Scale(2_000, 2),
            "paper": Scale(100_000, 10),
        },
        paper_shows=(
            "With a non-linear reward, AROQ-GR-CMAB and SROQ-GR-CMAB again use far fewer oracle "
            "queries and adaptive rounds than SDCB (one query per round) and run faster, with "
            "regret close to SDCB's."
        ),
        baseline="SDCB",
    ),
    "semi-regret": Figure(
        name="semi-regret",
        title="Semiparametric bandits, Appendix I.1: cumulative regret under two shifts",
        source="Experimental design for semiparametric bandits, Appendix I.1, Figures 1-2",
        kind="simulation",
        panels=(
            _semi_panel(5, 10, "sine"),
            _semi_panel(20, 30, "sine"),
            _semi_panel(5, 10, "log"),
            _semi_panel(20, 30, "log"),
        ),
        scales={
            "test": Scale(600, 1),
            "classroom": Scale(5_000, 2),
            "paper": Scale(100_000, 10),
        },
        paper_shows=(
            "Under both shifts SBE's cumulative regret becomes flat after some time (it has "
            "identified the best arm and plays it from then on), and it is lower than BOSE's "
            "and semiparametric TS's, for d = 5, K = 10 and d = 20, K = 30 (each baseline's "
            "exploration constant tuned over c in {1, 2, 4, 8})."
        ),
        tuned=_SEMI_ALGS,
        baseline=None,
    ),
    "semi-pac": Figure(
        name="semi-pac",
        title="Semiparametric bandits, Appendix I.2: PAC property of pure exploration with DEO",
        source="Experimental design for semiparametric bandits, Appendix I.2, Figures 3-4",
        kind="pac",
        panels=(
            Panel("d=5,K=30,sine", "d = 5, K = 30, ν¹ (sine)", _semi_panel(5, 30, "sine").spec),
            Panel("d=30,K=30,sine", "d = 30, K = 30, ν¹ (sine)", _semi_panel(30, 30, "sine").spec),
            Panel("d=5,K=30,log", "d = 5, K = 30, ν² (log)", _semi_panel(5, 30, "log").spec),
            Panel("d=30,K=30,log", "d = 30, K = 30, ν² (log)", _semi_panel(30, 30, "log").spec),
        ),
        scales={
            "test": Scale(2_000, 3),
            "classroom": Scale(20_000, 10),
            "paper": Scale(100_000, 10),
        },
        paper_shows=(
            "Sampling from the DEO design (pure exploration, Section 4.2), sqrt(t) * e_t stays "
            "bounded and below 10 sqrt(d log K) for d = 5 and d = 30 (K = 30, 10 repetitions): "
            "the estimation error of every arm's gap to x_1 shrinks at the sqrt(d log K / t) "
            "rate of Theorem 2."
        ),
        baseline=None,
    ),
}


def figure_names() -> list[str]:
    """Names of the registered figures, in the order of :data:`FIGURES`."""
    return list(FIGURES)


def get_figure(name: str) -> Figure:
    """Look up a figure by name (case-insensitive); ValueError lists the allowed names."""
    key = str(name).strip().lower()
    if key not in FIGURES:
        raise ValueError(f"unknown figure {name!r}; choose from: {', '.join(FIGURES)}")
    return FIGURES[key]


# ------------------------------------------------------------------------------------ PAC
@dataclass
class PACResult:
    """``e_t`` of pure exploration with DEO (Section 4.2) over ``R`` repetitions.

    Attributes
    ----------
    d, K : int
        Dimension and number of arms.
    spec : dict
        The problem spec (shift, gap, noise ...).
    times : ndarray, shape (G,)
        Rounds ``t`` at which ``e_t`` is recorded.
    errors : ndarray, shape (R, G)
        ``e_t = max_i |(x_i - x_1)^T (theta_hat_t - theta*)|``.
    weights : ndarray, shape (K,)
        The DEO design ``p^deo`` (anchor ``x_1`` = arm ``anchor``).
    anchor : int
        The arm playing ``x_1``.
    delta : float
        Confidence level of the ridge ``beta_t = log(t / delta)``.
    """

    d: int
    K: int
    spec: dict[str, Any]
    times: np.ndarray
    errors: np.ndarray
    weights: np.ndarray
    anchor: int
    delta: float

    @property
    def runs(self) -> int:
        """Number of repetitions R."""
        return int(self.errors.shape[0])

    @property
    def scaled(self) -> np.ndarray:
        """``sqrt(t) e_t``, shape (R, G)."""
        return np.sqrt(self.times.astype(float))[None, :] * self.errors

    @property
    def bound(self) -> float:
        """The reference line of Appendix I.2, ``10 sqrt(d log K)``."""
        return pac_bound(self.d, self.K)

    def fraction_below_bound(self, t_min: int = 1) -> float:
        """Fraction of recorded (run, t >= t_min) values with ``sqrt(t) e_t <= bound``."""
        cols = self.times >= t_min
        vals = self.scaled[:, cols]
        return float(np.mean(vals <= self.bound)) if vals.size else 1.0


def pure_exploration_errors(
    X: np.ndarray,
    theta: np.ndarray,
    horizon: int,
    runs: int = 10,
    seed: int = 0,
    shift: str = "none",
    noise: float = 1.0,
    delta: float = 0.05,
    anchor: int = 0,
    times: np.ndarray | None = None,
    design_tol: float = 1e-3,
) -> PACResult:
    """Pure exploration with DEO (Section 4.2, Corollary 1): the estimation error over time.

    For each repetition ``r`` arms are drawn i.i.d. from ``p^deo`` (Algorithm 1 with anchor
    ``x_1`` = arm ``anchor``), counter-based at ``(seed, r, "DEO pure exploration", t)``, and
    rewards come from the same :class:`SemiparametricEnvironment` streams the policies see
    (noise at ``(seed, r, t)`` plus the shift).  Because the design is fixed, the
    orthogonalized estimator (Eq. 2) at round ``t`` depends only on the per-arm counts
    ``n_i(t)`` and reward sums ``R_i(t)``:
    ``theta_hat_t = (sum_i n_i z_i z_i^T + beta_t I)^-1 sum_i z_i R_i`` with
    ``z_i = x_i - xbar_p`` and ``beta_t = log(t / delta)``, so the whole curve is a few
    ``bincount``/``cumsum`` calls and one batched solve per repetition.

    Parameters
    ----------
    X : (K, d) array
        Arm features.
    theta : (d,) array
        theta*.
    horizon : int
        Number of rounds T.
    runs : int
        Repetitions R (Appendix I.2 uses 10).
    seed : int
        Seed of the arm draws and the environment's noise.
    shift : str
        Shift name (see :func:`~dashboard.algorithms.semiparametric.shifts.make_shift`).
    noise : float
        Noise standard deviation sigma.
    delta : float
        Confidence in the ridge ``beta_t = log(t / delta)``, in (0, 1).
    anchor : int
        The arm ``x_1`` of Algorithm 1 and of ``e_t``.
    times : int array, optional
        Rounds at which ``e_t`` is recorded (default :func:`time_grid`).
    design_tol : float
        Kiefer-Wolfowitz accuracy of DEO's G-optimal step.

    Returns
    -------
    PACResult
    """
    from ..algorithms.semiparametric.design import deo_design
    from ..algorithms.semiparametric.environment import SemiparametricEnvironment
    from ..algorithms.semiparametric.estimators import ridge_beta
    from ..algorithms.semiparametric.instances import SemiparametricInstance
    from ..algorithms.semiparametric.shifts import make_shift

    X = np.asarray(X, dtype=float)
    theta = np.asarray(theta, dtype=float)
    if X.ndim != 2 or theta.shape != (X.shape[1],):
        raise ValueError(
            f"X must be a (K, d) array and theta a (d,) vector, got {X.shape} and {theta.shape}"
        )
    horizon = FIELDS["horizon"].check(horizon)
    runs = FIELDS["runs"].check(runs)
    seed = FIELDS["seed"].check(seed)
    ridge_beta(1, delta)  # validates delta
    K, d = X.shape
    anchor = validate_int("anchor", anchor, 0, K - 1)
    grid = time_grid(horizon) if times is None else np.unique(np.asarray(times, dtype=np.int64))
    if grid.size == 0 or grid[0] < 1 or grid[-1] > horizon:
        raise ValueError(f"times must be rounds in 1..{horizon}")
    report = deo_design(X, anchor=anchor, tol=design_tol)
    p = np.asarray(report.weights, dtype=float)
    p = p / p.sum()
    cdf = np.cumsum(p)
    Z = X - p @ X  # centred features z_i = x_i - xbar_p
    inst = SemiparametricInstance(X, theta)
    shift_obj = make_shift(shift, seed=seed)
    t_all = np.arange(1, int(grid[-1]) + 1, dtype=np.int64)
    gidx = np.searchsorted(grid, t_all, side="left")  # round t -> first grid point >= t
    G = grid.size
    beta = np.array([ridge_beta(t, delta) for t in grid])
    eye = np.eye(d)
    errors = np.empty((runs, G))
    for r in range(runs):
        key = rnd.stream_key(seed, r, "DEO pure exploration")
        arms = rnd.categorical(key, t_all, cdf)
        env = SemiparametricEnvironment(inst, shift_obj, noise_sigma=noise, seed=seed, rep=r)
        rewards = env.play(arms, 1, p)
        flat = gidx * K + arms
        counts = np.bincount(flat, minlength=G * K).reshape(G, K).cumsum(axis=0)
        sums = np.bincount(flat, weights=rewards, minlength=G * K).reshape(G, K).cumsum(axis=0)
        V = np.einsum("gk,kd,ke->gde", counts.astype(float), Z, Z)
        b = sums @ Z
        theta_hat = np.linalg.solve(V + beta[:, None, None] * eye, b[:, :, None])[:, :, 0]
        errors[r] = estimation_error(X, theta, theta_hat, anchor)
    return PACResult(
        d=d,
        K=K,
        spec={},
        times=grid,
        errors=errors,
        weights=p,
        anchor=anchor,
        delta=float(delta),
    )


# ------------------------------------------------------------------------------------ results
@dataclass
class ExperimentResult:
    """The outcome of :func:`run_experiment`.

    Attributes
    ----------
    figure : Figure
        The setting that was run.
    scale : str
        ``"test"``, ``"classroom"`` or ``"paper"``.
    seed, horizon, runs : int
        What was run.
    panels : dict
        Panel key -> :class:`SimulationResult` (regret figures) or :class:`PACResult`.
    paper_shows : str
        What the paper reports for this figure.
    we_get : str
        What our run shows, computed from the numbers.
    seconds : float
        Wall time of the whole experiment.
    """

    figure: Figure
    scale: str
    seed: int
    horizon: int
    runs: int
    panels: dict[str, SimulationResult | PACResult]
    paper_shows: str
    we_get: str
    seconds: float
    #: panel key -> algorithm -> chosen c and mean final regret per c (when tuned)
    tuning: dict[str, dict[str, Any]] = field(default_factory=dict)

    @property
    def name(self) -> str:
        """The figure's name."""
        return self.figure.name

    def panel_title(self, key: str) -> str:
        """Human-readable title of a panel."""
        for p in self.figure.panels:
            if p.key == key:
                return p.title
        raise KeyError(key)

    def rows(self) -> list[tuple[Any, ...]]:
        """Long-format rows ``(figure, panel, algorithm, run, t, metric, value)``."""
        out: list[tuple[Any, ...]] = []
        for key, res in self.panels.items():
            if isinstance(res, PACResult):
                scaled = res.scaled
                for rep in range(res.runs):
                    for j, t in enumerate(res.times):
                        out.append((self.name, key, "DEO", rep, int(t), "e_t", res.errors[rep, j]))
                        out.append(
                            (self.name, key, "DEO", rep, int(t), "sqrt_t_e_t", scaled[rep, j])
                        )
                continue
            for r in res.results:
                for rep in range(r.runs):
                    for j, t in enumerate(r.times):
                        base = (self.name, key, r.algorithm, rep, int(t))
                        out.append((*base, "cumulative_regret", r.regret[rep, j]))
                        out.append((*base, "queries", r.queries[rep, j]))
                        out.append((*base, "adaptivity", r.adaptivity[rep, j]))
                        if r.alpha_regret is not None:  # approximate oracle (Theorem 7)
                            out.append((*base, "alpha_regret", r.alpha_regret[rep, j]))
        return out

    def to_csv(self) -> str:
        """The curves as long-format CSV:
        ``figure,panel,algorithm,run,t,metric,value`` (one row per recorded value)."""
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(["figure", "panel", "algorithm", "run", "t", "metric", "value"])
        for row in self.rows():
            value = row[-1]
            text = str(int(value)) if float(value).is_integer() else f"{float(value):.10g}"
            w.writerow([*row[:-1], text])
        return buf.getvalue()

    def summary(self) -> dict[str, Any]:
        """JSON-able summary: setting, final numbers per panel and the two texts."""
        panels: dict[str, Any] = {}
        for key, res in self.panels.items():
            if isinstance(res, PACResult):
                panels[key] = {
                    "final_sqrt_t_e_t_mean": float(res.scaled[:, -1].mean()),
                    "max_sqrt_t_e_t": float(res.scaled.max()),
                    "bound_10_sqrt_d_log_K": res.bound,
                    "fraction_below_bound": res.fraction_below_bound(),
                }
            else:
                panels[key] = [r.summary() for r in res.results]
        return {
            "figure": self.name,
            "title": self.figure.title,
            "source": self.figure.source,
            "scale": self.scale,
            "seed": self.seed,
            "horizon": self.horizon,
            "runs": self.runs,
            "seconds": self.seconds,
            "paper_shows": self.paper_shows,
            "we_get": self.we_get,
            "panels": panels,
            **({"tuning": self.tuning} if self.tuning else {}),
        }


# ------------------------------------------------------------------------------------ texts
def _ratio(a: float, b: float) -> str:
    if b <= 0:
        return "n/a" if a <= 0 else "inf"
    return f"{a / b:.2g}x"


def _describe_cmab(res: SimulationResult, baseline: str) -> str:
    base = res[baseline].summary()
    parts = [
        f"Over T = {res.horizon:,} rounds and {res.runs} run(s), {baseline} made "
        f"{base['oracle_queries_mean']:,.0f} oracle queries in "
        f"{base['oracle_adaptivity_mean']:,.0f} adaptive rounds "
        f"(final regret {base['final_regret_mean']:,.1f}, wall {base['wall_seconds']:.2f} s)."
    ]
    for r in res.results:
        if r.algorithm == baseline:
            continue
        s = r.summary()
        parts.append(
            f"{r.algorithm} used {s['oracle_queries_mean']:,.0f} queries in "
            f"{s['oracle_adaptivity_mean']:,.0f} adaptive rounds "
            f"({_ratio(s['oracle_queries_mean'], base['oracle_queries_mean'])} "
            f"{baseline}'s queries); its final regret is {s['final_regret_mean']:,.1f}, "
            f"{_ratio(s['final_regret_mean'], base['final_regret_mean'])} {baseline}'s; "
            f"wall time {s['wall_seconds']:.2f} s "
            f"({_ratio(s['wall_seconds'], base['wall_seconds'])} {baseline}'s)."
        )
    oracle_delay = res.spec.get("oracle_delay", 0.0)
    if not oracle_delay:
        parts.append(
            "(Oracle calls here are exact and cheap, so wall time mostly measures simulation, "
            "not solver cost; set oracle_delay to model an expensive oracle.)"
        )
    return " ".join(parts)


def _describe_semi(key: str, res: SimulationResult) -> str:
    rows = sorted((r.summary() for r in res.results), key=lambda s: s["final_regret_mean"])
    txt = ", ".join(f"{s['algorithm']} {s['final_regret_mean']:,.1f}" for s in rows)
    out = f"[{key}] final regret (mean of {res.runs}): {txt}; lowest: {rows[0]['algorithm']}."
    try:
        sbe = res["SBE"].summary()
    except KeyError:
        return out
    rate = sbe.get("best_arm_identified_rate")
    when = sbe.get("declaration_time_mean")
    if when is not None:
        out += (
            f" SBE declared the best arm in {rate:.0%} of runs (mean round {when:,.0f}); "
            "in those runs its regret is flat from then on."
        )
    else:
        out += " SBE did not finish eliminating within T (its regret is not flat yet)."
    return out


def _describe_pac(key: str, res: PACResult) -> str:
    final = res.scaled[:, -1]
    return (
        f"[{key}] sqrt(t) e_t at t = {int(res.times[-1]):,}: mean {final.mean():.2f} "
        f"(max over all t and runs {res.scaled.max():.2f}) vs 10 sqrt(d log K) = {res.bound:.2f}; "
        f"{res.fraction_below_bound():.0%} of recorded values are below the line."
    )


# ------------------------------------------------------------------------------------ running
def run_experiment(
    name: str,
    scale: str = "classroom",
    seed: int = 0,
    horizon: int | None = None,
    runs: int | None = None,
    params: dict[str, dict[str, Any]] | None = None,
    scheduler: str | None = None,
    tune: bool | None = None,
    client: Any = None,
) -> ExperimentResult:
    """Run a registered figure's setting and describe the outcome.

    Parameters
    ----------
    name : str
        One of :data:`FIGURES` (``cmab-fig2``, ``cmab-fig3``, ``cmab-fig4``, ``semi-regret``,
        ``semi-pac``).
    scale : str
        ``"test"``, ``"classroom"`` (default) or ``"paper"``.
    seed : int
        Instance and noise seed (same seed, same numbers).
    horizon, runs : int, optional
        Override the scale's ``T`` / ``R``.
    params : dict, optional
        Per-algorithm constructor arguments, merged over the figure's own (e.g.
        ``{"SBE": {"c": 2}}``); an algorithm not in a panel is ignored for that panel.
    scheduler, client : where the panels' repetitions run (see
        :func:`~dashboard.simulation.sweep.run_sweep`): in-process when tiny, else a local
        Dask cluster, or the cluster at ``scheduler`` / ``client``.  Default: in-process
        below the paper scale.
    tune : bool, optional
        Follow Appendix I's protocol for the figure's ``tuned`` algorithms: run each with
        c in {1, 2, 4, 8} and keep the best per panel (reported in ``tuning`` and the text).
        Default: at the paper scale only.

    Returns
    -------
    ExperimentResult
    """
    fig = get_figure(name)
    sc = fig.scale(scale)
    seed = FIELDS["seed"].check(seed)
    T = sc.horizon if horizon is None else FIELDS["horizon"].check(horizon)
    R = sc.runs if runs is None else FIELDS["runs"].check(runs)
    extra = {str(k).lower(): dict(v) for k, v in (params or {}).items()}
    paper = str(scale).strip().lower() == "paper"
    if tune is None:
        tune = paper
    if scheduler is None and client is None and not paper:
        scheduler = "inprocess"  # smaller scales stay in this process (notebooks, tests)
    start = time.perf_counter()
    panels: dict[str, SimulationResult | PACResult] = {}
    tuning: dict[str, dict[str, Any]] = {}
    texts: list[str] = []
    for panel in fig.panels:
        kwargs = dict(panel.spec)
        problem = kwargs.pop("problem")
        spec = make_spec(problem, **kwargs)
        if fig.kind == "pac":
            assert isinstance(spec, SemiparametricSpec)
            deo = extra.get("deo", {})
            bad = sorted(set(deo) - {"delta", "design_tol", "anchor"})
            if bad:
                raise ValueError(
                    f"unknown DEO setting(s): {', '.join(bad)}; allowed: anchor, delta, design_tol"
                )
            inst, _ = spec.build(seed)
            res = pure_exploration_errors(
                inst.X,
                inst.theta,
                T,
                runs=R,
                seed=seed,
                shift=spec.shift,
                noise=spec.noise,
                **deo,
            )
            res.spec = spec.to_dict()
            panels[panel.key] = res
            texts.append(_describe_pac(panel.key, res))
            continue
        merged = {k: dict(v) for k, v in panel.params.items()}
        for alg in panel.algorithms:
            if alg.lower() in extra:
                merged.setdefault(alg, {}).update(extra[alg.lower()])
        run = run_panel(
            problem,
            kwargs,
            list(panel.algorithms),
            T,
            R,
            seed,
            params=merged,
            tune=fig.tuned if tune else (),
            scheduler=scheduler,
            client=client,
        )
        sim = run.result
        panels[panel.key] = sim
        if fig.baseline is not None:
            texts.append(_describe_cmab(sim, fig.baseline))
        else:
            texts.append(_describe_semi(panel.key, sim))
        if run.chosen:
            tuning[panel.key] = run.summary()
            texts.append(run.describe(panel.key))
    return ExperimentResult(
        figure=fig,
        scale=str(scale).strip().lower(),
        seed=seed,
        horizon=T,
        runs=R,
        panels=panels,
        paper_shows=fig.paper_shows,
        we_get=" ".join(texts) if fig.baseline is not None else "\n".join(texts),
        seconds=time.perf_counter() - start,
        tuning=tuning,
    )
