"""Covariance-adaptive CMAB policies: AROQ-C (Alg. 3), SROQ-C (Alg. 4), OLS-UCB-C."""

from __future__ import annotations

import math

import numpy as np
import pytest
from regret_checks import half_and_total, random_play_regret

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


@pytest.mark.parametrize(("cls", "T"), [(AROQC, 4000), (SROQC, 4000), (OLSUCBC, 1500)])
@pytest.mark.parametrize("seed", [0, 1])
def test_sublinear_regret_on_paper_setting(cls, T, seed):
    """A.11.1 setting (d=10, m=3, Gaussian, Sigma = normalised(AA^T + I)): the second half of
    the horizon costs clearly less than the first, and far less than uniform random play."""
    env = _env(seed)
    half, total = half_and_total(cls(), env, T)
    assert total - half < 0.6 * half
    assert total < 0.35 * random_play_regret(env, T)


def test_oracle_counts_and_adaptivity():
    T = 4000
    aroq = AROQC().run(_env(), T)
    sroq = SROQC().run(_env(), T)
    ols = OLSUCBC().run(_env(), 800)
    assert aroq.log.queries < T / 20 and sroq.log.queries < T / 10
    # OLS-UCB-C: P = d(d+1)/2 pair lookups (one round), then one call per post-warm-up round
    P, W = D * (D + 1) // 2, ols.warmup_length
    assert W == 80
    assert ols.log.queries == P + 800 - W and ols.log.adaptivity == 1 + 800 - W
    bare = OLSUCBC(warmup_fraction=0.0).run(_env(), 800)
    assert bare.log.queries == 800 and bare.log.adaptivity == 800
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
    [
        (AROQC, 2500, {}),
        (AROQC, 700, {"warmup_fraction": 0.3}),
        (SROQC, 2500, {}),
        (OLSUCBC, 400, {}),
        (SROQC, 1500, {"M": 5}),
    ],
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
        (OLSUCBC, {"warmup_fraction": 2}),
        (OLSUCBC, {"warmup_multiplier": "many"}),
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


# ----------------------------------------------------------------------------------------------
# OLS-UCB-C warm-up (same as AROQ-C's, Appendix A.5 / Lemma 6)
# ----------------------------------------------------------------------------------------------
def test_olsucbc_warmup_matches_aroqc_and_is_clamped():
    T = 1000
    ols, aroq = OLSUCBC(), AROQC()
    ols.reset(_env(), T)
    aroq.reset(_env(), T)
    paper = math.ceil(D * (D + 1) * math.log(T) ** 3 / 2)
    for p in (ols, aroq):
        assert p.warmup_paper == paper and p.warmup_clamped and p.warmup_length == 100
        ev = [e for e in p.events if e.kind == "warm-up clamped"]
        assert len(ev) == 1 and ev[0].data["requested"] == paper and ev[0].data["used"] == 100
    while ols.t < 100:
        ols.advance(100)
    while aroq.t < 100:
        aroq.advance(100)
    # identical warm-up: same pair actions, hence the same statistics and regret
    assert np.array_equal(ols.stats.n2, aroq.stats.n2)
    assert np.array_equal(ols.stats.syy, aroq.stats.syy)
    assert ols.cum_regret == aroq.cum_regret
    assert ols.log.queries == D * (D + 1) // 2 and ols.log.adaptivity == 1
    for t in (1, 55, 56, 100):
        a = ols.warmup_action(t)
        i, j = [(i, j) for i in range(D) for j in range(i, D)][(t - 1) % 55]
        assert a[i] and a[j] and a.sum() == M_SIZE
    with pytest.raises(ValueError, match="warm-up round"):
        ols.warmup_action(101)
    # after the warm-up: exactly one per-round call per round
    ols.advance(T)
    assert ols.t == T and ols.log.queries == 55 + T - 100
    assert ols.log.ranges[0][:2] == (101, T)


def test_olsucbc_warmup_knobs():
    env = CovarianceRewards(3, seed=0).environment(MSets(3, 2), 0)
    full = OLSUCBC(warmup_fraction=1.0)
    full.reset(env, 10_000)
    assert not full.warmup_clamped and not any(e.kind == "warm-up clamped" for e in full.events)
    assert full.warmup_length == math.ceil(3 * 4 * math.log(10_000) ** 3 / 2)
    half = OLSUCBC(warmup_multiplier=0.5, warmup_fraction=1.0)
    half.reset(env, 10_000)
    assert half.warmup_length == math.ceil(0.5 * full.warmup_length)
    none = OLSUCBC(warmup_fraction=0.0)
    none.reset(_env(), 500)
    assert none.warmup_length == 0 and none.warmup_clamped
    none.advance(500)
    assert none.log.purposes == ["UCB index (3)"] and none.log.queries == 500
    assert OLSUCBC(warmup_fraction=0.2).params()["warmup_fraction"] == 0.2


# ----------------------------------------------------------------------------------------------
# AROQ-C epoch bookkeeping against a literal replay of Algorithm 3
# ----------------------------------------------------------------------------------------------
def _played_actions(p):
    """Reconstruct a_1 .. a_T of an AROQ-C run (warm-up pairs, then the oracle's actions)."""
    d, T, W = p.d, p.horizon, p.warmup_length
    acts = np.zeros((T + 1, d), dtype=bool)
    for t in range(1, W + 1):
        acts[t] = p.warmup_action(t)
    calls = {e.t: e.data["action"] for e in p.events if e.kind == "oracle"}
    cur = None
    for t in range(W + 1, T + 1):
        if t in calls:
            cur = np.zeros(d, dtype=bool)
            cur[calls[t]] = True
        acts[t] = cur
    return acts


