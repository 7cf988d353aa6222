"""The dashboard's configuration: :class:`Config`, everything the sidebar chooses.

Problem, instance settings, algorithms, horizon, runs, seed, playback speed and algorithm
constants, as ``param`` parameters generated from the one problem schema
(:mod:`dashboard.simulation.specs`).  ``algorithms`` is a ``ListSelector`` whose ``objects``
are the algorithms the catalogue offers for the chosen problem and reward model (plug-ins
registered in this process included), so a widget made with ``from_param`` shows exactly
those and a name that is not offered is refused when set (:class:`AlgorithmSelector`).
Derived state is kept in parameters: ``algorithm_options`` (the same offer, as a plain list)
and ``errors`` (one sentence per invalid setting; the Run button is disabled while it is
non-empty).  :meth:`Config.apply_preset` applies a lesson preset, :meth:`Config.spec` builds
the same :func:`~dashboard.simulation.specs.make_spec` spec as the CLI and
:meth:`Config.run_request` what a run needs.  No Panel / HoloViews imports: testable headless.
The run state machine is :mod:`dashboard.ui.run_model`; both are importable from
:mod:`dashboard.ui.model`.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from typing import Any

import param

from ..simulation import catalogue
from ..simulation.bands import BANDS
from ..simulation.budget import DEFAULT_MAX_MEMORY, DEFAULT_MAX_WORK, enforce, estimate_run
from ..simulation.catalogue import Constant
from ..simulation.fields import Field
from ..simulation.remote import RunRequest
from ..simulation.runner import Simulation
from ..simulation.specs import FIELDS, PROBLEMS, RUN_FIELDS, ProblemSpec, fields_for, make_spec
from .algorithm_choice import (
    DEFAULT_ALGORITHMS,
    MAX_ALGORITHMS,
    AlgorithmSelector,
    check_algorithms,
    default_algorithms,
    options_for,
)

__all__ = [
    "CONSTANTS",
    "DEFAULT_ALGORITHMS",
    "MAX_ALGORITHMS",
    "MAX_WORK_ENV",
    "OPTIONAL_PRESET_KEYS",
    "PRESET_KEYS",
    "SPEEDS",
    "AlgorithmSelector",
    "Config",
    "Knob",
    "class_max_work",
]

#: A constant on the constants card is a declared :class:`~dashboard.algorithms.declare.Constant`
#: (name, label, kind, default, bounds or choices, doc); ``Knob`` is its historical name here.
Knob = Constant


class _CardConstants(Mapping[str, tuple[Constant, ...]]):
    """The constants card, read live from the declarations: algorithm name -> its declared
    constants with ``card=True`` (algorithms without any are absent).  Plug-ins registered
    after import appear too."""

    def _all(self) -> dict[str, tuple[Constant, ...]]:
        out = {}
        for decl in catalogue.declarations():
            card = tuple(c for c in decl.constants if c.card)
            if card:
                out[decl.name] = card
        return out

    def __getitem__(self, name: str) -> tuple[Constant, ...]:
        return self._all()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._all())

    def __len__(self) -> int:
        return len(self._all())


#: The paper-ambiguity constants exposed per algorithm on the dashboard's card (derived from
#: the policies' declarations; every declared constant stays settable through ``constants``).
CONSTANTS: Mapping[str, tuple[Constant, ...]] = _CardConstants()


#: Keys a lesson preset may set (see :meth:`Config.apply_preset`): the problem, the
#: algorithms, and every field of the problem schema the dashboard shows.
PRESET_KEYS: tuple[str, ...] = (
    "problem",
    "algorithms",
    *RUN_FIELDS,
    *(f.name for f in fields_for(None, dashboard=True)),
)
#: Preset keys written only when they differ from the defaults (older presets lack them).
OPTIONAL_PRESET_KEYS: tuple[str, ...] = ("constants",)

#: Playback speeds: fraction of the horizon simulated per frame (``None``: as fast as possible).
SPEEDS: dict[str, float | None] = {
    "slow": 1 / 600,
    "normal": 1 / 150,
    "fast": 1 / 40,
    "max": None,
}


def _param_from_field(f: Field) -> param.Parameter:
    """A param object with the schema field's default (the default problem's, or the
    dashboard's start value), bounds or choices and doc."""
    default = f.dashboard_default if f.dashboard_default is not None else f.default_for("cmab")
    doc = f"{f.doc} {f.allowed()}." if not f.bounds else f.help()
    if f.kind == "int":
        low, high = f.bounds_for(None)
        return param.Integer(default=default, bounds=(low, high), doc=doc)
    if f.kind == "float":
        low, high = f.bounds_for(None)
        return param.Number(
            default=default, bounds=(low, high), inclusive_bounds=(not f.low_open, True), doc=doc
        )
    if f.kind == "choice":
        return param.Selector(default=default, objects=list(f.offered_choices()), doc=doc)
    if f.kind == "bool":
        return param.Boolean(default=default, doc=doc)
    raise TypeError(f"no dashboard parameter for a {f.kind} field ({f.name})")


