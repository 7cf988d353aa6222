"""General-reward CMAB policies: AROQ-GR (Alg. 6), SROQ-GR (Alg. 7), SDCB, Algorithm 8."""

from __future__ import annotations

import functools
import math

import numpy as np
import pytest
from regret_checks import half_and_total, random_play_regret

from dashboard.algorithms.cmab.actions import MSets
from dashboard.algorithms.cmab.policies.general import (
    AROQGR,
    SDCB,
    SROQGR,
    DiscretizedAROQGR,
    DiscretizedSROQGR,
    EmpiricalDistributions,
    discretize,
    paper_intervals,
)
from dashboard.algorithms.cmab.rewards import (
    ContinuousRewards,
    CovarianceRewards,
    GeneralRewards,
    LinearRewards,
)


def _general_env(seed=0, rep=0):
    """Appendix A.11.2: d=5, m=2, support {0.2..1}, peak mass 0.99, sqrt-sum reward."""
    return GeneralRewards(5, seed=seed).environment(MSets(5, 2), rep)


def _continuous_env(seed=0, rep=0):
    return ContinuousRewards(5, seed=seed).environment(MSets(5, 2), rep)


@pytest.mark.parametrize(("cls", "T"), [(AROQGR, 16_000), (SROQGR, 16_000), (SDCB, 1000)])
@pytest.mark.parametrize("seed", [0, 1])
def test_sublinear_regret_on_paper_setting(cls, T, seed):
    """The second half of the horizon costs clearly less than the first, and the total is a
    small fraction of uniform random play (the rare-query policies are cheap, so their horizon
    is long enough for the fixed-action blocks to average out)."""
    env = _general_env(seed)
    half, total = half_and_total(cls(), env, T)
    assert total - half <= 0.6 * half
    assert total < 0.3 * random_play_regret(env, T)


@pytest.mark.parametrize("cls", [DiscretizedAROQGR, DiscretizedSROQGR])
def test_discretized_regret_on_continuous_outcomes(cls):
    T = 16_000
    env = _continuous_env(seed=0)
    half, total = half_and_total(cls(), env, T)
    assert total - half <= 0.6 * half
    assert total < 0.3 * random_play_regret(env, T)


def test_oracle_counts_and_adaptivity():
    T = 4000
    aroq = AROQGR().run(_general_env(), T)
    sroq = SROQGR().run(_general_env(), T)
    sdcb = SDCB().run(_general_env(), 600)
    assert aroq.log.queries < T / 50 and sroq.log.queries < T / 50
    assert aroq.log.adaptivity == aroq.log.queries == sum(e.kind == "oracle" for e in aroq.events)
    n_epochs = sum(e.kind == "epoch" for e in sroq.events)
    assert n_epochs == len(sroq.ends)
    assert sroq.log.adaptivity == n_epochs  # one parallel round per epoch (Appendix A.1)
    assert sdcb.log.queries == 600 and sdcb.log.adaptivity == 600
    first = next(e for e in aroq.events if e.kind == "oracle")
    assert first.t == 1  # the counted initial query


def test_aroqgr_epoch_threshold():
    """Queries happen exactly when an arm's epoch count reaches 1 + sqrt(T m |prev| / d)."""
    T = 3000
    p = AROQGR().run(_general_env(), T)
    calls = [e for e in p.events if e.kind == "oracle"]
    assert calls[1].t == 2  # every arm played once in epoch 1 (|T_i(0)| = 0): threshold 1
    thr = math.ceil(1 + math.sqrt(T * 2 * 1 / 5))
    assert calls[2].t == 2 + thr  # then ceil(1 + sqrt(T m / d)) plays of the same action


def test_optimistic_and_pessimistic_distributions():
    stats = EmpiricalDistributions(2)
    stats.add(0, np.array([0.2, 0.2, 0.6, 1.0, 0.4, 0.2, 0.6, 0.6]))
    grid = np.linspace(0, 1, 101)

    def cdf(vals, probs):
        return np.array([probs[vals <= x + 1e-12].sum() for x in grid])

    emp = cdf(stats.values[0], stats.counts[0] / 8)
    rho = 0.3
    up = cdf(*stats.optimistic(0, rho, 64))
    down = cdf(*stats.pessimistic(0, rho, 64))
    below = grid < 1
    assert np.allclose(up[below], np.maximum(emp[below] - rho, 0))
    assert np.allclose(down[below], np.minimum(emp[below] + rho, 1))
    assert np.isclose(up[-1], 1) and np.isclose(down[-1], 1)
    # unplayed arm: point masses at the ends of the support
    assert stats.optimistic(1, np.inf, 64)[0].tolist() == [1.0]
    assert stats.pessimistic(1, np.inf, 64)[0].tolist() == [0.0]
    # compression keeps dominance: rounded-up CDF lies below the exact one
    many = EmpiricalDistributions(1)
    many.add(0, np.random.default_rng(0).random(500))
    v, p = many.optimistic(0, 0.05, 16)
    assert v.size <= 17
    exact = EmpiricalDistributions(1)
    exact.add(0, many.values[0])
    ve, pe = exact.optimistic(0, 0.05, 10_000)
    assert np.all(cdf(v, p) <= cdf(ve, pe) + 1e-12)


