"""The faster per-round baselines of issue 9 give exactly the numbers of separate single runs.

Property tests over small ``d``, ``m``, ``R``, ``T`` and seeds: one batched engine
(:class:`BatchedSDCB`, :class:`BatchedOLSUCBC`) against ``R`` separate runs of the single
policy, compared exactly (cumulative regret at every checkpoint, pull counters, oracle query
counts), plus the bit-level facts the shortcuts rely on.
"""

from __future__ import annotations

import numpy as np
from batched_checks import same_as_single_runs
from hypothesis import given, settings
from hypothesis import strategies as st

from dashboard.algorithms.cmab.actions import MSets
from dashboard.algorithms.cmab.policies.covariance import OLSUCBC, BatchedOLSUCBC
from dashboard.algorithms.cmab.policies.general import SDCB, BatchedSDCB
from dashboard.algorithms.cmab.policies.gr_batch import RoundScorer, exact_laws, refined_rows
from dashboard.algorithms.cmab.rewards import CovarianceRewards, GeneralRewards
from dashboard.algorithms.cmab.rewards.aggregate import action_arms, prefix_table
from dashboard.algorithms.cmab.rewards.laws import expected_aggregate

_LAW = st.lists(st.floats(0.01, 1.0), min_size=1, max_size=6)


@settings(max_examples=80, deadline=None)
@given(
    x=_LAW,
    atom=st.integers(0, 5),
    kind=st.sampled_from(["sqrt-sum", "max"]),
    step=st.sampled_from([0.2, 0.1, 1 / 3, 0.125]),
)
def test_two_arm_reference_is_symmetric_when_one_law_is_an_atom(x, atom, kind, step):
    """What ``_resolve_ties`` relies on: with two arms one of which is a single atom, the
    reference value does not depend on the arms' order, bit for bit."""
    v = np.arange(len(x)) * step
    p = np.asarray(x) / np.sum(x)
    t = np.array([atom * step])
    one = np.ones(1)
    assert expected_aggregate([v, t], [p, one], kind) == expected_aggregate([t, v], [one, p], kind)


@settings(max_examples=12, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    d=st.integers(2, 5),
    m=st.integers(1, 3),
    R=st.integers(1, 3),
    T=st.integers(1, 160),
    peak=st.sampled_from([0.99, 0.6, 1.0]),
    reward=st.sampled_from(["sqrt-sum", "max"]),
    initial_pass=st.booleans(),
    cut=st.integers(1, 160),
)
def test_batched_sdcb_equals_single_runs_property(
    seed, d, m, R, T, peak, reward, initial_pass, cut
):
    m = min(m, d)
    model = GeneralRewards(d, seed=seed, peak_mass=peak, reward=reward)
    b = same_as_single_runs(
        SDCB, BatchedSDCB, model, MSets(d, m), T, R, [cut], {"initial_pass": initial_pass}
    )
    assert b._lockstep is None


@settings(max_examples=20, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    d=st.integers(2, 6),
    m=st.integers(1, 3),
    R=st.integers(1, 4),
    T=st.integers(1, 300),
    warmup=st.sampled_from([0.0, 0.1, 0.3]),
    cut=st.integers(1, 300),
)
def test_batched_olsucbc_equals_single_runs_property(seed, d, m, R, T, warmup, cut):
    m = min(m, d)
    model = CovarianceRewards(d, seed=seed)
    same_as_single_runs(
        OLSUCBC, BatchedOLSUCBC, model, MSets(d, m), T, R, [cut], {"warmup_fraction": warmup}
    )


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    R=st.integers(1, 4),
    d=st.integers(2, 6),
    k=st.integers(1, 3),
    kind=st.sampled_from(["sqrt-sum", "max"]),
    restrict=st.booleans(),
)
def test_round_scorer_is_the_reference_argmax(seed, R, d, k, kind, restrict):
    """``RoundScorer.rows`` (the batched SDCB oracle) equals ``refined_rows`` and the
    brute-force reference argmax, on laws with shared rows and point masses (many ties)."""
    rng = np.random.default_rng(seed)
    grid = np.round(np.linspace(0.0, 1.0, 6), 12)
    k = min(k, d)
    pool = rng.random((3, 6)) * (rng.random((3, 6)) < 0.5)
    pool[0] = 0.0
    pool[0, -1] = 1.0  # the point mass at the top
    pool[1, rng.integers(6)] += 1.0
    pool[pool.sum(axis=1) == 0, 0] = 1.0  # a law has some mass (else 0/0: NaN "laws")
    pool /= pool.sum(axis=1, keepdims=True)
    P = pool[rng.integers(0, 3, (R, d))]
    A = MSets(d, k).enumerate()
    arms = action_arms(A)[0][1]
    prefixes = prefix_table(arms) if k > 1 else None
    allowed = A[:, int(rng.integers(d))] if restrict else None
    got, n_got = RoundScorer(grid, arms, kind, prefixes).rows(P, allowed)
    ref, n_ref = refined_rows(grid, P, A, arms, kind, prefixes, allowed)
    assert got.tolist() == ref.tolist() and n_got == n_ref
    for r in range(R):
        laws = exact_laws(grid, P[r])
        vals = [
            expected_aggregate([laws[i][0] for i in a], [laws[i][1] for i in a], kind)
            if allowed is None or allowed[j]
            else -np.inf
            for j, a in enumerate(arms.tolist())
        ]
        assert got[r] == int(np.argmax(vals))


