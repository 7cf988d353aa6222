"""G-optimal design (Eq. 1), DEO (Algorithm 1) and the Theorem 1 report.

Leverages and norms are re-computed here independently of the module (``numpy.linalg.pinv`` and
the regularised limit of Section 1.3), so the tests check the module against the definitions.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from dashboard.algorithms.semiparametric.design import (
    DesignReport,
    GOptimalResult,
    deo_design,
    design_report,
    g_optimal_design,
)

TOL = 1e-3


# ----------------------------------------------------------------------------- helpers
def unit_rows(rng: np.random.Generator, n: int, d: int) -> np.ndarray:
    v = rng.normal(size=(n, d))
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def pinv_leverages(V: np.ndarray, p: np.ndarray) -> np.ndarray:
    """``v_i^T V(p)^+ v_i`` by brute force."""
    M = (V.T * p) @ V
    return np.einsum("ij,jk,ik->i", V, np.linalg.pinv(M, hermitian=True, rcond=1e-10), V)


def sigma_p(X: np.ndarray, p: np.ndarray) -> np.ndarray:
    """Definition 1: centred covariance of the design."""
    xbar = p @ X
    C = X - xbar
    return (C.T * p) @ C


def regularised_norm(A: np.ndarray, z: np.ndarray, lam: float) -> float:
    """``||z||_{(A + lam I)^{-1}}``; the extended norm is its limit as ``lam -> 0``."""
    return float(np.sqrt(z @ np.linalg.solve(A + lam * np.eye(len(z)), z)))


def check_probability_vector(w: np.ndarray, n: int) -> None:
    assert w.shape == (n,)
    assert np.all(w >= 0)
    assert w.sum() == pytest.approx(1.0, abs=1e-12)


def check_g_optimal(V: np.ndarray, res: GOptimalResult, tol: float = TOL) -> None:
    """Everything a G-optimal result promises, checked against brute force."""
    n = V.shape[0]
    check_probability_vector(res.weights, n)
    np.testing.assert_array_equal(res.support, np.flatnonzero(res.weights > 0))
    r = res.span_dimension
    assert r == np.linalg.matrix_rank(V)
    lev = pinv_leverages(V, res.weights)
    assert res.max_leverage == pytest.approx(lev.max(), rel=1e-7, abs=1e-9)
    # Kiefer-Wolfowitz: no design beats r, and ours is certified within (1 + tol)
    assert r * (1 - 1e-9) <= res.max_leverage <= (1 + tol) * r
    assert res.converged
    assert res.support.size <= r * (r + 1) // 2


# ----------------------------------------------------------------------------- G-optimal
@pytest.mark.parametrize("d", [1, 3, 7])
def test_orthonormal_basis_gives_uniform_design(d: int) -> None:
    Q, _ = np.linalg.qr(np.random.default_rng(d).normal(size=(d, d)))
    for V in (np.eye(d), Q.T):
        res = g_optimal_design(V)
        np.testing.assert_allclose(res.weights, np.full(d, 1.0 / d), atol=1e-12)
        assert res.max_leverage == pytest.approx(d)
        assert res.span_dimension == d


@pytest.mark.parametrize(
    ("n", "d", "seed"),
    [(200, 20, 0), (50, 5, 1), (30, 30, 2), (12, 3, 3), (300, 8, 4), (60, 15, 5)],
)
def test_random_instances_are_certified(n: int, d: int, seed: int) -> None:
    V = unit_rows(np.random.default_rng(seed), n, d)
    check_g_optimal(V, g_optimal_design(V, tol=TOL))


def test_gaussian_scales_and_tighter_tolerance() -> None:
    rng = np.random.default_rng(11)
    V = rng.normal(size=(40, 6)) * rng.uniform(0.1, 3.0, size=(40, 1))
    check_g_optimal(V, g_optimal_design(V, tol=1e-6), tol=1e-6)


def test_rank_deficient_vectors_certified_with_span_dimension() -> None:
    rng = np.random.default_rng(7)
    basis = np.linalg.qr(rng.normal(size=(9, 3)))[0]  # a 3-dim subspace of R^9
    V = rng.normal(size=(40, 3)) @ basis.T
    res = g_optimal_design(V)
    assert res.span_dimension == 3
    check_g_optimal(V, res)


def test_single_vector() -> None:
    res = g_optimal_design(np.array([[0.3, -0.4]]))
    np.testing.assert_array_equal(res.weights, [1.0])
    assert res.max_leverage == pytest.approx(1.0)
    assert res.span_dimension == 1


def test_collinear_vectors_put_all_weight_on_the_longest() -> None:
    c = np.array([0.5, -2.0, 1.0, 2.0, -0.1])
    u = np.array([1.0, 2.0, -2.0]) / 3.0
    V = c[:, None] * u
    res = g_optimal_design(V)
    assert res.span_dimension == 1
    # closed form: leverage c_i^2 / sum_j p_j c_j^2 is maximal (= 1) iff weight on |c| = 2
    assert res.weights[[1, 3]].sum() == pytest.approx(1.0)
    np.testing.assert_allclose(pinv_leverages(V, res.weights), c**2 / 4.0, rtol=1e-9)


def test_repeated_vectors() -> None:
    rng = np.random.default_rng(3)
    base = unit_rows(rng, 6, 4)
    V = np.vstack([base, base, base[:2]])
    res = g_optimal_design(V)
    check_g_optimal(V, res)
    # the design depends on the repeats only through their total weight
    total = np.zeros(6)
    np.add.at(total, np.r_[np.arange(6), np.arange(6), [0, 1]], res.weights)
    assert pinv_leverages(base, total).max() == pytest.approx(res.max_leverage, rel=1e-9)


def test_zero_vectors_get_no_weight_and_zero_leverage() -> None:
    rng = np.random.default_rng(5)
    V = unit_rows(rng, 10, 3)
    V[[2, 7]] = 0.0
    res = g_optimal_design(V)
    assert res.weights[2] == 0.0 and res.weights[7] == 0.0
    check_g_optimal(V, res)
    assert pinv_leverages(V, res.weights)[[2, 7]] == pytest.approx([0.0, 0.0])


def test_all_zero_vectors() -> None:
    res = g_optimal_design(np.zeros((4, 3)))
    assert res.span_dimension == 0 and res.max_leverage == 0.0 and res.converged
    check_probability_vector(res.weights, 4)


@pytest.mark.parametrize(("n", "d", "tol"), [(1000, 10, 1e-3), (1000, 4, 1e-4)])
def test_support_reduction_reaches_caratheodory_bound_without_hurting_leverage(
    n: int, d: int, tol: float
) -> None:
    # many points in low dimension: the unreduced Frank-Wolfe support exceeds r(r+1)/2
    # (in the second case by more than one block of 2 r(r+1)/2 + 1 points)
    V = unit_rows(np.random.default_rng(0), n, d)
    bound = d * (d + 1) // 2
    raw = g_optimal_design(V, tol=tol, reduce_support=False)
    red = g_optimal_design(V, tol=tol, reduce_support=True)
    assert raw.support.size > bound
    assert red.support.size <= bound
    assert red.max_leverage <= raw.max_leverage * (1 + 1e-9)
    check_g_optimal(V, red, tol=tol)
    # the moment matrix V(p) itself is preserved up to the renormalisation (scaling)
    M_raw = (V.T * raw.weights) @ V
    M_red = (V.T * red.weights) @ V
    scale = np.trace(M_red) / np.trace(M_raw)
    assert scale >= 1 - 1e-9
    np.testing.assert_allclose(M_red, scale * M_raw, atol=1e-9)


def test_max_iter_cap_reports_not_converged() -> None:
    V = unit_rows(np.random.default_rng(1), 200, 20)
    res = g_optimal_design(V, max_iter=3)
    assert res.iterations == 3
    assert res.converged == (res.max_leverage <= (1 + TOL) * 20)
    assert not res.converged
    check_probability_vector(res.weights, 200)


def test_benchmark_size_converges_within_the_default_iterations() -> None:
    # speed itself is measured side by side in benchmarks/bench_design.py, not timed here
    V = unit_rows(np.random.default_rng(2), 200, 20)
    res = g_optimal_design(V)
    assert res.converged
    assert res.iterations < 10_000


def test_g_optimal_to_dict_is_json() -> None:
    res = g_optimal_design(np.eye(3))
    d = json.loads(json.dumps(res.to_dict(), allow_nan=False))
    assert d["weights"] == pytest.approx([1 / 3] * 3)
    assert d["span_dimension"] == 3 and d["converged"] is True


@pytest.mark.parametrize(
    ("vectors", "kwargs", "match"),
    [
        (np.array([[np.nan, 1.0]]), {}, "finite"),
        (np.array([[np.inf, 1.0]]), {}, "finite"),
        (np.zeros((0, 3)), {}, "non-empty"),
        (np.ones(3), {}, "2-D"),
        (np.ones((2, 2, 2)), {}, "2-D"),
        ([["a", "b"]], {}, "real numbers"),
        (np.eye(2), {"tol": 0.0}, "tol"),
        (np.eye(2), {"tol": float("nan")}, "tol"),
        (np.eye(2), {"max_iter": 0}, "max_iter"),
        (np.eye(2), {"max_iter": 2.5}, "max_iter"),
        (np.eye(2), {"max_iter": "many"}, "max_iter"),
        (np.eye(2), {"rank_tol": -1.0}, "rank_tol"),
    ],
)
def test_g_optimal_rejects_bad_input(vectors, kwargs, match) -> None:
    with pytest.raises(ValueError, match=match):
        g_optimal_design(vectors, **kwargs)


# ----------------------------------------------------------------------------- DEO
def check_theorem_1(X: np.ndarray, rep: DesignReport, anchor: int, tol: float = TOL) -> None:
    """Algorithm 1's structure and Theorem 1 with d replaced by r = rank{x_i - x_anchor}."""
    K = X.shape[0]
    w = rep.weights
    check_probability_vector(w, K)
    B = np.delete(X, anchor, axis=0) - X[anchor]
    r = np.linalg.matrix_rank(B) if K > 1 else 0
    assert rep.span_dimension == r
    assert rep.anchor == anchor
    if r == 0:
        assert w[anchor] == 1.0
        return
    assert w[anchor] == 0.5  # Algorithm 1, line 3
    # p~ = 2 p on the other arms is a (1 + tol)-certified G-optimal design of the b_i
    inner = 2.0 * np.delete(w, anchor)
    lev = pinv_leverages(B, inner)
    assert rep.kw_max_leverage == pytest.approx(lev.max(), rel=1e-6)
    assert r * (1 - 1e-9) <= rep.kw_max_leverage <= (1 + tol) * r
    # Theorem 1 (proof: Sigma_deo >= Sigma_opt / 4): 2 sqrt(KW value) and 4 sqrt(KW value)
    slack = math.sqrt(1 + tol) * (1 + 1e-9)
    assert rep.max_norm_to_anchor <= 2 * math.sqrt(rep.kw_max_leverage) * (1 + 1e-9)
    assert rep.max_norm_to_anchor <= rep.bound_2_sqrt_d * slack
    assert rep.max_norm_to_mean <= rep.bound_4_sqrt_d * slack
    assert rep.bound_2_sqrt_d == pytest.approx(2 * math.sqrt(r))
    assert rep.bound_4_sqrt_d == pytest.approx(4 * math.sqrt(r))
    # support: the anchor plus the inner Caratheodory bound
    assert rep.support.size <= 1 + r * (r + 1) // 2
    # the reported norms are the brute-force pseudo-inverse norms (all finite here)
    S = sigma_p(X, w)
    Sp = np.linalg.pinv(S, hermitian=True, rcond=1e-10)
    to_anchor = np.sqrt(np.einsum("ij,jk,ik->i", X - X[anchor], Sp, X - X[anchor]))
    xbar = w @ X
    to_mean = np.sqrt(np.einsum("ij,jk,ik->i", X - xbar, Sp, X - xbar))
    assert rep.max_norm_to_anchor == pytest.approx(to_anchor.max(), rel=1e-6)
    assert rep.max_norm_to_mean == pytest.approx(to_mean.max(), rel=1e-6)