def test_linear_and_covariance_models_use_linear_scores():
    for model in (LinearRewards(6, seed=0), CovarianceRewards(6, seed=0)):
        env = model.environment(MSets(6, 2), 0)
        p = AROQGR().run(env, 1500)
        assert p.kind == "sum" and p.t == 1500
        assert p.cum_regret < 0.3 * random_play_regret(env, 1500)
    s = SDCB().run(LinearRewards(6, seed=0).environment(MSets(6, 2), 0), 300)
    assert s.log.queries == 300


def test_discretization_algorithm_8():
    s = 4
    y = np.array([0.0, 0.25, 0.2500001, 0.5, 0.74, 1.0, 1.3, -0.1])
    assert np.allclose(discretize(y, s), [0.25, 0.25, 0.5, 0.5, 0.75, 1.0, 1.0, 0.25])
    assert paper_intervals(2, 5000) == math.ceil(math.sqrt(10_000))
    T = 2000
    p = DiscretizedAROQGR().run(_continuous_env(), T)
    assert p.intervals == math.ceil(math.sqrt(2 * T))
    for vals in p.stats.values:
        j = vals * p.intervals
        assert np.allclose(j, np.round(j))  # every observation seen on the grid j/s
    q = DiscretizedSROQGR(s=5).run(_continuous_env(), 1000)
    assert q.intervals == 5
    assert all(set(np.round(v, 9)) <= {0.2, 0.4, 0.6, 0.8, 1.0} for v in q.stats.values)


@pytest.mark.parametrize(
    ("cls", "T", "env_fn"),
    [
        (AROQGR, 3000, _general_env),
        (SROQGR, 3000, _general_env),
        (SDCB, 300, _general_env),
        (functools.partial(SDCB, initial_pass=True), 40, _general_env),
        (DiscretizedAROQGR, 2000, _continuous_env),
        (DiscretizedSROQGR, 2000, _continuous_env),
    ],
)
def test_stream_equals_batch(cls, T, env_fn):
    batch = cls().run(env_fn(seed=2, rep=1), T)
    stream = cls()
    stream.reset(env_fn(seed=2, rep=1), T)
    rng = np.random.default_rng(3)
    target = 0
    while stream.t < T:
        target = min(T, target + int(rng.integers(1, 150)))
        while stream.t < target:
            stream.advance(target)
    assert stream.cum_regret == batch.cum_regret
    assert stream.log.queries == batch.log.queries
    assert stream.log.adaptivity == batch.log.adaptivity
    assert [(e.t, e.kind) for e in stream.events] == [(e.t, e.kind) for e in batch.events]
    for a, b in zip(stream.stats.counts, batch.stats.counts):
        assert np.array_equal(a, b)


@pytest.mark.parametrize(
    ("cls", "kwargs"),
    [
        (AROQGR, {"C": -1.0}),
        (AROQGR, {"max_atoms": 1}),
        (AROQGR, {"executor": 3}),
        (SROQGR, {"M": 0}),
        (SDCB, {"oracle_delay": -0.5}),
        (SDCB, {"initial_pass": "yes"}),
        (AROQGR, {"threshold_scale": 0.0}),
        (AROQGR, {"threshold_scale": float("inf")}),
        (AROQGR, {"epoch0_size": -1}),
        (AROQGR, {"epoch0_size": 1.5}),
        (DiscretizedAROQGR, {"threshold_scale": -2.0}),
        (DiscretizedAROQGR, {"s": 0}),
        (DiscretizedSROQGR, {"lipschitz": 0.0}),
        (DiscretizedSROQGR, {"s": 2.5}),
    ],
)
def test_bad_parameters(cls, kwargs):
    with pytest.raises(ValueError):
        cls(**kwargs)