def _random_stats(rng, d, played, tie):
    """A CovStats of ``played`` rounds of random actions of 1..d arms (exact integer sums);
    with ``tie``, arm 1 copies arm 0's statistics (near-tied actions)."""
    from dashboard.algorithms.cmab.policies.covariance_index import CovStats

    s = CovStats(d)
    for _ in range(played):
        arms = np.sort(rng.choice(d, size=int(rng.integers(1, d + 1)), replace=False))
        s.add_fixed(arms, rng.normal(0.5, 0.3, (1, arms.size)))
    if tie:
        for M in (s.n2, s.syy):
            M[1, :], M[:, 1] = M[0, :], M[:, 0]
            M[1, 1] = M[0, 0]
            M[0, 1] = M[1, 0] = M[0, 0]
        s.n[1], s.sy[1] = s.n[0], s.sy[0]
    return s


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    R=st.integers(1, 4),
    d=st.integers(2, 6),
    k=st.integers(1, 3),
    played=st.sampled_from([0, 3, 40]),
    tie=st.booleans(),
    t=st.integers(1, 10**6),
    dense=st.booleans(),
)
def test_pair_index_is_the_reference_argmax(seed, R, d, k, played, tie, t, dense):
    """``PairIndex.argmax`` (batched OLS-UCB-C) equals, per repetition, the argmax of
    ``index_values`` on ``CovStats.index_parts`` (first maximiser), with unplayed arms and
    pairs (the general path), all pairs played (the fast path) and exact ties; ``add``
    keeps the statistics of ``CovStats.add_fixed``."""
    from dashboard.algorithms.cmab.policies.covariance_index import f_h, index_values
    from dashboard.algorithms.cmab.policies.covariance_pairs import PairIndex

    rng = np.random.default_rng(seed)
    k = min(k, d)
    A = MSets(d, k).enumerate()
    arms = np.nonzero(A)[1].reshape(A.shape[0], k)
    stats = [_random_stats(rng, d, played, tie) for _ in range(R)]
    index = PairIndex(stats, A, arms)
    index._dense = dense  # both ways of scoring the actions (dense products or gathers)
    for step in range(3):
        f, h = f_h(t + step, d, 0.05, 0.5)
        rows = index.argmax(f, h)
        for r, s in enumerate(stats):
            ref = int(np.argmax(index_values(A.astype(float), *s.index_parts(h), f)))
            assert rows[r] == ref
        y = rng.normal(0.5, 0.3, (R, k))
        index.add(rows, y)
        for r, s in enumerate(stats):
            s.add_fixed(arms[rows[r]], y[r][None])
            back = index.stats_of(r)
            for name in ("n", "sy", "n2", "syy"):
                assert np.array_equal(getattr(back, name), getattr(s, name)), name


def test_batched_olsucbc_gathers_on_large_tables(monkeypatch):
    """Above DENSE_TERMS the actions are scored by gathers: the single runs' numbers."""
    from dashboard.algorithms.cmab.policies import covariance_pairs

    monkeypatch.setattr(covariance_pairs, "DENSE_TERMS", 0)
    b = same_as_single_runs(
        OLSUCBC,
        BatchedOLSUCBC,
        CovarianceRewards(6, seed=3),
        MSets(6, 3),
        300,
        3,
        [45, 46, 120],
        {"warmup_fraction": 0.1},
    )
    assert b._main and not b.index._dense
