"""Invariants of every registered algorithm's declaration (the one place its facts live)."""

from __future__ import annotations

import inspect
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dashboard.algorithms.base import Policy
from dashboard.algorithms.declare import RESERVED, AlgorithmDeclaration, Constant
from dashboard.algorithms.registry import ALGORITHMS, check_policy_class
from dashboard.simulation import catalogue
from dashboard.simulation.runner import Simulation, simulate
from dashboard.simulation.specs import make_spec

INFOS = list(ALGORITHMS.values())
IDS = [i.name for i in INFOS]
CONSTANTS = [(i, c) for i in INFOS for c in i.declaration.constants]
CONSTANT_IDS = [f"{i.name}:{c.name}" for i, c in CONSTANTS]


@pytest.mark.parametrize("info", INFOS, ids=IDS)
def test_declaration_is_well_formed_and_matches_the_class(info):
    decl = info.declaration
    assert decl.malformed() is None and check_policy_class(info.cls) is None
    assert (info.cls.name, info.cls.problem) == (decl.name, decl.problem)
    assert decl.reference.strip() and decl.doc.strip()
    for c in decl.constants:
        assert c.malformed() is None and c.check(c.default) is None, c.name
        assert c.doc.strip(), f"{decl.name}:{c.name} has no doc"
        assert c.name not in RESERVED[decl.problem]


@pytest.mark.parametrize("info", INFOS, ids=IDS)
def test_constructor_signature_matches_the_declaration(info):
    sig = inspect.signature(info.cls.__init__).parameters
    for c in info.declaration.constants:
        assert c.name in sig and sig[c.name].default == c.default, c.name
    declared = {c.name for c in info.declaration.constants}
    internal = set(sig) - declared - {"self"}
    # everything else is injected by the simulation (cmab) or an API-only hook
    assert internal <= {*RESERVED[info.problem], "approximate"}, internal


@pytest.mark.parametrize("info", INFOS, ids=IDS)
def test_params_equal_the_declared_names_and_values(info):
    policy = info.cls()
    decl = info.declaration
    names = [c.name for c in decl.constants]
    reported = list(policy.params())
    if type(policy).params is Policy.params:  # the declaration's params(): every constant
        assert reported == names
    else:  # an override may leave out constants not in use (BOSE's QP knobs when uniform)
        assert reported == [n for n in names if n in reported] and reported, reported
    for name in reported:
        assert policy.params()[name] == decl.constant(name).default
    if decl.batched is not None:  # the engine takes the same constants
        engine = decl.batched(**{c.name: c.default for c in decl.constants})
        for c in decl.constants:
            assert getattr(engine, c.name) == c.default


def _inside(c: Constant) -> list[object]:
    """Values a declaration accepts, at its bounds."""
    if c.kind == "choice":
        return list(c.choices)
    if c.kind == "bool":
        return [True, False]
    out = [c.default]
    if c.low is not None and not c.low_open:
        out.append(int(c.low) if c.kind == "int" else c.low)
    if c.high is not None and not c.high_open:
        out.append(int(c.high) if c.kind == "int" else c.high)
    return [v for v in out if v is not None]


def _outside(c: Constant) -> list[object]:
    """Values a declaration refuses, just beyond its bounds, plus the wrong kinds."""
    out: list[object] = ["nope", [1], {"a": 1}]
    if c.kind in ("float", "int"):
        out += [float("nan"), True]
        if c.low is not None:
            out.append(
                c.low if c.low_open else (c.low - 1 if c.kind == "int" else c.low / 2 - 1e-12)
            )
        if c.high is not None:
            out.append(c.high if c.high_open else (c.high + 1 if c.kind == "int" else c.high * 2))
        if c.kind == "float":
            out += [float("inf"), 10**400]
        else:
            out.append(2.5)
    return out


@pytest.mark.parametrize(("info", "c"), CONSTANTS, ids=CONSTANT_IDS)
def test_bounds_are_enforced_by_the_declaration_for_every_constructor(info, c):
    for v in _inside(c):
        info.cls(**{c.name: v})  # accepted values construct
    for v in _outside(c):
        assert c.check(v) is not None, (c.name, v)
        with pytest.raises(ValueError, match=c.name):
            info.cls(**{c.name: v})