def test_bad_environment_and_horizon():
    with pytest.raises(ValueError):
        AROQGR().reset(_general_env(), 0)
    with pytest.raises(ValueError, match="CMABEnvironment"):
        SDCB().reset(object(), 10)


# ----------------------------------------------------------------------------------------------
# AROQ-GR epoch knobs (same meaning and defaults as AROQ-CMAB's)
# ----------------------------------------------------------------------------------------------
def _replay_query_rounds(p, c, k):
    """Algorithm 6's epoch rule replayed round by round on the actions the policy played, with
    threshold 1 + c sqrt(T m |T_i(tau_i - 1)| / d) and |T_i(0)| = k; returns the query rounds
    (t = 1 is the counted initial query)."""
    T, m, d = p.horizon, p.m, p.d
    calls = {e.t: e.data["action"] for e in p.events if e.kind == "oracle"}
    count = np.zeros(d, dtype=np.int64)
    prev = np.full(d, k, dtype=np.int64)
    rounds, action = [], None
    for t in range(1, T + 1):
        fired = count >= np.ceil(1 + c * np.sqrt(T * m * prev / d) - 1e-12)
        if t == 1 or fired.any():
            rounds.append(t)
            prev[fired], count[fired] = count[fired], 0
            action = calls[t]  # the action the oracle returned at this query
        count[action] += 1
    return rounds


@pytest.mark.parametrize(("c", "k"), [(1.0, 0), (0.3, 0), (3.0, 0), (1.0, 40), (0.5, 10)])
def test_aroqgr_knobs_follow_the_epoch_rule(c, k):
    T = 3000
    p = AROQGR(threshold_scale=c, epoch0_size=k).run(_general_env(), T)
    rounds = [e.t for e in p.events if e.kind == "oracle"]
    assert rounds == _replay_query_rounds(p, c, k)
    assert p.log.queries == len(rounds)
    # closed form of the second query: every arm of a_1 ends its first epoch together
    assert rounds[1] == 1 + math.ceil(1 + c * math.sqrt(T * 2 * k / 5) - 1e-12)
    assert p.params()["threshold_scale"] == c and p.params()["epoch0_size"] == k


def test_aroqgr_knobs_change_the_number_of_queries():
    T = 6000
    q = {
        key: AROQGR(**kw).run(_general_env(), T).log.queries
        for key, kw in {
            "paper": {},
            "explicit_defaults": {"threshold_scale": 1.0, "epoch0_size": 0},
            "small_c": {"threshold_scale": 0.2},
            "large_c": {"threshold_scale": 5.0},
            "big_epoch0": {"epoch0_size": 200},
        }.items()
    }
    assert q["explicit_defaults"] == q["paper"]
    assert q["small_c"] > q["paper"] > q["large_c"]  # smaller threshold -> more queries
    assert q["big_epoch0"] < q["paper"]  # longer first epochs -> fewer queries
    d = DiscretizedAROQGR(threshold_scale=0.2).run(_continuous_env(), 2000)
    assert d.log.queries > DiscretizedAROQGR().run(_continuous_env(), 2000).log.queries


# ----------------------------------------------------------------------------------------------
# SDCB start: Chen et al.'s initial pass (default) or optimistic unplayed arms
# ----------------------------------------------------------------------------------------------
def test_sdcb_initial_pass_plays_each_arm_first():
    T = 60
    env = _general_env(seed=2)
    p = SDCB(initial_pass=True)
    p.reset(env, T)
    for i in range(5):
        before = p.stats.n.copy()
        p.advance(i + 1)
        assert p.t == i + 1 and p.stats.n[i] == before[i] + 1  # round i+1 contains arm i
    assert np.all(p.stats.n > 0)
    p.advance(T)
    assert p.log.queries == T and p.log.adaptivity == T
    assert [r[:3] for r in p.log.ranges] == [(1, 5, "SDCB initial pass"), (6, T, "SDCB argmax")]
    # Chen et al.'s start is the default (issue 11)
    assert SDCB().initial_pass is True
    default = SDCB().run(_general_env(seed=2), T)
    assert [r[:3] for r in default.log.ranges] == [r[:3] for r in p.log.ranges]
    assert default.cum_regret == p.cum_regret and np.array_equal(default.stats.n, p.stats.n)
    # the optimistic start can leave an arm untried when it ties at the top
    q = SDCB(initial_pass=False).run(_general_env(seed=2), T)
    assert q.log.purposes == ["SDCB argmax"] and q.log.queries == T
    assert (q.stats.n == 0).any()
