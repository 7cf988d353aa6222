"""Action families: exact oracles against brute force, constructions, validation, greedy."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from dashboard.algorithms.cmab.actions import (
    FAMILIES,
    ExplicitActions,
    Matchings,
    MSets,
    Paths,
    make_family,
)
from dashboard.algorithms.cmab.approx import alpha_guarantee, greedy_linear, greedy_oracle
from dashboard.algorithms.cmab.oracle import OracleRequest


def _explicit_random(rng: np.random.Generator, n: int = 12, d: int = 7) -> ExplicitActions:
    A = (rng.random((n, d)) < 0.4).astype(int)
    A[A.sum(axis=1) == 0, 0] = 1
    return ExplicitActions(A)


SMALL_FAMILIES = [
    MSets(7, 3),
    MSets(5, 5),
    Paths(7, 3, seed=1),
    Paths(20, 3),
    Paths(5, 1),
    Paths(9, 2, seed=2),
    Paths(13, 4, seed=3),
    Paths(4, 4),
    Matchings(10, 3),
    Matchings(6, 2, seed=5),
    Matchings(4, 4),
    Matchings(16, 4, seed=7),
    Matchings(7, 1, seed=1),
    _explicit_random(np.random.default_rng(0)),
]
IDS = [f.describe() for f in SMALL_FAMILIES]


def _random_restriction(rng, fam):
    include = rng.choice(fam.d, size=rng.integers(0, 3), replace=False)
    exclude = rng.random(fam.d) < rng.choice([0.0, 0.15, 0.4])
    return include, exclude


@pytest.mark.parametrize("fam", SMALL_FAMILIES, ids=IDS)
def test_exact_oracle_matches_brute_force(fam):
    rng = np.random.default_rng(123)
    n_none = 0
    for _ in range(120):
        s = rng.normal(size=fam.d) * rng.choice([0.1, 1.0, 10.0])  # negative scores included
        include, exclude = _random_restriction(rng, fam)
        a = fam.argmax_linear(s, include, exclude)
        best = fam.brute_force_linear(s, include, exclude)
        assert (a is None) == (best is None)
        if a is None:
            n_none += 1
            continue
        assert a.dtype == bool and a.shape == (fam.d,)
        assert fam.is_action(a)
        assert a[include].all() and not a[exclude].any()
        assert s[a].sum() == pytest.approx(best, abs=1e-9)
    assert n_none < 120  # the restrictions are not all infeasible


@pytest.mark.parametrize("fam", SMALL_FAMILIES, ids=IDS)
def test_batch_equals_loop(fam):
    S = np.random.default_rng(5).normal(size=(40, fam.d))
    S[::7, 0] = S[::7, 1]  # some ties
    batch = fam.argmax_linear_batch(S)
    assert np.array_equal(batch, np.stack([fam.argmax_linear(s) for s in S]))


@pytest.mark.parametrize("fam", SMALL_FAMILIES, ids=IDS)
def test_enumeration_and_feasibility_helpers(fam):
    A = fam.enumerate()
    assert A.dtype == bool and A.shape[1] == fam.d
    assert len(np.unique(A, axis=0)) == len(A) == fam.n_actions()
    assert A.sum(axis=1).max() == fam.m
    rng = np.random.default_rng(9)
    for _ in range(15):
        # a random subset of a random action is extendable; a random set is iff brute force
        a = A[rng.integers(len(A))]
        partial = a & (rng.random(fam.d) < 0.5)
        assert fam.is_extendable(partial)
        junk = rng.random(fam.d) < 0.3
        truth = bool(np.any(np.all(A[:, junk], axis=1)))
        assert fam.is_extendable(junk) == truth
        ban = (rng.random(fam.d) < 0.2) & ~partial
        B = A[~np.any(A[:, ban], axis=1)]  # actions avoiding the banned arms
        ext = fam.extendable_arms(partial, exclude=ban)
        for i in range(fam.d):
            grown = partial.copy()
            grown[i] = True
            expect = (not partial[i]) and bool(np.any(np.all(B[:, grown], axis=1)))
            assert ext[i] == expect
            if not partial[i]:
                assert fam.can_extend(partial, i, exclude=ban) == expect
    assert not fam.is_action(np.zeros(fam.d, dtype=bool))


def test_infinite_scores_are_lexicographic():
    fam = Paths(20, 3)
    s = np.random.default_rng(0).normal(size=20)
    target = fam.enumerate()[5]
    e = np.flatnonzero(target)[1]
    s[e] = np.inf
    a = fam.argmax_linear(s)
    assert a[e]
    # among paths through e the finite part is maximal
    others = fam.feasible(include=[e])
    finite = s.copy()
    finite[e] = 0.0
    assert finite[a].sum() == pytest.approx(np.max(others.astype(float) @ finite))
    assert np.array_equal(fam.argmax_linear_batch(s[None])[0], a)
    m = Matchings(10, 3)
    s = np.zeros(10)
    s[[0, 4]] = -np.inf
    a = m.argmax_linear(s)
    assert not a[[0, 4]].any()
    assert MSets(5, 2).argmax_linear([np.inf, 0, np.inf, 1, 2]).tolist() == [1, 0, 1, 0, 0]


def test_scores_validation():
    fam = Paths(7, 3)
    with pytest.raises(ValueError, match="length d=7"):
        fam.argmax_linear(np.zeros(6))
    with pytest.raises(ValueError, match="NaN"):
        fam.argmax_linear(np.full(7, np.nan))
    with pytest.raises(ValueError, match="between 0 and 6"):
        fam.argmax_linear(np.zeros(7), include=[7])
    with pytest.raises(ValueError, match="between 0 and 6"):
        Matchings(7, 2).argmax_linear(np.zeros(7), include=[-1])
    with pytest.raises(ValueError, match="boolean mask of length 7"):
        fam.argmax_linear(np.zeros(7), exclude=np.zeros(3, dtype=bool))
    with pytest.raises(ValueError, match=r"shape \(R, 7\)"):
        fam.argmax_linear_batch(np.zeros(7))


@pytest.mark.parametrize("fam", SMALL_FAMILIES, ids=IDS)
def test_batch_scores_are_validated_like_single_scores(fam):
    """Every family's batch oracle refuses what its single-row oracle refuses."""
    with pytest.raises(ValueError, match=rf"shape \(R, {fam.d}\)"):
        fam.argmax_linear_batch(np.zeros(fam.d))
    with pytest.raises(ValueError, match=rf"shape \(R, {fam.d}\)"):
        fam.argmax_linear_batch(np.zeros((2, fam.d + 1)))
    S = np.zeros((3, fam.d))
    S[1, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        fam.argmax_linear_batch(S)


# ---------------------------------------------------------------------------- Paths


@pytest.mark.parametrize("d,m", [(d, m) for m in range(1, 6) for d in range(m, 3 * m + 6)])
def test_paths_construction(d, m):
    fam = Paths(d, m, seed=d * 7 + m)
    assert fam.d == d and fam.m == m
    assert len(fam.tail) == d
    # layered: every edge goes from node layer k to k+1, arms sorted by layer
    assert np.array_equal(fam.node_layer[fam.tail], fam.edge_layer)
    assert np.array_equal(fam.node_layer[fam.head], fam.edge_layer + 1)
    assert np.all(np.diff(fam.edge_layer) >= 0)
    # every node except source has an in-edge, except sink an out-edge => every edge on a path
    nodes = np.arange(fam.n_nodes)
    assert set(fam.head) == set(nodes[nodes != fam.source])
    assert set(fam.tail) == set(nodes[nodes != fam.sink])
    if fam.n_actions() <= 5000:
        A = fam.enumerate()
        assert np.all(A.sum(axis=1) == m)
        assert A.any(axis=0).all()


def test_paths_seed_and_invalid():
    assert np.array_equal(Paths(20, 3, seed=4).head, Paths(20, 3, seed=4).head)
    assert any(not np.array_equal(Paths(20, 3, seed=s).head, Paths(20, 3).head) for s in (1, 2))
    with pytest.raises(ValueError, match="m must be at most d"):
        Paths(3, 4)
    with pytest.raises(ValueError, match="m must be >= 1"):
        Paths(3, 0)
    with pytest.raises(ValueError, match="d must be an integer"):
        Paths(2.5, 1)


def test_paths_include_two_edges_in_one_layer_is_infeasible():
    fam = Paths(20, 3)
    first_layer = np.flatnonzero(fam.edge_layer == 0)
    assert fam.argmax_linear(np.ones(20), include=first_layer[:2]) is None
    assert fam.argmax_linear(np.ones(20), exclude=fam.edge_layer == 1) is None


def test_paths_large_is_fast_and_counts():
    fam = Paths(60, 5, seed=1)
    assert fam.n_actions() > 0
    s = np.random.default_rng(0).random(60)
    a = fam.argmax_linear(s)
    assert a.sum() == 5 and fam.is_action(a)


# ---------------------------------------------------------------------------- Matchings


@pytest.mark.parametrize("d,m", [(d, m) for m in range(1, 5) for d in range(m, 3 * m + 8)])
def test_matchings_construction(d, m):
    fam = Matchings(d, m, seed=d + 10 * m)
    pairs = set(zip(fam.left.tolist(), fam.right.tolist()))
    assert len(pairs) == d  # a simple graph with exactly d edges
    assert fam.left.max() < fam.n_left and fam.right.max() < fam.n_right
    A = fam.enumerate()
    assert np.all(A.sum(axis=1) == m)
    assert A.any(axis=0).all()  # every edge lies on some matching of size m
    # every matching with fewer than m edges extends to one of size m (greedy's 1/2 rests on it)
    for k in range(1, m):
        for sub in itertools.combinations(range(d), k):
            idx = list(sub)
            if len(set(fam.left[idx])) == k and len(set(fam.right[idx])) == k:
                partial = np.zeros(d, dtype=bool)
                partial[idx] = True
                assert fam.is_extendable(partial)


def test_matchings_include_conflicting_edges_is_infeasible():
    fam = Matchings(10, 3)
    shared = next((i, j) for i in range(10) for j in range(i + 1, 10) if fam.left[i] == fam.left[j])
    assert fam.argmax_linear(np.ones(10), include=list(shared)) is None
    assert fam.argmax_linear(np.ones(10), exclude=np.ones(10, dtype=bool)) is None


# ---------------------------------------------------------------------------- ExplicitActions


def test_explicit_actions_basics():
    fam = ExplicitActions([[1, 0, 1, 0], [0, 1, 0, 0], [True, False, True, False], [1, 1, 1, 1]])
    assert fam.d == 4 and fam.m == 4 and fam.n_actions() == 3  # duplicate removed
    assert fam.argmax_linear([1, 1, -5, 1]).tolist() == [False, True, False, False]
    assert fam.argmax_linear([1, 1, 1, 1], exclude=np.array([0, 1, 0, 0], bool)).tolist() == [
        True,
        False,
        True,
        False,
    ]
    assert (
        fam.argmax_linear([0, 0, 0, 0], include=[1], exclude=np.array([0, 1, 0, 0], bool)) is None
    )
    assert fam.is_action(np.array([0, 1, 0, 0])) and not fam.is_action(np.array([0, 0, 1, 0]))


@pytest.mark.parametrize(
    "actions, message",
    [
        ([], "empty"),
        (None, "non-empty list"),
        ([[1, 0], [1, 0, 1]], "row 1 has 3 entries but row 0 has 2"),
        ([[1, 0], [0, 2]], r"row 1, column 1\) is 2"),
        ([[1, 0.5]], r"row 0, column 1\) is 0.5"),
        ([[1, 0], [float("nan"), 1]], r"row 1, column 0\) is nan"),
        ([[1, 0], [0, 0]], "row 1 is all zeros"),
        (np.ones(3), "2-D"),
        ([["a", 1]], "row 0 is not a list of numbers"),
        ([[]], "row 0 is empty"),
        (5, "list of 0/1 rows"),
    ],
)
def test_explicit_actions_validation(actions, message):
    with pytest.raises(ValueError, match=message):
        ExplicitActions(actions)


# ---------------------------------------------------------------------------- make_family


def test_make_family():
    assert FAMILIES == ("m-sets", "paths", "matchings", "explicit")
    assert isinstance(make_family("M-Sets", 6, 2), MSets)
    p = make_family(" Paths ", 20, 3, seed=2)
    assert isinstance(p, Paths) and np.array_equal(p.head, Paths(20, 3, seed=2).head)
    assert isinstance(make_family("MATCHINGS", 10, 3), Matchings)
    e = make_family("explicit", None, None, actions=[[1, 0, 1], [0, 1, 0]])
    assert isinstance(e, ExplicitActions) and (e.d, e.m) == (3, 2)
    assert make_family("explicit", 3, 2, actions=[[1, 0, 1]]).d == 3
    with pytest.raises(ValueError, match="choose from: m-sets, paths, matchings, explicit"):
        make_family("trees", 5, 2)
    with pytest.raises(ValueError, match="needs actions"):
        make_family("explicit", 3, 1)
    with pytest.raises(ValueError, match="d=4 does not match"):
        make_family("explicit", 4, 2, actions=[[1, 0, 1]])
    with pytest.raises(ValueError, match="m=1 does not match"):
        make_family("explicit", 3, 1, actions=[[1, 0, 1]])
    with pytest.raises(ValueError, match="m must be at most d"):
        make_family("matchings", 2, 3)


# ---------------------------------------------------------------------------- greedy


@pytest.mark.parametrize("fam", SMALL_FAMILIES, ids=IDS)
def test_greedy_returns_feasible_actions(fam):
    rng = np.random.default_rng(77)
    for _ in range(40):
        s = rng.normal(size=fam.d)
        include, exclude = _random_restriction(rng, fam)
        g = greedy_linear(fam, s, include, exclude)
        assert (g is None) == (len(fam.feasible(include, exclude)) == 0)
        if g is not None:
            assert fam.is_action(g) and g[include].all() and not g[exclude].any()


@pytest.mark.parametrize("fam", [MSets(7, 3), MSets(9, 1), MSets(6, 6)], ids=lambda f: f.describe())
def test_greedy_is_exact_on_m_sets(fam):
    assert alpha_guarantee(fam) == 1.0
    rng = np.random.default_rng(1)
    for _ in range(100):
        s = rng.normal(size=fam.d)
        include, exclude = _random_restriction(rng, fam)
        assert np.array_equal(
            greedy_linear(fam, s, include, exclude), fam.argmax_linear(s, include, exclude)
        )


@pytest.mark.parametrize(
    "fam", [Matchings(10, 3), Matchings(16, 4, seed=7), Matchings(9, 2, seed=4)], ids=str
)
def test_greedy_half_approximation_on_matchings(fam):
    assert alpha_guarantee(fam) == 0.5
    rng = np.random.default_rng(2)
    ratios = []
    for _ in range(150):
        s = rng.exponential(size=fam.d) * (rng.random(fam.d) < 0.7)  # non-negative
        best = fam.brute_force_linear(s)
        g = greedy_oracle(fam, OracleRequest("approx", scores=s))
        assert s[g].sum() >= 0.5 * best - 1e-12
        ratios.append(s[g].sum() / best if best > 0 else 1.0)
    assert min(ratios) < 1.0  # greedy is really an approximation here, not always exact


def test_greedy_has_no_half_guarantee_on_arbitrary_size_m_matchings():
    # f1..f3 weigh 9, e1 = (a1, b2) weighs 10 and blocks f1, f2; after e1 the only completions
    # use the zero edges g1 = (a3, b4), g2 = (a4, b3): greedy gets 10 of 27.
    edges = [(1, 1), (2, 2), (3, 3), (1, 2), (3, 4), (4, 3)]
    w = np.array([9, 9, 9, 10, 0, 0.0])
    rows = []
    for c in itertools.combinations(range(6), 3):
        if len({edges[i][0] for i in c}) == 3 and len({edges[i][1] for i in c}) == 3:
            rows.append([int(i in c) for i in range(6)])
    fam = ExplicitActions(rows)
    assert alpha_guarantee(fam) is None and alpha_guarantee(Paths(7, 3)) is None
    g = greedy_linear(fam, w)
    assert w[g].sum() == 10 and fam.brute_force_linear(w) == 27


def test_greedy_oracle_rejects_set_function_requests():
    req = OracleRequest("f", f=lambda a: float(a.sum()))
    with pytest.raises(ValueError, match="linear query"):
        greedy_oracle(MSets(4, 2), req)
