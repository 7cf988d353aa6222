"""The vectorised general-reward oracle equals the brute-force reference (issue 9).

``ExpectedRewardIndex.argmax_rows`` must return exactly the row that
``argmax([expected_aggregate(a) for a in A])`` returns (first maximiser), including on the
exact ties that point masses and repeated laws create, and its approximate values must be
within the stated error bound of the reference values.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dashboard.algorithms.cmab.actions import MSets
from dashboard.algorithms.cmab.rewards.aggregate import (
    ExpectedRewardIndex,
    action_arms,
    dense_on_grid,
    lattice,
    values_dense,
    values_sparse,
)
from dashboard.algorithms.cmab.rewards.general import expected_aggregate
from dashboard.algorithms.cmab.rewards.reference import reference_value


def _law(rng: np.random.Generator, support: np.ndarray, kind: str) -> tuple[np.ndarray, np.ndarray]:
    r = rng.random()
    if r < 0.25:  # point mass at the top (unplayed / large radius)
        return np.array([support[-1]]), np.array([1.0])
    k = rng.integers(1, support.size + 1)
    v = np.sort(rng.choice(support, size=k, replace=False))
    counts = rng.integers(1, 6, size=k).astype(float)
    F = np.cumsum(counts) / counts.sum()
    rho = rng.choice([0.0, 0.05, 0.3])
    Fu = np.maximum(F[:-1] - rho, 0.0)
    p = np.diff(np.concatenate([[0.0], Fu, [1.0]]))
    keep = p > 0
    return v[keep], p[keep]


def _reference(dists, A, kind) -> int:
    vals = [
        expected_aggregate(
            [dists[i][0] for i in np.flatnonzero(a)], [dists[i][1] for i in np.flatnonzero(a)], kind
        )
        for a in A
    ]
    return int(np.argmax(vals))


def _explicit(d: int, m: int, rng: np.random.Generator) -> np.ndarray:
    rows = []
    for k in range(1, m + 1):
        for comb in itertools.combinations(range(d), k):
            if rng.random() < 0.5:
                a = np.zeros(d, dtype=bool)
                a[list(comb)] = True
                rows.append(a)
    return np.array(rows) if rows else np.eye(d, dtype=bool)[:1]


SUPPORTS = {
    "paper-grid": np.array([0.0, 0.2, 0.4, 0.6, 0.8, 1.0]),
    "disc": np.arange(0, 13) / 12.0,
    "irregular": np.array([0.0, 0.137, 0.5, 0.61, 0.9999, 1.0]),
    "fine-lattice-fft": np.arange(0, 101) / 100.0,  # more levels than FFT_LEVELS
}


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    d=st.integers(2, 7),
    m=st.integers(1, 4),
    kind=st.sampled_from(["sqrt-sum", "max"]),
    support=st.sampled_from(list(SUPPORTS)),
    repeat_laws=st.booleans(),
    explicit=st.booleans(),
)
def test_argmax_rows_equals_brute_force(seed, d, m, kind, support, repeat_laws, explicit):
    rng = np.random.default_rng(seed)
    m = min(m, d)
    sup = SUPPORTS[support]
    dists = [_law(rng, sup, kind) for _ in range(d)]
    if repeat_laws:  # exact ties between different actions
        for i in range(1, d, 2):
            dists[i] = dists[i - 1]
    A = _explicit(d, m, rng) if explicit else MSets(d, m).enumerate()
    idx = ExpectedRewardIndex(dists, kind)
    assert idx.argmax_rows(A) == _reference(dists, A, kind)


@pytest.mark.parametrize("kind", ["sqrt-sum", "max"])
@pytest.mark.parametrize("support", list(SUPPORTS))
def test_values_within_bound(kind, support):
    rng = np.random.default_rng(3)
    dists = [_law(rng, SUPPORTS[support], kind) for _ in range(6)]
    idx = ExpectedRewardIndex(dists, kind)
    for _rows, arms in action_arms(MSets(6, 3).enumerate()):
        vals, bound = idx.values(arms)
        ref = np.array(
            [
                expected_aggregate([dists[i][0] for i in a], [dists[i][1] for i in a], kind)
                for a in arms
            ]
        )
        assert np.max(np.abs(vals - ref)) <= bound


def test_all_unplayed_ties_go_to_first_action():
    dists = [(np.array([1.0]), np.array([1.0]))] * 8
    A = MSets(8, 3).enumerate()
    idx = ExpectedRewardIndex(dists, "sqrt-sum")
    assert idx.argmax_rows(A) == 0
    assert idx.reevaluated <= 1  # one law class, one reference evaluation


def test_dense_and_sparse_agree_and_batch_over_repetitions():
    rng = np.random.default_rng(0)
    sup = SUPPORTS["paper-grid"]
    reps = [[_law(rng, sup, "sqrt-sum") for _ in range(5)] for _ in range(3)]
    arms = np.array(list(itertools.combinations(range(5), 3)))
    grid = sup
    P = np.stack(
        [
            np.stack([np.bincount(np.searchsorted(grid, v), p, minlength=grid.size) for v, p in r])
            for r in reps
        ]
    )
    batched = values_dense(grid, P, arms, "sqrt-sum")
    for r, dists in enumerate(reps):
        assert np.allclose(batched[r], values_sparse(dists, arms, "sqrt-sum"), atol=1e-12)
        g2, P2 = dense_on_grid(dists)
        assert np.allclose(batched[r], values_dense(g2, P2, arms, "sqrt-sum"), atol=1e-12)


def test_lattice_detection():
    assert lattice(np.array([0.0, 0.2, 0.6, 1.0]))[:2] == pytest.approx((0.0, 0.2))
    assert lattice(np.arange(0, 246) / 245.0) is not None
    assert lattice(np.array([0.0, 0.137, 0.5])) is None
    with pytest.raises(ValueError, match="lattice"):
        values_dense(
            np.array([0.0, 0.137, 0.5]), np.ones((2, 3)) / 3, np.array([[0, 1]]), "sqrt-sum"
        )


def test_infeasible_enumeration_is_refused_before_the_first_round():
    from types import SimpleNamespace

    from dashboard.algorithms.cmab.policies.general import SDCB, DiscretizedAROQGR
    from dashboard.algorithms.cmab.rewards import ContinuousRewards, GeneralRewards

    def env(model, family):  # no optimal action needed: reset must refuse first
        return SimpleNamespace(model=model, family=family, d=family.d, m=family.m)

    with pytest.raises(ValueError, match="terms"):  # 38760 actions x 2450 levels
        DiscretizedAROQGR().reset(env(ContinuousRewards(20, seed=0), MSets(20, 6)), 10**6)
    with pytest.raises(ValueError, match="actions"):  # C(60, 6) = 50 million actions
        SDCB().reset(env(GeneralRewards(60, seed=0), MSets(60, 6)), 100)
    SDCB().reset(GeneralRewards(8, seed=0).environment(MSets(8, 3), 0), 100)  # fine


@settings(max_examples=80, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    d=st.integers(1, 9),
    m=st.integers(1, 9),
    levels=st.integers(1, 4),
)
def test_top_m_partition_breaks_ties_like_a_stable_sort(seed, d, m, levels):
    """MSets' batch oracle (partition, issue 9) picks the same arms as a stable argsort."""
    m = min(m, d)
    rng = np.random.default_rng(seed)
    S = rng.integers(0, levels, size=(5, d)).astype(float)  # many ties
    S[0, 0] = 1e6  # an unplayed-arm index
    fam = MSets(d, m)
    expected = np.zeros(S.shape, dtype=bool)
    top = np.argsort(-S, axis=1, kind="stable")[:, :m]
    expected[np.arange(5)[:, None], top] = True
    assert np.array_equal(fam.argmax_linear_batch(S), expected)
    assert all(np.array_equal(fam.argmax_linear(s), e) for s, e in zip(S, expected))


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
@pytest.mark.parametrize("kind", ["sqrt-sum", "max"])
def test_bracketed_off_lattice_laws_give_the_reference_argmax(seed, kind, monkeypatch):
    """Continuous atoms (no lattice): bracketing on a 1024-level lattice, then refinement."""
    from dashboard.algorithms.cmab.rewards import aggregate

    monkeypatch.setattr(aggregate, "BRACKET_TERMS", 0)
    rng = np.random.default_rng(seed)
    dists = []
    for _ in range(7):
        v = np.sort(rng.random(rng.integers(1, 9)))
        p = rng.random(v.size)
        dists.append((v, p / p.sum()))
    dists[3] = dists[1]  # an exact tie class
    A = MSets(7, 3).enumerate()
    assert ExpectedRewardIndex(dists, kind).argmax_rows(A) == _reference(dists, A, kind)


