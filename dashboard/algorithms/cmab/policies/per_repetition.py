"""A fast engine that is its one-repetition policy, ``R`` times.

Some algorithms' one-repetition policies are already their fast path (blocks of rounds between
decisions, closed-form epoch crossings, certified arg-maxima, cached reference values), so
their fast engine batches nothing: the runner plays ``R`` of those policies side by side, as
it does without a fast engine, so a simulated oracle delay still overlaps across repetitions
on threads and ``step()`` still stops at each decision.  ``batches = False`` tells the runner
(:mod:`dashboard.simulation.group`) and the work estimate so.
"""

from __future__ import annotations

from typing import Any

__all__ = ["PerRepetition"]


class PerRepetition:
    """Base of such an engine: subclasses name ``speeds_up`` and ``one_repetition``."""

    batches = False
    speeds_up: str
    one_repetition: type

    def __init__(self, **kwargs: Any) -> None:
        # the same constructor as the policy (it validates the arguments); the constants
        # as the policy holds them
        policy = type(self).one_repetition(**kwargs)
        for c in policy.declaration.constants:
            setattr(self, c.name, getattr(policy, c.name))
