"""Covariance-adaptive CMAB policies: AROQ-C (Alg. 3), SROQ-C (Alg. 4), OLS-UCB-C."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dashboard.algorithms.cmab.actions import MSets
from dashboard.algorithms.cmab.policies.covariance import (
    AROQC,
    OLSUCBC,
    SROQC,
    CovStats,
    epoch_ends,
)
from dashboard.algorithms.cmab.rewards import CovarianceRewards, GeneralRewards, LinearRewards

D, M_SIZE = 10, 3


def _env(seed=0, rep=0):
    return CovarianceRewards(D, seed=seed).environment(MSets(D, M_SIZE), rep)


def _random_play_regret(env, T):
    gaps = np.array([env.gap(a) for a in env.family.enumerate()])
    return gaps.mean() * T


def _run_with_half(policy, env, T):
    policy.reset(env, T)
    half = None
    while policy.t < T:
        policy.advance(T // 2 if policy.t < T // 2 else T)
        if policy.t == T // 2:
            half = policy.cum_regret
    return half, policy.cum_regret


@pytest.mark.parametrize(("cls", "T"), [(AROQC, 4000), (SROQC, 4000), (OLSUCBC, 1500)])
@pytest.mark.parametrize("seed", [0, 1])
def test_sublinear_regret_on_paper_setting(cls, T, seed):
    """A.11.1 setting (d=10, m=3, Gaussian, Sigma = normalised(AA^T + I)): the second half of
    the horizon costs clearly less than the first, and far less than uniform random play."""
    env = _env(seed)
    half, total = _run_with_half(cls(), env, T)
    assert total - half < 0.6 * half
    assert total < 0.35 * _random_play_regret(env, T)


def test_oracle_counts_and_adaptivity():
    T = 4000
    aroq = AROQC().run(_env(), T)
    sroq = SROQC().run(_env(), T)
    ols = OLSUCBC().run(_env(), 800)
    assert aroq.log.queries < T / 20 and sroq.log.queries < T / 10
    assert ols.log.queries == 800 and ols.log.adaptivity == 800
    # SROQ-C: one lookup round for the pair actions + 2 rounds (parallel, then sequential) per
    # epoch (Appendix A.1)
    n_epochs = sum(e.kind == "epoch" for e in sroq.events)
    assert n_epochs == len(sroq.ends)
    assert sroq.log.adaptivity == 1 + 2 * n_epochs
    a = sroq.log.arrays()
    purposes = np.array(sroq.log.purposes)[a["purpose_code"]]
    assert (purposes == "LCB max over A'").sum() == n_epochs
    # AROQ-C: one lookup round, then one sequential call per update
    n_calls = sum(e.kind == "oracle" for e in aroq.events)
    assert aroq.log.adaptivity == 1 + n_calls
    assert aroq.log.queries == D * (D + 1) // 2 + n_calls


def test_warmup_clamping_is_reported():
    T = 3000
    p = AROQC(warmup_fraction=0.1)
    p.reset(_env(), T)
    paper = math.ceil(D * (D + 1) * math.log(T) ** 3 / 2)
    assert p.warmup_paper == paper and p.warmup_clamped and p.warmup_length == 300
    ev = [e for e in p.events if e.kind == "warm-up clamped"]
    assert len(ev) == 1 and ev[0].data["requested"] == paper and ev[0].data["used"] == 300
    p.run(_env(), T)
    first_call = next(e for e in p.events if e.kind == "oracle")
    assert first_call.t == 301  # initial query right after the warm-up
    # small instance with the full warm-up: no clamping
    env = CovarianceRewards(3, seed=0).environment(MSets(3, 2), 0)
    q = AROQC(warmup_fraction=1.0)
    q.reset(env, 10_000)
    assert not q.warmup_clamped
    assert q.warmup_length == math.ceil(3 * 4 * math.log(10_000) ** 3 / 2)
    assert not any(e.kind == "warm-up clamped" for e in q.events)
    half = AROQC(warmup_multiplier=0.5, warmup_fraction=1.0)
    half.reset(env, 10_000)
    assert half.warmup_length == math.ceil(0.5 * q.warmup_length)


def test_sroqc_pair_phase_clamped_and_schedule():
    T = 4000
    p = SROQC(pair_fraction=0.25).run(_env(), T)
    epochs = [e for e in p.events if e.kind == "epoch"]
    clamped = [e for e in p.events if e.kind == "pair phase clamped"]
    assert clamped  # (d^2 m^2 T_tau log T)^(2/3) exceeds every epoch here
    for e in epochs:
        assert e.data["pair_phase"] <= math.floor(0.25 * e.data["length"])
    assert epochs[0].t == D * (D + 1) // 2 + 1  # epochs start after the initial pair pass
    assert epochs[-1].data["end"] == T
    # surviving sets only shrink
    sizes = [e.data["surviving"].size for e in epochs]
    assert sizes == sorted(sizes, reverse=True)
    q = SROQC(pair_fraction=0.0).run(_env(), 2000)
    assert all(e.data["pair_phase"] == 0 for e in q.events if e.kind == "epoch")


def test_gram_matrix_matches_definition():
    """G_bar = sum_s D_{a_s} Sigma_bar D_{a_s} + D_{Sigma_bar} D_n + I (Section 4.1)."""
    env = _env(seed=2)
    rng = np.random.default_rng(0)
    acts = env.family.enumerate()[rng.integers(0, 120, size=300)]
    y = env.play(acts, 1)
    stats = CovStats(D)
    stats.add_rows(y[:150])
    for a, row in zip(acts[150:], y[150:]):
        stats.add_fixed(np.flatnonzero(a), row[a][None, :])
    h = 1.3
    mu, G, inv_n = stats.index_parts(h)
    mask = ~np.isnan(y)
    n = mask.sum(axis=0)
    assert np.allclose(mu, np.nanmean(y, axis=0))
    y0 = np.where(mask, y, 0.0)
    n2 = mask.T.astype(float) @ mask
    S_hat = (y0.T @ y0) / n2
    Sig = S_hat - np.outer(mu, mu) + (5 * h / np.sqrt(n2) + h**2 / n2 + 1 / n2**2) / 4
    G_ref = np.eye(D) + np.diag(np.diag(Sig) * n)
    for a in acts:
        Da = np.diag(a.astype(float))
        G_ref += Da @ Sig @ Da
    assert np.allclose(G, G_ref)
    assert np.allclose(inv_n, 1.0 / n)


@pytest.mark.parametrize(
    ("cls", "T", "kwargs"),
    [(AROQC, 2500, {}), (SROQC, 2500, {}), (OLSUCBC, 400, {}), (SROQC, 1500, {"M": 5})],
)
def test_stream_equals_batch(cls, T, kwargs):
    batch = cls(**kwargs).run(_env(seed=1, rep=3), T)
    stream = cls(**kwargs)
    stream.reset(_env(seed=1, rep=3), T)
    rng = np.random.default_rng(1)
    target = 0
    while stream.t < T:
        target = min(T, target + int(rng.integers(1, 200)))
        while stream.t < target:
            stream.advance(target)
    assert stream.cum_regret == batch.cum_regret
    assert stream.log.queries == batch.log.queries
    assert stream.log.adaptivity == batch.log.adaptivity
    assert [(e.t, e.kind) for e in stream.events] == [(e.t, e.kind) for e in batch.events]
    assert np.array_equal(stream.stats.sy, batch.stats.sy)


def test_runs_on_linear_model_and_rejects_general():
    env = LinearRewards(6, seed=0).environment(MSets(6, 2), 0)
    assert AROQC().run(env, 500).t == 500
    genv = GeneralRewards(5, seed=0).environment(MSets(5, 2), 0)
    for cls in (AROQC, SROQC, OLSUCBC):
        with pytest.raises(ValueError, match="linear reward model"):
            cls().reset(genv, 100)


@pytest.mark.parametrize(
    ("cls", "kwargs"),
    [
        (AROQC, {"f_const": -1}),
        (AROQC, {"h_const": float("nan")}),
        (AROQC, {"warmup_fraction": 1.5}),
        (AROQC, {"warmup_multiplier": -0.1}),
        (AROQC, {"executor": "threads"}),
        (SROQC, {"M": 0}),
        (SROQC, {"pair_fraction": -0.2}),
        (SROQC, {"pair_multiplier": "x"}),
        (OLSUCBC, {"oracle_delay": -1}),
    ],
)
def test_bad_parameters(cls, kwargs):
    with pytest.raises(ValueError):
        cls(**kwargs)
    with pytest.raises(ValueError):
        AROQC().reset(_env(), 0)


def test_epoch_ends_shared_grid():
    ends = epoch_ends(10_000, 4)
    assert ends[-1] == 10_000 and np.all(np.diff(ends) > 0) and len(ends) == 4
    with pytest.raises(ValueError):
        epoch_ends(100, 0)