@pytest.mark.parametrize("seed", [1, 2])
def test_continuous_model_optimal_action_is_the_brute_force_one(seed):
    from dashboard.algorithms.cmab.rewards import ContinuousRewards

    model, fam = ContinuousRewards(8, seed=seed), MSets(8, 3)
    A = fam.enumerate()
    ref = A[int(np.argmax([model.expected_reward(a) for a in A]))]
    assert np.array_equal(model.environment(fam, 0).optimal_action, ref)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), kind=st.sampled_from(["sqrt-sum", "max"]))
def test_restricted_queries_reuse_one_index(seed, kind):
    """One index object answers several include/exclude queries (an SROQ epoch) exactly."""
    rng = np.random.default_rng(seed)
    dists = [_law(rng, SUPPORTS["paper-grid"], kind) for _ in range(7)]
    fam = MSets(7, 3)
    idx = ExpectedRewardIndex(dists, kind)
    for _ in range(4):
        include = list(rng.choice(7, size=rng.integers(0, 3), replace=False))
        exclude = rng.random(7) < 0.3
        exclude[include] = False
        A = fam.feasible(include, exclude)
        got = fam.argmax_set_function(idx, include, exclude)
        if len(A) == 0:
            assert got is None
        else:
            assert np.array_equal(got, A[_reference(dists, A, kind)])


