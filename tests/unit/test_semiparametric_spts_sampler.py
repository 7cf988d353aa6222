"""SP-TS's certified Monte Carlo sampler gives exactly the former implementation's numbers.

``ReferenceSPTS`` below is the former ``_normals`` / ``_decide`` of
``dashboard/algorithms/semiparametric/policies/spts.py`` verbatim (every draw through
``ndtri``, every arg-max from the exact products).  The current engine scores the draws with
table normals, certifies the arg-maxima and recomputes exactly where it cannot
(``certified_argmax.py``); its arms, Monte Carlo probabilities, ``B``, ``y`` and regret must be
bit-identical, including when every repetition falls back and when a uniform is exactly 1.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from scipy.special import ndtri

from dashboard.algorithms import randomness as rnd
from dashboard.algorithms.semiparametric import SemiparametricEnvironment, gap_instance, make_shift
from dashboard.algorithms.semiparametric.policies import certified_argmax as ca
from dashboard.algorithms.semiparametric.policies import spts
from dashboard.algorithms.semiparametric.policies.spts import (
    BatchedSemiparametricTS,
    SemiparametricTS,
)


class ReferenceSPTS(BatchedSemiparametricTS):
    """The former implementation (verbatim ``_normals`` and ``_decide``)."""

    def _reset_state(self) -> None:
        super()._reset_state()
        self.v = float(self.v[0])  # the former scalar v (one c for the whole engine)
        self._z: np.ndarray | None = None
        self._z_t0 = 0

    def _normals(self, t: int) -> np.ndarray:
        i = t - self._z_t0
        if self._z is None or i >= self._z.shape[0] or i < 0:
            tt = np.arange(t, t + self._z_w, dtype=np.int64)
            counters = tt[:, None] * self._nd + np.arange(self._nd)
            z = rnd.normal(self._keys[None, :, None], counters[:, None, :])  # (W, R, nd)
            self._z = z.reshape(self._z_w, self.R, self.n_mc + 1, self.d)
            self._z_t0, i = t, 0
        return self._z[i]

    def _decide(self) -> tuple[np.ndarray, np.ndarray]:
        if self._cache_t == self.t:
            return self._a, self._pi
        L = np.linalg.cholesky(self.B)
        L_inv = np.tril(np.linalg.inv(L))
        mu_hat = (np.swapaxes(L_inv, 1, 2) @ (L_inv @ self.y[:, :, None]))[:, :, 0]
        z = self._normals(self.t + 1)
        draws = mu_hat[:, None, :] + self.v * (z @ L_inv)
        best = np.argmax(draws @ self._XT, axis=2)
        self._a = best[:, 0]
        counts = np.bincount((best[:, 1:] + self._offsets).ravel(), minlength=self.R * self.K)
        self._pi = counts.reshape(self.R, self.K) / self.n_mc
        self._cache_t = self.t
        return self._a, self._pi


def _envs(d, K, shift, R, seed, gap=0.5):
    inst = gap_instance(d, K, gap=gap, seed=seed)
    return [
        SemiparametricEnvironment(inst, make_shift(shift, seed=seed), 1.0, seed=seed, rep=r)
        for r in range(R)
    ]


def _run_both(engine, d, K, shift, T, R=4, seed=0, gap=0.5, chunks=(), **params):
    """Run the reference and ``engine`` on the same environments, advancing through
    ``chunks``; assert every number is identical after each chunk; return the engine."""
    ref, new = ReferenceSPTS(**params), engine(**params)
    ref.reset(_envs(d, K, shift, R, seed, gap), T)
    new.reset(_envs(d, K, shift, R, seed, gap), T)
    for until in (*chunks, T):
        ref.advance(until)
        new.advance(until)
        assert np.array_equal(new.cum_regret, ref.cum_regret)
        assert np.array_equal(new.B, ref.B) and np.array_equal(new.y, ref.y)
        assert np.array_equal(new.action_distributions(), ref.action_distributions())
    return new


@pytest.mark.parametrize(
    ("d", "K", "shift", "T", "seed", "gap", "params"),
    [
        (5, 10, "sine", 200, 0, 0.5, {}),
        (20, 30, "log", 60, 1, 0.5, {"c": 8.0}),
        (5, 10, "adversarial", 120, 2, 0.5, {"c": 4.0, "n_mc": 17}),
        (3, 4, "none", 300, 3, 0.01, {"c": 0.25, "n_mc": 1}),
        (5, 10, "sine", 150, 4, 0.01, {"n_mc": 250}),
        # larger d, close calls (1% gap)
        (8, 12, "sine", 200, 5, 0.01, {"c": 0.5}),
        (20, 30, "none", 150, 6, 0.5, {}),
    ],
)
def test_certified_sampler_equals_former_implementation(d, K, shift, T, seed, gap, params):
    _run_both(BatchedSemiparametricTS, d, K, shift, T, seed=seed, gap=gap, chunks=(1, 7), **params)


def test_close_calls_are_recomputed_and_still_identical():
    # a 1% gap keeps several arms' scores close: some repetitions need the exact path (7
    # repetition-rounds in 12 000 with the 11-bit table: its margin is small)
    eng = _run_both(BatchedSemiparametricTS, 5, 10, "sine", 2000, R=6, seed=0, gap=0.01)
    assert 0 < eng.recomputed < 0.01 * 6 * 2000


def test_every_repetition_recomputed_gives_the_same_numbers(monkeypatch):
    monkeypatch.setattr(spts, "thresholds", lambda v, mu, X, *norms: np.full(mu.shape[0], np.inf))
    eng = _run_both(BatchedSemiparametricTS, 5, 10, "log", 50, seed=5)
    assert eng.recomputed == 4 * 51  # 50 rounds and the final action_distributions()


def test_exact_mode_gives_the_same_numbers(monkeypatch):
    monkeypatch.setattr(BatchedSemiparametricTS, "certify", False)
    eng = _run_both(BatchedSemiparametricTS, 5, 10, "log", 40, seed=6)
    assert eng.recomputed == 0


@pytest.mark.filterwarnings("ignore:invalid value encountered in matmul:RuntimeWarning")
def test_a_uniform_of_one_takes_the_exact_path(monkeypatch):
    """u = 1 (ndtri = inf; probability 2^-53 per draw) is never certified: the repetition
    is recomputed exactly, with the former implementation's (infinite) draw."""
    real = rnd.uniform

    def with_a_one(key, counter):
        u = real(key, counter)
        if u.ndim == 3 and u.shape[-1] == 101 * 5:  # SP-TS's windows (W, R, (n_mc+1) d)
            u.reshape(-1)[777] = 1.0
        return u

    real_run = rnd.uniform_run

    def run_with_a_one(key, first, count):
        u = real_run(key, first, count)
        if u.ndim == 2 and count % (101 * 5) == 0:  # the engine's windows (R, W (n_mc+1) d)
            # the same draw: flat 777 of the (W, R, 505) window above is rep 1, counter 272
            u[1, 272] = 1.0
        return u

    monkeypatch.setattr(rnd, "uniform", with_a_one)
    monkeypatch.setattr(rnd, "uniform_run", run_with_a_one)
    eng = _run_both(BatchedSemiparametricTS, 5, 10, "log", 30, seed=7)
    assert eng.recomputed >= 1


