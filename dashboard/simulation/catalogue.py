"""The catalogue: what can be simulated, read from the declarations (the UI's only door to
:mod:`dashboard.algorithms`).

The dashboard (``dashboard/ui``) never imports the algorithms layer; it asks here for the
algorithms of a problem and reward model, their declared constants, and the registered
shifts, action families and reward models.  Installed plug-ins (the ``bandit_dashboard.*``
entry-point groups, see docs/PLUGINS.md) are loaded on the first question, so a plug-in
package is visible everywhere without an import by hand.

Nothing here imports code named by a user: names are only looked up in the registries, which
hold what the process registered itself.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..algorithms import registry
from ..algorithms.declare import AlgorithmDeclaration, ComponentDeclaration, Constant

__all__ = [
    "AlgorithmDeclaration",
    "ComponentDeclaration",
    "Constant",
    "algorithm_names",
    "check_constants",
    "check_family",
    "component_names",
    "components",
    "constants",
    "constants_problems",
    "declaration",
    "declarations",
    "describe",
    "on_change",
    "uses_alpha",
]

_KINDS = ("shift", "actions", "reward")


def _ready() -> None:
    from .. import plugins

    plugins.load_entry_points()


def declarations(
    problem: str | None = None, reward: str | None = None
) -> list[AlgorithmDeclaration]:
    """Declarations of the registered algorithms of ``problem`` (all if None), optionally only
    those supporting the CMAB ``reward`` model, in registration order."""
    _ready()
    return [i.declaration for i in registry.algorithms_for(problem, reward)]


def algorithm_names(problem: str | None = None, reward: str | None = None) -> list[str]:
    """Names of the registered algorithms (see :func:`declarations`)."""
    return [d.name for d in declarations(problem, reward)]


def on_change(callback: Any) -> None:
    """Call ``callback()`` after each plug-in algorithm registered or removed in this process
    (held weakly; see :func:`dashboard.algorithms.registry.on_change`)."""
    registry.on_change(callback)


def declaration(name: str, problem: str | None = None) -> AlgorithmDeclaration:
    """The declaration of algorithm ``name`` (case-insensitive); ValueError lists the names."""
    _ready()
    return registry.algorithm_info(name, problem).declaration


def constants(name: str) -> tuple[Constant, ...]:
    """The declared constants of algorithm ``name`` (empty for an unknown name)."""
    try:
        return declaration(name).constants
    except ValueError:
        return ()


def uses_alpha(name: str) -> bool:
    """Whether algorithm ``name`` plays with an alpha-approximate oracle, i.e. takes the
    problem's ``alpha`` (the runner passes it to such policies) and so reports an
    alpha-regret (Theorem 7; alpha-AROQ-CMAB).  False for an unknown name."""
    import inspect

    _ready()
    try:
        cls = registry.algorithm_info(name).load()
    except ValueError:
        return False
    return "alpha" in inspect.signature(cls.__init__).parameters


def check_constants(name: str, values: Any) -> dict[str, Any]:
    """Validate user constants of algorithm ``name``; ValueError names the constant and what
    is allowed (unknown names, internal arguments such as ``oracle_delay``, kinds, bounds).

    The declaration decides; the class is then built once (no reset, cheap) so a rule that
    links several constants inside a constructor also reports as a ValueError."""
    decl = declaration(name)
    checked = decl.validate(values)
    try:
        registry.algorithm_info(decl.name).cls(**values)
    except ValueError as exc:
        raise ValueError(f"{decl.name}: {exc}") from None
    except Exception as exc:  # a plug-in constructor failing otherwise: still one sentence
        raise ValueError(f"{decl.name} cannot be built with {values}: {exc}") from None
    return checked


def constants_problems(constants: Any, algorithms: Sequence[Any]) -> list[str]:
    """One sentence per problem of ``{algorithm: {constant: value}}`` for the ``algorithms``
    chosen (lesson presets): a mapping of mappings, only chosen algorithms, only declared
    constants within their bounds."""
    if not isinstance(constants, dict):
        return ["'constants' must be a mapping {algorithm: {constant: value}}"]
    chosen = {str(a).strip().lower() for a in algorithms}
    problems = []
    for name, values in constants.items():
        if str(name).strip().lower() not in chosen:
            problems.append(f"'constants' names {name!r}, which is not among the algorithms")
            continue
        try:
            declaration(name).validate(values)
        except ValueError as exc:
            problems.append(str(exc))
    return problems


def _registry(kind: str) -> Any:
    if kind == "shift":
        from ..algorithms.semiparametric.shifts import SHIFTS

        return SHIFTS
    if kind == "actions":
        from ..algorithms.cmab.actions import FAMILY_REGISTRY

        return FAMILY_REGISTRY
    if kind == "reward":
        from ..algorithms.cmab.rewards import REWARD_MODELS

        return REWARD_MODELS
    raise ValueError(f"unknown component kind {kind!r}; choose from: {', '.join(_KINDS)}")


def component_names(kind: str, plugins_only: bool = False) -> tuple[str, ...]:
    """Registered names of ``kind`` (``"shift"``, ``"actions"``, ``"reward"``); only those
    registered by plug-ins with ``plugins_only``."""
    _ready()
    return _registry(kind).names(plugins_only)


def components(kind: str) -> list[ComponentDeclaration]:
    """Declarations of the registered components of ``kind``."""
    _ready()
    return _registry(kind).declarations()


def check_family(actions: str, d: int, m: int) -> None:
    """Build the action family once to let structured families (paths, matchings) refuse
    impossible ``(d, m)`` with their own ValueError."""
    from ..algorithms.cmab.actions import make_family

    make_family(actions, d, m, seed=0)


def describe(problem: str | None = None) -> dict[str, Any]:
    """Everything registered, JSON-able (the ``algorithms`` CLI command)."""
    _ready()
    out: dict[str, Any] = {
        "algorithms": [
            # the textbook engine's file (inside the package) and the fast engine, or null
            {**i.declaration.to_dict(), "textbook": i.textbook_file, "fast": i.fast_target}
            for i in registry.algorithms_for(problem)
        ]
    }
    for key, kind in (("shifts", "shift"), ("actions", "actions"), ("rewards", "reward")):
        out[key] = [
            c.to_dict() for c in components(kind) if problem is None or c.problem == problem
        ]
    return out