@settings(max_examples=80, deadline=None)
@given(
    n=st.integers(1, 40),
    k=st.integers(0, 4),
    high=st.integers(1, 3000),
    seed=st.integers(0, 10_000),
)
def test_first_of_each_equals_row_unique(n, k, high, seed):
    """The integer-coded dedup of near-tie signatures (issue 9's start-up) keeps exactly the
    rows ``np.unique(axis=0)`` keeps, also when the codes would overflow (row-wise path)."""
    from dashboard.algorithms.cmab.rewards.aggregate import _first_of_each

    sig = np.random.default_rng(seed).integers(0, high, size=(n, k))
    expected = np.sort(np.unique(sig, axis=0, return_index=True)[1])
    assert np.array_equal(_first_of_each(sig), expected)


def test_reference_values_shared_by_equal_laws_only(monkeypatch):
    """Reference values are cached by the bytes of the action's laws (the repetitions of an
    SROQ-GR epoch before any data ask the same ones): an index with equal laws reads the
    cached value, one with any other law computes its own (equal to ``expected_aggregate``)."""
    from dashboard.algorithms.cmab.rewards import reference as aggregate

    monkeypatch.setattr(aggregate, "_REFERENCE", {})
    rng = np.random.default_rng(1)
    laws = [(np.sort(rng.random(3)), np.full(3, 1 / 3)) for _ in range(5)]
    twin = [(v.copy(), p.copy()) for v, p in laws]
    other = list(laws)
    other[2] = (laws[2][0] + 1e-12, laws[2][1])
    a = np.array([1, 0, 1, 1, 0], dtype=bool)
    arms = (0, 2, 3)
    for kind in ("sqrt-sum", "max"):
        ref = expected_aggregate([laws[i][0] for i in arms], [laws[i][1] for i in arms], kind)
        assert ExpectedRewardIndex(laws, kind)(a) == ref
        (key,) = [k for k in aggregate._REFERENCE if k[0] == kind]
        aggregate._REFERENCE[key] = -123.0  # a sentinel: who reads the cache sees it
        assert ExpectedRewardIndex(twin, kind)(a) == -123.0
        changed = ExpectedRewardIndex(other, kind)(a)
        assert changed == expected_aggregate(
            [other[i][0] for i in arms], [other[i][1] for i in arms], kind
        )
        # the batched engines' reference_value reads and fills the same cache
        assert reference_value([twin[i] for i in arms], kind) == -123.0
        assert reference_value([other[i] for i in arms], kind) == changed
    lists = [(list(v), list(p)) for v, p in laws]  # not float64 arrays: never cached
    assert ExpectedRewardIndex(lists, "max")._law_keys() is None
    n = len(aggregate._REFERENCE)
    value = reference_value([lists[i] for i in arms], "max")
    assert len(aggregate._REFERENCE) == n  # computed, not cached
    assert value == expected_aggregate(
        [laws[i][0] for i in arms], [laws[i][1] for i in arms], "max"
    )
