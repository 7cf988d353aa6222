"""Kernels of the batched general-reward engines (issue 9) give the reference answers.

* ``refined_rows`` (with the pruning of ``pruned_values``) returns, for every repetition, the
  first maximiser of the reference ``expected_aggregate`` among the allowed actions, including
  on the exact ties of never-played arms and repeated laws;
* ``upper_bounds`` never falls below a reference value;
* ``BetaIntervals`` gives Algorithm 8's interval index of the inverse-CDF outcome bit for bit,
  also for uniforms placed within a few ulps of the CDF at an interval end;
* the fast paths of issue 9's reproduce speed-ups equal the plain computations: ``law_ids``
  (a set of bytes) equals ``np.unique`` over the rows' bytes, the cached ``lattice`` equals the
  uncached one, and near-ties whose law signatures are the same multiset in another order
  (``(L0, L1)`` vs ``(L1, L0)``: different reference folds) are still evaluated.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.special import betainc

from dashboard.algorithms.cmab.actions import MSets
from dashboard.algorithms.cmab.policies.beta_levels import BetaIntervals, interval_index
from dashboard.algorithms.cmab.policies.gr_batch import (
    _empirical_cdf_and_width,
    exact_laws,
    law_ids,
    optimistic_dense,
    pruned_values,
    refined_rows,
    upper_bounds,
)
from dashboard.algorithms.cmab.rewards import ContinuousRewards
from dashboard.algorithms.cmab.rewards.aggregate import _lattice, action_arms, lattice, prefix_table
from dashboard.algorithms.cmab.rewards.general import expected_aggregate
from dashboard.algorithms.randomness import stream_key, uniform

GRIDS = {
    "paper": np.array([0.0, 0.2, 0.4, 0.6, 0.8, 1.0]),
    "disc-12": np.arange(13) / 12.0,
    "disc-fft": np.arange(101) / 100.0,  # Fourier path of values_dense
}


def _laws(rng: np.random.Generator, R: int, d: int, G: int, repeat: bool) -> np.ndarray:
    """Optimistic-looking laws ``(R, d, G)``: point masses at the top (never played),
    empirical laws with mass moved to the top, and (``repeat``) bit-identical pairs."""
    P = np.zeros((R, d, G))
    for r in range(R):
        for i in range(d):
            if rng.random() < 0.3:
                P[r, i, -1] = 1.0
                continue
            counts = np.zeros(G)
            hits = rng.integers(1, G, size=rng.integers(1, 8))
            np.add.at(counts, hits, 1.0)
            F = np.cumsum(counts) / counts.sum()
            rho = rng.choice([0.0, 0.05, 0.3])
            Fu = np.maximum(F[:-1] - rho, 0.0)
            P[r, i] = np.diff(Fu, prepend=0.0, append=1.0)
        if repeat:
            P[r, 1::2] = P[r, 0 : d - 1 : 2][: P[r, 1::2].shape[0]]
    return P


def _reference(grid, P, arms, allowed) -> np.ndarray:
    rows = []
    for r in range(P.shape[0]):
        laws = exact_laws(grid, P[r])
        vals = np.array(
            [
                expected_aggregate([laws[i][0] for i in a], [laws[i][1] for i in a], "sqrt-sum")
                for a in arms
            ]
        )
        ok = np.ones(arms.shape[0], dtype=bool) if allowed is None else allowed[r]
        rows.append(int(np.argmax(np.where(ok, vals, -np.inf))))
    return np.array(rows)


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    d=st.integers(3, 8),
    m=st.integers(2, 4),
    grid=st.sampled_from(list(GRIDS)),
    repeat=st.booleans(),
    restrict=st.booleans(),
)
def test_refined_rows_is_the_reference_argmax(seed, d, m, grid, repeat, restrict):
    rng = np.random.default_rng(seed)
    m = min(m, d)
    g = GRIDS[grid]
    R = 3
    P = _laws(rng, R, d, g.size, repeat)
    A = MSets(d, m).enumerate()
    arms = action_arms(A)[0][1]
    allowed = None
    if restrict:  # e.g. SROQ's eliminated arms / SDCB's initial pass: at least one row left
        allowed = rng.random((R, arms.shape[0])) < 0.5
        allowed[:, 0] = True
    rows, _ = refined_rows(g, P, A, arms, "sqrt-sum", prefix_table(arms), allowed)
    assert rows.tolist() == _reference(g, P, arms, allowed).tolist()
    # the upper bounds behind the pruning hold for every action (up to the reference's own
    # rounding of merged partial sums to 10 decimals, see aggregate.error_bound)
    ub = upper_bounds(g, P, arms)
    for r in range(R):
        laws = exact_laws(g, P[r])
        for a, u in zip(arms, ub[r]):
            ref = expected_aggregate([laws[i][0] for i in a], [laws[i][1] for i in a], "sqrt-sum")
            assert ref <= u + 1e-9


def test_all_never_played_is_the_first_action_and_late_states_are_pruned():
    g = GRIDS["disc-fft"]
    d, m = 12, 3
    A = MSets(d, m).enumerate()
    arms = action_arms(A)[0][1]
    P = np.zeros((2, d, g.size))
    P[:, :, -1] = 1.0  # every arm never played: all actions tie
    rows, _ = refined_rows(g, P, A, arms, "sqrt-sum", prefix_table(arms))
    assert rows.tolist() == [0, 0]
    # a few arms played, the others at the top: many ties, scored once per multiset of laws
    rng = np.random.default_rng(0)
    P[:, :3] = _laws(rng, 2, 3, g.size, repeat=False)
    P[1, 5] = P[1, 0]
    rows, _ = refined_rows(g, P, A, arms, "sqrt-sum", prefix_table(arms))
    assert rows.tolist() == _reference(g, P, arms, None).tolist()
    # well-separated empirical laws: only a handful of the 220 actions are scored
    rng = np.random.default_rng(1)
    for i in range(d):
        c = rng.integers(1, 100)
        P[:, i] = 0.0
        P[:, i, c - 5 : c + 1] = 1.0 / 6.0
    approx = pruned_values(g, P, arms, "sqrt-sum", None, np.full(2, 1e-9))
    assert np.all(np.isfinite(approx).sum(axis=1) <= 8)
    assert _reference(g, P, arms, None).tolist() == np.argmax(approx, axis=1).tolist()


@pytest.mark.parametrize("kappa", [0.05, 4.0, 500.0])
@pytest.mark.parametrize("s", [1, 2, 12, 245, 3000])
def test_beta_intervals_equal_the_inverse_cdf_index(kappa, s):
    model = ContinuousRewards(6, seed=2, kappa=kappa)
    levels = BetaIntervals(model.alpha, model.beta, s, model.quantile)
    n = 30_000
    arms = np.arange(n) % 6
    u = uniform(stream_key(7, "test-beta-intervals"), np.arange(n))
    # adversarial uniforms: the CDF at interval ends, and a few ulps around it
    if s > 1:
        k = np.arange(3000) % (s - 1) + 1
        a = np.arange(k.size) % 6
        c = betainc(model.alpha[a], model.beta[a], (k + 1e-9) / s)
        c = np.concatenate([c, np.nextafter(c, 0.0), np.nextafter(c, 1.0), c * (1 + 1e-13)])
        ok = (c > 0.0) & (c < 1.0)
        u = np.concatenate([u, c[ok]])
        arms = np.concatenate([arms, np.tile(a, 4)[ok]])
    got = levels.index(arms, u)
    assert got.tolist() == interval_index(model.quantile(arms, u), s).tolist()
    assert got.min() >= 1 and got.max() <= s
    # random uniforms almost never need the inverse CDF
    fresh = BetaIntervals(model.alpha, model.beta, s, model.quantile)
    fresh.index(np.arange(n) % 6, u[:n])
    assert fresh.exact_calls <= 5


def _law_ids_plain(P: np.ndarray) -> np.ndarray:
    """The former ``law_ids``: ``np.unique`` over the rows viewed as bytes."""
    R, d, G = P.shape
    flat = np.ascontiguousarray(P).reshape(-1, G)
    ids = np.unique(flat.view(np.dtype((np.void, 8 * G))).ravel(), return_inverse=True)[1]
    return np.asarray(ids).reshape(R, d)


_ATOMS = [0.0, -0.0, 1.0, 0.5, 0.25, 1e-300, -1.0, np.inf, np.nan, 1.0 - 2.0**-53]


@settings(max_examples=200, deadline=None)
@given(
    shape=st.tuples(st.integers(1, 4), st.integers(1, 7), st.integers(1, 6)),
    data=st.data(),
)
def test_law_ids_equal_unique_over_bytes(shape, data):
    n = int(np.prod(shape))
    vals = data.draw(st.lists(st.sampled_from(_ATOMS), min_size=n, max_size=n))
    P = np.array(vals, dtype=float).reshape(shape)
    assert law_ids(P).tolist() == _law_ids_plain(P).tolist()
    # and on a strided view (rows copied to contiguous bytes first)
    Q = np.repeat(P, 2, axis=2)[:, :, ::2]
    assert law_ids(Q).tolist() == _law_ids_plain(P).tolist()


@settings(max_examples=60, deadline=None)
@given(
    shape=st.tuples(st.integers(1, 16), st.integers(1, 21), st.sampled_from([1, 2, 6, 32, 40])),
    seed=st.integers(0, 2**32 - 1),
    atoms=st.integers(1, len(_ATOMS)),
)
def test_law_ids_of_many_rows_equal_unique_over_bytes(shape, seed, atoms):
    """Both ways of numbering (hashing the rows' bytes, or sorting them from 64 rows of at
    most 32 levels: SDCB's 16 repetitions at d = 20) give np.unique's ids."""
    rng = np.random.default_rng(seed)
    P = np.array(_ATOMS[:atoms])[rng.integers(0, atoms, size=shape)]
    P[rng.random(shape[:2]) < 0.5] = P[0, 0]  # many equal rows
    assert law_ids(P).tolist() == _law_ids_plain(P).tolist()


@pytest.mark.parametrize(
    "grid",
    [[0.0, 0.2, 0.4, 0.6, 0.8, 1.0], [0.0, 0.2, 0.6, 1.0], [0.5], [0.0, 0.3, 0.31], [0.0, 0.0]],
)
def test_cached_lattice_equals_the_plain_one(grid):
    g = np.array(grid)
    plain = _lattice(g, 1e-12)
    for _ in range(2):  # first call fills the cache, the second reads it
        got = lattice(g)
        if plain is None:
            assert got is None
            continue
        assert got[0] == plain[0] and got[1] == plain[1] and got[3] == plain[3]
        assert got[2].tolist() == plain[2].tolist()
        assert not got[2].flags.writeable  # shared between callers: read-only
    assert (lattice(g, rtol=0.0) is None) == (_lattice(g, 0.0) is None)


@pytest.mark.parametrize("atom", [True, False])
def test_swapped_signatures_are_evaluated_with_the_reference(atom):
    """Arms 0 and 2 share one law, arm 1 another: actions {0, 1} and {1, 2} have the law
    signatures (L0, L1) and (L1, L0), the same multiset.  If L1 has two atoms their reference
    values are computed in different fold orders: both are evaluated, the first maximiser
    wins.  If L1 is a single atom the two folds are the same floats in the same order (bit
    for bit, see test_cmab_fast_equality): no evaluation, the first of them wins."""
    g = GRIDS["paper"]
    law_a = np.array([0.0, 0.0, 0.0, 0.0, 0.87474817, 0.12525183])
    law_b = np.array([0.0, 0.0, 0.0, 0.0, 0.0, 1.0])
    if not atom:
        law_b = np.array([0.0, 0.0, 0.0, 0.0, 0.005, 0.995])
    law_c = np.array([0.0, 0.0, 0.0, 0.43203591, 0.0, 0.56796409])
    P = np.stack([law_a, law_b, law_a, law_c, law_c])[None]
    A = MSets(5, 2).enumerate()
    arms = action_arms(A)[0][1]
    rows, n_re = refined_rows(g, P, A, arms, "sqrt-sum", prefix_table(arms))
    assert rows.tolist() == _reference(g, P, arms, None).tolist()
    if atom:
        assert n_re == 0
    else:
        assert n_re >= 2


def _optimistic_plain(counts, n, C, log_term):
    """The former ``optimistic_dense`` (``np.diff`` with prepend / append)."""
    rho, F = _empirical_cdf_and_width(counts, n, C, log_term)
    Fu = np.maximum(F[..., :-1] - rho[..., None], 0.0)
    P = np.diff(Fu, axis=2, prepend=0.0, append=1.0)
    point = (n == 0) | (rho >= 1.0)
    P[point] = 0.0
    P[point, -1] = 1.0
    return P


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    R=st.integers(1, 4),
    d=st.integers(1, 6),
    G=st.integers(2, 9),
    C=st.sampled_from([0.0, 0.5, 1.5, 8.0]),
    per_rep=st.booleans(),
)
def test_optimistic_laws_equal_the_diff_form(seed, R, d, G, C, per_rep):
    rng = np.random.default_rng(seed)
    counts = rng.integers(0, 4, (R, d, G)) * (rng.random((R, d, G)) < 0.6)
    counts[:, 0] = 0  # a never-played arm
    n = counts.sum(axis=2)
    log_term = (
        np.log(rng.integers(1, 10**5, R)) if per_rep else float(np.log(rng.integers(1, 10**5)))
    )
    got = optimistic_dense(counts, n, C, log_term)
    assert np.array_equal(got, _optimistic_plain(counts, n, C, log_term))
    assert np.array_equal(np.signbit(got), np.signbit(_optimistic_plain(counts, n, C, log_term)))


def test_cached_hankel_and_grid_scale_give_the_plain_values():
    from dashboard.algorithms.cmab.policies import gr_batch
    from dashboard.algorithms.cmab.rewards import aggregate

    g = GRIDS["paper"]
    rng = np.random.default_rng(5)
    P = _laws(rng, 2, 6, g.size, repeat=True)
    arms = action_arms(MSets(6, 2).enumerate())[0][1]
    aggregate._HANKELS.clear()
    gr_batch._SCALES.clear()
    first = aggregate.values_dense(g, P, arms, "sqrt-sum")
    assert aggregate._HANKELS and all(not H.flags.writeable for H in aggregate._HANKELS.values())
    again = aggregate.values_dense(g, P, arms, "sqrt-sum")  # from the cache
    assert np.array_equal(first, again)
    # the plain Hankel matrix (built inline, as before the cache)
    (H,) = aggregate._HANKELS.values()
    s = np.arange(H.shape[0])[:, None] + np.arange(H.shape[1])[None, :]
    assert np.array_equal(H, np.sqrt(np.maximum(2 * 0.0 + 0.2 * s, 0.0)))
    assert gr_batch._grid_scale(g) == float(np.max(np.abs(g))) == gr_batch._grid_scale(g)


@pytest.mark.parametrize("s", [1, 2, 245, 3000])
def test_beta_intervals_cell_table_equals_the_binary_search_at_cell_edges(s):
    """The cell table (``floor(u G)``, ``G`` a power of 2) gives the binary search's index
    for every ``u``, also at each cell's edges and one ulp inside them, where a wrong
    ``floor`` or a cell wrongly marked as settled would show."""
    model = ContinuousRewards(4, seed=3)
    levels = BetaIntervals(model.alpha, model.beta, s, model.quantile)
    G = levels._cells
    assert G & (G - 1) == 0 and G >= 16
    edges = np.arange(G) / G
    # (not the subnormal above 0, where the model's inverse CDF is NaN; uniforms are >= 2^-54)
    u = np.concatenate([edges, np.nextafter(edges[1:], 0.0), np.nextafter(edges[1:], 1.0)])
    arms = np.arange(u.size) % 4
    got = levels.index(arms, u)
    assert got.tolist() == levels._search(arms, u).tolist()
    assert got.tolist() == interval_index(model.quantile(arms, u), s).tolist()
    # most outcomes are settled by the table alone
    assert np.count_nonzero(levels._table == 0) <= 0.1 * levels._table.size
