"""Reward models of the combinatorial paper: covariance (Gaussian), general and continuous."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from dashboard.algorithms.cmab.actions import MSets
from dashboard.algorithms.cmab.rewards import (
    REWARDS,
    ContinuousRewards,
    CovarianceRewards,
    GeneralRewards,
    LinearRewards,
    expected_aggregate,
    make_reward,
)


# ---------------------------------------------------------------------------- make_reward
def test_make_reward_names_case_insensitive():
    assert REWARDS == ("linear", "covariance", "general", "continuous")
    classes = [LinearRewards, CovarianceRewards, GeneralRewards, ContinuousRewards]
    for key, cls in zip(REWARDS, classes):
        model = make_reward(key.upper(), 5, seed=2)
        assert type(model) is cls and model.d == 5 and model.seed == 2 and model.key == key
    assert make_reward(" Covariance ", 4, scale=0.5).scale == 0.5


def test_make_reward_unknown_lists_allowed():
    with pytest.raises(ValueError, match="linear, covariance, general, continuous"):
        make_reward("gaussian", 5)


# ---------------------------------------------------------------------------- covariance
def test_covariance_instance_is_scaled_correlation():
    model = CovarianceRewards(10, seed=3, scale=0.3)
    assert np.allclose(np.diag(model.Sigma), 0.09)
    assert np.allclose(model.Sigma, model.Sigma.T)
    assert np.linalg.eigvalsh(model.Sigma).min() > 0
    assert np.all((model.mu >= 0) & (model.mu <= 1))
    a = np.zeros(10, dtype=bool)
    a[[1, 4, 7]] = True
    expected = np.array([sum(max(model.Sigma[i, j], 0.0) for j in (1, 4, 7)) for i in range(10)])
    assert np.allclose(model.sigma2(a), expected)


def test_covariance_samples_match_mean_and_covariance():
    model = CovarianceRewards(6, seed=1, scale=0.5)
    env = model.environment(MSets(6, 4), rep=0)
    action = np.array([1, 0, 1, 1, 0, 1], dtype=bool)
    n = 40_000
    y = env.play_fixed(action, 1, n)
    arms = np.flatnonzero(action)
    S = model.Sigma[np.ix_(arms, arms)]
    # standard errors: mean sqrt(0.25 / n) = 0.0025, covariance about 0.25 * sqrt(2 / n) = 0.0018
    assert np.allclose(y.mean(axis=0), model.mu[arms], atol=0.012)
    assert np.allclose(np.cov(y.T), S, atol=0.01)


def test_covariance_rows_of_play_equal_play_fixed():
    """Outcomes depend on (rep, t, arm set) only: mixed-action play() rows == play_fixed."""
    model = CovarianceRewards(5, seed=0)
    fam = MSets(5, 2)
    acts = np.zeros((4, 5), dtype=bool)
    for r, arms in enumerate([(0, 1), (2, 4), (0, 1), (1, 3)]):
        acts[r, list(arms)] = True
    y = model.environment(fam, 1).play(acts, 10)
    for r in range(4):
        single = model.environment(fam, 1).play_fixed(acts[r], 10 + r, 1)[0]
        assert np.array_equal(y[r, acts[r]], single)
        assert np.all(np.isnan(y[r, ~acts[r]]))


@pytest.mark.parametrize("key", ["covariance", "general", "continuous"])
def test_same_seed_same_draws_and_chunking_invariance(key):
    fam = MSets(5, 2)
    model = make_reward(key, 5, seed=7)
    action = np.array([0, 1, 0, 0, 1], dtype=bool)
    whole = model.environment(fam, 2).play_fixed(action, 1, 200)
    env = model.environment(fam, 2)
    halves = np.vstack([env.play_fixed(action, 1, 120), env.play_fixed(action, 121, 80)])
    assert np.array_equal(whole, halves)
    again = make_reward(key, 5, seed=7).environment(fam, 2).play_fixed(action, 1, 200)
    assert np.array_equal(whole, again)
    other_rep = model.environment(fam, 3).play_fixed(action, 1, 200)
    assert not np.array_equal(whole, other_rep)
    other_seed = make_reward(key, 5, seed=8).environment(fam, 2).play_fixed(action, 1, 200)
    assert not np.array_equal(whole, other_seed)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"scale": 0.0},
        {"scale": -1.0},
        {"Sigma": np.ones((3, 3))},  # wrong shape
        {"Sigma": np.array([[1.0, 2.0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]])},
        {"Sigma": -np.eye(4)},
        {"mu": np.array([0.1, np.nan, 0.2, 0.3])},
    ],
)
def test_covariance_bad_input(kwargs):
    with pytest.raises(ValueError):
        CovarianceRewards(4, seed=0, **kwargs)


# ---------------------------------------------------------------------------- general
def test_general_instance_matches_paper_construction():
    model = GeneralRewards(5, seed=4)
    assert np.allclose(model.support, [0.2, 0.4, 0.6, 0.8, 1.0])
    assert np.allclose(model.probs.sum(axis=1), 1.0)
    for row in model.probs:
        assert np.isclose(row.max(), 0.99)
        assert np.allclose(np.sort(row)[:-1], 0.01 / 4)
    assert np.allclose(model.mu, model.probs @ model.support)
    assert model.linear is False


def test_general_samples_match_distribution():
    model = GeneralRewards(4, seed=1, peak_mass=0.6)
    env = model.environment(MSets(4, 4), rep=0)
    y = env.play_fixed(np.ones(4, dtype=bool), 1, 20_000)
    for i in range(4):
        freq = np.array([(y[:, i] == v).mean() for v in model.support])
        assert np.allclose(freq, model.probs[i], atol=0.015)  # se <= 0.0035
    assert set(np.unique(y)) <= set(model.support)


def _brute_expectation(model, arms, fn):
    total = 0.0
    for combo in itertools.product(range(model.support.size), repeat=len(arms)):
        p = math.prod(model.probs[i, k] for i, k in zip(arms, combo))
        total += p * fn(model.support[list(combo)])
    return total


@pytest.mark.parametrize(
    ("reward", "fn"),
    [("sqrt-sum", lambda v: math.sqrt(v.sum())), ("max", np.max), ("sum", np.sum)],
)
def test_general_expected_reward_exact(reward, fn):
    model = GeneralRewards(6, seed=2, peak_mass=0.5, reward=reward)
    action = np.array([1, 0, 1, 1, 0, 0], dtype=bool)
    arms = list(np.flatnonzero(action))
    assert model.expected_reward(action) == pytest.approx(
        _brute_expectation(model, arms, fn), abs=1e-9
    )
    assert model.linear is (reward == "sum")


def test_general_reward_function_and_monte_carlo():
    model = GeneralRewards(5, seed=0, peak_mass=0.4)
    env = model.environment(MSets(5, 2), 0)
    action = np.array([1, 1, 0, 0, 0], dtype=bool)
    y_full = np.full((30_000, 5), np.nan)
    y_full[:, :2] = env.play_fixed(action, 1, 30_000)
    r = model.reward(action, y_full)
    assert np.allclose(r, np.sqrt(y_full[:, 0] + y_full[:, 1]))
    assert r.mean() == pytest.approx(model.expected_reward(action), abs=0.01)  # se ~0.002


def test_expected_aggregate_against_enumeration():
    rng = np.random.default_rng(5)
    vals = [rng.random(3), rng.random(4), rng.random(2)]
    probs = [rng.dirichlet(np.ones(v.size)) for v in vals]
    brute = {"sqrt-sum": 0.0, "max": 0.0, "sum": 0.0}
    for combo in itertools.product(*[range(v.size) for v in vals]):
        p = math.prod(pr[k] for pr, k in zip(probs, combo))
        x = np.array([v[k] for v, k in zip(vals, combo)])
        brute["sqrt-sum"] += p * math.sqrt(x.sum())
        brute["max"] += p * x.max()
        brute["sum"] += p * x.sum()
    for kind, value in brute.items():
        assert expected_aggregate(vals, probs, kind) == pytest.approx(value, abs=1e-8)
    assert expected_aggregate([], [], "sqrt-sum") == 0.0
    with pytest.raises(ValueError, match="sqrt-sum"):
        expected_aggregate(vals, probs, "product")


@pytest.mark.parametrize(
    "kwargs",
    [
        {"support": (0.2, 1.5)},
        {"support": (0.2, 0.2, 0.4)},
        {"support": ()},
        {"peak_mass": 0.0},
        {"peak_mass": 1.2},
        {"reward": "log"},
        {"probs": np.full((3, 5), 0.3)},
        {"probs": np.full((3, 4), 0.25)},
    ],
)
def test_general_bad_input(kwargs):
    with pytest.raises(ValueError):
        GeneralRewards(3, seed=0, **kwargs)


# ---------------------------------------------------------------------------- continuous
def test_continuous_outcomes_and_expected_reward():
    model = ContinuousRewards(4, seed=3, kappa=4.0)
    env = model.environment(MSets(4, 2), 0)
    action = np.array([0, 1, 1, 0], dtype=bool)
    y = env.play_fixed(action, 1, 40_000)
    assert y.min() >= 0 and y.max() <= 1
    assert np.allclose(y.mean(axis=0), model.mu[[1, 2]], atol=0.01)  # se ~0.001
    mc = np.sqrt(y.sum(axis=1)).mean()
    assert model.expected_reward(action) == pytest.approx(mc, abs=0.005)  # se ~0.002
    # the quasi-exact integral is deterministic and cached
    assert model.expected_reward(action) == ContinuousRewards(4, 3).expected_reward(action)
    big = ContinuousRewards(6, seed=1)
    six = np.ones(6, dtype=bool)  # 6 arms: Sobol branch
    yb = big.environment(MSets(6, 6), 0).play_fixed(six, 1, 20_000)
    assert big.expected_reward(six) == pytest.approx(np.sqrt(yb.sum(axis=1)).mean(), abs=0.01)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"kappa": 0.0},
        {"mean_range": (0.0, 0.5)},
        {"mean_range": (0.6, 0.5)},
        {"mu": np.array([0.5, 1.0, 0.2])},
        {"reward": "prod"},
    ],
)
def test_continuous_bad_input(kwargs):
    with pytest.raises(ValueError):
        ContinuousRewards(3, seed=0, **kwargs)


def _per_set_reference(model, rep, arms, t):
    """The covariance sampler as first written: one normal draw per distinct arm set."""
    from dashboard.algorithms import randomness as rnd

    order = np.lexsort((arms, t))
    sa, st = arms[order], t[order]
    starts = np.flatnonzero(np.r_[True, st[1:] != st[:-1]])
    sizes = np.diff(np.r_[starts, st.size])
    keys, res = model._keys_for(rep), np.empty(st.size)
    for k in np.unique(sizes):
        pos = starts[sizes == k][:, None] + np.arange(k)[None, :]
        sets, inv = np.unique(sa[pos], axis=0, return_inverse=True)
        for g, arm_set in enumerate(sets):
            p = pos[np.asarray(inv).reshape(-1) == g]
            z = rnd.normal(keys[:k][None, :], st[p[:, 0]][:, None])
            res[p] = model.mu[arm_set][None, :] + z @ model._factor(arm_set).T
    out = np.empty(arms.size)
    out[order] = res
    return out


@pytest.mark.parametrize("d", [7, 20, 70])
def test_covariance_sampler_equals_per_set_reference(d):
    """One vectorised draw for all entries, sets grouped by an integer code (issue 9's
    start-up), gives bit-identical outcomes to one draw per arm set (also for d > 62, where
    sets are grouped row-wise)."""
    model = CovarianceRewards(d, seed=4)
    rng = np.random.default_rng(d)
    for trial in range(30):
        L = int(rng.integers(1, 60)) if trial % 10 else 300  # few rounds, and many
        acts = np.zeros((L, d), dtype=bool)
        for r in range(L):
            acts[r, rng.choice(d, int(rng.integers(1, 5)), replace=False)] = True
        acts[L // 2 :] = acts[: L - L // 2]  # repeated sets, as in a schedule
        rows, arms = np.nonzero(acts)
        t = int(rng.integers(1, 10**6)) + rows
        y = model.sample(trial % 3, arms, np.zeros_like(arms), t)
        assert np.array_equal(y, _per_set_reference(model, trial % 3, arms, t))
        shuffled = rng.permutation(arms.size)  # entries in any order
        y = model.sample(trial % 3, arms[shuffled], np.zeros_like(arms), t[shuffled])
        assert np.array_equal(y, _per_set_reference(model, trial % 3, arms, t)[shuffled])
        # one fixed set over consecutive rounds, as play_fixed asks (the short path)
        one = np.broadcast_to(np.flatnonzero(acts[0]), (L, int(acts[0].sum())))
        ts = np.broadcast_to(t[0] + np.arange(L)[:, None], one.shape)
        y = model.sample(trial % 3, one, np.zeros_like(one), ts)
        ref = _per_set_reference(model, trial % 3, one.ravel(), ts.ravel())
        assert np.array_equal(y, ref.reshape(one.shape))