def _instances() -> list:
    rng = np.random.default_rng(2024)
    out = []
    for s, (K, d) in enumerate([(10, 5), (30, 5), (30, 20), (60, 8), (4, 10), (3, 7), (2, 3)]):
        out.append((f"random K={K} d={d}", unit_rows(rng, K, d), s % K))
    base = unit_rows(rng, 6, 4)
    out.append(("repeated arms", np.vstack([base, base[[0, 0, 3]]]), 0))
    out.append(("repeats of the anchor", np.vstack([base, base[[2, 2]]]), 2))
    u = rng.normal(size=5)
    out.append(("collinear arms", np.linspace(-1, 1, 7)[:, None] * u / np.linalg.norm(u), 3))
    out.append(
        ("collinear through an offset", rng.normal(size=5) + np.outer(rng.normal(size=8), u), 0)
    )
    offset = np.full(6, 0.3)
    sub = np.linalg.qr(rng.normal(size=(6, 2)))[0]
    out.append(("common offset, 2-dim span", offset + 0.2 * rng.normal(size=(9, 2)) @ sub.T, 1))
    out.append(("large common offset", 100.0 + 0.5 * unit_rows(rng, 12, 4), 0))
    out.append(("simplex (multi-armed)", np.eye(6), 4))
    return [pytest.param(X, a, id=name) for name, X, a in out]