def test_single_class_runs_the_certified_engine():
    env = _envs(5, 10, "sine", 1, 8)[0]
    p = SemiparametricTS().run(env, 100)
    ref = ReferenceSPTS().run(_envs(5, 10, "sine", 1, 8), 100)
    assert p.cum_regret == ref.cum_regret[0]
    assert np.array_equal(p.B, ref.B[0])


# ---------------------------------------------------------------- the table and certificate
def test_approx_normal_into_buffers_equals_fresh_arrays():
    # SP-TS passes a strided view of its window and reuses out / work every round
    u = rnd.uniform_run(rnd.stream_key(2, np.arange(3), "buffers"), 0, 4 * 202)
    view = u.reshape(3, 4, 101, 2).transpose(1, 0, 2, 3)[2]  # (R, n_mc + 1, d), strided
    out, work = np.full(view.shape, np.nan), np.full((2, *view.shape), np.nan)
    got = ca.approx_normal(view, out=out, work=work)
    assert got is out and np.array_equal(got, ca.approx_normal(np.ascontiguousarray(view)))


def test_table_error_bound_holds_on_many_uniforms_and_the_extremes():
    assert 0 < ca.TABLE_ERROR < 1e-6
    keys = rnd.stream_key(3, np.arange(8), "table")
    u = rnd.uniform(np.asarray(keys)[:, None], np.arange(50_000)[None, :]).ravel()
    k = np.concatenate(
        [
            np.arange(0, 3000),  # u down to 2^-54
            2**53 - 2 - np.arange(3000),  # u up to 1 - 2^-53 (below 1)
            2**52 + np.arange(-3000, 3000),  # around 1/2
        ]
    ).astype(np.uint64)
    u = np.concatenate([u, (k.astype(np.float64) + 0.5) * 2.0**-53])
    # the table's nodes and their neighbours (segment ends), on both sides of 1/2
    bits = ca.MANTISSA_BITS
    nodes = (np.arange(-5, 5)[:, None] + (np.arange(1, 55)[None, :] << bits)).ravel()
    w = ((nodes + (ca._LO)) << ca._SHIFT).view(np.float64)
    w = w[(w > 0) & (w <= 0.5)]
    # every segment's midpoint, where linear interpolation errs most (h^2/8 |f''|)
    ends = ((np.arange(ca._A.size + 1, dtype=np.int64) + ca._LO) << ca._SHIFT).view(np.float64)
    mid = 0.5 * (ends[:-1] + ends[1:])
    mid = mid[(mid > 0) & (mid < 0.5)]
    u = np.concatenate([u, w, np.nextafter(w, 0), np.nextafter(w, 1), 1.0 - w, mid, 1.0 - mid])
    u = u[(u > 0) & (u < 1)]
    err = np.abs(ca.approx_normal(u) - ndtri(u))
    assert float(err.max()) <= ca.TABLE_ERROR


