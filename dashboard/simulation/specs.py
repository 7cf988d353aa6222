"""The one problem schema, and the specs built from it.

:data:`FIELDS` declares every problem field (and the run settings ``horizon``, ``runs``,
``seed``) once: kind, default, bounds or choices, doc, the problem(s) it belongs to, its CLI
flag and whether the dashboard shows it.  Everything else is generated from it: the spec
dataclasses' defaults and validation (below), the dashboard's ``Config`` parameters and
``PRESET_KEYS`` (:mod:`dashboard.ui.model`), the lesson preset checks
(:mod:`dashboard.ui.lessons`) and the ``simulate`` CLI flags with their help
(:mod:`dashboard.cli`).  Choice lists (action families, reward models, shifts, instance kinds)
are read from the algorithm layer's registries in one place, :func:`_registry_choices`.

A spec knows how to build the instance once from a seed (shared by every algorithm and
repetition) and a fresh environment for each (algorithm, repetition) run, so the same
settings give the same numbers in the dashboard, the CLI and notebooks.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, ClassVar

from .fields import Field

__all__ = [
    "FIELDS",
    "MAX_HORIZON",
    "MAX_RUNS",
    "MAX_SEED",
    "PROBLEMS",
    "RUN_FIELDS",
    "CMABSpec",
    "ProblemSpec",
    "SemiparametricSpec",
    "fields_for",
    "make_spec",
]

#: The two problems (one per paper).
PROBLEMS: tuple[str, ...] = ("cmab", "semiparametric")
#: Largest horizon T accepted anywhere.
MAX_HORIZON = 10_000_000
#: Largest number of repetitions R.
MAX_RUNS = 256
#: Largest seed: 2**53 - 1, exact in a browser (the dashboard and its URLs) and in JSON.
MAX_SEED = 2**53 - 1
#: Largest extra seconds per simulated oracle call (larger values only make runs sleep).
MAX_ORACLE_DELAY = 1.0

_BOTH = PROBLEMS
_CMAB = ("cmab",)
_SP = ("semiparametric",)


def _registry_choices(kind: str) -> tuple[str, ...]:
    """Choice lists read from the algorithm layer's registries, through the catalogue (so
    plug-in shifts, action families and reward models count): the single place."""
    if kind in ("actions", "reward", "shift"):
        from .catalogue import component_names

        return tuple(component_names(kind))
    if kind == "instance":
        from ..algorithms.semiparametric.instances import INSTANCE_KINDS

        # the order users see: the paper's construction first
        return tuple(sorted(INSTANCE_KINDS, key=lambda k: (k != "gap", k)))
    if kind == "executor":
        return ("none", "threads", "processes")
    raise KeyError(kind)


def _choices(kind: str) -> Any:
    return lambda: _registry_choices(kind)


_FIELD_LIST: tuple[Field, ...] = (
    # ------------------------------------------------------------------ run settings
    Field(
        "horizon",
        "int",
        "Horizon T (number of rounds).",
        _BOTH,
        10_000,
        1,
        MAX_HORIZON,
        flag="--horizon",
        dashboard=True,
        label="horizon T",
    ),
    Field(
        "runs",
        "int",
        "Repetitions R (noise streams (seed, r), r < R).",
        _BOTH,
        1,
        1,
        MAX_RUNS,
        flag="--runs",
        dashboard=True,
        dashboard_default=3,
    ),
    Field(
        "seed",
        "int",
        "Seed (same seed, same numbers).",
        _BOTH,
        0,
        0,
        MAX_SEED,
        flag="--seed",
        dashboard=True,
    ),
    # ------------------------------------------------------------------ shared
    Field(
        "d",
        "int",
        "Base arms d (cmab) or feature dimension d (semiparametric).",
        _BOTH,
        {"cmab": 20, "semiparametric": 5},
        bounds={"cmab": (1, 500), "semiparametric": (1, 200)},
        flag="--d",
        dashboard=True,
    ),
    # ------------------------------------------------------------------ cmab
    Field(
        "m",
        "int",
        "Maximum action size m (cmab), m <= d.",
        _CMAB,
        3,
        1,
        500,
        flag="--m",
        dashboard=True,
    ),
    Field(
        "actions",
        "choice",
        "Action family (cmab).",
        _CMAB,
        "m-sets",
        choices=_choices("actions"),
        hidden=("explicit",),
        flag="--actions",
        dashboard=True,
        label="action family",
    ),
    Field(
        "reward",
        "choice",
        "Reward model (cmab): linear (Section 6), covariance (A.11.1), "
        "general (A.11.2), continuous (Algorithm 8).",
        _CMAB,
        "linear",
        choices=_choices("reward"),
        flag="--reward",
        dashboard=True,
        label="reward model",
    ),
    Field(
        "oracle_delay",
        "float",
        "Oracle cost: extra seconds per oracle call (cmab).",
        _CMAB,
        0.0,
        0.0,
        MAX_ORACLE_DELAY,
        flag="--oracle-delay",
        dashboard=True,
    ),
    Field(
        "alpha",
        "float",
        "Approximation factor alpha in (0, 1] of alpha-AROQ-CMAB's oracle; its alpha-regret "
        "(final_alpha_regret_mean) is alpha T r(a*) - sum_t r(a_t) (Theorem 7).",
        _CMAB,
        1.0,
        0.0,
        1.0,
        low_open=True,  # alpha = 0 promises nothing (approx.validate_alpha, the same range)
        flag="--alpha",
        dashboard=True,
    ),
    Field(
        "executor",
        "choice",
        "How the parallel oracle batches of scheduled algorithms run.",
        _CMAB,
        "none",
        choices=_choices("executor"),
        flag="--executor",
    ),
    Field("workers", "int", "Threads of the executor.", _CMAB, 4, 1, 64),
    Field(
        "explicit_actions",
        "rows",
        "Rows of the explicit action family (API only).",
        _CMAB,
        None,
        label="explicit_actions",
    ),
    # ------------------------------------------------------------------ semiparametric
    Field(
        "K",
        "int",
        "Number of arms K (semiparametric).",
        _SP,
        10,
        2,
        2000,
        flag="--K",
        dashboard=True,
    ),
    Field(
        "instance",
        "choice",
        "Features: gap (Appendix I), random, multi-armed (d = K), csv (--features).",
        _SP,
        "gap",
        choices=_choices("instance"),
        flag="--instance",
    ),
    Field(
        "shift",
        "choice",
        "Shift nu_t (semiparametric); sine and log are Appendix I's.",
        _SP,
        "none",
        choices=_choices("shift"),
        flag="--shift",
        dashboard=True,
    ),
    Field(
        "magnitude",
        "float",
        "Scale of the shift nu_t.",
        _SP,
        1.0,
        0.0,
        100.0,
        flag="--magnitude",
        dashboard=True,
    ),
    Field(
        "gap",
        "float",
        "Suboptimality gap Delta* of the gap instance.",
        _SP,
        0.5,
        0.0,
        2.0,
        low_open=True,
        flag="--gap",
        dashboard=True,
    ),
    Field(
        "noise",
        "float",
        "Noise level sigma of eta_t.",
        _SP,
        1.0,
        0.0,
        100.0,
        flag="--noise",
        dashboard=True,
    ),
    Field(
        "features_path",
        "path",
        "CSV of arm features, K rows x d columns.",
        _SP,
        None,
        flag="--features",
    ),
    Field(
        "rescale",
        "bool",
        "Rescale CSV features / theta to norm <= 1 instead of refusing.",
        _SP,
        False,
        flag="--rescale",
    ),
)

#: Every field by name (problem fields and run settings).
FIELDS: dict[str, Field] = {f.name: f for f in _FIELD_LIST}
#: The run settings (not part of a spec).
RUN_FIELDS: tuple[str, ...] = ("horizon", "runs", "seed")


def fields_for(problem: str | None, dashboard: bool | None = None) -> list[Field]:
    """The problem fields of ``problem`` (``None``: of any problem), optionally only those the
    dashboard shows (``dashboard=True``); run settings excluded."""
    return [
        f
        for f in _FIELD_LIST
        if f.name not in RUN_FIELDS
        and (problem is None or problem in f.problems)
        and (dashboard is None or f.dashboard == dashboard)
    ]


def _check_problem(problem: Any) -> str:
    if not isinstance(problem, str) or problem.strip().lower() not in PROBLEMS:
        shown = (
            problem if isinstance(problem, str) and len(problem) < 40 else type(problem).__name__
        )
        raise ValueError(f"unknown problem {shown!r}; choose from: {', '.join(PROBLEMS)}")
    return problem.strip().lower()


def _default(name: str, problem: str) -> Any:
    return FIELDS[name].default_for(problem)


@dataclass
class ProblemSpec:
    """Common base of the two problem specs: validation walks the schema's fields."""

    problem: ClassVar[str] = ""

    def _validate_fields(self) -> None:
        for f in fields_for(self.problem):
            setattr(self, f.name, f.check(getattr(self, f.name), self.problem))

    def validate(self) -> None:
        """Raise ValueError if the spec is invalid (types and bounds of every field first)."""
        self._validate_fields()

    def to_dict(self) -> dict[str, Any]:
        """JSON-able description, including ``problem``."""
        return {"problem": self.problem, **asdict(self)}