@pytest.mark.parametrize(("X", "anchor"), _instances())
def test_deo_satisfies_theorem_1(X: np.ndarray, anchor: int) -> None:
    rep = deo_design(X, anchor=anchor)
    check_theorem_1(X, rep, anchor)


def test_deo_theorem_1_many_random_instances() -> None:
    rng = np.random.default_rng(99)
    for _ in range(40):
        K = int(rng.integers(2, 25))
        d = int(rng.integers(1, 12))
        X = rng.uniform(-1, 1, size=(K, d))
        if rng.uniform() < 0.3:  # features in a random lower-dimensional affine subspace
            k = int(rng.integers(1, d + 1))
            X = rng.normal(size=d) + rng.normal(size=(K, k)) @ rng.normal(size=(k, d))
        anchor = int(rng.integers(K))
        check_theorem_1(X, deo_design(X, anchor=anchor), anchor)


@pytest.mark.parametrize("K", [2, 3, 5, 10])
def test_deo_multi_armed_closed_form(K: int) -> None:
    """x_i = e_i: b_i = e_i - e_1 are K-1 independent vectors, so p~ is uniform (leverage
    1/p~_i), p = (1/2, 1/(2(K-1)), ...), Sigma_p = diag(p) - p p^T and, for v orthogonal to
    the ones vector, ||v||^2 = sum_j v_j^2 / p_j: ||e_i - e_1||^2 = 2 + 2(K-1) = 2K and
    ||e_i - p||^2 = (1 - p_i) / p_i, i.e. 1 for the anchor and 2K - 3 for the others."""
    for anchor in (0, K - 1):
        rep = deo_design(np.eye(K), anchor=anchor)
        expected = np.full(K, 1.0 / (2 * (K - 1)))
        expected[anchor] = 0.5
        np.testing.assert_allclose(rep.weights, expected, atol=1e-12)
        assert rep.span_dimension == K - 1
        assert rep.kw_max_leverage == pytest.approx(K - 1)
        assert rep.max_norm_to_anchor == pytest.approx(math.sqrt(2 * K))
        assert rep.max_norm_to_mean == pytest.approx(math.sqrt(2 * K - 3))