_SCHEMA_NAMES: tuple[str, ...] = (*RUN_FIELDS, *(f.name for f in fields_for(None, dashboard=True)))

#: The problem-schema fields shown by the dashboard, as param objects (generated, see
#: :mod:`dashboard.simulation.specs`); :class:`Config` inherits them.
_SchemaParams = type(
    "_SchemaParams",
    (param.Parameterized,),
    {
        "__doc__": "Parameters generated from the problem schema.",
        **{name: _param_from_field(FIELDS[name]) for name in _SCHEMA_NAMES},
    },
)


#: The built-in choices of the component selectors (plug-ins registered in this process are
#: appended by :func:`_offer_plugin_components`).
_BUILTIN_CHOICES: dict[str, list[str]] = {}


def _offer_plugin_components() -> None:
    """Offer the shifts, action families and reward models registered by plug-ins in this
    process (and only those: names are never imported from user input)."""
    for name in ("shift", "actions", "reward"):
        selector = Config.param[name]
        builtin = _BUILTIN_CHOICES.setdefault(name, list(selector.objects))
        extra = [n for n in catalogue.component_names(name, plugins_only=True) if n not in builtin]
        if list(selector.objects) != builtin + extra:
            selector.objects = builtin + extra


def _declared(algorithm: str, name: str) -> Constant:
    """The declared constant ``name`` of ``algorithm``; ValueError naming the allowed ones."""
    declared = catalogue.constants(algorithm)
    for c in declared:
        if c.name == name:
            return c
    raise ValueError(
        f"{algorithm} has no constant {name!r}; it has: "
        f"{', '.join(c.name for c in declared) or 'none'}"
    )


