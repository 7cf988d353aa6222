"""Declarations: what an algorithm (and a shift, action family or reward model) says about itself.

Each policy class carries one :class:`AlgorithmDeclaration` as its ``declaration`` class
attribute: its name, problem, paper reference, supported reward models, per-round or
rare-query nature, batched engine and its user-settable :class:`Constant` s.  Everything else
reads it: validation of constructor constants (:meth:`AlgorithmDeclaration.validate`, run by
:class:`~dashboard.algorithms.base.Policy` before ``__init__``), ``Policy.params()``, the
registry, the simulation runner (batched engine, ``params`` check), the CLI (``--param`` help,
``algorithms`` command), the dashboard's constants card and lesson preset checks.

Shifts, action families and reward models carry a :class:`ComponentDeclaration`.

Pure Python: no param, panel or numpy import, so this module is the cheapest possible contract.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "KINDS",
    "PROBLEMS",
    "RESERVED",
    "AlgorithmDeclaration",
    "ComponentDeclaration",
    "Constant",
]

#: Kinds of constants.
KINDS: tuple[str, ...] = ("float", "int", "choice", "bool")
#: The two problems of the papers.
PROBLEMS: tuple[str, ...] = ("cmab", "semiparametric")
#: Constructor arguments the simulation injects from the problem spec, per problem.  They are
#: never user constants (``--param CUCB:oracle_delay=1e9`` would bypass the spec's bounds).
RESERVED: dict[str, tuple[str, ...]] = {
    "cmab": ("oracle_delay", "executor", "alpha"),
    "semiparametric": (),
}


def _fmt(x: float) -> str:
    """``1000`` rather than ``1e+03`` for whole numbers, ``0.001`` / ``1e-06`` otherwise."""
    if float(x).is_integer() and abs(x) < 1e16:
        return str(int(x))
    return f"{x:g}"


@dataclass(frozen=True)
class Constant:
    """One user-settable constant of an algorithm (a constructor keyword).

    Attributes
    ----------
    name : str
        The constructor keyword (``C``, ``M``, ``grid``, ``c``, ``delta``, ``n_rule`` ...).
    default : object
        The constructor's default.  ``None`` means "chosen by the algorithm" (e.g. SROQ's M
        from T); ``None`` is then always an allowed value.
    kind : str
        ``"float"``, ``"int"``, ``"choice"`` or ``"bool"``.
    low, high : float or None
        Bounds of numbers (``None``: unbounded on that side).
    low_open, high_open : bool
        Whether the bound itself is excluded (``(low, ...`` rather than ``[low, ...``).
    choices : tuple of str
        Allowed values of a ``"choice"`` (exact spelling).
    doc : str
        One line: what it means and where the paper defines it; why the bounds are what they
        are when they are not the mathematical ones.
    label : str
        Short widget label (defaults to ``name``).
    card : bool
        Shown on the dashboard's constants card (the paper's open constants).  ``False`` for
        numerical knobs that stay settable from the CLI and the API.
    """

    name: str
    default: Any
    kind: str = "float"
    low: float | None = None
    high: float | None = None
    low_open: bool = False
    high_open: bool = False
    choices: tuple[str, ...] = ()
    doc: str = ""
    label: str = ""
    card: bool = True

    def __post_init__(self) -> None:
        problem = self.malformed()
        if problem is not None:
            raise ValueError(f"bad declaration of constant {self.name!r}: {problem}")
        if not self.label:
            object.__setattr__(self, "label", self.name)

    def malformed(self) -> str | None:
        """Why this declaration is ill-formed (``None`` if it is fine)."""
        if not isinstance(self.name, str) or not self.name.isidentifier():
            return "the name must be a Python identifier"
        if self.name.startswith("_"):
            return "the name must not start with an underscore"
        if self.kind not in KINDS:
            return f"kind must be one of {', '.join(KINDS)}"
        if self.kind == "choice" and (
            not self.choices or not all(isinstance(c, str) for c in self.choices)
        ):
            return "a choice needs a non-empty tuple of string choices"
        for b in (self.low, self.high):
            if b is not None and (
                isinstance(b, bool) or not isinstance(b, numbers.Real) or math.isnan(b)
            ):
                return "bounds must be numbers or None"
        if self.low is not None and self.high is not None and self.low > self.high:
            return "low must not exceed high"
        why = self.check(self.default)
        if why is not None:
            return f"its default fails its own bounds ({why})"
        return None

    # ------------------------------------------------------------------------ checking
    def bounds_text(self) -> str:
        """The allowed values in words: ``(0, 1)``, ``[1, 100000]``, ``gao | paper`` ..."""
        if self.kind == "choice":
            return " | ".join(self.choices)
        if self.kind == "bool":
            return "true | false"
        lo = "-inf" if self.low is None else _fmt(self.low)
        hi = "inf" if self.high is None else _fmt(self.high)
        left = "(" if self.low is None or self.low_open else "["
        right = ")" if self.high is None or self.high_open else "]"
        text = f"{left}{lo}, {hi}{right}"
        return text + (" or none (auto)" if self.default is None else "")

    def check(self, value: Any) -> str | None:
        """Why ``value`` is not allowed (``None`` if it is)."""
        if value is None:
            return None if self.default is None else f"{self.name} needs a value"
        if self.kind == "choice":
            if isinstance(value, str) and value in self.choices:
                return None
            if len(self.choices) == 1:
                return f"{self.name} must be {self.choices[0]!r} (got {value!r}; {self.doc})"
            return f"{self.name} must be one of {', '.join(self.choices)} (got {value!r})"
        if self.kind == "bool":
            if type(value).__name__ in ("bool", "bool_"):
                return None
            return f"{self.name} must be true or false (got {value!r})"
        if type(value).__name__ in ("bool", "bool_") or not isinstance(value, numbers.Real):
            return f"{self.name} must be a number (got {value!r})"
        if self.kind == "int" and not (
            isinstance(value, numbers.Integral) or float(value).is_integer()
        ):
            return f"{self.name} must be an integer (got {value!r})"
        try:
            v = float(value)
        except OverflowError:
            v = math.inf if value > 0 else -math.inf
        if math.isnan(v) or (self.kind == "float" and math.isinf(v)):
            return f"{self.name} must be a finite number (got {value!r})"
        if self.kind == "int":
            v = value  # compare exact integers (no rounding of huge values)
        too_low = self.low is not None and (v < self.low or (self.low_open and v == self.low))
        too_high = self.high is not None and (v > self.high or (self.high_open and v == self.high))
        if too_low or too_high:
            shown = value if abs(v) < 1e30 else f"{float(v):.3g}"
            return f"{self.name} must be in {self.bounds_text()} (got {shown!r})"
        return None

    def validate(self, value: Any) -> Any:
        """``value`` coerced to the declared kind, or ValueError saying what is allowed."""
        why = self.check(value)
        if why is not None:
            raise ValueError(why)
        if value is None or self.kind in ("choice",):
            return value
        if self.kind == "bool":
            return bool(value)
        return int(value) if self.kind == "int" else float(value)

    def to_dict(self) -> dict[str, Any]:
        """JSON-able description (the ``algorithms`` CLI command)."""
        out: dict[str, Any] = {"name": self.name, "kind": self.kind, "default": self.default}
        if self.kind == "choice":
            out["choices"] = list(self.choices)
        elif self.kind in ("float", "int"):
            out.update(
                low=self.low, high=self.high, low_open=self.low_open, high_open=self.high_open
            )
        out.update(bounds=self.bounds_text(), doc=self.doc, label=self.label, card=self.card)
        return out


@dataclass(frozen=True)
class AlgorithmDeclaration:
    """What a policy class says about itself (its ``declaration`` class attribute).

    Attributes
    ----------
    name : str
        Display name as in the paper (``"AROQ-CMAB"``); unique, case-insensitively.
    problem : str
        ``"cmab"`` or ``"semiparametric"``.
    reference : str
        Where it is defined: ``"Algorithm 1"``, ``"Chen et al. 2013 (baseline)"`` ...
    constants : tuple of Constant
        The user-settable constructor keywords, in signature order.
    rewards : tuple of str
        CMAB reward models it supports (empty for semiparametric algorithms).
    per_round : bool
        True for baselines that query the oracle (or solve an optimisation) every round; False
        for the papers' rare-query algorithms.
    batched : type or None
        A class running ``R`` repetitions at once with the same numbers (constructed with the
        same keywords, ``reset(envs, horizon)``), used by the runner when ``R > 1``.
    doc : str
        One line for listings.
    """

    name: str
    problem: str
    reference: str
    constants: tuple[Constant, ...] = ()
    rewards: tuple[str, ...] = ()
    per_round: bool = False
    batched: type | None = None
    doc: str = ""

    def __post_init__(self) -> None:
        problem = self.malformed()
        if problem is not None:
            raise ValueError(f"bad declaration of algorithm {self.name!r}: {problem}")

    def malformed(self) -> str | None:
        """Why this declaration is ill-formed on its own (``None`` if fine)."""
        if not isinstance(self.name, str) or not self.name.strip():
            return "the name must be a non-empty string"
        if any(ch in self.name for ch in ":=,\n<>&\"'"):
            return "the name must not contain any of : = , < > & quotes or newlines"
        if self.problem not in PROBLEMS:
            return f"problem must be one of {', '.join(PROBLEMS)}"
        if not isinstance(self.reference, str) or not self.reference.strip():
            return "reference (paper Algorithm / equation / citation) must be given"
        if not isinstance(self.constants, tuple) or not all(
            isinstance(c, Constant) for c in self.constants
        ):
            return "constants must be a tuple of Constant"
        names = [c.name for c in self.constants]
        if len(set(names)) != len(names):
            return "a constant is declared twice"
        reserved = sorted(set(names) & set(RESERVED[self.problem]))
        if reserved:
            return (
                f"{', '.join(reserved)} are injected by the simulation from the problem spec "
                "and cannot be constants"
            )
        if not isinstance(self.rewards, tuple) or not all(isinstance(r, str) for r in self.rewards):
            return "rewards must be a tuple of reward model names"
        if self.problem == "cmab" and not self.rewards:
            return "a cmab algorithm must list the reward models it supports"
        return None

    @property
    def key(self) -> str:
        """Case-insensitive lookup key."""
        return self.name.strip().lower()

    def constant(self, name: str) -> Constant:
        """The declared constant ``name``; ValueError naming the allowed ones."""
        for c in self.constants:
            if c.name == name:
                return c
        raise ValueError(f"{self.name} has no constant {name!r}; allowed: {self.allowed_text()}")

    def allowed_text(self) -> str:
        """``C (1.5, (0, 100]), threshold_scale ...`` or ``none``."""
        return ", ".join(c.name for c in self.constants) or "none"

    def validate(self, values: dict[str, Any]) -> dict[str, Any]:
        """Check user constants (unknown names, kinds, bounds); return them coerced.

        Raises
        ------
        ValueError
            One sentence naming the algorithm, the offending constant and what is allowed.
        """
        if not isinstance(values, dict):
            raise ValueError(
                f"constants of {self.name} must be a mapping name -> value, got "
                f"{type(values).__name__}"
            )
        out: dict[str, Any] = {}
        for name, value in values.items():
            if name in RESERVED[self.problem]:
                raise ValueError(
                    f"{name} is not a constant of {self.name}: the simulation sets it from the "
                    f"problem spec; allowed: {self.allowed_text()}"
                )
            if not isinstance(name, str) or name not in {c.name for c in self.constants}:
                raise ValueError(
                    f"{self.name} has no constant {name!r}; allowed: {self.allowed_text()}"
                )
            try:
                out[name] = self.constant(name).validate(value)
            except ValueError as exc:
                raise ValueError(f"{self.name}: {exc}") from None
        return out

    def to_dict(self) -> dict[str, Any]:
        """JSON-able description (the ``algorithms`` CLI command)."""
        return {
            "name": self.name,
            "problem": self.problem,
            "rewards": list(self.rewards),
            "reference": self.reference,
            "per_round": self.per_round,
            "batched": self.batched is not None,
            "doc": self.doc,
            "constants": [c.to_dict() for c in self.constants],
        }


@dataclass(frozen=True)
class ComponentDeclaration:
    """What a shift, action family or reward model says about itself.

    Attributes
    ----------
    kind : str
        ``"shift"``, ``"actions"`` or ``"reward"``.
    name : str
        User-facing key (``"sine"``, ``"m-sets"``, ``"linear"``), lower case.
    doc : str
        One line: the formula or construction.
    reference : str
        Where the paper defines or uses it.
    fields : tuple of str
        Problem-spec fields it reads (``magnitude``, ``d``, ``m`` ...).
    problem : str
        The problem it belongs to.
    extra : dict
        Kind-specific facts (``adaptive`` for shifts ...).
    """

    kind: str
    name: str
    doc: str
    reference: str = ""
    fields: tuple[str, ...] = ()
    problem: str = "cmab"
    extra: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.kind not in ("shift", "actions", "reward"):
            raise ValueError(f"bad declaration {self.name!r}: unknown kind {self.kind!r}")
        if not isinstance(self.name, str) or not self.name or self.name != self.name.lower():
            raise ValueError(f"bad {self.kind} declaration: name must be lower case, non-empty")
        if self.problem not in PROBLEMS:
            raise ValueError(f"bad {self.kind} declaration {self.name!r}: unknown problem")

    def __hash__(self) -> int:
        return hash((self.kind, self.name))

    def to_dict(self) -> dict[str, Any]:
        """JSON-able description."""
        return {
            "name": self.name,
            "problem": self.problem,
            "doc": self.doc,
            "reference": self.reference,
            "fields": list(self.fields),
            **self.extra,
        }
