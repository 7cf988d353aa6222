"""Declared constants shared by the semiparametric policies (see :mod:`...declare`).

Lower bounds that are not the mathematical ``> 0`` are there because the value is degenerate
in floating point or statistically meaningless (each doc says which); upper bounds are sanity
limits for a teaching tool.
"""

from __future__ import annotations

from ...declare import Constant

__all__ = [
    "BOSE_DISTRIBUTION",
    "DELTA",
    "DESIGN_TOL",
    "DISTRIBUTIONS",
    "ELIMINATION",
    "LAM",
    "MULTIPLIER_C",
    "QP_MAX_ITER",
    "QP_TOL",
]

DELTA = Constant(
    "delta",
    0.05,
    low=0.0,
    high=1.0,
    low_open=True,
    high_open=True,
    doc="confidence level: the guarantee holds with probability 1 - delta",
    label="δ: confidence level",
)


def MULTIPLIER_C(label: str, doc: str) -> Constant:
    """``c``, a multiplier of a width or a phase length in [1e-3, 1e3] (default 1).

    Below 1e-3 the width or phase collapses to a handful of rounds whatever the confidence
    (``c = 1e-300`` was accepted before and gave meaningless runs); Appendix I tunes c in
    {1, 2, 4, 8}.
    """
    return Constant(
        "c", 1.0, low=1e-3, high=1e3, doc=doc + "; in [1e-3, 1e3] (Appendix I: 1..8)", label=label
    )


def LAM(default: float | None, doc: str) -> Constant:
    """Ridge lambda of ``V = lambda I + sum x x^T`` in [1e-6, 1e6].

    Before any data ``V^-1 = I / lambda``: below 1e-6 the widths overflow to inf and 0 * inf
    gives NaN (``lam = 1e-300`` produced NaN warnings), so 1e-6 is the floor.
    """
    return Constant(
        "lam",
        default,
        low=1e-6,
        high=1e6,
        doc=doc + "; >= 1e-6 because V^-1 = I/lambda before any data (smaller overflows)",
        label="λ: ridge regulariser",
    )


ELIMINATION = Constant(
    "elimination_factor",
    1.0,
    low=0.0,
    low_open=True,
    high=100.0,
    doc="multiplier of the elimination threshold (1: the paper's 2 epsilon_l rule)",
    card=False,
)
DESIGN_TOL = Constant(
    "design_tol",
    1e-3,
    low=1e-9,
    high=1.0,
    high_open=True,
    doc="Kiefer-Wolfowitz accuracy of the G-optimal design; below 1e-9 the Frank-Wolfe solver "
    "would not converge in float64",
    card=False,
)

#: Values of BOSE's ``distribution``: the authors' code (uniform) or the paper's min-max program.
DISTRIBUTIONS = ("uniform", "minmax")
BOSE_DISTRIBUTION = Constant(
    "distribution",
    "uniform",
    "choice",
    choices=DISTRIBUTIONS,
    doc="action distribution over surviving arms: uniform (the authors' code, default) or "
    "minmax (Krishnamurthy et al.'s per-round min-max program, Appendix H; solved every round)",
    label="distribution: surviving-arm play",
)

QP_TOL = Constant(
    "qp_tol",
    1e-3,
    low=0.0,
    low_open=True,
    high=1.0,
    doc="minmax only: stop the per-round active-set solve when BOSE's condition holds up to "
    "the factor 1 + qp_tol",
    card=False,
)
QP_MAX_ITER = Constant(
    "qp_max_iter",
    1000,
    "int",
    low=1,
    high=100_000,
    doc="minmax only: cap on active-set steps per round",
    card=False,
)