def test_deo_arms_restriction() -> None:
    rng = np.random.default_rng(8)
    X = unit_rows(rng, 9, 4)
    arms = np.array([7, 2, 5, 4])
    rep = deo_design(X, anchor=2, arms=arms)
    sub = deo_design(X[[2, 4, 5, 7]], anchor=0)
    assert rep.weights.shape == (9,)
    assert rep.weights[[0, 1, 3, 6, 8]].sum() == 0.0
    np.testing.assert_allclose(rep.weights[[2, 4, 5, 7]], sub.weights, atol=1e-12)
    assert rep.max_norm_to_anchor == pytest.approx(sub.max_norm_to_anchor, rel=1e-9)
    assert rep.max_norm_to_mean == pytest.approx(sub.max_norm_to_mean, rel=1e-9)
    assert rep.span_dimension == sub.span_dimension == 3
    assert rep.weights[2] == 0.5


def test_deo_identical_arms_put_all_mass_on_anchor() -> None:
    X = np.tile([0.2, -0.1, 0.4], (4, 1))
    rep = deo_design(X, anchor=1)
    np.testing.assert_array_equal(rep.weights, [0.0, 1.0, 0.0, 0.0])
    assert rep.span_dimension == 0
    assert rep.max_norm_to_anchor == 0.0 and rep.max_norm_to_mean == 0.0
    assert rep.kw_max_leverage == 0.0
    rep1 = deo_design(np.array([[0.5, 0.5]]))
    np.testing.assert_array_equal(rep1.weights, [1.0])


