"""SP-TS's engine gives exactly the numbers of the engine it replaced (issue 9).

The former engine's methods are kept verbatim in ``benchmarks/former_reproduce.py`` (where
``bench_batched.py --reproduce`` times the two side by side); here both run the same
environments, chunked the same way, over hypothesis-drawn sizes, shifts, constants and seeds,
and every number they expose must be identical: arms and Monte Carlo probabilities (through
``action_distributions``), ``B``, ``y`` and the cumulative regret.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dashboard.algorithms.semiparametric import SemiparametricEnvironment, gap_instance, make_shift
from dashboard.algorithms.semiparametric.policies import certified_argmax as ca
from dashboard.algorithms.semiparametric.policies import spts
from dashboard.algorithms.semiparametric.policies.certified_argmax import ROUNDING_SLACK
from dashboard.algorithms.semiparametric.policies.spts import (
    BatchedSemiparametricTS,
    stacked_cholesky,
    stacked_inverse,
)
from tests.conftest import load_benchmark


def _former_module():
    return load_benchmark("former_reproduce", "former_reproduce_for_tests")


def _envs(d, K, shift, R, seed, gap):
    inst = gap_instance(d, K, gap=gap, seed=seed)
    return [
        SemiparametricEnvironment(inst, make_shift(shift, seed=seed), 1.0, seed=seed, rep=r)
        for r in range(R)
    ]


def _play(d, K, shift, T, R, seed, gap, chunks, params):
    """Every number of one batched run, advanced through ``chunks`` then to ``T``."""
    eng = BatchedSemiparametricTS(**params)
    eng.reset(_envs(d, K, shift, R, seed, gap), T)
    seen = []
    for until in (*chunks, T):
        eng.advance(until)
        seen.append(eng.action_distributions())
    return seen, eng.B.copy(), eng.y.copy(), eng.cum_regret.copy(), eng.recomputed


def _same(d, K, shift, T, R, seed, gap, chunks, params):
    with _former_module().former("spts"):
        old = _play(d, K, shift, T, R, seed, gap, chunks, params)
    new = _play(d, K, shift, T, R, seed, gap, chunks, params)
    for a, b in zip(old[0], new[0]):
        assert np.array_equal(a, b)
    assert np.array_equal(old[1], new[1]) and np.array_equal(old[2], new[2])
    assert np.array_equal(old[3], new[3])
    return old[4], new[4]


@settings(max_examples=12, deadline=None)
@given(
    size=st.sampled_from([(2, 3), (5, 10), (8, 12), (20, 30)]),
    shift=st.sampled_from(["sine", "log", "adversarial", "none"]),
    T=st.integers(1, 40),
    R=st.integers(1, 4),
    seed=st.integers(0, 2**31),
    gap=st.sampled_from([0.5, 0.01]),
    c=st.sampled_from([0.25, 1.0, 8.0]),
    n_mc=st.sampled_from([1, 7, 100]),
    chunk=st.integers(1, 40),
)
def test_engine_equals_the_former_engine(size, shift, T, R, seed, gap, c, n_mc, chunk):
    d, K = size
    _same(d, K, shift, T, R, seed, gap, (min(chunk, T),), {"c": c, "n_mc": n_mc})


@pytest.fixture
def wide_margin(monkeypatch):
    """Both engines' certificates with the margin of a table 1000 times less accurate than
    the one used (the 11-bit table's margin is so small that close calls are rare): many
    close calls, each sent to the exact path."""
    wide = 1000 * ca.TABLE_ERROR
    monkeypatch.setattr(ca, "TABLE_ERROR", wide)
    monkeypatch.setattr(_former_module(), "TABLE_ERROR", wide)


@pytest.mark.usefixtures("wide_margin")
def test_engine_equals_the_former_engine_across_windows_and_close_calls():
    # d = 5, K = 10: 12 rounds per window of uniforms, so chunks end inside and across windows;
    # a 1% gap and a wide margin make close calls (repetitions recomputed exactly) common
    old_redo, new_redo = _same(5, 10, "sine", 400, 6, 0, 0.01, (1, 11, 12, 13, 37, 200), {})
    assert old_redo > 20 and new_redo > 20


@pytest.mark.usefixtures("wide_margin")
def test_triangular_inverses_with_close_calls_equal_the_former_engine():
    # d >= TRIANGULAR_MIN_D: the certified scores use per-repetition triangular inverses and
    # the repetitions recomputed exactly use numpy's LU inverse of their own factors only; a
    # 1% gap and a wide margin make those common
    d = spts.TRIANGULAR_MIN_D
    old_redo, new_redo = _same(d, 15, "sine", 300, 5, 1, 0.01, (1, 40, 41, 150), {})
    assert old_redo > 20 and new_redo > 20
    eng = BatchedSemiparametricTS()
    eng.reset(_envs(d, 15, "sine", 3, 1, 0.5), 10)
    assert eng._triangular and eng._slack > ROUNDING_SLACK


def test_triangular_inverses_equal_numpy_up_to_rounding():
    rng = np.random.default_rng(4)
    A = rng.normal(size=(5, 12, 12))
    L = np.linalg.cholesky(A @ np.swapaxes(A, 1, 2) + np.eye(12))
    out = np.empty_like(L)
    got = spts.triangular_inverses(L, out)
    assert got is out and np.array_equal(np.triu(got, 1), np.zeros_like(got))
    assert np.allclose(got, np.linalg.inv(L), rtol=0, atol=1e-12)
    assert np.array_equal(spts.stacked_inverse(L[[3, 1]]), np.linalg.inv(L)[[3, 1]])


def test_exact_mode_equals_the_former_engine(monkeypatch):
    monkeypatch.setattr(BatchedSemiparametricTS, "certify", False)
    _same(5, 10, "log", 30, 2, 6, 0.5, (5,), {"c": 2.0})


def test_cholesky_inverse_is_numpys_and_refuses_an_indefinite_matrix():
    rng = np.random.default_rng(0)
    A = rng.standard_normal((3, 6, 6))
    B = A @ np.swapaxes(A, 1, 2) + np.eye(6)
    L = stacked_cholesky(B)
    assert np.array_equal(L, np.linalg.cholesky(B))
    assert np.array_equal(stacked_inverse(L), np.linalg.inv(np.linalg.cholesky(B)))
    B[1] = -np.eye(6)
    with pytest.raises(np.linalg.LinAlgError, match="not positive definite"):
        stacked_cholesky(B)
    assert spts.stacked_cholesky is stacked_cholesky and spts.stacked_inverse is stacked_inverse


@pytest.mark.parametrize("certify", [True, False])
@pytest.mark.parametrize(
    ("parts", "tiles"),
    [
        ([("sine", [0, 1, 2]), ("log", [2, 0]), ("adversarial", [1])], 0),  # gathered
        ([("sine", [0, 1, 2]), ("log", [0, 1, 2]), ("adversarial", [0, 1, 2])], 3),  # blocks
    ],
)
def test_repetitions_sharing_a_stream_equal_their_own_batches(monkeypatch, certify, parts, tiles):
    # panels that differ only in the shift, batched together (simulation/shared_batch.py):
    # repetition r of each panel uses stream (seed, r), drawn once per window and shared
    monkeypatch.setattr(BatchedSemiparametricTS, "certify", certify)

    def envs(shift, reps):
        inst = gap_instance(5, 10, gap=0.5, seed=3)
        return [
            SemiparametricEnvironment(inst, make_shift(shift, seed=3), 1.0, seed=3, rep=r)
            for r in reps
        ]

    shared = BatchedSemiparametricTS(n_mc=30)
    shared.reset([e for shift, reps in parts for e in envs(shift, reps)], 90)
    assert shared._keys.size == 3 and shared._row_of is not None and shared._tiles == tiles
    for until in (1, 13, 50, 90):
        shared.advance(until)
    lo = 0
    for shift, reps in parts:
        alone = BatchedSemiparametricTS(n_mc=30).run(envs(shift, reps), 90)
        hi = lo + len(reps)
        assert np.array_equal(alone.B, shared.B[lo:hi])
        assert np.array_equal(alone.y, shared.y[lo:hi])
        assert np.array_equal(alone.cum_regret, shared.cum_regret[lo:hi])
        lo = hi


def test_counts_beyond_int16_equal_the_exact_mode(monkeypatch):
    # n_mc > 32767: the certified path counts the draws in int64, not int16; every
    # probability is still the exact mode's (and sums to one)
    def run(certify):
        monkeypatch.setattr(BatchedSemiparametricTS, "certify", certify)
        inst = gap_instance(3, 4, gap=0.5, seed=1)
        envs = [
            SemiparametricEnvironment(inst, make_shift("sine", seed=1), 1.0, seed=1, rep=r)
            for r in range(2)
        ]
        eng = BatchedSemiparametricTS(n_mc=40_000)
        eng.reset(envs, 4)
        pis = []
        for until in range(1, 5):
            pis.append(eng.action_distributions().copy())
            eng.advance(until)
        return eng, np.array(pis)

    exact, pi_exact = run(False)
    certified, pi_certified = run(True)
    assert certified._count_type == np.int64
    assert np.array_equal(pi_certified, pi_exact)
    assert np.allclose(pi_certified.sum(axis=2), 1.0)
    assert np.array_equal(certified.B, exact.B) and np.array_equal(certified.y, exact.y)