_ANY = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**30), max_value=10**30),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=8),
    st.sampled_from(["gao", "paper", "eq4", "appendix-i", "uniform", 1e-300, 1e300, -0.0]),
)


@settings(max_examples=150, deadline=None)
@given(pick=st.integers(min_value=0, max_value=len(CONSTANTS) - 1), value=_ANY)
def test_any_value_either_constructs_or_is_one_value_error(pick, value):
    """Property: whatever the value, a constructor accepts it exactly when the declaration
    does, and refuses it with a ValueError (never another exception)."""
    info, c = CONSTANTS[pick]
    ok = c.check(value) is None
    try:
        info.cls(**{c.name: value})
    except ValueError:
        assert not ok, (info.name, c.name, value)
    else:
        assert ok, (info.name, c.name, value)


def test_degenerate_values_are_refused_with_the_reason():
    from dashboard.algorithms.semiparametric.policies.linear_foils import LinUCB
    from dashboard.algorithms.semiparametric.policies.sbe import SBE

    with pytest.raises(ValueError, match=r"lam must be in \[1e-06, 1000000\] \(got 1e-300\)"):
        LinUCB(lam=1e-300)
    with pytest.raises(ValueError, match=r"c must be in \[0.001, 1000\]"):
        SBE(c=1e-300)
    lam = catalogue.declaration("LinUCB").constant("lam")
    assert "V^-1 = I/lambda" in lam.doc  # the doc says why the floor is not 0


@pytest.mark.parametrize(
    ("algorithm", "params", "message"),
    [
        ("SROQ-CMAB", {"executor": "x"}, "executor is not a constant of SROQ-CMAB"),
        ("CUCB", {"oracle_delay": 1e9}, "oracle_delay is not a constant of CUCB"),
        ("CUCB", {"__class__": 1}, "CUCB has no constant '__class__'; allowed: C"),
        ("CUCB", {"nope": 1}, "CUCB has no constant 'nope'; allowed: C"),
        ("CUCB", {"c": 1}, "CUCB has no constant 'c'; allowed: C"),
        ("CUCB", {"C": 1e-300}, r"C must be in \[0.001, 1000\]"),
        ("CUCB", "C=1", "constants of CUCB must be a mapping"),
    ],
)
def test_simulation_params_are_checked_against_the_declaration(algorithm, params, message):
    spec = make_spec("cmab", d=4, m=2)
    with pytest.raises(ValueError, match=message):
        simulate(spec, [algorithm], 20, params={algorithm: params})


@pytest.mark.parametrize("params", ["C=1", [("CUCB", {})], 3])
def test_params_must_be_a_mapping(params):
    with pytest.raises(ValueError, match="params must be a mapping"):
        simulate(make_spec("cmab", d=4, m=2), ["CUCB"], 20, params=params)


def test_the_runner_uses_the_declared_batched_engine_only():
    spec = make_spec("cmab", d=4, m=2)
    sim = Simulation(spec, ["CUCB", "AROQ-CMAB"], 50, runs=2)
    cucb, aroq = sim.groups
    assert type(cucb.batched) is catalogue.declaration("CUCB").batched
    assert aroq.batched is None and len(aroq.policies) == 2
    single = Simulation(spec, ["CUCB"], 50, runs=2, batched=False).groups[0]
    assert single.batched is None


def test_a_declaration_refuses_reserved_and_malformed_constants():
    with pytest.raises(ValueError, match="injected by the simulation"):
        AlgorithmDeclaration(
            "X", "cmab", "ref", rewards=("linear",), constants=(Constant("oracle_delay", 0.0),)
        )
    with pytest.raises(ValueError, match="fails its own bounds"):
        Constant("c", 0.0, low=0.0, low_open=True)
    with pytest.raises(ValueError, match="identifier"):
        Constant("not a name", 1.0)
    with pytest.raises(ValueError, match="must list the reward models"):
        AlgorithmDeclaration("X", "cmab", "ref")
    assert math.isclose(Constant("x", 1.0).validate(2), 2.0)