def test_deo_is_translation_invariant() -> None:
    rng = np.random.default_rng(4)
    X = unit_rows(rng, 12, 5)
    rep = deo_design(X, anchor=3)
    shifted = design_report(X + rng.normal(size=5) * 10, rep.weights, anchor=3)
    assert shifted.max_norm_to_anchor == pytest.approx(rep.max_norm_to_anchor, rel=1e-7)
    assert shifted.max_norm_to_mean == pytest.approx(rep.max_norm_to_mean, rel=1e-7)
    assert shifted.kw_max_leverage == pytest.approx(rep.kw_max_leverage, rel=1e-7)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"anchor": 5}, "anchor"),
        ({"anchor": -1}, "anchor"),
        ({"anchor": True}, "anchor"),
        ({"anchor": 1.5}, "anchor"),
        ({"arms": [0, 9]}, "arms"),
        ({"arms": [0, 1, 1]}, "duplicates"),
        ({"arms": []}, "arms"),
        ({"arms": np.array([True, False, True, False, True])}, "boolean"),
        ({"arms": [1, 2], "anchor": 0}, "anchor 0 must be one of arms"),
        ({"tol": -1}, "tol"),
    ],
)
def test_deo_rejects_bad_input(kwargs, match) -> None:
    X = unit_rows(np.random.default_rng(0), 5, 3)
    with pytest.raises(ValueError, match=match):
        deo_design(X, **kwargs)


def test_deo_rejects_bad_features() -> None:
    with pytest.raises(ValueError, match="finite"):
        deo_design(np.array([[0.0, np.nan], [1.0, 0.0]]))
    with pytest.raises(ValueError, match="non-empty"):
        deo_design(np.zeros((0, 2)))


