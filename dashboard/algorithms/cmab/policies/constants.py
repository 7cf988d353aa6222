"""Declared constants shared by the combinatorial policies (see :mod:`...declare`).

The papers leave these constants open (GUIDE section 3); each is declared once here and used by
the policies' declarations, so validation, ``params()``, the CLI's ``--param`` and the
dashboard's constants card agree.  Upper bounds are sanity limits for a teaching tool (stated
in each doc), not mathematical ones.
"""

from __future__ import annotations

from ...declare import Constant

__all__ = [
    "CMAB_ANY",
    "CMAB_GENERAL",
    "CMAB_LINEAR",
    "C_GR",
    "C_UCB",
    "EPOCH0",
    "FRACTION",
    "F_CONST",
    "GRID",
    "GRID_OPTIONAL",
    "H_CONST",
    "INITIAL_PASS",
    "INTERVALS",
    "LCB_QUERY",
    "LIPSCHITZ",
    "MAX_ATOMS",
    "MULTIPLIER",
    "M_EPOCHS",
    "PAIR",
    "PAIR_FRACTION",
    "THRESHOLD_SCALE",
    "WARMUP",
    "WARMUP_FRACTION",
]

#: Reward models a policy may support (see :mod:`..rewards`).
CMAB_LINEAR = ("linear", "covariance")
CMAB_ANY = ("linear", "covariance", "general", "continuous")
CMAB_GENERAL = ("general", "continuous")

#: Largest horizon the simulation accepts; integer round counts are capped by it.
_MAX_ROUNDS = 10_000_000

C_UCB = Constant(
    "C",
    1.5,
    low=1e-3,
    high=1e3,
    doc="CombUCB1 width constant in sqrt(C log t / n_i) (Eq. (1)); the proofs use 1.5; in "
    "[1e-3, 1e3]: below, the index is the empirical mean (greedy, outside the theory), above, "
    "all exploration bonus",
    label="C: UCB width constant, √(C log t / n_i)",
)
C_GR = Constant(
    "C",
    1.5,
    low=0.0,
    high=1e3,
    doc="radius constant of the DKW band sqrt(C log t / n_i) (Algorithms 6-7; 0 is greedy); "
    "the paper gives it only up to constants",
    label="C: band radius constant, √(C log t / n_i)",
)
THRESHOLD_SCALE = Constant(
    "threshold_scale",
    1.0,
    low=0.0,
    low_open=True,
    high=1e3,
    doc="multiplier of the epoch threshold 1 + sqrt(T m |T_i(tau-1)| / d) (Algorithm 1, line "
    "5); 1 is the paper",
    label="threshold_scale: AROQ epoch threshold ×",
)
EPOCH0 = Constant(
    "epoch0_size",
    0,
    "int",
    low=0,
    high=_MAX_ROUNDS,
    doc="rounds played with the initial action before the first threshold test (0: the paper)",
    card=False,
)
M_EPOCHS = Constant(
    "M",
    None,
    "int",
    low=1,
    high=_MAX_ROUNDS,
    doc="number of epochs (null: max(2, ceil(log2 log2 T)), Theorem 2); at most T",
    label="M: number of epochs (empty: ≈ log2 log2 T)",
)
GRID = Constant(
    "grid",
    "gao",
    "choice",
    choices=("gao", "paper"),
    doc="SROQ time grid: gao (t_1 = eta, Gao et al. 2019) or paper (t_1 = 1, as printed; "
    "see docs/DIFFERENCES.md)",
    label="grid: SROQ time grid",
)
LCB_QUERY = Constant(
    "lcb_query",
    "parallel",
    "choice",
    choices=("parallel", "sequential"),
    doc="adaptivity of an epoch's max-LCB query: parallel (one round with the representatives, "
    "A.1) or sequential (its own round, as A.4/A.9 count it); queries and regret are the same",
    label="lcb_query: max-LCB query round",
)
GRID_OPTIONAL = Constant(
    "grid_kind",
    None,
    "choice",
    choices=("gao", "paper"),
    doc="time grid of the scheduled epochs (null: gao), as SROQ-CMAB's grid",
    label="grid: time grid",
    card=False,
)
F_CONST = Constant(
    "f_const",
    0.05,
    low=0.0,
    high=1e3,
    doc="constant of f_t in the covariance confidence width (Section 4, given up to constants)",
    label="f_const: constant of f_t",
)
H_CONST = Constant(
    "h_const",
    0.5,
    low=0.0,
    high=1e3,
    doc="constant of h_t in the covariance confidence width (Section 4, given up to constants)",
    label="h_const: constant of h_t",
)


def MULTIPLIER(name: str, label: str, doc: str, card: bool = True) -> Constant:
    """A length multiplier in [0, 1e3] (default 1: the paper's length)."""
    return Constant(name, 1.0, low=0.0, high=1e3, doc=doc, label=label, card=card)


def FRACTION(name: str, default: float, doc: str) -> Constant:
    """A share of the horizon in [0, 1] (numerical knob, not on the card)."""
    return Constant(name, default, low=0.0, high=1.0, doc=doc, card=False)


WARMUP = MULTIPLIER(
    "warmup_multiplier",
    "warm-up length ×",
    "multiplier of the warm-up length ceil(d(d+1) log^3(T) / 2) (Algorithm 3, lines 4-9)",
)
WARMUP_FRACTION = FRACTION(
    "warmup_fraction", 0.1, "largest share of the horizon the warm-up may take (the clamp)"
)
PAIR = MULTIPLIER(
    "pair_multiplier",
    "pair phase length ×",
    "multiplier of the pair phase length (d^2 m^2 T_tau log T)^(2/3) (Algorithm 4)",
)
PAIR_FRACTION = FRACTION(
    "pair_fraction", 0.3, "largest share of an epoch the pair phase may take (the clamp)"
)
INITIAL_PASS = Constant(
    "initial_pass",
    True,
    "bool",
    doc="play every base arm once before the first index (Chen et al. 2016's initialisation, "
    "the default); false: optimistic indices for never-played arms",
    card=False,
)
MAX_ATOMS = Constant(
    "max_atoms",
    64,
    "int",
    low=2,
    high=100_000,
    doc="atoms kept per empirical distribution before rounding (speed/memory; above 1e5 the "
    "oracle's set function becomes slow)",
    card=False,
)
LIPSCHITZ = Constant(
    "lipschitz",
    1.0,
    low=0.0,
    low_open=True,
    high=1e3,
    doc="the constant C of Assumption 2, used by the default s = ceil(C sqrt(m T))",
    card=False,
)
INTERVALS = Constant(
    "s",
    None,
    "int",
    low=1,
    high=10_000_000,
    doc="number of discretisation intervals (null: ceil(lipschitz sqrt(m T)), Algorithm 8)",
    card=False,
)
