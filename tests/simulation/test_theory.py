"""The papers' reference quantities live in the simulation layer; the result carries the
shift trace and the instance, so plots read nothing from simulation internals."""

from __future__ import annotations

import numpy as np

from dashboard.simulation import Simulation
from dashboard.simulation.specs import make_spec
from dashboard.simulation.theory import estimation_error, pac_bound, rate_shape


def test_rate_shapes_of_both_papers():
    t = np.array([1.0, 100.0, 10_000.0])
    cmab = rate_shape("cmab", t, {"d": 10, "m": 3})
    assert np.allclose(cmab, np.sqrt(3 * 10 * t * np.log(np.maximum(t, np.e))))
    semi = rate_shape("semiparametric", t, {"d": 5, "K": 20})
    assert np.allclose(semi, np.sqrt(5 * t * np.log(20)))


def test_estimation_error_of_one_and_of_a_stack_of_estimates():
    rng = np.random.default_rng(0)
    X, theta = rng.normal(size=(6, 3)), rng.normal(size=3)
    stack = theta + rng.normal(scale=0.1, size=(4, 3))
    one = [estimation_error(X, theta, th, anchor=2) for th in stack]
    assert np.allclose(estimation_error(X, theta, stack, anchor=2), one)
    expected = max(abs((X[i] - X[2]) @ (stack[0] - theta)) for i in range(6))
    assert np.isclose(one[0], expected) and isinstance(one[0], float)
    assert estimation_error(X, theta, theta) == 0.0
    assert np.isclose(pac_bound(5, 30), 10 * np.sqrt(5 * np.log(30)))


def test_the_result_carries_the_shift_trace_and_the_instance():
    spec = make_spec("semiparametric", d=3, K=5, shift="sine")
    with Simulation(spec, ["SBE"], 500, runs=1, seed=1) as sim:
        sim.advance_to(400)
        res = sim.result()
        X, theta = res.features
        assert X.shape == (5, 3) and theta.shape == (3,)
        t, nu = res.shift
        assert t[-1] == 400 and len(t) == 300 and np.all(np.isfinite(nu))
        env = sim.groups[0].envs[0]
        assert np.allclose(nu, env.shift_values(t))
        assert "features" not in res.to_dict() and "shift" not in res.to_dict()
    cmab = make_spec("cmab", d=4, m=2)
    with Simulation(cmab, ["CUCB"], 50, runs=1, seed=1) as sim:
        res = sim.run()
        assert res.features is None and res.shift is None
