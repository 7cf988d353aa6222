"""Checks of a lesson's preset (:func:`validate_preset_basic`): the same schema, algorithm
declarations and work estimate as the API, the CLI and the dashboard, plus what a class can
wait for (:data:`LESSON_MAX_WORK`).

Pure Python over the UI-free simulation layer; :mod:`dashboard.ui.lessons` calls it for every
preset block of a lesson.
"""

from __future__ import annotations

from typing import Any

from dashboard.simulation import catalogue
from dashboard.simulation.specs import FIELDS, PROBLEMS, RUN_FIELDS, fields_for

__all__ = ["LESSON_MAX_WORK", "validate_preset_basic"]

#: The preset schema is the problem schema (dashboard.simulation.specs), nothing else.
_PROBLEMS = PROBLEMS
_COMMON_KEYS = ("problem", "algorithms", *RUN_FIELDS)
_MAX_ALGORITHMS = 4
_DEFAULT_REWARD = FIELDS["reward"].default_for("cmab")

#: A lesson preset must be estimated to run within this many seconds (a class waits for it).
LESSON_MAX_WORK = 60.0


def _check_value(key: str, value: Any, problem: str) -> str | None:
    """The schema's own check (same bounds and choices as the API, CLI and dashboard)."""
    f = FIELDS[key]
    if f.kind == "choice" and isinstance(value, str) and value not in f.offered_choices():
        return f"{key!r} must be one of {', '.join(repr(c) for c in f.offered_choices())}, " + (
            f"got {value!r}"
        )
    try:
        f.check(value, problem)
    except ValueError as exc:
        return f"{key!r}: {exc}"
    if f.kind in ("int", "float") and isinstance(value, str):
        return f"{key!r} must be a number, got {value!r}"
    return None


def _check_work(preset: dict[str, Any], problem: str) -> str | None:
    """A lesson runs in class: refuse presets estimated above :data:`LESSON_MAX_WORK`."""
    from dashboard.simulation.budget import estimate_run
    from dashboard.simulation.specs import make_spec

    try:
        spec = make_spec(
            problem, **{f.name: preset[f.name] for f in fields_for(problem) if f.name in preset}
        )
        infos = [catalogue.declaration(a, problem) for a in preset["algorithms"]]
    except (ValueError, KeyError, TypeError):
        return None  # reported by the other checks
    horizon = preset.get("horizon", FIELDS["horizon"].default)
    runs = preset.get("runs", FIELDS["runs"].dashboard_default)
    constants = preset.get("constants") if isinstance(preset.get("constants"), dict) else {}
    params = {str(k).lower(): v for k, v in constants.items() if isinstance(v, dict)}
    est = estimate_run(spec, infos, horizon, runs, params)
    if est.seconds > LESSON_MAX_WORK:
        return (
            f"the preset would take {est.describe()}; a lesson preset must run within "
            f"{LESSON_MAX_WORK:g} s (reduce horizon, runs or sizes)"
        )
    return None


def validate_preset_basic(preset: Any) -> list[str]:
    """Human-readable problems of a lesson preset; an empty list when it is fine.

    Checks: a JSON object; ``problem`` in ``{"cmab", "semiparametric"}``; ``algorithms`` a
    list of 1 to 4 distinct registered names (:func:`catalogue.declaration`) of that problem
    and, for ``cmab``, supporting the reward model (default ``"linear"``,
    :func:`catalogue.algorithm_names`); no unknown keys (keys of the other problem count as
    unknown); types, bounds and choices of every other key from the one problem schema
    (:data:`dashboard.simulation.specs.FIELDS`, the same as the API, CLI and dashboard), ``m``
    at most ``d``; ``constants`` checked against the algorithms' declarations; and a run
    estimated (:func:`dashboard.simulation.budget.estimate_run`) to take at most
    :data:`LESSON_MAX_WORK` seconds, since a class waits for it.
    """
    if not isinstance(preset, dict):
        return [f"the preset must be a JSON object (dict), got {type(preset).__name__}"]
    problems: list[str] = []
    problem = preset.get("problem")
    if "problem" not in preset:
        problems.append(f"missing 'problem' (one of {', '.join(_PROBLEMS)})")
    elif problem not in _PROBLEMS:
        problems.append(f"'problem' must be one of {', '.join(_PROBLEMS)}, got {problem!r}")
        problem = None

    keys = [*RUN_FIELDS]
    if problem is not None:
        keys += [f.name for f in fields_for(problem, dashboard=True)]
    allowed = set(_COMMON_KEYS) | set(keys) | {"constants"}
    for key in preset:
        if key not in allowed:
            if problem is None:
                continue
            problems.append(
                f"unknown key {key!r} for problem {problem!r}; allowed: "
                + ", ".join(sorted(allowed))
            )

    for key, value in preset.items():
        if key in keys:
            msg = _check_value(key, value, problem or "cmab")
            if msg:
                problems.append(msg)

    if problem == "cmab" and isinstance(preset.get("m"), int) and isinstance(preset.get("d"), int):
        if preset["m"] > preset["d"]:
            problems.append(f"'m' ({preset['m']}) must not exceed 'd' ({preset['d']})")

    algorithms = preset.get("algorithms")
    if "algorithms" not in preset:
        problems.append("missing 'algorithms' (a list of 1 to 4 algorithm names)")
    elif not isinstance(algorithms, list) or not all(isinstance(a, str) for a in algorithms):
        problems.append(f"'algorithms' must be a list of names, got {algorithms!r}")
    elif not algorithms:
        problems.append("'algorithms' is empty; choose 1 to 4 algorithms")
    else:
        if len(algorithms) > _MAX_ALGORITHMS:
            problems.append(
                f"'algorithms' has {len(algorithms)} entries; at most {_MAX_ALGORITHMS} allowed"
            )
        lowered = [a.strip().lower() for a in algorithms]
        dupes = sorted({a for a in algorithms if lowered.count(a.strip().lower()) > 1})
        if dupes:
            problems.append(f"'algorithms' lists {', '.join(dupes)} more than once")
        reward = preset.get("reward", _DEFAULT_REWARD)
        for name in algorithms:
            try:
                info = catalogue.declaration(name)
            except ValueError as exc:
                problems.append(str(exc))
                continue
            if problem is None:
                continue
            if info.problem != problem:
                problems.append(
                    f"algorithm {info.name!r} belongs to the {info.problem!r} problem, not "
                    f"{problem!r}"
                )
            elif problem == "cmab" and isinstance(reward, str):
                supported = set(catalogue.algorithm_names("cmab", reward))
                if info.name not in supported and reward in FIELDS["reward"].offered_choices():
                    problems.append(
                        f"algorithm {info.name!r} does not support the {reward!r} reward model; "
                        f"it supports: {', '.join(info.rewards)}"
                    )
    if "constants" in preset:
        chosen = algorithms if isinstance(algorithms, list) else []
        problems += catalogue.constants_problems(preset["constants"], chosen)
    if not problems and problem is not None:
        heavy = _check_work(preset, problem)
        if heavy:
            problems.append(heavy)
    return problems