def _replay_algorithm3(acts, d, W):
    """Lines 1-27 of Algorithm 3 with explicit sets T_(i,j)(tau), given the actions played.

    Returns the final tau over all ordered pairs and the rounds where Update = True."""
    tau = {(i, j): 0 for i in range(d) for j in range(d)}
    sets = {(i, j): {0: set()} for i in range(d) for j in range(d)}
    updates = []
    for t in range(1, len(acts)):
        if t <= W:
            if t == W:
                for k in tau:
                    tau[k] += 1
                    sets[k][tau[k]] = set()
        else:
            update = False
            for k in tau:
                prev = sets[k].get(tau[k] - 1, set())
                if len(sets[k][tau[k]]) >= 1 + 2 * len(prev):
                    tau[k] += 1
                    sets[k][tau[k]] = set()
                    update = True
            if update:
                updates.append(t)
        arms = np.flatnonzero(acts[t])
        for i in arms:
            for j in arms:
                sets[(int(i), int(j))][tau[(int(i), int(j))]].add(t)
    full = np.array([[tau[(i, j)] for j in range(d)] for i in range(d)])
    return full, updates


@pytest.mark.parametrize(("d", "m", "T", "frac"), [(5, 2, 900, 0.1), (4, 2, 600, 0.02)])
def test_aroqc_tau_matches_algorithm3_replay(d, m, T, frac):
    env = CovarianceRewards(d, seed=3).environment(MSets(d, m), 0)
    p = AROQC(warmup_fraction=frac).run(env, T)
    W = p.warmup_length
    assert 0 < W < T
    full, updates = _replay_algorithm3(_played_actions(p), d, W)
    assert np.array_equal(full, full.T)  # tau_(i,j) = tau_(j,i) in Algorithm 3
    # one counter per unordered pair {i, j}, stored on and above the diagonal
    assert np.array_equal(p.tau, np.triu(full))
    assert p.tau.sum() == (full.sum() + np.trace(full)) // 2
    # every paper query round is one of ours; the only extra one is the initial call at W + 1
    calls = [e for e in p.events if e.kind == "oracle"]
    ours = [e.t for e in calls if not e.data["initial"]]
    assert ours == updates
    extra = [e.t for e in calls if e.data["initial"]]
    assert extra == ([] if W + 1 in updates else [W + 1])
    assert calls[0].t == W + 1
    # pairs_updated counts unordered pairs whose epoch advanced; they add up to tau - 1
    assert sum(e.data["pairs_updated"] for e in calls) == int((p.tau - 1)[np.triu_indices(d)].sum())


def test_aroqc_round_w_opens_epoch_one():
    """Round W is in T_(i,j)(1): after the warm-up, |T(0)| counts rounds 1..W-1 only."""
    env = CovarianceRewards(4, seed=0).environment(MSets(4, 2), 0)
    p = AROQC(warmup_fraction=0.05)
    p.reset(env, 400)
    W = p.warmup_length
    assert W == 20
    p.advance(W)
    assert p.t == W and np.all(p.tau[np.triu_indices(4)] == 1) and np.all(np.tril(p.tau, -1) == 0)
    before = np.zeros((4, 4), dtype=np.int64)
    for t in range(1, W):
        a = p.warmup_action(t).astype(np.int64)
        before += np.outer(a, a)
    last = p.warmup_action(W).astype(np.int64)
    assert np.array_equal(p.prev, before)
    assert np.array_equal(p.cur, np.outer(last, last))


def test_warmup_pair_lookups_cached_per_family_same_logs_and_numbers():
    """The warm-up's pair look-ups are cached per family (start-up, issue 9): a second run on
    the same family, and a run through the oracle proper (a delay forces it), give the same
    actions, regret and query log (rounds, adaptivity rounds, purposes, arms)."""
    from dashboard.algorithms.cmab.actions import MSets
    from dashboard.algorithms.cmab.policies.covariance import AROQC
    from dashboard.algorithms.cmab.policies.covariance_base import _PAIR_ACTIONS
    from dashboard.algorithms.cmab.rewards import CovarianceRewards

    family, model = MSets(5, 2), CovarianceRewards(5, seed=1)

    def strip(log):
        a = log.arrays()
        return [a[k].tolist() for k in ("t", "round_id", "purpose_code", "arm")], log.purposes

    runs = [AROQC().run(model.environment(family, 0), 3000) for _ in range(2)]
    assert family in _PAIR_ACTIONS
    direct = AROQC(oracle_delay=1e-9).run(model.environment(family, 0), 3000)
    for p in runs:
        assert p.cum_regret == direct.cum_regret
        assert strip(p.log) == strip(direct.log)
        assert np.array_equal(p._pair_acts, direct._pair_acts)


def test_regret_counter_rows_equal_per_round_counting():
    """``RegretCounter.add_rows`` (one 1-D unique of packed rows, issue 9) counts exactly like
    adding each round on its own, in any chunking, for d <= 64 and d > 64 (byte-string keys)."""
    from dashboard.algorithms.cmab.policies.shared import RegretCounter

    for d in (10, 70):
        env = LinearRewards(d, seed=3).environment(MSets(d, 3), 0)
        rng = np.random.default_rng(d)
        A = MSets(d, 3).enumerate() if d <= 10 else None
        rows = np.zeros((400, d), dtype=bool)
        for r in range(400):
            rows[r, rng.choice(d, 3, replace=False) if A is None else np.flatnonzero(A[r % 7])] = (
                True
            )
        one, blocks = RegretCounter(env), RegretCounter(env)
        for a in rows:
            one.add(a, 1)
        for s in range(0, 400, 37):
            blocks.add_rows(rows[s : s + 37])
        blocks.add_rows(rows[:0])
        assert blocks.value == one.value
        assert sorted(blocks._index) == sorted(one._index)
        assert sorted(blocks._counts) == sorted(one._counts)
