"""The algorithm registry, built from the policy classes' declarations.

The CLI, the simulation layer and (through :mod:`dashboard.simulation.catalogue`) the dashboard
resolve user-facing names here, so a name means the same thing everywhere.  Names are matched
case-insensitively.  Everything an entry says (name, problem, reference, rewards, per-round,
constants) is read from the class's ``declaration``
(:class:`~dashboard.algorithms.declare.AlgorithmDeclaration`); :data:`BUILTIN` only lists which
classes ship with the package (adding an algorithm is one file plus one line here).

Two engines per algorithm.  The registered class is the *textbook* engine: one repetition,
round by round, in the paper's names (the file a student is pointed to,
:attr:`AlgorithmInfo.textbook_file`).  A *fast* engine (:data:`FAST`: ``R`` repetitions at once,
lock-step arrays, certified arg-maxima, caches) names the algorithm it speeds up in its
``speeds_up`` attribute; the registry links the two (the declaration's ``batched``), and
``tests/unit/test_textbook_equals_fast.py`` proves they give the same numbers.  A fast engine
may name its one-repetition policy (``one_repetition``), which the runner then uses for a
single repetition too.

Plug-ins (your own policies) join with :func:`register_algorithm`, which validates the class
against the public contract (:func:`check_policy_class`) first.
"""

from __future__ import annotations

import importlib
import inspect
import warnings
import weakref
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from .base import Policy
from .declare import RESERVED, AlgorithmDeclaration

__all__ = [
    "ALGORITHMS",
    "BUILTIN",
    "FAST",
    "AlgorithmInfo",
    "algorithm_info",
    "algorithms_for",
    "check_policy_class",
    "link_fast_engine",
    "load",
    "on_change",
    "register_algorithm",
    "unregister_algorithm",
]

_PKG = "dashboard.algorithms"

#: The policy classes shipped with the package, as ``"module:Class"`` under this package.
BUILTIN: tuple[str, ...] = (
    # --- combinatorial semi-bandits (oracle-efficient paper) ---
    "cmab.textbook.cucb:CUCB",
    "cmab.policies.aroq:AROQ",
    "cmab.policies.aroq:AlphaAROQ",
    "cmab.policies.sroq:SROQ",
    "cmab.textbook.aroq_c:AROQC",
    "cmab.textbook.sroq_c:SROQC",
    "cmab.textbook.ols_ucb_c:OLSUCBC",
    "cmab.textbook.aroq_gr:AROQGR",
    "cmab.textbook.sroq_gr:SROQGR",
    "cmab.textbook.sdcb:SDCB",
    "cmab.textbook.disc_aroq_gr:DiscretizedAROQGR",
    "cmab.textbook.disc_sroq_gr:DiscretizedSROQGR",
    # --- semiparametric bandits (experimental-design paper) ---
    "semiparametric.policies.sbe:SBE",
    "semiparametric.textbook.bose:BOSE",
    "semiparametric.textbook.spts:SemiparametricTS",
    "semiparametric.textbook.linucb:LinUCB",
    "semiparametric.textbook.g_elimination:GElimination",
)

#: The fast engines shipped with the package, as ``"module:Class"``; each class's
#: ``speeds_up`` names the textbook algorithm whose numbers it reproduces.
FAST: tuple[str, ...] = (
    "cmab.policies.cucb:BatchedCUCB",
    "cmab.policies.covariance:BatchedAROQC",
    "cmab.policies.covariance:BatchedSROQC",
    "cmab.policies.batched:BatchedOLSUCBC",
    "cmab.policies.batched:BatchedSDCB",
    "cmab.policies.general:BatchedAROQGR",
    "cmab.policies.general:BatchedSROQGR",
    "cmab.policies.general:BatchedDiscretizedAROQGR",
    "cmab.policies.general:BatchedDiscretizedSROQGR",
    "semiparametric.policies.bose:BatchedBOSE",
    "semiparametric.policies.spts:BatchedSemiparametricTS",
    "semiparametric.policies.linear_foils:BatchedLinUCB",
)

_ROOT = Path(__file__).resolve().parents[1]  # the dashboard package


@dataclass(frozen=True)
class AlgorithmInfo:
    """A registered algorithm: its class and (read from it) its declaration.

    ``paper`` is the declaration's ``reference`` (kept under its historical name: result JSON
    reports it as ``"paper"``).  ``plugin`` marks classes registered at run time.
    """

    cls: type
    plugin: bool = False

    @property
    def declaration(self) -> AlgorithmDeclaration:
        return self.cls.declaration

    @property
    def name(self) -> str:
        return self.declaration.name

    @property
    def problem(self) -> str:
        return self.declaration.problem

    @property
    def paper(self) -> str:
        return self.declaration.reference

    @property
    def rewards(self) -> tuple[str, ...]:
        return self.declaration.rewards

    @property
    def per_round(self) -> bool:
        return self.declaration.per_round

    @property
    def target(self) -> str:
        return f"{self.cls.__module__}:{self.cls.__qualname__}"

    @property
    def textbook(self) -> type:
        """The textbook engine: the registered class (one repetition, round by round)."""
        return self.cls

    @property
    def textbook_file(self) -> str:
        """The textbook engine's source file: its path inside the ``dashboard`` package
        (``algorithms/cmab/textbook/cucb.py``), or the full path of a plug-in's file."""
        path = Path(inspect.getsourcefile(self.cls) or "").resolve()
        try:
            return path.relative_to(_ROOT).as_posix()
        except ValueError:
            return str(path)

    @property
    def fast(self) -> type | None:
        """The fast engine (``R`` repetitions at once, the same numbers), or ``None``."""
        return self.declaration.batched

    @property
    def fast_target(self) -> str | None:
        """``"module:Class"`` of :attr:`fast` (``None`` without one)."""
        fast = self.fast
        return None if fast is None else f"{fast.__module__}:{fast.__qualname__}"

    def load(self) -> type:
        """The policy class."""
        return self.cls


