"""Orthogonalized ridge estimator (Eq. 2) vs plain least squares under shifts, on a fixed design."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dashboard.algorithms import randomness as rnd
from dashboard.algorithms.semiparametric import (
    SHIFT_KEYS,
    LeastSquares,
    OrthogonalizedRidge,
    SemiparametricEnvironment,
    make_shift,
    random_instance,
    ridge_beta,
)

INST = random_instance(5, 10, seed=3)
P = np.full(10, 0.1)  # fixed uniform design
D = INST.X - INST.X[0]  # error on x_i - x_1 (Appendix I.2's e_t)


def _errors(shift: str, n: int, reps: int = 3) -> tuple[float, float]:
    """Mean over repetitions of max_i |(x_i - x_1)^T (theta_hat - theta*)| for both estimators."""
    eo, el = [], []
    for rep in range(reps):
        env = SemiparametricEnvironment(INST, make_shift(shift, seed=1), seed=1, rep=rep)
        arms = rnd.categorical(rnd.stream_key(1, rep, "design"), np.arange(1, n + 1), np.cumsum(P))
        r = env.play(arms, 1, P)
        ortho = OrthogonalizedRidge(INST.X, delta=0.05)
        ortho.add_block(arms, r, P)
        ls = LeastSquares(INST.X)
        ls.add_block(arms, r)
        eo.append(np.abs(D @ (ortho.theta() - INST.theta)).max())
        el.append(np.abs(D @ (ls.theta() - INST.theta)).max())
    return float(np.mean(eo)), float(np.mean(el))


@pytest.mark.parametrize("shift", SHIFT_KEYS)
def test_orthogonalized_estimator_is_consistent_under_every_shift(shift):
    small, _ = _errors(shift, 1000)
    large, _ = _errors(shift, 32000)
    # sqrt(32) ~ 5.7 in theory; ask for a factor 2.5 and a small absolute error
    assert large < small / 2.5
    assert large < 0.08


@pytest.mark.parametrize("shift", ["sine", "log", "adversarial"])
def test_least_squares_is_biased_by_shifts_with_nonzero_mean(shift):
    _, small = _errors(shift, 1000)
    ortho_large, large = _errors(shift, 32000)
    assert large > 0.5  # does not shrink: bias, not variance
    assert large > 0.7 * small
    assert large > 8 * ortho_large


@pytest.mark.parametrize("shift", ["none", "random"])
def test_least_squares_is_fine_without_a_mean_shift(shift):
    # the control: a zero-mean (or no) shift is just noise for least squares
    _, small = _errors(shift, 1000)
    _, large = _errors(shift, 32000)
    assert large < small / 2.5


def test_block_statistics_equal_per_round_updates_and_the_formula():
    rng_arms = rnd.integers(rnd.stream_key(0, "a"), np.arange(300), 10)
    rewards = rnd.normal(rnd.stream_key(0, "r"), np.arange(300))
    p = np.linspace(1, 2, 10)
    p /= p.sum()
    a = OrthogonalizedRidge(INST.X, 0.1)
    for lo in range(0, 300, 70):  # several blocks under the same policy
        a.add_block(rng_arms[lo : lo + 70], rewards[lo : lo + 70], p)
    b = OrthogonalizedRidge(INST.X, 0.1)
    b.add_rounds(rng_arms, rewards, np.tile(p, (300, 1)))
    Z = INST.X[rng_arms] - p @ INST.X
    assert a.n == b.n == 300
    assert a.V_hat == pytest.approx(Z.T @ Z)
    assert b.V_hat == pytest.approx(Z.T @ Z)
    assert a.b == pytest.approx(Z.T @ rewards)
    beta = math.log(300 / 0.1)
    expected = np.linalg.solve(Z.T @ Z + beta * np.eye(5), Z.T @ rewards)
    assert a.theta() == pytest.approx(expected)
    assert b.theta() == pytest.approx(expected)
    a.reset()
    assert a.n == 0 and not a.V_hat.any()


def test_ridge_beta_and_validation():
    assert ridge_beta(100, 0.05) == pytest.approx(math.log(100 / 0.05))
    assert ridge_beta(0, 0.5) == pytest.approx(math.log(2))  # at least one sample
    for bad in (0, 1, -0.1, 1.5, "x"):
        with pytest.raises(ValueError, match="delta"):
            OrthogonalizedRidge(INST.X, delta=bad)
    est = OrthogonalizedRidge(INST.X)
    with pytest.raises(ValueError, match="beta must be > 0"):
        est.theta(beta=0.0)
    with pytest.raises(ValueError, match="probs"):
        est.add_counts(np.ones(10), np.zeros(10), np.ones(3))
    with pytest.raises(ValueError, match="ridge"):
        LeastSquares(INST.X, ridge=-1)


def test_least_squares_pseudo_inverse_in_the_span():
    X = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.5, 0.5, 0.0]])  # span is 2-D
    ls = LeastSquares(X)
    ls.add_counts(np.array([10, 10, 0]), np.array([3.0, -2.0, 0.0]))
    assert ls.theta() == pytest.approx([0.3, -0.2, 0.0])
    ridge = LeastSquares(X, ridge=1.0)
    ridge.add_counts(np.array([10, 10, 0]), np.array([3.0, -2.0, 0.0]))
    assert ridge.theta() == pytest.approx([3.0 / 11, -2.0 / 11, 0.0])