class Config(_SchemaParams):
    """Configuration chosen in the sidebar (and synced to the URL).

    Widget bounds prevent out-of-range numbers (setting one raises ``ValueError``), and
    ``algorithms`` takes only the algorithms offered for the problem and reward model (another
    name raises ``ValueError``; a problem or reward change keeps the chosen algorithms still
    offered, else the problem's default comparison).  Rules that involve several settings
    (``m <= d``, 1 to 4 algorithms, an algorithm chosen twice, action-family constraints, the
    work limit) are reported in :attr:`errors` instead, so the user sees why Run is disabled.
    Set the problem before the algorithms (:meth:`update_settings` orders a batch).
    """

    problem = param.Selector(
        default="cmab",
        objects=list(PROBLEMS),
        doc="cmab: combinatorial semi-bandit (oracle-efficient paper); semiparametric: "
        "semiparametric linear bandit (experimental-design paper).",
    )
    algorithms = AlgorithmSelector(
        default=list(DEFAULT_ALGORITHMS["cmab"]),
        objects=list(DEFAULT_ALGORITHMS["cmab"]),  # an instance offers its problem's (_trim)
        doc=f"Algorithms compared side by side (1 to {MAX_ALGORITHMS}), chosen among the "
        "registered algorithms of the problem (and cmab reward model).",
    )
    speed = param.Selector(
        default="max", objects=list(SPEEDS), doc="Playback speed (fraction of T per frame)."
    )
    log_axes = param.Boolean(default=False, doc="Log-log axes for the regret plot.")
    band = param.Selector(
        default="sd",
        objects=list(BANDS),
        doc="How the regret plots draw the spread over runs: "
        + "; ".join(f"{k}: {v}" for k, v in BANDS.items())
        + " (dashboard/simulation/bands.py).",
    )
    constants = param.Dict(
        default=None,
        allow_None=True,
        doc="Algorithm constants that differ from the defaults, {algorithm: {name: value}} "
        "(see CONSTANTS); None: every constant at its default.  Only the chosen algorithms' "
        "entries are used.",
    )

    algorithm_options = param.List(
        default=[], item_type=str, doc="Derived: algorithms valid for the problem and reward."
    )
    errors = param.List(default=[], item_type=str, doc="Derived: why the configuration is invalid.")

    def __init__(self, **params: Any) -> None:
        _offer_plugin_components()
        problem = params.get("problem", "cmab")
        for f in fields_for(problem if problem in PROBLEMS else None, dashboard=True):
            if f.name not in params and isinstance(f.default, dict):
                params[f.name] = f.default_for(problem)  # e.g. d = 5 for semiparametric
        algorithms = params.pop("algorithms", None)  # checked against the problem's offer
        super().__init__(**params)
        self.algorithms = (
            self.default_algorithms(self.problem, self.reward) if algorithms is None else algorithms
        )
        self._refresh()
        self._trim()
        # after every other watcher (widgets made from the parameters included): see _trim
        self.param.watch(self._trim, ["problem", "reward", "algorithms"], precedence=100)
        catalogue.on_change(self._on_catalogue)  # a plug-in registered later is offered at once

    # ------------------------------------------------------------------ derived state
    def _trim(self, *_: Any) -> None:
        """The offer, now, as the ``objects`` of ``algorithms`` (a widget made from the
        parameter shows them).  Runs after every other watcher of a change, once the chosen
        algorithms are offered ones and the widget shows them (see :class:`AlgorithmSelector`)."""
        options = self.options_for(self.problem, self.reward)
        if list(self.param.algorithms.objects) != options:
            self.param.algorithms.objects = options

    def _on_catalogue(self) -> None:
        """A plug-in algorithm was registered or removed in this process."""
        self._refresh()
        self._trim()

    @param.depends("problem", "algorithms", "constants", *_SCHEMA_NAMES, watch=True)
    def _refresh(self) -> None:
        options = self.options_for(self.problem, self.reward)
        if any(a not in options for a in self.algorithms):
            # the problem or reward model changed (or a plug-in was removed): keep the chosen
            # algorithms still offered, else the problem's default comparison.  Set before the
            # derived state below, so no watcher sees the new offer with valid-looking errors.
            kept = [a for a in self.algorithms if a in options]
            self.algorithms = kept or self.default_algorithms(self.problem, self.reward)
            return  # the assignment above re-runs this method
        if options != self.algorithm_options:
            self.algorithm_options = options
        errors = self.validate()
        if errors != self.errors:
            self.errors = errors

    #: The algorithms offered for a problem (and cmab reward model): the picker's options.
    options_for = staticmethod(options_for)
    #: Names in their registered spelling if all are offered, else one ValueError sentence.
    check_algorithms = staticmethod(check_algorithms)
    #: The problem's default comparison, restricted to what is offered.
    default_algorithms = staticmethod(default_algorithms)

    def parse_setting(self, name: str, text: Any) -> Any:
        """A URL query value (text) for a schema parameter, checked by the schema's own parser
        (exact bounds before conversion, the current problem's bounds for ``d``); ValueError
        names the key and what is allowed.  Other parameters return ``text`` unchanged."""
        f = FIELDS.get(name)
        if f is None or name not in _SCHEMA_NAMES:
            return text
        problem = self.problem if self.problem in f.bounds else None
        return f.parse(text, problem)

    @property
    def spec_kwargs(self) -> dict[str, Any]:
        """Keyword arguments of :func:`make_spec` for the current problem."""
        return {f.name: getattr(self, f.name) for f in fields_for(self.problem, dashboard=True)}

    def validate(self) -> list[str]:
        """One sentence per problem with the configuration (empty list: it can run)."""
        errors: list[str] = []
        if self.problem == "cmab" and self.m > self.d:
            errors.append(f"m must be at most d (m = {self.m} > d = {self.d}).")
        if not self.algorithms:
            errors.append("Choose at least one algorithm.")
        elif len(self.algorithms) > MAX_ALGORITHMS:
            errors.append(
                f"Choose at most {MAX_ALGORITHMS} algorithms (got {len(self.algorithms)})."
            )
        # the names themselves were checked when set (AlgorithmSelector): all are offered
        if len(set(self.algorithms)) != len(self.algorithms):
            errors.append("An algorithm is chosen twice.")
        errors += self._check_constants()
        if not errors:
            try:
                spec = make_spec(self.problem, **self.spec_kwargs)
                if self.problem == "cmab" and self.m <= self.d:
                    self._check_family(spec)
                self._check_work(spec)
            except ValueError as exc:
                errors.append(_sentence(str(exc)))
        return errors

    def algorithm_constants(self) -> dict[str, dict[str, Any]]:
        """The non-default constants of the chosen algorithms (``Simulation(params=...)``)."""
        chosen = {a.lower(): a for a in self.algorithms}
        out: dict[str, dict[str, Any]] = {}
        for name, values in (self.constants or {}).items():
            if str(name).lower() in chosen and values:
                out[chosen[str(name).lower()]] = dict(values)
        return out

    def constant(self, algorithm: str, name: str) -> Any:
        """The value of one constant of ``algorithm`` (its default unless changed)."""
        knob = _declared(algorithm, name)
        return (self.constants or {}).get(algorithm, {}).get(name, knob.default)

    def set_constant(self, algorithm: str, name: str, value: Any) -> None:
        """Set one constant (the default value removes the entry: URLs and presets carry only
        what differs from the defaults).  Invalid values are kept and reported in
        :attr:`errors` (Run is disabled), so the user sees what they typed and why."""
        knob = _declared(algorithm, name)
        if knob.kind == "int" and isinstance(value, float) and value.is_integer():
            value = int(value)
        new = {a: dict(v) for a, v in (self.constants or {}).items()}
        entry = new.setdefault(algorithm, {})
        if value == knob.default and type(value) is not bool:
            entry.pop(name, None)
        else:
            entry[name] = value
        new = {a: v for a, v in new.items() if v}
        self.constants = new or None

    def _check_constants(self) -> list[str]:
        """One sentence per invalid constant of a chosen algorithm."""
        errors: list[str] = []
        raw = self.constants or {}
        if not isinstance(raw, dict):
            return ["Algorithm constants must be a mapping {algorithm: {name: value}}."]
        for algorithm, values in self.algorithm_constants().items():
            knobs = {k.name: k for k in catalogue.constants(algorithm)}
            if not isinstance(values, dict):
                errors.append(f"{algorithm}: constants must be a mapping name -> value.")
                continue
            bad = False
            for name, value in values.items():
                knob = knobs.get(name)
                if knob is None:
                    allowed = ", ".join(knobs) or "none"
                    errors.append(f"{algorithm}: unknown constant {name!r}; allowed: {allowed}.")
                    bad = True
                    continue
                problem = knob.check(value)
                if problem is None and name == "M" and value is not None:
                    if value > self.horizon:
                        problem = f"M must be at most the horizon T = {self.horizon} (got {value})"
                if problem is not None:
                    errors.append(f"{algorithm}: {problem}.")
                    bad = True
            if not bad:  # the declaration, then the constructor's own cross-constant rules
                try:
                    catalogue.check_constants(algorithm, values)
                except ValueError as exc:
                    errors.append(_sentence(str(exc)))
        return errors

    def _check_work(self, spec: ProblemSpec) -> None:
        """Refuse (ValueError) a run estimated above the work limit, so Run is disabled with
        the estimate instead of failing after the click.  The limit is the simulation layer's
        default, or the one the instructor set for the class (``serve --max-work``)."""
        infos = [catalogue.declaration(a, self.problem) for a in self.algorithms]
        est = estimate_run(spec, infos, self.horizon, self.runs, self.algorithm_constants())
        enforce(est, class_max_work(), DEFAULT_MAX_MEMORY, override=None)

    def _check_family(self, spec: ProblemSpec) -> None:
        """Action families with structure (paths, matchings) constrain d and m: ask them."""
        catalogue.check_family(spec.actions, spec.d, spec.m)

    @property
    def valid(self) -> bool:
        """Whether the configuration can run."""
        return not self.errors

    def spec(self) -> ProblemSpec:
        """The validated problem spec (what the CLI's ``simulate`` builds from its flags)."""
        return make_spec(self.problem, **self.spec_kwargs)

    def make_simulation(self) -> Simulation:
        """A new :class:`Simulation` of the current configuration (ValueError if invalid)."""
        if self.errors:
            raise ValueError(self.errors[0])
        return Simulation(
            self.spec(),
            list(self.algorithms),
            self.horizon,
            runs=self.runs,
            seed=self.seed,
            params=self.algorithm_constants(),
        )

    def run_request(self) -> RunRequest:
        """What a run of the current configuration needs, as plain data (ValueError if
        invalid): built in this process or on a Dask worker, the numbers are the same."""
        if self.errors:
            raise ValueError(self.errors[0])
        return RunRequest(
            spec=self.spec(),
            algorithms=tuple(self.algorithms),
            horizon=self.horizon,
            runs=self.runs,
            seed=self.seed,
            params=self.algorithm_constants(),
        )

    # ------------------------------------------------------------------ presets
    def preset(self) -> dict[str, Any]:
        """The current configuration as a preset dictionary (inverse of :meth:`apply_preset`).

        ``"constants"`` is included only when some constant differs from its default.
        """
        out = {k: (list(v) if isinstance(v := getattr(self, k), list) else v) for k in PRESET_KEYS}
        if self.constants:
            out["constants"] = {a: dict(v) for a, v in self.constants.items()}
        return out

    def apply_preset(self, preset: dict[str, Any]) -> None:
        """Apply a lesson preset atomically.

        Parameters
        ----------
        preset : dict
            Keys from :data:`PRESET_KEYS` and :data:`OPTIONAL_PRESET_KEYS`; missing keys keep
            their current value (``"constants": None`` or ``{}`` resets every constant).

        Raises
        ------
        ValueError
            For an unknown key or a value out of range; nothing is changed then.
        """
        if not isinstance(preset, dict):
            raise ValueError(f"a preset must be a dict, got {type(preset).__name__}")
        allowed = (*PRESET_KEYS, *OPTIONAL_PRESET_KEYS)
        unknown = sorted(set(preset) - set(allowed))
        if unknown:
            raise ValueError(
                f"unknown preset key(s): {', '.join(unknown)}; allowed: {', '.join(allowed)}"
            )
        values = dict(preset)
        if "constants" in values:
            constants = values["constants"]
            if constants is not None and not (
                isinstance(constants, dict) and all(isinstance(v, dict) for v in constants.values())
            ):
                raise ValueError("preset 'constants' must be a mapping {algorithm: {name: value}}")
            values["constants"] = (
                {self._canonical(a): dict(v) for a, v in constants.items() if v} or None
                if constants
                else None
            )
        if "algorithms" in values:
            algos = values["algorithms"]
            if isinstance(algos, str):
                algos = [algos]
            if not isinstance(algos, (list, tuple)) or not all(isinstance(a, str) for a in algos):
                raise ValueError("preset 'algorithms' must be a list of algorithm names")
            values["algorithms"] = list(algos)
        for key in ("problem", "actions", "reward", "shift"):
            if key in values and isinstance(values[key], str):
                values[key] = values[key].strip().lower()
        before = {k: getattr(self, k) for k in allowed}
        try:
            self.update_settings(values)
        except Exception as exc:  # param raises ValueError (or TypeError) with the bound
            self.update_settings(before)
            raise ValueError(f"invalid preset: {_sentence(str(exc))}") from None

    def update_settings(self, values: Mapping[str, Any]) -> None:
        """Set several parameters in one ``param.update`` (watchers see only the final state),
        the problem and reward model first: the algorithms offered depend on them."""
        first = [k for k in ("problem", "reward") if k in values]
        rest = [k for k in values if k not in first and k != "algorithms"]
        last = ["algorithms"] if "algorithms" in values else []
        self.param.update(**{k: values[k] for k in first + rest + last})

    @staticmethod
    def _canonical(name: str) -> str:
        """The registered spelling of an algorithm name (unchanged if unknown)."""
        for known in catalogue.algorithm_names():
            if known.lower() == name.strip().lower():
                return known
        return name


def _sentence(text: str) -> str:
    """First line of ``text``, capitalised and ending with a full stop."""
    line = text.strip().splitlines()[0] if text.strip() else "unknown error"
    if not line.split(" ", 1)[0].isidentifier() or len(line.split(" ", 1)[0]) > 1:
        line = line[0].upper() + line[1:]  # not a one-letter symbol such as d, m or K
    return line if line.endswith((".", "!", "?")) else line + "."


#: Set by ``python -m dashboard serve --max-work SECONDS``: the class's per-run work limit.
MAX_WORK_ENV = "BANDIT_DASHBOARD_MAX_WORK"


def class_max_work() -> float:
    """The per-run work limit in estimated seconds: the instructor's (``serve --max-work``)
    when it is a positive number, else the simulation layer's default."""
    try:
        value = float(os.environ.get(MAX_WORK_ENV, ""))
    except ValueError:
        return DEFAULT_MAX_WORK
    return value if 0 < value < float("inf") else DEFAULT_MAX_WORK
