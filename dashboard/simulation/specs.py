"""Problem specifications: plain, validated descriptions of an instance to simulate.

A spec knows how to build the instance once from a seed (shared by every algorithm and
repetition) and a fresh environment for each (algorithm, repetition) run.  The dashboard's param
model, the CLI and notebooks all describe problems with these two classes, so the same settings
give the same numbers everywhere.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any, ClassVar

from ..algorithms.base import validate_int

__all__ = ["CMABSpec", "ProblemSpec", "SemiparametricSpec", "make_spec"]


def _check_float(name: str, value: Any, low: float, high: float) -> float:
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number, got {value!r}") from None
    if not math.isfinite(v) or v < low or v > high:
        raise ValueError(f"{name} must be between {low:g} and {high:g}, got {value!r}")
    return v


def _check_choice(name: str, value: Any, allowed: tuple[str, ...]) -> str:
    v = str(value).strip().lower()
    if v not in allowed:
        raise ValueError(f"unknown {name} {value!r}; choose from: {', '.join(allowed)}")
    return v


def _registered(kind: str) -> tuple[str, ...]:
    """Registered names of a component kind (built-ins and plug-ins; see the catalogue)."""
    from .catalogue import component_names

    return component_names(kind)


@dataclass
class ProblemSpec:
    """Common base of the two problem specs."""

    problem: ClassVar[str] = ""

    def validate(self) -> None:  # pragma: no cover - overridden
        """Raise ValueError if the spec is invalid."""

    def to_dict(self) -> dict[str, Any]:
        """JSON-able description, including ``problem``."""
        return {"problem": self.problem, **asdict(self)}


@dataclass
class CMABSpec(ProblemSpec):
    """A combinatorial semi-bandit instance (oracle-efficient paper, Section 2).

    Parameters
    ----------
    d, m : number of base arms and maximum action size.
    actions : ``m-sets``, ``paths``, ``matchings`` (or ``explicit`` with ``explicit_actions``).
    reward : ``linear`` (Section 6), ``covariance`` (A.11.1), ``general`` (A.11.2),
        ``continuous`` (Algorithm 8).
    oracle_delay : extra seconds per oracle call (simulated solver cost).
    executor : ``none``, ``threads`` or ``processes``: how the parallel batches of scheduled
        algorithms run (see :func:`~dashboard.algorithms.cmab.oracle.make_executor`).
    workers : threads for the executor.
    alpha : approximation factor reported by alpha-AROQ-CMAB's alpha-regret.
    """

    problem: ClassVar[str] = "cmab"
    ACTIONS: ClassVar[tuple[str, ...]] = ("m-sets", "paths", "matchings", "explicit")
    REWARDS: ClassVar[tuple[str, ...]] = ("linear", "covariance", "general", "continuous")

    d: int = 20
    m: int = 3
    actions: str = "m-sets"
    reward: str = "linear"
    oracle_delay: float = 0.0
    executor: str = "none"
    workers: int = 4
    alpha: float = 1.0
    explicit_actions: list[list[int]] | None = field(default=None, repr=False)

    def validate(self) -> None:
        if str(self.actions).strip().lower() == "explicit" and self.explicit_actions:
            from ..algorithms.cmab.actions import ExplicitActions

            fam = ExplicitActions(self.explicit_actions)  # validates the rows
            self.d, self.m = fam.d, fam.m
        self.d = validate_int("d", self.d, 1, 500)
        self.m = validate_int("m", self.m, 1)
        if self.m > self.d:
            raise ValueError(f"m must be at most d (got m={self.m} > d={self.d})")
        self.actions = _check_choice("action family", self.actions, _registered("actions"))
        self.reward = _check_choice("reward model", self.reward, _registered("reward"))
        self.oracle_delay = _check_float("oracle_delay", self.oracle_delay, 0.0, 10.0)
        self.executor = _check_choice("executor", self.executor, ("none", "threads", "processes"))
        self.workers = validate_int("workers", self.workers, 1, 64)
        from ..algorithms.cmab.approx import validate_alpha

        self.alpha = validate_alpha(self.alpha)  # (0, 1]: the one check (issue 11)
        if self.actions == "explicit" and not self.explicit_actions:
            raise ValueError("the explicit action family needs a non-empty list of actions")

    def build(self, seed: int) -> tuple[Any, Any]:
        """Build ``(family, reward_model)`` for this seed (shared by all runs)."""
        from ..algorithms.cmab.actions import make_family
        from ..algorithms.cmab.rewards import make_reward

        self.validate()
        family = make_family(self.actions, self.d, self.m, seed=seed, actions=self.explicit_actions)
        model = make_reward(self.reward, family.d, seed=seed)
        return family, model

    def environment(self, built: tuple[Any, Any], seed: int, rep: int) -> Any:
        """A fresh environment for one (algorithm, repetition) run."""
        family, model = built
        return model.environment(family, rep)


@dataclass
class SemiparametricSpec(ProblemSpec):
    """A semiparametric linear bandit instance (experimental-design paper, Section 2).

    Parameters
    ----------
    d, K : feature dimension and number of arms.
    instance : ``gap`` (features with suboptimality gap ``gap``, Appendix I), ``random``
        (random unit features), ``multi-armed`` (standard basis, d = K), ``csv``.
    shift, magnitude : the shift nu_t (``none``, ``sine``, ``log``, ``random``,
        ``adversarial``) and its scale.
    gap : prescribed suboptimality gap Delta* for ``instance="gap"``.
    noise : standard deviation sigma of the Gaussian noise eta_t.
    features_path : CSV file (K rows, d columns) for ``instance="csv"``.
    rescale : rescale CSV features / theta to norm <= 1 instead of rejecting them.
    """

    problem: ClassVar[str] = "semiparametric"
    INSTANCES: ClassVar[tuple[str, ...]] = ("gap", "random", "multi-armed", "csv")
    SHIFTS: ClassVar[tuple[str, ...]] = ("none", "sine", "log", "random", "adversarial")

    d: int = 5
    K: int = 10
    instance: str = "gap"
    shift: str = "none"
    magnitude: float = 1.0
    gap: float = 0.5
    noise: float = 1.0
    features_path: str | None = None
    rescale: bool = False

    def validate(self) -> None:
        self.d = validate_int("d", self.d, 1, 200)
        self.K = validate_int("K", self.K, 2, 2000)
        self.instance = _check_choice("instance", self.instance, self.INSTANCES)
        self.shift = _check_choice("shift", self.shift, _registered("shift"))
        self.magnitude = _check_float("magnitude", self.magnitude, 0.0, 100.0)
        self.gap = _check_float("gap", self.gap, 0.0, 2.0)
        self.noise = _check_float("noise", self.noise, 0.0, 100.0)
        if self.instance == "csv" and not self.features_path:
            raise ValueError("instance 'csv' needs a features file (features_path)")

    def build(self, seed: int) -> tuple[Any, Any]:
        """Build ``(instance, shift)`` for this seed (shared by all runs)."""
        from ..algorithms.semiparametric.instances import make_instance
        from ..algorithms.semiparametric.shifts import make_shift

        self.validate()
        inst = make_instance(
            self.instance,
            d=self.d,
            K=self.K,
            gap=self.gap,
            seed=seed,
            features=self.features_path,
            rescale=self.rescale,
        )
        shift = make_shift(self.shift, magnitude=self.magnitude, seed=seed)
        return inst, shift

    def environment(self, built: tuple[Any, Any], seed: int, rep: int) -> Any:
        """A fresh environment for one (algorithm, repetition) run."""
        from ..algorithms.semiparametric.environment import SemiparametricEnvironment

        inst, shift = built
        return SemiparametricEnvironment(inst, shift, noise_sigma=self.noise, seed=seed, rep=rep)


def make_spec(problem: str, **kwargs: Any) -> ProblemSpec:
    """Build and validate a spec from keyword arguments (unknown keys are an error)."""
    p = _check_choice("problem", problem, ("cmab", "semiparametric"))
    cls = CMABSpec if p == "cmab" else SemiparametricSpec
    fields = set(cls.__dataclass_fields__)
    unknown = sorted(set(kwargs) - fields)
    if unknown:
        raise ValueError(
            f"unknown {p} setting(s): {', '.join(unknown)}; allowed: {', '.join(sorted(fields))}"
        )
    spec = cls(**kwargs)
    spec.validate()
    return spec
