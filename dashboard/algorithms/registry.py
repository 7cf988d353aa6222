"""Names of algorithms, action families, reward models and shifts, and how to build them.

The CLI, the simulation layer and the dashboard all resolve user-facing names here, so a name
means the same thing everywhere.  Names are matched case-insensitively.  Entries are
``"module:Class"`` strings imported lazily, so importing this module is cheap.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any

__all__ = [
    "ALGORITHMS",
    "AlgorithmInfo",
    "algorithm_info",
    "algorithms_for",
    "load",
]

_PKG = "dashboard.algorithms"


@dataclass(frozen=True)
class AlgorithmInfo:
    """A registered algorithm.

    ``problem`` is ``"cmab"`` or ``"semiparametric"``; ``rewards`` lists the CMAB reward models
    it supports; ``paper`` cites where it is defined; ``per_round`` marks baselines that query
    the oracle (or solve an optimisation) every round.
    """

    name: str
    target: str
    problem: str
    paper: str
    rewards: tuple[str, ...] = ()
    per_round: bool = False

    def load(self) -> type:
        """Import and return the policy class."""
        return load(self.target)


_LINEAR = ("linear", "covariance")
_ANY = ("linear", "covariance", "general", "continuous")
_GENERAL = ("general", "continuous")

ALGORITHMS: dict[str, AlgorithmInfo] = {
    info.name.lower(): info
    for info in [
        # --- combinatorial semi-bandits (oracle-efficient paper) ---
        AlgorithmInfo(
            "CUCB", "cmab.policies.cucb:CUCB", "cmab", "Chen et al. 2013 (baseline)", _LINEAR, True
        ),
        AlgorithmInfo("AROQ-CMAB", "cmab.policies.aroq:AROQ", "cmab", "Algorithm 1", _LINEAR),
        AlgorithmInfo(
            "alpha-AROQ-CMAB", "cmab.policies.aroq:AlphaAROQ", "cmab", "Algorithm 5", _LINEAR
        ),
        AlgorithmInfo("SROQ-CMAB", "cmab.policies.sroq:SROQ", "cmab", "Algorithm 2", _LINEAR),
        AlgorithmInfo(
            "AROQ-C-CMAB", "cmab.policies.covariance:AROQC", "cmab", "Algorithm 3", _LINEAR
        ),
        AlgorithmInfo(
            "SROQ-C-CMAB", "cmab.policies.covariance:SROQC", "cmab", "Algorithm 4", _LINEAR
        ),
        AlgorithmInfo(
            "OLS-UCB-C",
            "cmab.policies.covariance:OLSUCBC",
            "cmab",
            "Zhou et al. 2024 (baseline)",
            _LINEAR,
            True,
        ),
        AlgorithmInfo("AROQ-GR-CMAB", "cmab.policies.general:AROQGR", "cmab", "Algorithm 6", _ANY),
        AlgorithmInfo("SROQ-GR-CMAB", "cmab.policies.general:SROQGR", "cmab", "Algorithm 7", _ANY),
        AlgorithmInfo(
            "SDCB", "cmab.policies.general:SDCB", "cmab", "Chen et al. 2016 (baseline)", _ANY, True
        ),
        AlgorithmInfo(
            "Disc-AROQ-GR-CMAB",
            "cmab.policies.general:DiscretizedAROQGR",
            "cmab",
            "Algorithm 8 with Algorithm 6",
            _GENERAL,
        ),
        AlgorithmInfo(
            "Disc-SROQ-GR-CMAB",
            "cmab.policies.general:DiscretizedSROQGR",
            "cmab",
            "Algorithm 8 with Algorithm 7",
            _GENERAL,
        ),
        # --- semiparametric bandits (experimental-design paper) ---
        AlgorithmInfo("SBE", "semiparametric.policies.sbe:SBE", "semiparametric", "Algorithm 2"),
        AlgorithmInfo(
            "BOSE",
            "semiparametric.policies.bose:BOSE",
            "semiparametric",
            "Krishnamurthy et al. 2018 (baseline)",
            per_round=True,
        ),
        AlgorithmInfo(
            "SP-TS",
            "semiparametric.policies.spts:SemiparametricTS",
            "semiparametric",
            "Kim & Paik 2019 (baseline)",
            per_round=True,
        ),
        AlgorithmInfo(
            "LinUCB",
            "semiparametric.policies.linear_foils:LinUCB",
            "semiparametric",
            "Abbasi-Yadkori et al. 2011 (linear foil)",
            per_round=True,
        ),
        AlgorithmInfo(
            "G-elimination",
            "semiparametric.policies.linear_foils:GElimination",
            "semiparametric",
            "Lattimore & Szepesvari 2020, Alg. 12 (linear foil)",
        ),
    ]
}


def load(target: str) -> Any:
    """Import ``"module:attr"`` relative to :mod:`dashboard.algorithms`."""
    module, attr = target.split(":")
    return getattr(importlib.import_module(f"{_PKG}.{module}"), attr)


def algorithm_info(name: str, problem: str | None = None) -> AlgorithmInfo:
    """Look up an algorithm by name (case-insensitive); ValueError lists the allowed names."""
    info = ALGORITHMS.get(str(name).strip().lower())
    if info is None or (problem is not None and info.problem != problem):
        allowed = ", ".join(i.name for i in algorithms_for(problem))
        where = f" for the {problem} problem" if problem else ""
        raise ValueError(f"unknown algorithm {name!r}{where}; choose from: {allowed}")
    return info


def algorithms_for(problem: str | None, reward: str | None = None) -> list[AlgorithmInfo]:
    """Registered algorithms of a problem (optionally supporting a CMAB reward model)."""
    return [
        i
        for i in ALGORITHMS.values()
        if (problem is None or i.problem == problem) and (reward is None or reward in i.rewards)
    ]
