"""The algorithms a configuration may choose: what the catalogue offers for a problem (and
cmab reward model), the default comparisons, the check of a list of names, and
:class:`AlgorithmSelector`, the ``ListSelector`` behind ``Config.algorithms`` (and so behind
the sidebar's algorithm picker, ``MultiChoice.from_param``).

Names come from :mod:`dashboard.simulation.catalogue` (the UI's only door to the algorithms,
plug-ins registered in this process included); nothing here imports code named by a user.
No Panel imports: testable headless.
"""

from __future__ import annotations

from typing import Any

import param

from ..simulation import catalogue
from .safe import shorten

__all__ = [
    "DEFAULT_ALGORITHMS",
    "MAX_ALGORITHMS",
    "AlgorithmSelector",
    "check_algorithms",
    "default_algorithms",
    "options_for",
]

#: At most this many algorithms are compared side by side.
MAX_ALGORITHMS = 4

#: Default comparison of each problem (filtered by what is registered and valid).
DEFAULT_ALGORITHMS: dict[str, tuple[str, ...]] = {
    "cmab": ("CUCB", "AROQ-CMAB", "SROQ-CMAB"),
    "cmab/covariance": ("OLS-UCB-C", "AROQ-C-CMAB", "SROQ-C-CMAB"),
    "cmab/general": ("SDCB", "AROQ-GR-CMAB", "SROQ-GR-CMAB"),
    "semiparametric": ("SBE", "BOSE", "SP-TS", "LinUCB"),
}


def options_for(problem: str, reward: str | None = None) -> list[str]:
    """Names of the registered algorithms valid for ``problem`` (and the cmab ``reward``)."""
    return catalogue.algorithm_names(problem, reward if problem == "cmab" else None)


def default_algorithms(problem: str, reward: str = "linear") -> list[str]:
    """The default comparison for a problem, restricted to valid algorithms."""
    options = options_for(problem, reward)
    key = f"{problem}/{reward}" if f"{problem}/{reward}" in DEFAULT_ALGORITHMS else problem
    chosen = [a for a in DEFAULT_ALGORITHMS[key] if a in options]
    return chosen or options[:MAX_ALGORITHMS]


def check_algorithms(names: Any, problem: str, reward: str = "linear") -> list[str]:
    """``names`` in their registered spelling if every one is offered for ``problem`` (and the
    cmab ``reward`` model); matched case-insensitively, spaces around a name ignored.

    Raises
    ------
    ValueError
        One sentence naming each refused name and why (unknown, another problem's, not for
        this reward model), then what is allowed.  Names are quoted, never interpreted; the
        view escapes the sentence (:mod:`dashboard.ui.safe`).
    """
    options = options_for(problem, reward)
    allowed = f"allowed: {', '.join(options)}"
    if not isinstance(names, list) or not all(isinstance(a, str) for a in names):
        raise ValueError(f"algorithms must be a list of algorithm names; {allowed}")
    known = {n.lower(): n for n in catalogue.algorithm_names()}
    chosen, refused = [], []
    for a in names:
        name = known.get(a.strip().lower())
        if name in options:
            chosen.append(name)
        elif name is None:
            refused.append(f"unknown algorithm {shorten(a, 80)!r}")
        elif catalogue.declaration(name).problem == problem:
            refused.append(f"{name} does not support the {reward} reward model")
        else:
            other = catalogue.declaration(name).problem
            refused.append(f"{name} is an algorithm for the {other} problem, not {problem}")
    if refused:
        raise ValueError(f"{'; '.join(refused)}; {allowed}")
    return chosen


class AlgorithmSelector(param.ListSelector):
    """``Config.algorithms``: a ``ListSelector`` whose ``objects`` are the owner's offered
    algorithms (:func:`options_for` its ``problem`` and ``reward``).

    A value is checked against the offer read from the catalogue at that moment, so a plug-in
    registered after the owner was built is accepted and ``param.update(problem=...,
    algorithms=...)`` checks the names against the new problem; names are stored in their
    registered spelling.  A name outside the offer raises one ValueError sentence naming it,
    why, and what is allowed (:func:`check_algorithms`): an unregistered name never reaches
    ``objects``, hence never the MultiChoice made from this parameter, whose option labels
    Bokeh renders as HTML (tests/ui/test_canaries.py).

    ``objects`` only grows here (by the offered names chosen); the owner trims it to the offer
    after every other watcher ran (``Config._trim``).  A rendered widget made from the
    parameter drops the values missing from its new options (and writes that back), so its
    options must never shrink below the value it still shows: with growth first and the trim
    last, it sees the union, then the new value, then the new options.
    """

    def __set__(self, obj: Any, val: Any) -> None:
        # param hands an instance's value to the instance's own copy of this parameter: do
        # the check there only (``obj.param[name]`` is that copy)
        if isinstance(obj, param.Parameterized) and obj.param[self.name] is self:
            val = check_algorithms(val, obj.problem, obj.reward)
            missing = [a for a in dict.fromkeys(val) if a not in self.objects]
            if missing:
                self.objects = [*self.objects, *missing]
        super().__set__(obj, val)
