"""Which algorithms, constants and repetitions a run uses, checked before anything is built
(:class:`~dashboard.simulation.runner.Simulation` and sweeps share these checks).
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from typing import Any

from ..algorithms.registry import AlgorithmInfo
from . import catalogue
from .fields import check_int
from .specs import ProblemSpec

__all__ = [
    "accepted_kwargs",
    "check_algorithms",
    "check_names",
    "check_params",
    "rep_ids",
    "resolve_info",
]


def accepted_kwargs(cls: type, kwargs: dict[str, Any]) -> dict[str, Any]:
    """Keep only the keyword arguments ``cls.__init__`` accepts."""
    sig = inspect.signature(cls.__init__)
    if any(p.kind is p.VAR_KEYWORD for p in sig.parameters.values()):
        return dict(kwargs)
    return {k: v for k, v in kwargs.items() if k in sig.parameters}


def check_names(algorithms: Any) -> list[str]:
    """A name or a list of 1 to 16 names (strings), else ValueError."""
    if isinstance(algorithms, str):
        algorithms = [algorithms]
    if not isinstance(algorithms, list | tuple):
        raise ValueError(
            f"algorithms must be a name or a list of names, got {type(algorithms).__name__}"
        )
    if not algorithms:
        raise ValueError("choose at least one algorithm")
    if len(algorithms) > 16:
        raise ValueError(f"at most 16 algorithms at once, got {len(algorithms)}")
    bad = [a for a in algorithms if not isinstance(a, str)]
    if bad:
        raise ValueError(f"algorithm names must be strings, got {type(bad[0]).__name__}")
    return list(algorithms)


def resolve_info(name: Any, problem: str) -> AlgorithmInfo:
    """The registry entry of ``name`` (through the catalogue, so plug-ins are loaded)."""
    if not isinstance(name, str):
        raise ValueError(f"algorithm names must be strings, got {name!r}")
    catalogue.declaration(name, problem)  # ValueError naming the allowed algorithms
    from ..algorithms.registry import algorithm_info

    return algorithm_info(name, problem)


def check_params(params: Any, infos: list[AlgorithmInfo]) -> dict[str, dict[str, Any]]:
    """``{algorithm: {constant: value}}`` checked against the declarations: only chosen
    algorithms, only declared constants (never internal arguments such as ``oracle_delay``
    or ``executor``, which the spec supplies), each within its declared bounds."""
    if params is None:
        return {}
    if not isinstance(params, dict):
        raise ValueError(
            "params must be a mapping {algorithm: {constant: value}}, got "
            f"{type(params).__name__}"
        )
    by_name = {i.name.lower(): i for i in infos}
    out: dict[str, dict[str, Any]] = {}
    for key, values in params.items():
        info = by_name.get(str(key).strip().lower())
        if info is None:
            raise ValueError(
                f"parameters given for an algorithm not chosen: {key!r} "
                f"(chosen: {', '.join(i.name for i in infos)})"
            )
        info.declaration.validate(values)
        out[info.name.lower()] = dict(values)
    return out


def rep_ids(reps: Sequence[int] | None, runs: int) -> list[int]:
    """The sorted repetition ids ``reps`` (all of ``0 .. runs-1`` if None), validated."""
    if reps is None:
        return list(range(runs))
    if isinstance(reps, (str, bytes)) or not hasattr(reps, "__iter__"):
        raise ValueError(f"reps must be a list of repetition ids, got {reps!r}")
    given = list(reps)
    ids = sorted({check_int("repetition id", r, 0, runs - 1) for r in given})
    if not ids:
        raise ValueError("reps must name at least one repetition")
    if len(ids) != len(given):
        raise ValueError(f"a repetition id is listed twice: {given}")
    return ids


def check_algorithms(
    spec: ProblemSpec,
    algorithms: Sequence[str],
    params: dict[str, dict[str, Any]] | None = None,
) -> list[AlgorithmInfo]:
    """Resolve ``algorithms`` for ``spec`` and check ``params`` against them (ValueError).

    The checks :class:`Simulation` makes before building anything: known names, none twice,
    each supporting the spec's reward model, parameters only for chosen algorithms and only
    their declared constants within bounds.
    """
    if isinstance(algorithms, str):
        algorithms = [algorithms]
    if not algorithms:
        raise ValueError("choose at least one algorithm")
    infos = [resolve_info(a, spec.problem) for a in algorithms]
    names = [i.name for i in infos]
    if len(set(names)) != len(names):
        raise ValueError(f"an algorithm is listed twice: {', '.join(names)}")
    reward = getattr(spec, "reward", None)
    for info in infos:
        if reward is not None and reward not in info.rewards:
            raise ValueError(
                f"{info.name} does not support the {reward!r} reward model "
                f"(it supports: {', '.join(info.rewards)})"
            )
    check_params(params, infos)
    return infos
