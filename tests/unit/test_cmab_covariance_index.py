"""The fast OLS-UCB-C oracle (issue 9): ``approx_index`` is within its per-repetition bound
of the reference ``index_values`` and ``argmax_index`` returns the reference ``argmax``
(first maximiser), also on exact ties and with never-played arms."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from dashboard.algorithms.cmab.actions import MSets
from dashboard.algorithms.cmab.policies.covariance_index import (
    approx_index,
    argmax_index,
    index_values,
)


def _state(rng, R, d, unplayed, ties):
    n = rng.integers(1, 50, size=(R, d)).astype(float)
    mu = rng.normal(size=(R, d))
    M = rng.normal(size=(R, d, d))
    G = M @ M.transpose(0, 2, 1) + np.eye(d)
    if ties:  # arms 0 and 1 interchangeable: actions with equal reference values
        n[:, 1], mu[:, 1] = n[:, 0], mu[:, 0]
        G[:, 1, :], G[:, :, 1] = G[:, 0, :], G[:, :, 0]
        G[:, 1, 1] = G[:, 0, 0]
        G[:, 0, 1] = G[:, 1, 0] = G[:, 0, 0]
    inv_n = 1.0 / n
    if unplayed:
        inv_n[:, -1] = np.inf
    return mu, G, inv_n


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    d=st.integers(3, 8),
    m=st.integers(1, 3),
    unplayed=st.booleans(),
    ties=st.booleans(),
    f=st.sampled_from([0.0, 0.5, 30.0]),
)
def test_argmax_index_is_the_reference_argmax(seed, d, m, unplayed, ties, f):
    rng = np.random.default_rng(seed)
    R = 3
    mu, G, inv_n = _state(rng, R, d, unplayed, ties)
    A = MSets(d, m).enumerate()
    Af = A.astype(float)
    arms = np.nonzero(A)[1].reshape(A.shape[0], m)
    rows, _ = argmax_index(A, Af, arms, mu, G, inv_n, f)
    v, bound = approx_index(arms, mu, G, inv_n, f)
    assert bound.shape == (R, 1)
    for r in range(R):
        ref = index_values(Af, mu[r], G[r], inv_n[r], f)
        assert rows[r] == int(np.argmax(ref))
        finite = np.isfinite(ref)
        assert np.array_equal(finite, np.isfinite(v[r]))
        assert np.all(np.abs(v[r, finite] - ref[finite]) <= bound[r, 0])