def load(target: str) -> Any:
    """Import ``"module:attr"`` relative to :mod:`dashboard.algorithms`."""
    module, attr = target.split(":")
    return getattr(importlib.import_module(f"{_PKG}.{module}"), attr)


def _reward_names() -> tuple[str, ...]:
    from .cmab.rewards import reward_names

    return reward_names()


def check_policy_class(cls: Any) -> str | None:
    """Why ``cls`` does not honour the public policy contract (``None`` if it does).

    The contract (docs/PLUGINS.md): a subclass of :class:`~dashboard.algorithms.base.Policy`
    implementing ``reset`` and ``advance``, with a well-formed ``declaration`` of its own whose
    constants are keywords of ``__init__`` with the same defaults (every other ``__init__``
    parameter has a default), and whose declared rewards exist.
    """
    if not inspect.isclass(cls) or not issubclass(cls, Policy):
        return f"{cls!r} is not a subclass of dashboard.algorithms.base.Policy"
    label = cls.__qualname__
    decl = cls.__dict__.get("declaration")
    if not isinstance(decl, AlgorithmDeclaration):
        return f"{label} has no declaration of its own (declaration = AlgorithmDeclaration(...))"
    missing = sorted(getattr(cls, "__abstractmethods__", ()))
    if missing:
        return f"{label} does not implement {', '.join(missing)}"
    bad = sorted(set(decl.rewards) - set(_reward_names()))
    if bad:
        return f"{label} declares unknown reward models {', '.join(bad)}"
    try:
        sig = inspect.signature(cls.__init__).parameters
    except (TypeError, ValueError):
        return f"{label}.__init__ has no readable signature"
    for c in decl.constants:
        p = sig.get(c.name)
        if p is None or p.kind not in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY):
            return f"{label} declares constant {c.name!r} that __init__ does not accept"
        if p.default is p.empty or p.default != c.default:
            return (
                f"{label} declares {c.name}={c.default!r} but __init__ has "
                f"{c.name}={'<no default>' if p.default is p.empty else repr(p.default)}"
            )
    declared = {c.name for c in decl.constants} | set(RESERVED[decl.problem]) | {"self"}
    for name, p in sig.items():
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) or name in declared:
            continue
        if p.default is p.empty:
            return f"{label}.__init__ needs {name!r}, which is neither declared nor defaulted"
    return None


#: name (lower case) -> entry, in registration order.
ALGORITHMS: dict[str, AlgorithmInfo] = {}

#: Weak references to the callbacks of :func:`on_change`.
_LISTENERS: list[weakref.ref] = []


def on_change(callback: Callable[[], None]) -> None:
    """Call ``callback()`` after each registration or removal of an algorithm (a dashboard
    offers a plug-in registered while it is shown).  Held weakly: the callback of an object
    that is gone is dropped."""
    ref = weakref.WeakMethod(callback) if inspect.ismethod(callback) else weakref.ref(callback)
    _LISTENERS[:] = [r for r in _LISTENERS if r() is not None] + [ref]


def _changed() -> None:
    for ref in list(_LISTENERS):
        callback = ref()
        if callback is None:
            continue
        try:
            callback()
        except Exception as exc:  # a listener's failure never undoes a registration
            warnings.warn(f"algorithm registry listener failed: {exc}", stacklevel=3)


def register_algorithm(cls: Any, *, replace: bool = False, plugin: bool = True) -> AlgorithmInfo:
    """Register a policy class under its declared name.

    Raises
    ------
    ValueError
        One sentence if the class breaks the contract (:func:`check_policy_class`) or its name
        is taken (``replace=True`` replaces a plug-in of the same name, never a built-in).
    """
    why = check_policy_class(cls)
    if why is not None:
        raise ValueError(f"invalid algorithm: {why}")
    key = cls.declaration.key
    old = ALGORITHMS.get(key)
    if old is not None and old.cls is not cls:
        if not (replace and old.plugin):
            raise ValueError(
                f"an algorithm named {old.name!r} is already registered ({old.target})"
            )
    info = AlgorithmInfo(cls, plugin=plugin)
    ALGORITHMS[key] = info
    if plugin:
        _changed()
    return info


def unregister_algorithm(name: str) -> None:
    """Remove a plug-in (built-ins stay); unknown names are ignored."""
    info = ALGORITHMS.get(str(name).strip().lower())
    if info is not None and info.plugin:
        del ALGORITHMS[info.declaration.key]
        _changed()


def link_fast_engine(engine: type) -> AlgorithmInfo:
    """Record ``engine`` as the fast engine of the registered algorithm its ``speeds_up``
    names (the declaration's ``batched``); ValueError if there is no such algorithm or it
    already has another one."""
    name = getattr(engine, "speeds_up", None)
    info = ALGORITHMS.get(str(name).strip().lower())
    if not isinstance(name, str) or info is None:
        raise ValueError(f"{engine.__qualname__}.speeds_up names no registered algorithm: {name!r}")
    decl = info.declaration
    if decl.batched is not None and decl.batched is not engine:
        raise ValueError(f"{info.name} already has the fast engine {decl.batched.__qualname__}")
    if decl.batched is None:
        linked = replace(decl, batched=engine)
        info.cls.declaration = linked
        one = getattr(engine, "one_repetition", None)
        if one is not None and one.__dict__.get("declaration") is decl:
            one.declaration = linked  # a one-repetition policy declared as the textbook class
    return info


for _target in BUILTIN:
    register_algorithm(load(_target), plugin=False)
for _target in FAST:
    link_fast_engine(load(_target))


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
