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
from ..simulation.catalogue import Constant
from ..simulation.runner import MAX_HORIZON, Simulation
from ..simulation.specs import ProblemSpec, make_spec

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


#: Keys a lesson preset may set (see :meth:`Config.apply_preset`).
PRESET_KEYS: tuple[str, ...] = (
    "problem",
    "algorithms",
    "horizon",
    "runs",
    "seed",
    "d",
    "m",
    "K",
    "actions",
    "reward",
    "shift",
    "magnitude",
    "gap",
    "noise",
    "oracle_delay",
    "alpha",
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

_CMAB_FIELDS = ("d", "m", "actions", "reward", "oracle_delay", "alpha")
_SP_FIELDS = ("d", "K", "shift", "magnitude", "gap", "noise")


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


class Config(param.Parameterized):
    """Configuration chosen in the sidebar (and synced to the URL).

    Widget bounds prevent out-of-range numbers (setting one raises ``ValueError``); rules that
    involve several settings (``m <= d``, algorithm / reward compatibility, 1 to 4 algorithms,
    action-family constraints) are reported in :attr:`errors` instead, so the user sees why Run
    is disabled.
    """

    problem = param.Selector(
        default="cmab",
        objects=["cmab", "semiparametric"],
        doc="cmab: combinatorial semi-bandit (oracle-efficient paper); semiparametric: "
        "semiparametric linear bandit (experimental-design paper).",
    )
    d = param.Integer(
        default=10, bounds=(1, 200), doc="Base arms d (cmab) or feature dimension d (semiparam)."
    )
    m = param.Integer(default=3, bounds=(1, 200), doc="Maximum action size m (cmab), m <= d.")
    actions = param.Selector(
        default="m-sets", objects=["m-sets", "paths", "matchings"], doc="Action family (cmab)."
    )
    reward = param.Selector(
        default="linear",
        objects=["linear", "covariance", "general"],
        doc="Reward model (cmab): linear (Section 6), covariance (A.11.1), general (A.11.2).",
    )
    oracle_delay = param.Number(
        default=0.0, bounds=(0.0, 10.0), doc="Oracle cost: extra seconds per oracle call (cmab)."
    )
    alpha = param.Number(
        default=1.0, bounds=(0.0, 1.0), doc="alpha of the approximate oracle (alpha-AROQ-CMAB)."
    )
    K = param.Integer(default=10, bounds=(2, 2000), doc="Number of arms K (semiparametric).")
    shift = param.Selector(
        default="sine",
        objects=["none", "sine", "log", "random", "adversarial"],
        doc="Shift nu_t (semiparametric); sine and log are Appendix I's shifts.",
    )
    magnitude = param.Number(default=1.0, bounds=(0.0, 100.0), doc="Scale of the shift nu_t.")
    gap = param.Number(default=0.5, bounds=(0.0, 2.0), doc="Suboptimality gap Delta*.")
    noise = param.Number(default=1.0, bounds=(0.0, 100.0), doc="Noise level sigma of eta_t.")
    algorithms = param.List(
        default=list(DEFAULT_ALGORITHMS["cmab"]),
        item_type=str,
        doc=f"Algorithms compared side by side (1 to {MAX_ALGORITHMS}).",
    )
    horizon = param.Integer(
        default=10_000, bounds=(1, MAX_HORIZON), doc=f"Horizon T (1 to {MAX_HORIZON:,})."
    )
    runs = param.Integer(default=3, bounds=(1, 64), doc="Repetitions R (band over runs).")
    seed = param.Integer(default=0, bounds=(0, 2**31 - 1), doc="Seed (same seed, same numbers).")
    speed = param.Selector(
        default="max", objects=list(SPEEDS), doc="Playback speed (fraction of T per frame)."
    )
    log_axes = param.Boolean(default=False, doc="Log-log axes for the regret plot.")
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
        super().__init__(**params)
        if "algorithms" not in params:
            self.algorithms = self.default_algorithms(self.problem, self.reward)
        self._refresh()

    # ------------------------------------------------------------------ derived state
    @param.depends(
        "problem",
        "d",
        "m",
        "actions",
        "reward",
        "K",
        "algorithms",
        "oracle_delay",
        "alpha",
        "shift",
        "magnitude",
        "gap",
        "noise",
        "constants",
        "horizon",
        watch=True,
    )
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

    @property
    def spec_kwargs(self) -> dict[str, Any]:
        """Keyword arguments of :func:`make_spec` for the current problem."""
        fields = _CMAB_FIELDS if self.problem == "cmab" else _SP_FIELDS
        return {f: getattr(self, f) for f in fields}

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


class RunModel(param.Parameterized):
    """Run state machine around one :class:`Simulation`.

    ``status`` is ``idle`` (nothing simulated), ``running`` (ticks advance), ``paused``,
    ``done`` (t = T) or ``error`` (the run raised: ``error`` holds one sentence).
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

    def __init__(self, config: Config | None = None, **params: Any) -> None:
        super().__init__(config=config if config is not None else Config(), **params)
        self.sim: Simulation | None = None
        self._lock = threading.Lock()
        self._rate = 0.0  # measured rounds per second of the current run

    # ------------------------------------------------------------------ state machine
    @property
    def can_run(self) -> bool:
        """Whether Run is allowed (the configuration is valid)."""
        return self.config.valid

    def run(self) -> None:
        """Start a new run of the current configuration (cancelling any previous run)."""
        with self._lock:
            self._start()
            if self.sim is not None:
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
        """
        with self._lock:
            if self.sim is None or self.status in ("done", "error", "idle"):
                self._start()
                if self.sim is None:
                    return
            self._guarded(self.sim.step)
            if self.status not in ("error", "done"):
                self.status = "paused"

    def reset(self) -> None:
        """Stop and forget the run (the simulation is closed and dropped)."""
        with self._lock:
            self._drop()
            self.param.update(status="idle", t=0, horizon=0, error="", result=None)
            self.frame += 1

    def close(self) -> None:
        """Release the simulation (the session ended)."""
        with self._lock:
            self._drop()
            if self.status == "running":
                self.status = "paused"

    def tick(self, seconds: float = 0.06) -> bool:
        """Advance a running simulation by one frame; return whether new results exist.

        A frame simulates for about ``seconds`` of wall time, capped by the playback speed
        (a fraction of T per frame).  Overlapping calls (periodic callbacks on several threads)
        return ``False`` instead of waiting.
        """
        if self.status != "running" or not self._lock.acquire(blocking=False):
            return False
        try:
            if self.sim is None or self.status != "running":
                return False
            sim = self.sim
            fraction = SPEEDS[self.config.speed]
            target = (
                sim.horizon if fraction is None else sim.t + max(1, int(fraction * sim.horizon))
            )
            before = sim.t
            self._guarded(lambda: self._advance(sim, min(target, sim.horizon), seconds))
            return self.status == "error" or sim.t != before
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
        warm-up or SROQ-C's pair phase clamped to fit the horizon), from run 1's events."""
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
        return out

    def instance_arrays(self) -> tuple[np.ndarray, np.ndarray] | None:
        """``(X, theta*)`` of the semiparametric instance being run (carried by the result),
        else ``None``."""
        return None if self.result is None else self.result.features

    # ------------------------------------------------------------------ internals
    def _start(self) -> None:
        self._drop()
        self.param.update(error="", t=0, result=None)
        if not self.config.valid:
            self.param.update(status="error", error=self.config.errors[0])
            self.frame += 1
            return
        try:
            self.sim = self.config.make_simulation()
        except Exception as exc:  # bad combination found only when building the instance
            self.sim = None
            self.param.update(status="error", error=_message(exc), horizon=0)
            self.frame += 1
            return
        self.param.update(status="paused", horizon=self.sim.horizon, t=0)
        self._snapshot()

    def _drop(self) -> None:
        sim, self.sim = self.sim, None
        self._rate = 0.0
        if sim is not None:
            sim.close()

    def _advance(self, sim: Simulation, target: int, seconds: float) -> None:
        """Advance towards ``target`` for about ``seconds`` (at least one chunk)."""
        deadline = time.perf_counter() + seconds
        while sim.t < target:
            budget = deadline - time.perf_counter()
            if budget <= 0:
                break
            step = target - sim.t
            rate = self._rate
            # aim at 70% of the remaining budget: the measured rate fluctuates
            chunk = max(1, min(step, int(0.7 * rate * budget))) if rate > 0 else 1
            start, t0 = time.perf_counter(), sim.t
            sim.advance_to(sim.t + chunk)
            elapsed = time.perf_counter() - start
            if elapsed > 0 and sim.t > t0:
                r = (sim.t - t0) / elapsed
                self._rate = r if rate == 0 else 0.5 * rate + 0.5 * r

    def _guarded(self, action: Any) -> None:
        """Run ``action``; an exception stops the run and becomes a one-sentence message."""
        try:
            action()
        except Exception as exc:
            self._drop()
            self.param.update(status="error", error=_message(exc))
            self.frame += 1
            return
        self._snapshot()

    def _snapshot(self) -> None:
        sim = self.sim
        if sim is None:
            return
        status = "done" if sim.done else self.status
        self.param.update(t=sim.t, result=sim.result(), status=status)
        self.frame += 1
        if sim.done:
            sim.close()


def _sentence(text: str) -> str:
    """First line of ``text``, capitalised and ending with a full stop."""
    line = text.strip().splitlines()[0] if text.strip() else "unknown error"
    line = line[0].upper() + line[1:]
    return line if line.endswith((".", "!", "?")) else line + "."


def _message(exc: BaseException) -> str:
    """A one-sentence, traceback-free description of a failed run."""
    kind = "" if isinstance(exc, ValueError) else f" ({type(exc).__name__})"
    return f"The run stopped: {_sentence(str(exc) or type(exc).__name__)[:-1]}{kind}."
