"""Shifts nu_t of the semiparametric reward model ``r_t = x_{a_t}^T theta* + nu_t + eta_t``.

Section 2.1: nu_t is any H_{t-1}-measurable quantity, fixed *before* the action at round t is
chosen; Assumption 1 asks ``|nu_t| <= 1``.  Both shifts of the paper's experiments (Appendix I)
exceed that bound: ``1 + sin(2t)`` reaches 2 and the log-alternating shift has ``|nu_t| >= 2``.
We implement them as printed and say so.

*Oblivious* shifts depend on ``t`` only (and on a seed); *adaptive* ones (``adaptive = True``)
also read a :class:`ShiftContext` describing the learner's action distribution for the round,
which is exactly what an adversary may use (it is fixed before the action is drawn).

Each shift declares itself (:class:`~dashboard.algorithms.declare.ComponentDeclaration`); the
registry :data:`SHIFTS` is built from the declarations, and a plug-in adds its own with
``SHIFTS.register(MyShift)`` (a new shift type is one file plus one line).  Keys (CLI /
dashboard): :func:`shift_names`, :func:`make_shift`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from .. import randomness as rnd
from ..base import validate_int, validate_positive
from ..components import ComponentRegistry, Declared
from ..declare import ComponentDeclaration

__all__ = [
    "SHIFTS",
    "SHIFT_KEYS",
    "AdversarialShift",
    "LogAlternatingShift",
    "NoShift",
    "RandomShift",
    "Shift",
    "ShiftContext",
    "SineShift",
    "make_shift",
    "shift_names",
]


@dataclass
class ShiftContext:
    """What an adaptive shift may look at for a block of rounds ``t``.

    Attributes
    ----------
    rep : int
        Repetition index (for counter-based random shifts).
    best_arm : int
        The instance's optimal arm a* (an adversary knows the instance).
    probs : (K,) array or None
        The learner's action distribution ``p_t``, constant over the block (SBE phases, uniform
        BOSE rounds, TS rounds).  ``None`` means the learner is *deterministic* given the
        history, so its next arm is known before the round: then ``arms`` are those arms.
    arms : (L,) int array or None
        The arms about to be played (only read when ``probs`` is None).
    """

    rep: int = 0
    best_arm: int = 0
    probs: np.ndarray | None = None
    arms: np.ndarray | None = None


class Shift(Declared, ABC):
    """A shift sequence nu_t.

    Subclasses implement :meth:`values`.  ``magnitude`` scales the whole sequence.  Its
    ``declaration`` (name, formula, reference) sets ``key``.
    """

    #: True if the values depend on the learner (via :class:`ShiftContext`).
    adaptive: ClassVar[bool] = False

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)  # Declared: key = the declaration's name
        decl = cls.__dict__.get("declaration")
        if isinstance(decl, ComponentDeclaration):
            cls.adaptive = bool(decl.extra.get("adaptive", False))

    def __init__(self, magnitude: float = 1.0, seed: int = 0) -> None:
        self.magnitude = validate_positive("shift magnitude", magnitude, allow_zero=True)
        self.seed = validate_int("seed", seed, 0)

    @abstractmethod
    def values(self, t: np.ndarray, context: ShiftContext | None = None) -> np.ndarray:
        """nu_t for the 1-based rounds ``t`` (int array); float array of the same shape."""

    def bound(self) -> float:
        """sup_t |nu_t| (``inf`` if unbounded); Assumption 1 asks for <= 1."""
        return self.magnitude

    def describe(self) -> str:
        """One-line formula."""
        return self.key

    def __repr__(self) -> str:
        return f"{type(self).__name__}(magnitude={self.magnitude}, seed={self.seed})"


class NoShift(Shift):
    """nu_t = 0: the plain linear bandit."""

    declaration = ComponentDeclaration(
        "shift",
        "none",
        doc="nu_t = 0: the plain linear bandit",
        reference="Section 2.1 (nu_t = 0)",
        fields=("magnitude",),
        problem="semiparametric",
        extra={"adaptive": False},
    )

    def values(self, t: np.ndarray, context: ShiftContext | None = None) -> np.ndarray:
        return np.zeros(np.shape(t))

    def bound(self) -> float:
        return 0.0

    def describe(self) -> str:
        return "nu_t = 0"


class SineShift(Shift):
    """Appendix I's first shift, ``nu_t^1 = 1 + sin(2t)`` (times ``magnitude``).

    It takes values in [0, 2 * magnitude], so it violates ``|nu_t| <= 1`` of Assumption 1 for
    magnitude 1, as in the paper's experiments.
    """

    declaration = ComponentDeclaration(
        "shift",
        "sine",
        doc="nu_t = magnitude * (1 + sin(2t)), in [0, 2 magnitude]",
        reference="Appendix I, first shift",
        fields=("magnitude",),
        problem="semiparametric",
        extra={"adaptive": False},
    )

    def values(self, t: np.ndarray, context: ShiftContext | None = None) -> np.ndarray:
        t = np.asarray(t, dtype=float)
        return self.magnitude * (1.0 + np.sin(2.0 * t))

    def bound(self) -> float:
        return 2.0 * self.magnitude

    def describe(self) -> str:
        return f"nu_t = {self.magnitude:g} * (1 + sin(2t))"


class LogAlternatingShift(Shift):
    """Appendix I's second shift *as printed*: ``max(log(t+1)/5, 2) * (-1)^(t mod 3)``.

    As printed the ``max`` makes ``|nu_t| >= 2`` always (it is 2 until ``log(t+1) > 10``, i.e.
    ``t > e^10 - 1 ~ 22025``, and then grows like ``log(t)/5``), so it is unbounded and violates
    Assumption 1; ``(-1)^(t mod 3)`` gives the sign pattern ``+, -, +`` for ``t mod 3 = 0, 1, 2``.
    (A ``min`` may have been intended; we keep the printed formula.)  Times ``magnitude``.
    """

    declaration = ComponentDeclaration(
        "shift",
        "log",
        doc="nu_t = magnitude * max(log(t+1)/5, 2) * (-1)^(t mod 3), as printed (unbounded)",
        reference="Appendix I, second shift",
        fields=("magnitude",),
        problem="semiparametric",
        extra={"adaptive": False},
    )

    def values(self, t: np.ndarray, context: ShiftContext | None = None) -> np.ndarray:
        t = np.asarray(t, dtype=np.int64)
        level = np.maximum(np.log(t.astype(float) + 1.0) / 5.0, 2.0)
        sign = np.where(t % 3 == 1, -1.0, 1.0)
        return self.magnitude * level * sign

    def bound(self) -> float:
        return float("inf") if self.magnitude > 0 else 0.0

    def describe(self) -> str:
        return f"nu_t = {self.magnitude:g} * max(log(t+1)/5, 2) * (-1)^(t mod 3)  (as printed)"


class RandomShift(Shift):
    """Bounded i.i.d. shift ``nu_t ~ U[-magnitude, magnitude]``, counter-based by (seed, rep, t).

    It has mean zero, so it acts like extra (bounded) noise: even plain least squares is not
    biased by it; it satisfies Assumption 1 for magnitude <= 1.
    """

    declaration = ComponentDeclaration(
        "shift",
        "random",
        doc="nu_t ~ U[-magnitude, magnitude] i.i.d. (mean zero)",
        reference="bounded i.i.d. shift (Assumption 1 for magnitude <= 1)",
        fields=("magnitude",),
        problem="semiparametric",
        extra={"adaptive": False},
    )

    def values(self, t: np.ndarray, context: ShiftContext | None = None) -> np.ndarray:
        rep = 0 if context is None else int(context.rep)
        key = rnd.stream_key(self.seed, rep, "sp-random-shift")
        return self.magnitude * (2.0 * rnd.uniform(key, np.asarray(t, dtype=np.int64)) - 1.0)

    def describe(self) -> str:
        return f"nu_t ~ U[-{self.magnitude:g}, {self.magnitude:g}] i.i.d."


class AdversarialShift(Shift):
    """History-dependent shift fixed before the action: punish the best arm.

    ``nu_t = -magnitude`` if the learner's most likely next arm is the best arm a* (a* has the
    largest probability under ``p_t``, ties counted as a*), else ``+magnitude``.  For a
    deterministic learner (``context.probs is None``) the most likely arm is the arm it is about
    to play, which it has fixed from the history, so nu_t is still H_{t-1}-measurable.

    A learner that regresses raw rewards on raw features (LinUCB, G-elimination) then sees the
    best arm ``2 * magnitude`` worse than it is and, for ``2 * magnitude > Delta*``, prefers a
    suboptimal arm: linear regret.  The orthogonalized estimator (Eq. 2) removes nu_t because
    ``E[x~_{a_t} | H_{t-1}] = 0``.
    """

    declaration = ComponentDeclaration(
        "shift",
        "adversarial",
        doc="nu_t = -magnitude if the learner's likely next arm is a*, else +magnitude",
        reference="Section 2.1 (an H_{t-1}-measurable adversary)",
        fields=("magnitude",),
        problem="semiparametric",
        extra={"adaptive": True},
    )

    def values(self, t: np.ndarray, context: ShiftContext | None = None) -> np.ndarray:
        if context is None:
            raise ValueError("the adversarial shift needs a ShiftContext (the learner's policy)")
        n = np.shape(t)
        if context.probs is not None:
            p = np.asarray(context.probs, dtype=float)
            likely_best = p[context.best_arm] >= p.max()
            return np.full(n, -self.magnitude if likely_best else self.magnitude)
        if context.arms is None:
            raise ValueError(
                "ShiftContext needs probs (randomised learner) or arms (deterministic)"
            )
        arms = np.asarray(context.arms)
        return np.where(arms == context.best_arm, -self.magnitude, self.magnitude).reshape(n)

    def describe(self) -> str:
        return f"nu_t = -{self.magnitude:g} if the learner's likely next arm is a*, else +"


#: Registered shifts (built-ins first).
SHIFTS: ComponentRegistry[Shift] = ComponentRegistry("shift", Shift, "shift")
for _cls in (NoShift, SineShift, LogAlternatingShift, RandomShift, AdversarialShift):
    SHIFTS.register(_cls, plugin=False)
#: Built-in keys (see :func:`shift_names` for every registered one).
SHIFT_KEYS: tuple[str, ...] = SHIFTS.names()


def shift_names() -> tuple[str, ...]:
    """Every registered shift key (built-ins and plug-ins)."""
    return SHIFTS.names()


def make_shift(key: str, magnitude: float = 1.0, seed: int = 0) -> Shift:
    """Build a shift by key (``none``, ``sine``, ``log``, ``random``, ``adversarial`` or a
    registered plug-in).

    Raises
    ------
    ValueError
        For an unknown key (the message lists the allowed keys) or a bad magnitude/seed.
    """
    return SHIFTS.get(key)(magnitude=magnitude, seed=seed)
