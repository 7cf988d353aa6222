"""State of the dashboard as ``param.Parameterized`` classes (no Panel / HoloViews imports).

Two classes, both testable headless:

:class:`Config`
    Everything the sidebar chooses (problem, instance settings, algorithms, horizon, runs, seed,
    playback speed).  Derived state is kept in parameters: ``algorithm_options`` (the algorithms
    valid for the chosen problem and reward model) and ``errors`` (one sentence per invalid
    setting; the Run button is disabled while it is non-empty).  :meth:`Config.apply_preset`
    applies a lesson preset, :meth:`Config.spec` builds the same
    :func:`~dashboard.simulation.specs.make_spec` spec as the CLI.

:class:`RunModel`
    The run state machine ``idle -> running <-> paused -> done`` (and ``error``) around one
    :class:`~dashboard.simulation.runner.Simulation`.  The view calls :meth:`RunModel.tick`
    from a periodic callback; Run on a new configuration closes the old simulation first, and
    Reset drops every reference to it (so repeated Run/Reset cycles do not grow memory).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np
import param

from ..simulation import catalogue
from ..simulation.bands import BANDS
from ..simulation.budget import DEFAULT_MAX_MEMORY, DEFAULT_MAX_WORK, enforce, estimate_run
from ..simulation.catalogue import Constant
from ..simulation.fields import Field
from ..simulation.remote import DaskRun, LocalRun, RunHandle, RunLost, RunRequest, activity
from ..simulation.runner import Simulation
from ..simulation.specs import FIELDS, PROBLEMS, RUN_FIELDS, ProblemSpec, fields_for, make_spec

__all__ = [
    "CONSTANTS",
    "DEFAULT_ALGORITHMS",
    "MAX_ALGORITHMS",
    "OPTIONAL_PRESET_KEYS",
    "PRESET_KEYS",
    "SPEEDS",
    "Config",
    "Knob",
    "RunModel",
]

#: At most this many algorithms are compared side by side.
MAX_ALGORITHMS = 4

#: Default comparison of each problem (filtered by what is registered and valid).
DEFAULT_ALGORITHMS: dict[str, tuple[str, ...]] = {
    "cmab": ("CUCB", "AROQ-CMAB", "SROQ-CMAB"),
    "cmab/covariance": ("OLS-UCB-C", "AROQ-C-CMAB", "SROQ-C-CMAB"),
    "cmab/general": ("SDCB", "AROQ-GR-CMAB", "SROQ-GR-CMAB"),
    "semiparametric": ("SBE", "BOSE", "SP-TS", "LinUCB"),
}


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

    Widget bounds prevent out-of-range numbers (setting one raises ``ValueError``); rules that
    involve several settings (``m <= d``, algorithm / reward compatibility, 1 to 4 algorithms,
    action-family constraints) are reported in :attr:`errors` instead, so the user sees why Run
    is disabled.
    """

    problem = param.Selector(
        default="cmab",
        objects=list(PROBLEMS),
        doc="cmab: combinatorial semi-bandit (oracle-efficient paper); semiparametric: "
        "semiparametric linear bandit (experimental-design paper).",
    )
    algorithms = param.List(
        default=list(DEFAULT_ALGORITHMS["cmab"]),
        item_type=str,
        doc=f"Algorithms compared side by side (1 to {MAX_ALGORITHMS}).",
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
        super().__init__(**params)
        if "algorithms" not in params:
            self.algorithms = self.default_algorithms(self.problem, self.reward)
        self._refresh()

    # ------------------------------------------------------------------ derived state
    @param.depends("problem", "algorithms", "constants", *_SCHEMA_NAMES, watch=True)
    def _refresh(self) -> None:
        options = self.options_for(self.problem, self.reward)
        if options != self.algorithm_options:
            self.algorithm_options = options
        key = (self.problem, self.reward if self.problem == "cmab" else None)
        if key != getattr(self, "_options_key", key) and self.algorithms:
            # the problem or reward model changed: keep the chosen algorithms that remain
            # valid (a URL or preset sets everything at once), else the default comparison
            valid = {a.lower() for a in options}
            kept = [a for a in self.algorithms if a.lower() in valid]
            if kept != self.algorithms:
                self._options_key = key
                self.algorithms = kept or self.default_algorithms(self.problem, self.reward)
                return  # the assignment above re-runs this method
        self._options_key = key
        errors = self.validate()
        if errors != self.errors:
            self.errors = errors

    @staticmethod
    def options_for(problem: str, reward: str | None = None) -> list[str]:
        """Names of the registered algorithms valid for ``problem`` (and the cmab ``reward``)."""
        return catalogue.algorithm_names(problem, reward if problem == "cmab" else None)

    @classmethod
    def default_algorithms(cls, problem: str, reward: str = "linear") -> list[str]:
        """The default comparison for a problem, restricted to valid algorithms."""
        options = cls.options_for(problem, reward)
        key = f"{problem}/{reward}" if f"{problem}/{reward}" in DEFAULT_ALGORITHMS else problem
        chosen = [a for a in DEFAULT_ALGORITHMS[key] if a in options]
        return chosen or options[:MAX_ALGORITHMS]

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
        valid = {a.lower(): a for a in self.algorithm_options}
        lowered = [a.lower() for a in self.algorithms]
        if len(set(lowered)) != len(lowered):
            errors.append("An algorithm is chosen twice.")
        other = "semiparametric" if self.problem == "cmab" else "cmab"
        other_names = {a.lower() for a in self.options_for(other)}
        for a in self.algorithms:
            if a.lower() in valid:
                continue
            if self.problem == "cmab" and a.lower() in {
                x.lower() for x in self.options_for("cmab")
            }:
                errors.append(
                    f"{a} does not support the {self.reward} reward model; choose from: "
                    f"{', '.join(self.algorithm_options)}."
                )
            elif a.lower() in other_names:
                errors.append(f"{a} is an algorithm for the {other} problem, not this one.")
            else:
                errors.append(
                    f"Unknown algorithm {a!r}; choose from: {', '.join(self.algorithm_options)}."
                )
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
            values["algorithms"] = [self._canonical(a) for a in algos]
        for key in ("problem", "actions", "reward", "shift"):
            if key in values and isinstance(values[key], str):
                values[key] = values[key].strip().lower()
        before = {k: getattr(self, k) for k in allowed}
        try:
            self.param.update(**values)
        except Exception as exc:  # param raises ValueError (or TypeError) with the bound
            self.param.update(**before)
            raise ValueError(f"invalid preset: {_sentence(str(exc))}") from None

    @staticmethod
    def _canonical(name: str) -> str:
        """The registered spelling of an algorithm name (unchanged if unknown)."""
        for known in catalogue.algorithm_names():
            if known.lower() == name.strip().lower():
                return known
        return name


class _RemoteView:
    """What the view may read of a run that lives on a Dask worker (no local Simulation)."""

    def __init__(self, horizon: int, algorithms: list[str]) -> None:
        self.horizon = horizon
        self.algorithms = algorithms


class RunModel(param.Parameterized):
    """Run state machine around one run handle (:mod:`dashboard.simulation.remote`).

    ``status`` is ``idle`` (nothing simulated), ``running`` (ticks advance), ``paused``,
    ``done`` (t = T) or ``error`` (the run raised: ``error`` holds one sentence).

    The run lives behind a non-blocking handle: in this process (``engine="in-process"``, the
    default for ``panel serve dashboard`` and notebooks: every call does its work before it
    returns) or on a Dask worker (``engine="dask"``, what ``python -m dashboard serve`` sets
    for a class: :meth:`tick` only collects a finished frame and asks for the next one, so the
    server's event loop never waits for a simulation).  Pause and Reset change the state at
    once in both cases; a frame still in flight after Pause is shown when it arrives.
    """

    config = param.ClassSelector(class_=Config, doc="The configuration being run.")
    status = param.Selector(
        default="idle", objects=["idle", "running", "paused", "done", "error"], doc="Run state."
    )
    t = param.Integer(default=0, bounds=(0, None), doc="Rounds simulated so far.")
    horizon = param.Integer(default=0, bounds=(0, None), doc="T of the current run.")
    error = param.String(default="", doc="One-sentence message of the last failed run.")
    frame = param.Integer(default=0, doc="Incremented each time new results are available.")
    result = param.Parameter(default=None, doc="SimulationResult snapshot of the current run.")
    engine = param.Selector(
        default="in-process",
        objects=["in-process", "dask"],
        doc="Where runs execute: this process, or the shared Dask cluster (a served class).",
    )
    queued = param.Boolean(
        default=False,
        doc="A requested frame has waited over a second for a busy cluster (shown as queued).",
    )

    #: Seconds after which an outstanding frame counts as queued.
    QUEUED_AFTER = 1.0

    def __init__(self, config: Config | None = None, **params: Any) -> None:
        if "engine" not in params:
            params["engine"] = default_engine()
        super().__init__(config=config if config is not None else Config(), **params)
        self.handle: RunHandle | None = None
        self.sim: Any = None  # the local Simulation (in-process) or a _RemoteView (Dask)
        self._lock = threading.Lock()
        self._asked_at = 0.0  # when the outstanding frame was requested
        self._workers = 1  # Dask worker threads serving this run (fair share)

    # ------------------------------------------------------------------ state machine
    @property
    def can_run(self) -> bool:
        """Whether Run is allowed (the configuration is valid)."""
        return self.config.valid

    @property
    def busy(self) -> bool:
        """Whether a requested frame has not come back yet (the view keeps polling)."""
        return self.handle is not None and self.handle.busy

    def run(self) -> None:
        """Start a new run of the current configuration (cancelling any previous run)."""
        with self._lock:
            self._start()
            if self.handle is not None:
                self.status = "running"

    def pause(self) -> None:
        """Pause a running simulation (no-op otherwise)."""
        if self.status == "running":
            self.status = "paused"

    def resume(self) -> None:
        """Resume a paused simulation (no-op otherwise)."""
        if self.status == "paused":
            self.status = "running"

    def toggle_pause(self) -> None:
        """Pause if running, resume if paused."""
        if self.status == "running":
            self.pause()
        else:
            self.resume()

    def step(self) -> None:
        """Advance to the next decision point (oracle call, epoch or phase), then pause.

        Starts a paused run first if nothing is loaded (or the last one finished / failed).
        In-process the step is done when this returns; on Dask it arrives with a later
        :meth:`tick` (:attr:`busy` says one is due).
        """
        with self._lock:
            if self.handle is None or self.status in ("done", "error", "idle"):
                self._start()
                if self.handle is None:
                    return
            if self.status != "done":
                self.status = "paused"
            if not self.handle.busy:
                self._ask(step=True)
            self._collect()

    def reset(self) -> None:
        """Stop and forget the run (its state is released, on a worker too)."""
        with self._lock:
            self._drop()
            self.param.update(status="idle", t=0, horizon=0, error="", result=None, queued=False)
            self.frame += 1

    def close(self) -> None:
        """Release the run (the session ended)."""
        with self._lock:
            self._drop()
            if self.status == "running":
                self.status = "paused"

    def tick(self, seconds: float = 0.06) -> bool:
        """One frame: show a finished frame if one came back, and while running ask for the
        next (about ``seconds`` of simulation, capped by the playback speed, a fraction of T
        per frame).  Returns whether new results exist.  Overlapping calls (periodic callbacks
        on several threads) return ``False`` instead of waiting.
        """
        if self.handle is None or not self._lock.acquire(blocking=False):
            return False
        try:
            changed = self._collect()
            if self.status == "running" and self.handle is not None and not self.handle.busy:
                self._ask(seconds=seconds)
                changed = self._collect() or changed  # in-process: the frame is ready
            waited = time.perf_counter() - self._asked_at
            queued = self.busy and waited > self.QUEUED_AFTER
            if queued != self.queued:
                self.queued = queued
            return changed
        finally:
            self._lock.release()

    # ------------------------------------------------------------------ data for plots
    def shift_window(self, rounds: int = 300) -> tuple[np.ndarray, np.ndarray]:
        """``(t, nu_t)`` over the last simulated rounds (semiparametric only): the trace the
        result carries (:meth:`Simulation.shift_trace`)."""
        empty = (np.zeros(0, dtype=np.int64), np.zeros(0))
        shift = None if self.result is None else self.result.shift
        if shift is None:
            return empty
        t, nu = shift
        return t[-rounds:], nu[-rounds:]

    def notices(self) -> list[str]:
        """One sentence per place where a run departs from the paper's schedule (e.g. AROQ-C's
        warm-up or SROQ-C's pair phase clamped to fit the horizon), from run 1's events, and
        one when the run waits for a busy cluster."""
        out: list[str] = []
        result = self.result
        for r in [] if result is None else result.results:
            seen: set[str] = set()
            for e in r.events[0] if r.events else []:
                if "clamped" not in e.kind or e.kind in seen:
                    continue
                seen.add(e.kind)
                paper, used = e.data.get("paper"), e.data.get("used")
                detail = ""
                if paper is not None and used is not None:
                    detail = (
                        f" (the paper asks {float(paper):,.0f} rounds, "
                        f"this run uses {float(used):,.0f})"
                    )
                out.append(f"{r.algorithm}: {e.kind}{detail}.")
        if self.queued:
            out.append(
                "Queued: the server is busy with the class's runs; your next frame will come "
                "as soon as a worker is free."
            )
        return out

    def instance_arrays(self) -> tuple[np.ndarray, np.ndarray] | None:
        """``(X, theta*)`` of the semiparametric instance being run (carried by the result),
        else ``None``."""
        return None if self.result is None else self.result.features

    # ------------------------------------------------------------------ internals
    def _start(self) -> None:
        self._drop()
        self.param.update(error="", t=0, result=None, queued=False)
        if not self.config.valid:
            self.param.update(status="error", error=self.config.errors[0])
            self.frame += 1
            return
        try:
            request = self.config.run_request()
            if self.engine == "dask":
                from ..simulation.cluster import get_client

                client = get_client()
                self._workers = max(1, len(client.scheduler_info().get("workers", {})))
                self.handle = DaskRun(client, request)
                self.sim = _RemoteView(request.horizon, list(request.algorithms))
            else:
                handle = LocalRun(request)
                self.handle = handle
                self.sim = handle.simulation
        except Exception as exc:  # bad combination found only when building the instance
            self._drop()
            self.param.update(status="error", error=_message(exc), horizon=0)
            self.frame += 1
            return
        self._asked_at = time.perf_counter()
        self.param.update(status="paused", horizon=request.horizon, t=0)
        self._collect()

    def _drop(self) -> None:
        handle, self.handle, self.sim = self.handle, None, None
        if handle is not None:
            handle.close()

    def _ask(self, seconds: float = 0.0, step: bool = False) -> None:
        """Request the next frame (never waits for a worker)."""
        handle = self.handle
        if handle is None:
            return
        if step:
            handle.request(step=True)
        else:
            fraction = SPEEDS[self.config.speed]
            T = self.horizon
            target = T if fraction is None else self.t + max(1, int(fraction * T))
            if self.engine == "dask":
                # fair share: with more runs computing than workers, shorter slices keep every
                # session's frames coming (each worker serves its runs' frames in turn)
                computing = max(1, activity()["computing"] + 1)
                seconds = max(0.01, seconds * min(1.0, self._workers / computing))
            handle.request(target=min(target, T), seconds=seconds)
        self._asked_at = time.perf_counter()

    def _collect(self) -> bool:
        """Show the frame that came back, if any; a failed run becomes a message."""
        handle = self.handle
        if handle is None:
            return False
        try:
            frame = handle.poll()
        except Exception as exc:  # RunLost (worker died) or a user error raised by the run
            self._drop()
            self.param.update(status="error", error=_message(exc), queued=False)
            self.frame += 1
            return True
        if frame is None:
            return False
        status = "done" if frame.done else self.status
        self.param.update(t=frame.t, result=frame.result, status=status, queued=False)
        self.frame += 1
        return True


def _sentence(text: str) -> str:
    """First line of ``text``, capitalised and ending with a full stop."""
    line = text.strip().splitlines()[0] if text.strip() else "unknown error"
    if not line.split(" ", 1)[0].isidentifier() or len(line.split(" ", 1)[0]) > 1:
        line = line[0].upper() + line[1:]  # not a one-letter symbol such as d, m or K
    return line if line.endswith((".", "!", "?")) else line + "."


#: Set by ``python -m dashboard serve`` (see :mod:`dashboard.serve`): ``dask`` or ``in-process``.
ENGINE_ENV = "BANDIT_DASHBOARD_ENGINE"


#: Set by ``python -m dashboard serve --max-work SECONDS``: the class's per-run work limit.
MAX_WORK_ENV = "BANDIT_DASHBOARD_MAX_WORK"


def class_max_work() -> float:
    """The per-run work limit in estimated seconds: the instructor's (``serve --max-work``)
    when it is a positive number, else the simulation layer's default."""
    import os

    try:
        value = float(os.environ.get(MAX_WORK_ENV, ""))
    except ValueError:
        return DEFAULT_MAX_WORK
    return value if 0 < value < float("inf") else DEFAULT_MAX_WORK


def default_engine() -> str:
    """``dask`` when ``python -m dashboard serve`` chose it for this server, else
    ``in-process`` (``panel serve dashboard``, notebooks, tests)."""
    import os

    return "dask" if os.environ.get(ENGINE_ENV) == "dask" else "in-process"


def _message(exc: BaseException) -> str:
    """A one-sentence, traceback-free description of a failed run."""
    kind = "" if isinstance(exc, (ValueError, RunLost)) else f" ({type(exc).__name__})"
    return f"The run stopped: {_sentence(str(exc) or type(exc).__name__)[:-1]}{kind}."