# ----------------------------------------------------------------------------- report
def test_design_report_hand_computed_1d() -> None:
    """x = 0, 1, 3 and p = (1/2, 1/4, 1/4): xbar = 1, Sigma = 1/2 + 0 + 1 = 3/2;
    max |x_i - 0| / sqrt(3/2) = sqrt(6); max |x_i - 1| / sqrt(3/2) = sqrt(8/3); inner design
    (1/2, 1/2) on b = (1, 3): V = 5, leverages 1/5 and 9/5."""
    rep = design_report(np.array([[0.0], [1.0], [3.0]]), [0.5, 0.25, 0.25], anchor=0)
    assert rep.max_norm_to_anchor == pytest.approx(math.sqrt(6))
    assert rep.max_norm_to_mean == pytest.approx(math.sqrt(8 / 3))
    assert rep.kw_max_leverage == pytest.approx(9 / 5)
    assert rep.span_dimension == 1
    assert rep.bound_2_sqrt_d == 2.0 and rep.bound_4_sqrt_d == 4.0
    np.testing.assert_array_equal(rep.support, [0, 1, 2])


def test_design_report_hand_computed_2d_with_anchor() -> None:
    """x_0 = (0,0), x_1 = (2,0), x_2 = (0,1), p = (0, 1/2, 1/2), anchor 1.  By Lemma 1,
    Sigma_p = p_1 p_2 u u^T = u u^T / 4 with u = x_1 - x_2 = (2, -1), |u|^2 = 5: rank one.
    x_0 - x_1 = (-2, 0) is outside its range, so its extended norm is infinite, and the inner
    design (weight 1 on b_2 = -u, 0 on b_0) misses b_0: infinite KW value too.  Over the arms
    {1, 2} only: ||-u||^2 = |u|^4 / (|u|^2 |u|^2 / 4) = 4, x_i - xbar = +-u/2 has norm 1, and
    the inner design (all weight on b_2) has leverage 1."""
    X = np.array([[0.0, 0.0], [2.0, 0.0], [0.0, 1.0]])
    rep = design_report(X, [0.0, 0.5, 0.5], anchor=1)
    assert rep.max_norm_to_anchor == math.inf
    assert rep.kw_max_leverage == math.inf
    assert rep.span_dimension == 2
    sub = design_report(X, [0.0, 0.5, 0.5], anchor=1, arms=[1, 2])
    assert sub.max_norm_to_anchor == pytest.approx(2.0)
    assert sub.max_norm_to_mean == pytest.approx(1.0)
    assert sub.kw_max_leverage == pytest.approx(1.0)
    assert sub.span_dimension == 1
    d = json.loads(json.dumps(rep.to_dict(), allow_nan=False))
    assert d["max_norm_to_anchor"] is None and d["weights"] == [0.0, 0.5, 0.5]


def test_extended_norm_is_the_regularised_limit() -> None:
    """Section 1.3: ||z||_{A^{-1}} = lim ||z||_{(A + lam I)^{-1}}; finite inside the range of A,
    growing like 1/sqrt(lam) outside it."""
    rng = np.random.default_rng(6)
    X = rng.normal(size=(4, 3)) @ rng.normal(size=(3, 6))  # affine span of dimension 3 in R^6
    p = np.array([0.1, 0.2, 0.3, 0.4])
    rep = design_report(X, p, anchor=0)
    S = sigma_p(X, p)
    lim = max(regularised_norm(S, x - X[0], 1e-11) for x in X)
    assert rep.max_norm_to_anchor == pytest.approx(lim, rel=1e-4)
    # an arm outside the affine span of the others -> infinite norm, and the limit diverges
    X2 = np.vstack([X, rng.normal(size=6)])
    p2 = np.r_[p, 0.0]
    rep2 = design_report(X2, p2, anchor=0)
    assert rep2.max_norm_to_anchor == math.inf
    S2 = sigma_p(X2, p2)
    z = X2[-1] - X2[0]
    assert regularised_norm(S2, z, 1e-8) > 9 * regularised_norm(S2, z, 1e-6)