@dataclass
class CMABSpec(ProblemSpec):
    """A combinatorial semi-bandit instance (oracle-efficient paper, Section 2).

    Fields, bounds and defaults: :data:`FIELDS` (``d``, ``m``, ``actions``, ``reward``,
    ``oracle_delay``, ``executor``, ``workers``, ``alpha``, ``explicit_actions``).  ``actions``
    is ``m-sets``, ``paths``, ``matchings`` or ``explicit`` (with ``explicit_actions``);
    ``reward`` is ``linear`` (Section 6), ``covariance`` (A.11.1), ``general`` (A.11.2) or
    ``continuous`` (Algorithm 8); ``executor`` (``none``, ``threads``, ``processes``) runs the
    parallel batches of scheduled algorithms (see
    :func:`~dashboard.algorithms.cmab.oracle.make_executor`).
    """

    problem: ClassVar[str] = "cmab"

    d: int = _default("d", "cmab")
    m: int = _default("m", "cmab")
    actions: str = _default("actions", "cmab")
    reward: str = _default("reward", "cmab")
    oracle_delay: float = _default("oracle_delay", "cmab")
    executor: str = _default("executor", "cmab")
    workers: int = _default("workers", "cmab")
    alpha: float = _default("alpha", "cmab")
    explicit_actions: list[list[int]] | None = field(default=None, repr=False)

    def validate(self) -> None:
        explicit = isinstance(self.actions, str) and self.actions.strip().lower() == "explicit"
        if explicit and self.explicit_actions is not None:
            from ..algorithms.cmab.actions import ExplicitActions

            rows = FIELDS["explicit_actions"].check(self.explicit_actions)
            fam = ExplicitActions(rows)  # validates the rows
            self.d, self.m = fam.d, fam.m
        self._validate_fields()
        if self.m > self.d:
            raise ValueError(f"m must be at most d (got m={self.m} > d={self.d})")
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

    Fields, bounds and defaults: :data:`FIELDS` (``d``, ``K``, ``instance``, ``shift``,
    ``magnitude``, ``gap``, ``noise``, ``features_path``, ``rescale``).  ``instance`` is
    ``gap`` (features with suboptimality gap ``gap``, Appendix I), ``random`` (random unit
    features), ``multi-armed`` (standard basis, d = K) or ``csv`` (``features_path``: K rows,
    d columns, read within the same K and d limits); ``shift`` is nu_t with scale
    ``magnitude``; ``noise`` the standard deviation sigma of eta_t; ``rescale`` divides CSV
    features / theta by their largest norm instead of refusing norms above 1 (Assumption 1).
    """

    problem: ClassVar[str] = "semiparametric"

    d: int = _default("d", "semiparametric")
    K: int = _default("K", "semiparametric")
    instance: str = _default("instance", "semiparametric")
    shift: str = _default("shift", "semiparametric")
    magnitude: float = _default("magnitude", "semiparametric")
    gap: float = _default("gap", "semiparametric")
    noise: float = _default("noise", "semiparametric")
    features_path: str | None = None
    rescale: bool = False

    def validate(self) -> None:
        self._validate_fields()
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


_SPECS: dict[str, type[ProblemSpec]] = {"cmab": CMABSpec, "semiparametric": SemiparametricSpec}


def make_spec(problem: str, **kwargs: Any) -> ProblemSpec:
    """Build and validate a spec from keyword arguments (unknown keys are an error)."""
    p = _check_problem(problem)
    cls = _SPECS[p]
    allowed = [f.name for f in fields_for(p)]
    unknown = sorted(set(kwargs) - set(allowed))
    if unknown:
        raise ValueError(
            f"unknown {p} setting(s): {', '.join(unknown)}; allowed: {', '.join(sorted(allowed))}"
        )
    spec = cls(**kwargs)
    spec.validate()
    return spec


def check_spec(spec: Any) -> ProblemSpec:
    """``spec`` validated, or ValueError if it is not a problem spec (None, str, dict ...)."""
    if not isinstance(spec, ProblemSpec) or not spec.problem:
        raise ValueError(
            "spec must be a CMABSpec or SemiparametricSpec (see make_spec), got "
            f"{type(spec).__name__}"
        )
    spec.validate()
    return spec
