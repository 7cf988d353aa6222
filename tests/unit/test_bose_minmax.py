"""BOSE's per-round distribution as the paper describes it (``distribution="minmax"``).

Krishnamurthy et al. (2018) ask for ``p in Delta(A_t)`` with ``||x_b - mu_p||^2 <= tr Cov_p``
(norms in ``Gamma^-1``) for every surviving ``b``; the experimental-design paper's Appendix H
calls it a min-max quadratic program solved every round.  The default stays uniform (the
authors' code, pinned by the golden tests).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import minimize

from dashboard.algorithms.semiparametric.environment import SemiparametricEnvironment
from dashboard.algorithms.semiparametric.instances import gap_instance
from dashboard.algorithms.semiparametric.policies.bose import (
    BOSE,
    BatchedBOSE,
    minmax_distribution,
)
from dashboard.algorithms.semiparametric.shifts import make_shift


def _violations(Q, p):
    """``v_b = ||x_b - mu_p||^2 - tr Cov_p`` for every arm, from the Gram matrix."""
    Qp = Q @ p
    pQp = p @ Qp
    return np.diag(Q) - 2 * Qp + pQp - (p @ np.diag(Q) - pQp)


@st.composite
def problems(draw):
    K = draw(st.integers(1, 12))
    d = draw(st.integers(1, 6))
    seed = draw(st.integers(0, 2**31 - 1))
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(K, d)) * draw(st.sampled_from([1e-3, 1.0, 1e3]))
    if draw(st.booleans()) and K > 1:
        X[1] = X[0]  # duplicate arms
    A = rng.normal(size=(d, d))
    G = A @ A.T + 0.1 * np.eye(d)  # a Gamma^-1
    allowed = rng.random(K) < 0.7
    allowed[draw(st.integers(0, K - 1))] = True
    return X @ G @ X.T, allowed


@settings(max_examples=40, deadline=None)
@given(problems())
def test_solution_satisfies_boses_condition_on_its_support(problem):
    Q, allowed = problem
    tol = 1e-3
    p, viol, its = minmax_distribution(Q[None], allowed[None], tol=tol, max_iter=20_000)
    p = p[0]
    assert np.all(p >= 0) and abs(p.sum() - 1) < 1e-12
    assert np.all(p[~allowed] == 0)  # supported on A_t
    v = _violations(Q, p)
    trace = p @ np.diag(Q) - p @ Q @ p
    scale = max(trace, 1e-12 * max(np.abs(Q).max(), 1e-300))
    # BOSE's condition up to the factor 1 + tol, on every surviving arm
    assert its[0] < 20_000  # converged, not stopped by the cap
    assert np.max(v[allowed]) <= tol * scale + 1e-9 * np.abs(Q).max()
    assert viol[0] == pytest.approx(max(np.max(v[allowed]), 0.0), abs=1e-9 * np.abs(Q).max())
    # the min-max value is 0: v averages to 0 under p, so no arm of the support is far inside
    assert abs(p @ v) <= 1e-9 * max(np.abs(Q).max(), 1e-300)


def test_matches_the_maximum_variance_program_solved_by_scipy():
    rng = np.random.default_rng(3)
    for K, d in [(10, 5), (30, 20), (4, 2)]:
        X = rng.normal(size=(K, d))
        Q = X @ X.T
        p, _, _ = minmax_distribution(Q[None], np.ones((1, K), dtype=bool), tol=1e-6)

        def phi(q, Q=Q):  # tr Cov_q
            return q @ np.diag(Q) - q @ Q @ q

        res = minimize(
            lambda q, phi=phi: -phi(q),
            np.full(K, 1 / K),
            bounds=[(0, 1)] * K,
            constraints=[{"type": "eq", "fun": lambda q: q.sum() - 1}],
            method="SLSQP",
            options={"ftol": 1e-14, "maxiter": 1000},
        )
        assert phi(p[0]) >= -res.fun - 1e-5 * abs(res.fun)


def test_two_arms_and_symmetric_arms_keep_the_uniform_distribution():
    X = np.array([[1.0, 0.0], [-1.0, 0.0], [0.0, 1.0], [0.0, -1.0]])
    p, viol, its = minmax_distribution((X @ X.T)[None], np.ones((1, 4), dtype=bool))
    assert np.allclose(p, 0.25) and its[0] == 0 and viol[0] == pytest.approx(0.0, abs=1e-12)
    p, _, its = minmax_distribution((X[:2] @ X[:2].T)[None], np.ones((1, 2), dtype=bool))
    assert np.allclose(p, 0.5) and its[0] == 0


def _envs(R, shift="sine", d=5, K=10):
    inst = gap_instance(d, K, gap=0.5, seed=1)
    return [
        SemiparametricEnvironment(inst, make_shift(shift, seed=4), 1.0, seed=4, rep=r)
        for r in range(R)
    ]


def test_minmax_bose_logs_a_qp_every_round_and_batches_exactly():
    T, R = 200, 3
    eng = BatchedBOSE(distribution="minmax").run(_envs(R), T)
    assert np.all(eng.qp_iterations > 0)
    for r, env in enumerate(_envs(R)):
        p = BOSE(distribution="minmax").run(env, T)
        assert p.cum_regret == eng.cum_regret[r]  # batching never changes a repetition
        assert p.log.queries == p.log.adaptivity == T
        assert p.log.purposes == ["elimination + min-max QP"]
        assert eng.logs[r].purposes == ["elimination + min-max QP"]
    # the default keeps the authors' uniform distribution and its log purpose
    u = BOSE().run(_envs(1)[0], T)
    assert u.log.purposes == ["elimination + update"]
    assert u.cum_regret != p.cum_regret


def test_minmax_distribution_is_used_for_sampling_and_centring():
    bose = BOSE(distribution="minmax")
    env = _envs(1)[0]
    bose.reset(env, 500)
    bose.advance(300)
    dist = bose.action_distribution()
    surv = bose.surviving
    assert abs(dist.sum() - 1) < 1e-12 and np.all(dist[np.setdiff1d(np.arange(10), surv)] == 0)
    Q = bose.X @ bose.Gamma_inv @ bose.X.T
    v = _violations(Q, dist)
    trace = dist @ np.diag(Q) - dist @ Q @ dist
    assert np.max(v[surv]) <= bose._engine.qp_tol * trace + 1e-12
    assert bose._engine.qp_violation[0] <= bose._engine.qp_tol * trace
    # not uniform in general: the min-max weights follow the geometry of A_t
    assert not np.allclose(dist[surv], 1 / surv.size)


@pytest.mark.parametrize(
    ("kw", "match"),
    [
        ({"distribution": "qp"}, "distribution must be one of"),
        ({"distribution": None}, r"distribution (must be one of|needs a value)"),
        ({"distribution": "minmax", "qp_tol": 0}, "qp_tol"),
        ({"distribution": "minmax", "qp_tol": float("nan")}, "qp_tol"),
        ({"distribution": "minmax", "qp_max_iter": 0}, "qp_max_iter"),
        ({"distribution": "minmax", "qp_max_iter": 2.5}, "qp_max_iter"),
        ({"distribution": "minmax", "qp_max_iter": True}, "qp_max_iter"),
    ],
)
def test_bad_knobs_raise_value_error(kw, match):
    with pytest.raises(ValueError, match=match):
        BOSE(**kw)
    with pytest.raises(ValueError, match=match):
        BatchedBOSE(**kw)


def test_params_report_every_declared_constant():
    assert BOSE().params() == {
        "c": 1.0,
        "delta": 0.05,
        "lam": None,
        "distribution": "uniform",
        "qp_tol": 1e-3,
        "qp_max_iter": 1000,
    }
    assert BOSE(distribution="minmax", qp_tol=1e-4, qp_max_iter=50).params() == {
        "c": 1.0,
        "delta": 0.05,
        "lam": None,
        "distribution": "minmax",
        "qp_tol": 1e-4,
        "qp_max_iter": 50,
    }
