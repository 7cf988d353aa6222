"""Property tests of the API contract (issue 12): every entry point -- ``make_spec``, the spec
classes, ``Simulation`` / ``simulate`` / ``stream``, ``advance_to`` / ``advance_for``,
``deo_design``, ``make_instance`` / ``load_features_csv`` and the schema's field parsers --
given values of every type raises nothing but ``ValueError``.

No long run starts: simulations are tiny (T <= 60) or only constructed (construction builds the
instance, which is cheap) and closed."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from dashboard.algorithms.semiparametric.design import deo_design
from dashboard.algorithms.semiparametric.instances import load_features_csv, make_instance
from dashboard.simulation import Simulation, make_spec, simulate, stream
from dashboard.simulation.specs import FIELDS, CMABSpec, SemiparametricSpec

N_FIELD = 300  # make_spec, one field at a time
N_SIM = 150  # Simulation arguments
N_STEP = 100  # advance_to / advance_for
N_DESIGN = 150  # deo_design and make_instance
N_PARSE = 300  # Field.parse on text

SETTINGS = {
    "deadline": None,
    "suppress_health_check": [HealthCheck.too_slow, HealthCheck.filter_too_much],
}

HUGE = 10**400
ANY = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.integers(min_value=-3, max_value=600),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12),
    st.sampled_from(["no", "yes", "1", "10", "1e8", "nan", "cmab", "sine", "m-sets"]),
    st.lists(st.integers(-2, 3), max_size=4),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
    st.sampled_from([HUGE, -HUGE, 1e300, -0.0, 1e-300, np.int64(5), np.float64(0.5), object()]),
)


def only_value_error(fn, *args, **kwargs):
    """Call ``fn``; return its result or None on ValueError; any other exception fails."""
    try:
        return fn(*args, **kwargs)
    except ValueError:
        return None


# --------------------------------------------------------------------------- make_spec
@settings(max_examples=N_FIELD, **SETTINGS)
@given(
    st.sampled_from(["cmab", "semiparametric"]),
    st.sampled_from(sorted(FIELDS)),
    ANY,
)
@example("semiparametric", "d", "5")  # strings are not numbers
@example("cmab", "d", HUGE)
@example("semiparametric", "K", 1e8)
@example("semiparametric", "rescale", "no")  # not True
@example("cmab", "oracle_delay", 1e9)
@example("cmab", "explicit_actions", "x")
def test_make_spec_raises_only_value_error(problem, name, value):
    spec = only_value_error(make_spec, problem, **{name: value})
    if spec is not None:  # accepted: it is within the declared bounds and of the right type
        f = FIELDS[name]
        got = getattr(spec, name)
        if f.kind == "int":
            assert type(got) is int
            lo, hi = f.bounds_for(problem)
            assert lo <= got <= hi
        elif f.kind == "float":
            assert type(got) is float and math.isfinite(got)
        elif f.kind == "bool":
            assert got is value or (bool(got) == bool(value) and isinstance(value, np.bool_))


@pytest.mark.parametrize("value", [None, "cmab", {"problem": "cmab"}, [1, 2], 3, object()])
def test_a_spec_or_params_of_the_wrong_type_is_a_value_error(value):
    with pytest.raises(ValueError, match="spec must be a CMABSpec or SemiparametricSpec"):
        Simulation(value, ["CUCB"], 10)
    with pytest.raises(ValueError, match=r"params must be a mapping|algorithm not chosen"):
        Simulation(CMABSpec(d=4, m=2), ["CUCB"], 10, params=value if value else "x")
    if value != "cmab":  # make_spec("cmab") is the default cmab problem
        with pytest.raises(ValueError, match="unknown problem"):
            make_spec(value)


# --------------------------------------------------------------------------- Simulation
SIM_ARGS = st.fixed_dictionaries(
    {},
    optional={
        "horizon": ANY,
        "runs": ANY,
        "seed": ANY,
        "params": ANY,
        "grid_points": ANY,
        "batched": ANY,
        "max_work": ANY,
        "algorithms": st.one_of(ANY, st.lists(st.sampled_from(["CUCB", "SBE", "x", ""]))),
    },
)


@settings(max_examples=N_SIM, **SETTINGS)
@given(st.sampled_from(["cmab", "semiparametric"]), SIM_ARGS)
@example("cmab", {"horizon": HUGE})
@example("cmab", {"seed": HUGE})
@example("cmab", {"horizon": "100"})
@example("cmab", {"runs": "2"})
@example("cmab", {"grid_points": 10**9})
@example("cmab", {"grid_points": -5})
@example("cmab", {"params": "C=1"})
@example("cmab", {"params": ["CUCB"]})
@example("cmab", {"horizon": 10_000_000, "runs": 256})
def test_simulation_arguments_raise_only_value_error(problem, kwargs):
    spec = CMABSpec(d=4, m=2) if problem == "cmab" else SemiparametricSpec(d=2, K=3)
    args = {"algorithms": ["CUCB"] if problem == "cmab" else ["SBE"], "horizon": 30, **kwargs}
    sim = only_value_error(Simulation, spec, **args)
    if sim is not None:
        sim.close()


@settings(max_examples=N_STEP, **SETTINGS)
@given(st.lists(st.tuples(st.sampled_from(["to", "for", "step", "close"]), ANY), max_size=4))
@example([("to", -1)])
@example([("for", math.inf)])
@example([("for", HUGE)])
@example([("close", None), ("to", 10)])
@example([("close", None), ("step", None)])
def test_advancing_raises_only_value_error(calls):
    sim = Simulation(SemiparametricSpec(d=2, K=3), ["SBE"], 60, runs=2)
    for kind, value in calls:
        if kind == "to":
            only_value_error(sim.advance_to, value)
        elif kind == "for":
            only_value_error(
                sim.advance_for,
                value
                if not isinstance(value, int | float)
                else (min(value, 0.01) if value == value else value),
            )
        elif kind == "step":
            only_value_error(sim.step)
        else:
            sim.close()
        assert 0 <= sim.t <= sim.horizon
    sim.close()
    assert sim.result().t == sim.t  # results stay readable after close


def test_explicit_advancing_cases():
    sim = Simulation(CMABSpec(d=4, m=2), ["CUCB"], 50)
    with pytest.raises(ValueError, match="target round must be an integer >= 0"):
        sim.advance_to(-1)
    with pytest.raises(ValueError, match="seconds must be a number from 0 to 3600"):
        sim.advance_for(math.inf)
    sim.close()
    with pytest.raises(ValueError, match="closed"):
        sim.advance_to(10)
    with pytest.raises(ValueError, match="closed"):
        sim.run()


def test_simulate_and_stream_refuse_unknown_options_and_heavy_runs():
    spec = CMABSpec(d=4, m=2)
    with pytest.raises(ValueError, match="unknown option"):
        simulate(spec, ["CUCB"], 10, nope=1)
    with pytest.raises(ValueError, match="max_work=None"):
        simulate(spec, ["CUCB"], 10_000_000, runs=256)
    with pytest.raises(ValueError, match="frames"):
        next(stream(spec, ["CUCB"], 10, frames=10**9))


def test_params_cannot_override_problem_settings():
    # issue 12: CUCB:oracle_delay=1e9 slept for ever, SROQ-CMAB:executor="x" crashed
    spec = CMABSpec(d=4, m=2)
    with pytest.raises(ValueError, match="oracle_delay is not a constant of CUCB"):
        Simulation(spec, ["CUCB"], 10, params={"CUCB": {"oracle_delay": 1e9}})
    with pytest.raises(ValueError, match="executor is not a constant of SROQ-CMAB"):
        Simulation(spec, ["SROQ-CMAB"], 10, params={"SROQ-CMAB": {"executor": "x"}})


def test_oracle_delay_has_a_sane_bound_and_the_estimate_counts_it():
    with pytest.raises(ValueError, match="oracle_delay must be a number >= 0 and <= 1"):
        make_spec("cmab", oracle_delay=1e9)
    # 1 s per call of a per-round algorithm for 1000 rounds: refused before it starts
    with pytest.raises(ValueError, match="about 17 min"):
        Simulation(CMABSpec(d=4, m=2, oracle_delay=1.0), ["CUCB"], 1000)


# --------------------------------------------------------------------------- design
ARRAYS = st.one_of(
    ANY,
    st.lists(
        st.lists(st.floats(allow_nan=True, allow_infinity=True), min_size=1, max_size=4),
        min_size=0,
        max_size=6,
    ),
    st.lists(
        st.lists(st.sampled_from([0.0, 1.0, 1e308, -1e308, 1e-300]), min_size=2, max_size=2),
        min_size=2,
        max_size=5,
    ),
)


@settings(max_examples=N_DESIGN, **SETTINGS)
@given(ARRAYS, ANY)
@example([[1e308, 1e308], [1.7e308, -1e307], [3e307, 1e308]], 0)
@example([[0, 0], [0, 0]], 0)
@example([[1, 0], [0, 1]], HUGE)
def test_design_and_instances_raise_only_value_error(X, anchor):
    only_value_error(deo_design, X, anchor=anchor)
    inst = only_value_error(make_instance, "csv", features=X, rescale=True)
    if inst is not None:
        assert np.all(np.isfinite(inst.X)) and np.any(inst.X)  # never an all-zero design
        report = deo_design(inst.X)
        assert abs(sum(report.weights) - 1) < 1e-9


def test_rescale_near_1e308_keeps_the_arms_apart():
    X = [[1e308, 1e308], [1.7e308, -1e307], [3e307, 1e308]]
    inst = make_instance("csv", features=X, rescale=True)
    assert np.linalg.norm(inst.X, axis=1).max() == pytest.approx(1.0)
    assert len({tuple(r) for r in inst.X}) == 3


@pytest.mark.parametrize("path", ["/dev/zero", "/nonexistent.csv", "/", 3, None, ["a"]])
def test_reading_features_raises_only_value_error_and_stops_quickly(path):
    with pytest.raises(ValueError):
        load_features_csv(path) if isinstance(path, str) else make_instance("csv", features=path)


# --------------------------------------------------------------------------- parsers
@settings(max_examples=N_PARSE, **SETTINGS)
@given(
    st.sampled_from(sorted(FIELDS)),
    st.one_of(
        st.text(max_size=80),
        st.sampled_from(
            ["9" * 400, "1e8", "1e400", "-1e400", "nan", "inf", "0x10", "1_000", " 7 ", "1.5e1"]
        ),
    ),
)
def test_field_parse_raises_only_value_error(name, text):
    f = FIELDS[name]
    value = only_value_error(f.parse, text)
    if value is not None and f.kind in ("int", "float"):
        lo, hi = f.bounds_for(None)
        assert lo <= value <= hi


@settings(max_examples=60, **SETTINGS)
@given(st.sampled_from(["cmab-fig2", "semi-pac", "nope", 3, None]), ANY, ANY, ANY, ANY)
@example("cmab-fig2", "classroom", HUGE, None, None)
@example("semi-regret", "test", 0, HUGE, None)
def test_run_experiment_raises_only_value_error(name, scale, seed, horizon, runs):
    from dashboard.simulation import experiments

    class Started(Exception):
        pass

    def started(*_a, **_k):
        raise Started

    original = (experiments.run_panels, experiments.pure_exploration_errors)
    experiments.run_panels = experiments.pure_exploration_errors = started
    try:
        only_value_error(experiments.run_experiment, name, scale, seed, horizon, runs)
    except Started:
        pass  # every argument was accepted: the (stubbed) experiment started
    finally:
        experiments.run_panels, experiments.pure_exploration_errors = original