@settings(max_examples=300, deadline=None)
@given(st.integers(min_value=0, max_value=2**53 - 2))
def test_table_error_bound_holds_for_any_counter_based_uniform(k):
    u = np.array([(float(k) + 0.5) * 2.0**-53])
    assert abs(float(ca.approx_normal(u)[0]) - float(ndtri(u)[0])) <= ca.TABLE_ERROR


def test_certified_best_flags_ties_and_close_calls_only():
    scores = np.array(
        [
            [[0.0, 1.0, 0.5], [2.0, -1.0, 1.0]],  # clear maxima
            [[0.0, 1.0, 1.0 - 1e-7], [2.0, -1.0, 1.0]],  # a close call
            [[1.0, 1.0, 0.0], [2.0, -1.0, 1.0]],  # an exact tie
            [[np.nan, 1.0, 0.0], [2.0, -1.0, 1.0]],  # not a number
            [[np.inf, 1.0, 0.0], [2.0, -1.0, 1.0]],  # infinite
        ]
    )
    best, ok = ca.certified_best(scores.copy(), np.full(5, 1e-6))
    assert np.array_equal(best, np.argmax(scores, axis=2))
    assert ok.tolist() == [True, False, False, False, False]


def former_certified_best(scores, threshold):
    """The former certificate: count the scores above ``top - threshold`` (S when certified)."""
    R, S, K = scores.shape
    best = np.argmax(scores, axis=2)
    flat = best.reshape(-1) + np.arange(0, R * S * K, K)
    top = scores.reshape(-1).take(flat).reshape(R, S)
    finite = np.isfinite(top).all(axis=1)
    top -= threshold[:, None]
    close = (scores > top[:, :, None]).reshape(R, -1).sum(axis=1)
    return best, finite & (close == S)


@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")  # inf - inf
@settings(max_examples=200, deadline=None)
@given(
    shape=st.tuples(st.integers(1, 4), st.integers(1, 5), st.integers(1, 6)),
    data=st.data(),
)
def test_certified_best_equals_the_former_count(shape, data):
    # few distinct values make ties and close calls common; NaN and inf at the boundaries
    values = st.sampled_from([0.0, 1.0, 1.0 + 1e-7, 1.0 - 1e-7, 2.0, -3.0, np.inf, -np.inf])
    scores = data.draw(hnp.arrays(np.float64, shape, elements=values))
    if data.draw(st.booleans()):
        scores.reshape(-1)[data.draw(st.integers(0, scores.size - 1))] = np.nan
    margins = st.sampled_from([0.0, 1e-9, 1e-6, 0.5, np.inf])
    threshold = np.array(data.draw(st.lists(margins, min_size=shape[0], max_size=shape[0])))
    best, ok = ca.certified_best(scores.copy(), threshold)
    old_best, old_ok = former_certified_best(scores.copy(), threshold)
    assert np.array_equal(best, old_best) and np.array_equal(ok, old_ok)


def test_thresholds_grow_with_the_exploration_scale():
    X = np.eye(3)
    mu = np.zeros((2, 3))
    small, large = ca.thresholds(1.0, mu, X), ca.thresholds(10.0, mu, X)
    assert np.all(small > 0) and np.all(large > small)
