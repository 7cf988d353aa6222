"""Typed, bounded fields: the parsers behind the one problem schema (:mod:`.specs`).

A :class:`Field` describes one setting (a problem field such as ``d`` or a run setting such as
``horizon``): its kind, default, bounds or choices, one-line doc, the problems it belongs to,
its CLI flag and whether the dashboard exposes it.  Two parsers validate values at every
boundary, always raising ``ValueError`` with what is allowed:

* :meth:`Field.check` for Python values (the API): strict types -- a string is not a number,
  ``"no"`` is not a boolean -- and bounds compared *before* any float or int conversion, so a
  400-digit integer is "out of range", never an ``OverflowError``;
* :meth:`Field.parse` for text (CLI flags, URL query values): the text is read exactly
  (``Decimal``) and compared with the bounds before it is converted.

This module is plain Python (no param / panel imports); the dashboard turns fields into param
objects in :mod:`dashboard.ui.model`.
"""

from __future__ import annotations

import math
import numbers
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import Any

__all__ = ["MAX_TEXT", "Field", "check_bool", "check_int"]

#: Longest text accepted for a number (longer text is refused before it is read).
MAX_TEXT = 64

_KINDS = ("int", "float", "choice", "bool", "path", "rows")


def _fmt(x: float | int | None) -> str:
    if x is None:
        return ""
    if isinstance(x, int) or (float(x).is_integer() and abs(x) < 1e15):
        return f"{int(x):,}".replace(",", "_") if abs(x) >= 100_000 else str(int(x))
    return f"{x:g}"