@pytest.mark.parametrize(
    ("weights", "match"),
    [
        ([0.5, 0.5], "shape"),
        ([0.5, 0.6, -0.1], "non-negative"),
        ([0.5, 0.2, 0.2], "sum to 1"),
        ([np.nan, 0.5, 0.5], "finite"),
    ],
)
def test_design_report_rejects_bad_weights(weights, match) -> None:
    with pytest.raises(ValueError, match=match):
        design_report(np.eye(3), weights)


def test_deo_gives_no_weight_to_copies_of_the_anchor() -> None:
    rng = np.random.default_rng(12)
    base = unit_rows(rng, 5, 3)
    X = np.vstack([base, base[[1, 1]]])  # arms 5 and 6 are copies of the anchor (b = 0)
    rep = deo_design(X, anchor=1)
    assert rep.weights[5] == 0.0 and rep.weights[6] == 0.0
    check_theorem_1(X, rep, 1)


# ------------------------------------------------------- the start does not depend on rounding
def test_initial_design_breaks_ties_by_index_not_by_rounding() -> None:
    from dashboard.algorithms.semiparametric.goptimal import _initial_design

    # an orthonormal basis: every pivot is an exact tie, so the smallest indices are chosen
    assert np.flatnonzero(_initial_design(np.eye(4)[::-1])).tolist() == [0, 1, 2, 3]
    # unit-norm rows (every first pivot a tie), their norms moved by rounding-sized amounts:
    # the same start, hence the same design path, whatever the rounding
    V = unit_rows(np.random.default_rng(5), 10, 5)
    start = np.flatnonzero(_initial_design(V)).tolist()
    assert start[0] == 0
    res = g_optimal_design(V)
    for k in range(1, 4):
        W = V * (1.0 + k * 3e-16 * np.random.default_rng(k).choice([-1, 1], size=(10, 1)))
        assert np.flatnonzero(_initial_design(W)).tolist() == start
        other = g_optimal_design(W)
        assert other.iterations == res.iterations
        assert np.allclose(other.weights, res.weights, rtol=0, atol=1e-12)
    # a real difference in norm is not a tie: the longest vector comes first
    W = V.copy()
    W[7] *= 1.001
    assert 7 in np.flatnonzero(_initial_design(W)).tolist()


_KERNEL_SCRIPT = """
import json, sys
import numpy as np
from dashboard.algorithms.semiparametric.design import g_optimal_design
V = np.random.default_rng(5).normal(size=(10, 5))
V /= np.linalg.norm(V, axis=1, keepdims=True)
out = []
for keep in ([0, 1, 2, 3, 4, 5, 6, 7, 8, 9], [1, 2, 3, 5, 6, 8, 9], [0, 2, 3, 4, 6, 7]):
    res = g_optimal_design(V[keep])
    out.append([res.iterations, res.weights.tolist()])
json.dump(out, sys.stdout)
"""


def test_g_optimal_design_is_the_same_with_avx2_and_avx512_kernels() -> None:
    # OpenBLAS picks its kernels by CPU; an AVX-512 kernel rounds differently and broke the
    # first pivot's tie of unit-norm arms another way (golden G-elimination case)
    import os
    import subprocess
    import sys

    from tests.conftest import cpu_flags

    if not {"avx2", "avx512f"} <= cpu_flags():
        pytest.skip("needs a CPU with both AVX2 and AVX-512 kernels")
    runs = {}
    for core in ("Haswell", "SkylakeX"):
        env = {**os.environ, "OPENBLAS_CORETYPE": core}
        done = subprocess.run(
            [sys.executable, "-c", _KERNEL_SCRIPT],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=True,
        )
        runs[core] = json.loads(done.stdout)
    for (it_a, w_a), (it_b, w_b) in zip(runs["Haswell"], runs["SkylakeX"]):
        assert it_a == it_b
        assert np.allclose(w_a, w_b, rtol=0, atol=1e-12)
