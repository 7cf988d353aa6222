"""Golden CLI cases: every registered algorithm, a fixed seed, small sizes (seconds in all).

Recorded before the one-declaration redesign and the speed work (issues 8 and 9); every later
change must reproduce them exactly (wall times excluded).  Regenerate only for a documented
change of default: ``python -m tests.golden.record`` (and say so in the commit message).
"""

from __future__ import annotations

_CMAB = ["simulate", "--problem", "cmab", "--runs", "2", "--seed", "7", "--format", "json"]
_SEMI = [
    "simulate",
    "--problem",
    "semiparametric",
    "--runs",
    "2",
    "--seed",
    "7",
    "--format",
    "json",
]


def _cmab(name: str, *extra: str) -> list[str]:
    return [*_CMAB, "--algorithm", name, *extra]


def _semi(name: str, *extra: str) -> list[str]:
    return [*_SEMI, "--algorithm", name, *extra]


_LIN = ("--d", "8", "--m", "2", "--horizon", "3000")
_COV = ("--d", "6", "--m", "2", "--reward", "covariance", "--horizon", "2000")
_GEN = ("--d", "5", "--m", "2", "--reward", "general", "--horizon", "600")
_CONT = ("--d", "5", "--m", "2", "--reward", "continuous", "--horizon", "400")
_SP = ("--d", "5", "--K", "10", "--shift", "log", "--horizon", "3000")

#: name -> CLI argument list (the ``--csv`` file is added by the recorder and the test).
CASES: dict[str, list[str]] = {
    "cucb": _cmab("CUCB", *_LIN),
    "cucb-paths": _cmab("CUCB", "--d", "9", "--m", "3", "--actions", "paths", "--horizon", "1500"),
    "aroq": _cmab("AROQ-CMAB", *_LIN),
    "aroq-matchings": _cmab(
        "AROQ-CMAB", "--d", "9", "--m", "3", "--actions", "matchings", "--horizon", "1500"
    ),
    "aroq-knobs": _cmab(
        "AROQ-CMAB", *_LIN, "--param", "AROQ-CMAB:C=0.7", "--param", "AROQ-CMAB:threshold_scale=0.5"
    ),
    "alpha-aroq": _cmab("alpha-AROQ-CMAB", *_LIN),
    "alpha-aroq-paths": _cmab(
        "alpha-AROQ-CMAB", "--d", "9", "--m", "3", "--actions", "paths", "--horizon", "1500"
    ),
    "sroq": _cmab("SROQ-CMAB", *_LIN),
    "sroq-paper-grid": _cmab("SROQ-CMAB", *_LIN, "--param", 'SROQ-CMAB:grid="paper"'),
    "aroq-c": _cmab("AROQ-C-CMAB", *_COV),
    "sroq-c": _cmab("SROQ-C-CMAB", *_COV),
    "ols-ucb-c": _cmab("OLS-UCB-C", *_COV),
    "aroq-gr": _cmab("AROQ-GR-CMAB", *_GEN),
    "sroq-gr": _cmab("SROQ-GR-CMAB", *_GEN),
    "sdcb": _cmab("SDCB", *_GEN),
    "aroq-gr-linear": _cmab("AROQ-GR-CMAB", *_LIN),
    "disc-aroq-gr": _cmab("Disc-AROQ-GR-CMAB", *_CONT),
    "disc-sroq-gr": _cmab("Disc-SROQ-GR-CMAB", *_CONT),
    "sbe": _semi("SBE", *_SP),
    "sbe-appendix-i": _semi("SBE", *_SP, "--param", 'SBE:n_rule="appendix-i"'),
    "bose": _semi("BOSE", *_SP),
    "sp-ts": _semi("SP-TS", "--d", "5", "--K", "10", "--shift", "sine", "--horizon", "1000"),
    "linucb": _semi("LinUCB", *_SP),
    "g-elimination": _semi("G-elimination", *_SP),
    "sbe-adversarial": _semi(
        "SBE", "--d", "4", "--K", "8", "--shift", "adversarial", "--horizon", "3000"
    ),
    "bose-random-instance": _semi(
        "BOSE",
        "--d",
        "4",
        "--K",
        "8",
        "--instance",
        "random",
        "--shift",
        "random",
        "--horizon",
        "1500",
    ),
}

#: ``design`` outputs (no wall times at all).
DESIGN_CASES: dict[str, list[str]] = {
    "design-d5-k10": ["design", "--d", "5", "--K", "10", "--seed", "0", "--format", "json"],
    "design-d8-k30": ["design", "--d", "8", "--K", "30", "--seed", "3", "--format", "json"],
}