def _shown(value: Any) -> str:
    """A short repr of a user value (never a 400-digit wall of text)."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 10**18:
        return f"a {len(str(abs(value)))}-digit integer"
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def check_int(name: str, value: Any, low: int, high: int | None, where: str = "") -> int:
    """``value`` as an int in ``[low, high]`` (``high=None``: no upper bound), else ValueError.

    Accepts Python / numpy integers and integral finite floats (``1e4``); refuses booleans,
    strings and everything else.  Bounds are compared before any conversion.
    """
    allowed = (
        f"an integer >= {_fmt(low)}"
        if high is None
        else (f"an integer from {_fmt(low)} to {_fmt(high)}")
    )
    allowed += where
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        try:
            import numpy as np

            if isinstance(value, np.bool_) or not isinstance(value, np.number):
                raise TypeError
        except TypeError:
            raise ValueError(f"{name} must be {allowed}, got {_shown(value)}") from None
    if isinstance(value, numbers.Integral):
        v: Any = int(value)
    else:
        try:
            f = float(value)
        except (OverflowError, TypeError, ValueError):
            raise ValueError(f"{name} must be {allowed}, got {_shown(value)}") from None
        if not math.isfinite(f) or not f.is_integer():
            raise ValueError(f"{name} must be {allowed}, got {_shown(value)}")
        v = f
    if v < low or (high is not None and v > high):
        raise ValueError(f"{name} must be {allowed}, got {_shown(value)}")
    return int(v)


def check_bool(name: str, value: Any) -> bool:
    """``True`` or ``False`` exactly (numpy booleans too); ``"no"``, ``1`` or ``None`` refused."""
    if value is True or value is False:
        return bool(value)
    try:
        import numpy as np

        if isinstance(value, np.bool_):
            return bool(value)
    except ImportError:  # pragma: no cover
        pass
    raise ValueError(f"{name} must be True or False, got {_shown(value)}")


@dataclass(frozen=True)
class Field:
    """One setting of the problem schema.

    Attributes
    ----------
    name : str
        The keyword (spec field, ``Config`` parameter, preset and URL key).
    kind : str
        ``int``, ``float``, ``choice``, ``bool``, ``path`` or ``rows`` (a list of 0/1 rows).
    doc : str
        One line: what it is, where the paper defines it.
    problems : tuple of str
        The problems it belongs to (``cmab``, ``semiparametric``).
    default : object or dict
        The default, or ``{problem: default}`` when problems differ.
    low, high : number or None
        Inclusive bounds (``low_open``: ``low`` excluded).  ``bounds`` overrides them per
        problem: ``{problem: (low, high)}``.
    choices : tuple or callable
        Allowed strings (a callable reads them from the algorithm layer's registries lazily).
    hidden : tuple of str
        Choices the API accepts but the CLI and dashboard do not offer (they need data that
        only the API can pass, e.g. ``explicit`` action rows).
    flag : str or None
        The ``simulate`` CLI flag (``None``: API only).
    dashboard : bool
        Whether the dashboard exposes it (a ``Config`` parameter, preset and URL key).
    label : str
        Short human name used in messages (default: ``name``).
    dashboard_default : object
        The dashboard's start value when it must differ from the API's (only ``runs``: three
        repetitions so the first run already shows a band; the API and CLI run one).
    """

    name: str
    kind: str
    doc: str
    problems: tuple[str, ...]
    default: Any = None
    low: float | int | None = None
    high: float | int | None = None
    low_open: bool = False
    bounds: dict[str, tuple[Any, Any]] = field(default_factory=dict)
    choices: tuple[str, ...] | Callable[[], tuple[str, ...]] = ()
    hidden: tuple[str, ...] = ()
    flag: str | None = None
    dashboard: bool = False
    label: str = ""
    dashboard_default: Any = None

    def __post_init__(self) -> None:
        if self.kind not in _KINDS:
            raise ValueError(f"unknown field kind {self.kind!r}")

    # ------------------------------------------------------------------ declared data
    @property
    def title(self) -> str:
        return self.label or self.name

    def default_for(self, problem: str | None = None) -> Any:
        """The default (of ``problem`` when it differs per problem)."""
        if isinstance(self.default, dict):
            if problem in self.default:
                return self.default[problem]
            return self.default[self.problems[0]]
        return self.default

    def bounds_for(self, problem: str | None = None) -> tuple[Any, Any]:
        """``(low, high)`` of ``problem``; without a problem the envelope of all problems."""
        if problem in self.bounds:
            return self.bounds[problem]
        if problem is None and self.bounds:
            lows = [b[0] for b in self.bounds.values()]
            highs = [b[1] for b in self.bounds.values()]
            return min(lows), (None if None in highs else max(highs))
        return self.low, self.high

    def all_choices(self) -> tuple[str, ...]:
        """Every accepted choice (API), hidden ones included."""
        c = self.choices() if callable(self.choices) else self.choices
        return tuple(c)

    def offered_choices(self) -> tuple[str, ...]:
        """The choices the CLI and dashboard offer."""
        return tuple(c for c in self.all_choices() if c not in self.hidden)

    def allowed(self, problem: str | None = None, offered: bool = False) -> str:
        """What is allowed, in words (``from 1 to 500``, ``one of: a, b``)."""
        if self.kind == "choice":
            return "one of: " + ", ".join(self.offered_choices() if offered else self.all_choices())
        if self.kind == "bool":
            return "True or False"
        low, high = self.bounds_for(problem)
        if self.kind == "int":
            return (
                f"an integer >= {_fmt(low)}"
                if high is None
                else (f"an integer from {_fmt(low)} to {_fmt(high)}")
            )
        if self.kind == "float":
            left = f"> {_fmt(low)}" if self.low_open else f">= {_fmt(low)}"
            return f"a number {left} and <= {_fmt(high)}"
        return "a file path" if self.kind == "path" else "a list of 0/1 rows"

    def help(self) -> str:
        """CLI help: the doc, then the default(s) and what is allowed."""
        if isinstance(self.default, dict):
            default = ", ".join(f"{_fmt(v)} ({p})" for p, v in self.default.items())
        else:
            default = str(self.default)
        allowed = self.allowed(offered=True)
        if self.bounds:
            allowed = "; ".join(
                f"{p}: {_fmt(lo)}-{_fmt(hi)}" for p, (lo, hi) in self.bounds.items()
            )
        return f"{self.doc} Default {default}; {allowed}."

    # ------------------------------------------------------------------ parsers
    def check(self, value: Any, problem: str | None = None) -> Any:
        """Validate a Python value (API); returns it normalised or raises ValueError."""
        name = self.title
        where = f" for the {problem} problem" if problem in self.bounds else ""
        if self.kind == "int":
            low, high = self.bounds_for(problem)
            return check_int(name, value, int(low), None if high is None else int(high), where)
        if self.kind == "float":
            return self._check_float(value, problem, where)
        if self.kind == "choice":
            if not isinstance(value, str):
                raise ValueError(
                    f"{name} must be {self.allowed(problem)} (a string), got {_shown(value)}"
                )
            v = value.strip().lower()
            if v not in self.all_choices():
                raise ValueError(
                    f"unknown {name} {_shown(value)}; choose from: " + ", ".join(self.all_choices())
                )
            return v
        if self.kind == "bool":
            return check_bool(name, value)
        if self.kind == "path":
            if value is None:
                return None
            if isinstance(value, str | os.PathLike) and str(value).strip():
                text = str(os.fspath(value))
                if len(text) > 4096 or "\x00" in text:
                    raise ValueError(f"{name} is not a usable file path")
                return text
            raise ValueError(f"{name} must be a file path (a string), got {_shown(value)}")
        # rows: validated by the action family that uses them
        if value is None:
            return None
        if not isinstance(value, list | tuple):
            try:
                import numpy as np

                if isinstance(value, np.ndarray):
                    return value.tolist()
            except ImportError:  # pragma: no cover
                pass
            raise ValueError(f"{name} must be a list of 0/1 rows, got {_shown(value)}")
        return [list(r) if isinstance(r, list | tuple) else r for r in value]

    def _check_float(self, value: Any, problem: str | None, where: str) -> float:
        allowed = self.allowed(problem)
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            ok = False
            try:
                import numpy as np

                ok = isinstance(value, np.floating | np.integer)
            except ImportError:  # pragma: no cover
                pass
            if not ok:
                raise ValueError(f"{self.title} must be {allowed}{where}, got {_shown(value)}")
        try:
            v = float(value)
        except (OverflowError, ValueError, TypeError):
            v = math.inf
        low, high = self.bounds_for(problem)
        bad_low = low is not None and (v <= low if self.low_open else v < low)
        bad_high = high is not None and v > high
        if not math.isfinite(v) or bad_low or bad_high:
            raise ValueError(f"{self.title} must be {allowed}{where}, got {_shown(value)}")
        return v

    def parse(self, text: Any, problem: str | None = None) -> Any:
        """Validate text (a CLI flag or URL value); bounds are checked on the exact decimal
        value before any conversion.  Returns the typed value or raises ValueError."""
        if not isinstance(text, str):
            return self.check(text, problem)
        raw = text.strip()
        if self.kind in ("int", "float"):
            if len(raw) > MAX_TEXT:
                raise ValueError(
                    f"{self.title} must be {self.allowed(problem)}, got a {len(raw)}-character "
                    "value"
                )
            try:
                dec = Decimal(raw)
            except InvalidOperation:
                raise ValueError(
                    f"{self.title} must be {self.allowed(problem)}, got {_shown(text)}"
                ) from None
            if not dec.is_finite():
                raise ValueError(f"{self.title} must be {self.allowed(problem)}, got {raw}")
            low, high = self.bounds_for(problem)
            if (low is not None and dec < Decimal(str(low))) or (
                high is not None and dec > Decimal(str(high))
            ):
                where = f" for the {problem} problem" if problem in self.bounds else ""
                shown = raw if len(raw) <= 20 else f"{raw[:12]}... ({len(raw)} characters)"
                raise ValueError(
                    f"{self.title} must be {self.allowed(problem)}{where}, got {shown}"
                )
            if self.kind == "int":
                if dec != dec.to_integral_value():
                    raise ValueError(
                        f"{self.title} must be {self.allowed(problem)}, got {_shown(text)}"
                    )
                return self.check(int(dec), problem)
            return self.check(float(dec), problem)
        if self.kind == "bool":
            low = raw.lower()
            if low in ("true", "1", "yes", "on"):
                return True
            if low in ("false", "0", "no", "off"):
                return False
            raise ValueError(f"{self.title} must be true or false, got {_shown(text)}")
        if self.kind == "choice":
            v = raw.lower()
            if v not in self.offered_choices():
                raise ValueError(
                    f"unknown {self.title} {_shown(text)}; choose from: "
                    + ", ".join(self.offered_choices())
                )
            return v
        return self.check(raw, problem)
