"""The papers' figures as named settings (run them with
:func:`~dashboard.simulation.experiments.run_experiment`, ``python -m dashboard reproduce``).

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
  repetitions, against the line ``10 sqrt(d log K)``
  (:func:`~dashboard.simulation.pac.pure_exploration_errors`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = ["FIGURES", "SCALES", "Figure", "Panel", "Scale", "figure_names", "get_figure"]

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
