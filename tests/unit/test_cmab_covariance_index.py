"""The fast OLS-UCB-C oracle (issue 9): ``approx_index`` is within its per-repetition bound
of the reference ``index_values`` and ``argmax_index`` returns the reference ``argmax``
(first maximiser), also on exact ties and with never-played arms."""

from __future__ import annotations

import numpy as np
import pytest
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


# ------------------------------------------------------------------------------------------
# CovIndex: the set function of AROQ-C / SROQ-C and its vectorised argmax (start-up, issue 9)
# ------------------------------------------------------------------------------------------
def _loop_argmax(index, A, mask):
    """The reference: ``argmax_set_function``'s loop (first maximiser of the feasible rows)."""
    rows = np.flatnonzero(mask)
    if rows.size == 0:
        return None
    return int(rows[int(np.argmax([index._value(A[r]) for r in rows]))])


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    d=st.integers(3, 8),
    m=st.integers(1, 3),
    unplayed=st.booleans(),
    ties=st.booleans(),
    f=st.sampled_from([0.0, 0.5, 30.0]),
    sign=st.sampled_from([1.0, -1.0]),
    banned=st.booleans(),
    mixed=st.booleans(),
)
def test_cov_index_argmax_rows_is_the_loop_argmax(
    seed, d, m, unplayed, ties, f, sign, banned, mixed
):
    """Under every restriction mask, ``argmax_rows`` returns the row the reference loop
    returns: exact ties (first row), never-played arms (``sign * inf``), banned pairs
    (``-inf``, also when every row is banned) and families of several action sizes."""
    from dashboard.algorithms.cmab.actions.explicit import ExplicitActions
    from dashboard.algorithms.cmab.policies.covariance_index import CovIndex

    rng = np.random.default_rng(seed)
    mu, G, inv_n = (x[0] for x in _state(rng, 1, d, unplayed, ties))
    A = MSets(d, m).enumerate()
    if mixed:  # explicit family with rows of sizes 1 .. m + 1
        rows = rng.random((12, d)) < (m + 1) / d
        rows[~rows.any(axis=1), 0] = True
        A = ExplicitActions(np.r_[A[:8], rows]).enumerate()
    allowed = None
    if banned:
        allowed = rng.random((d, d)) < 0.6
        allowed = allowed & allowed.T
        np.fill_diagonal(allowed, True)
    index = CovIndex(mu, G, inv_n, f, sign, allowed)
    masks = [np.ones(len(A), dtype=bool), np.zeros(len(A), dtype=bool)]
    masks += [rng.random(len(A)) < p for p in (0.2, 0.5, 0.9)]
    masks += [A[:, i] for i in range(min(d, 3))]  # include = [i]
    for mask in masks:  # one index object, several restrictions (as in an SROQ-C epoch)
        assert index.argmax_rows(A, mask) == _loop_argmax(index, A, mask)
    # all restrictions at once (the oracle's batch path)
    assert index.argmax_rows_many(A, np.array(masks)) == [_loop_argmax(index, A, m) for m in masks]
    assert index.argmax_rows(A) == _loop_argmax(index, A, np.ones(len(A), dtype=bool))


@pytest.mark.parametrize("seed", range(6))
def test_cov_index_refines_approximate_values_anywhere_within_their_bound(seed, monkeypatch):
    """The argument of ``argmax_rows`` holds for *any* approximate values within the bound:
    perturbed adversarially inside it (exact ties then come out in random order), the
    refinement still returns the loop's first maximiser."""
    from dashboard.algorithms.cmab.policies import covariance_index as ci

    rng = np.random.default_rng(seed)
    exact = ci.approx_index

    def perturbed(*args):
        v, bound = exact(*args)
        finite = np.isfinite(v)
        v[finite] += bound[0, 0] * rng.uniform(-1.0, 1.0, size=int(finite.sum()))
        return v, bound

    monkeypatch.setattr(ci, "approx_index", perturbed)
    for trial in range(20):
        mu, G, inv_n = (x[0] for x in _state(rng, 1, 6, trial % 3 == 0, True))
        A = MSets(6, 3).enumerate()
        for sign in (1.0, -1.0):
            index = ci.CovIndex(mu, G, inv_n, 0.5, sign)
            masks = [np.ones(len(A), dtype=bool), A[:, 2], A[:, 0] | A[:, 1]]
            for mask in masks:
                assert index.argmax_rows(A, mask) == _loop_argmax(index, A, mask)
            assert index.argmax_rows_many(A, np.array(masks)) == [
                _loop_argmax(index, A, m) for m in masks
            ]


def test_cov_index_is_picklable_and_memoises_reference_values():
    import pickle

    from dashboard.algorithms.cmab.policies.covariance_index import CovIndex

    rng = np.random.default_rng(3)
    mu, G, inv_n = (x[0] for x in _state(rng, 1, 6, False, False))
    index = CovIndex(mu, G, inv_n, 0.7, 1.0)
    A = MSets(6, 2).enumerate()
    row = index.argmax_rows(A)
    clone = pickle.loads(pickle.dumps(index))
    assert clone.argmax_rows(A) == row
    assert [clone(a) for a in A] == [index._value(a) for a in A]
    assert index(A[0]) == index(A[0].astype(np.int64)) == index._value(A[0])


@pytest.mark.parametrize("cls_name", ["AROQC", "SROQC"])
@pytest.mark.parametrize(("actions", "d"), [("m-sets", 8), ("paths", 8)])
def test_rare_query_runs_identical_with_and_without_vectorised_argmax(
    cls_name, actions, d, monkeypatch
):
    """AROQ-C / SROQ-C make the same decisions whether the oracle scores every action at once
    (``CovIndex.argmax_rows``) or loops over them (the reference): same regret, events and
    query log."""
    from dashboard.algorithms.cmab.actions import make_family
    from dashboard.algorithms.cmab.policies import covariance
    from dashboard.algorithms.cmab.policies.covariance_index import CovIndex
    from dashboard.algorithms.cmab.rewards import CovarianceRewards

    family, model = make_family(actions, d, 3), CovarianceRewards(d, seed=2)
    cls = getattr(covariance, cls_name)

    def run():
        p = cls().run(model.environment(family, 1), 6000)
        a = p.log.arrays()
        log = [a[k].tolist() for k in ("t", "round_id", "purpose_code", "arm")]
        events = [(e.t, e.kind, sorted((k, repr(v)) for k, v in e.data.items())) for e in p.events]
        return p.cum_regret, log, events

    fast = run()
    monkeypatch.delattr(CovIndex, "argmax_rows")
    assert run() == fast


def test_oracle_batch_answers_shared_index_requests_together():
    """``Oracle.batch`` answers the set-function requests sharing one index together
    (``solve_set_function_many``): the same actions as one ``solve_request`` each and the
    same log (rounds, adaptivity round, purposes, arms); requests with other functions, bad
    restrictions and infeasible ones behave as before."""
    from dashboard.algorithms.base import ExpensiveLog
    from dashboard.algorithms.cmab.oracle import Oracle, OracleRequest, solve_request
    from dashboard.algorithms.cmab.policies.covariance_index import CovIndex

    rng = np.random.default_rng(5)
    d = 9
    family = MSets(d, 3)
    mu, G, inv_n = (x[0] for x in _state(rng, 1, d, True, True))
    ucb, lcb = CovIndex(mu, G, inv_n, 0.4, 1.0), CovIndex(mu, G, inv_n, 0.4, -1.0)
    banned = np.zeros(d, dtype=bool)
    banned[[2, 5]] = True
    reqs = [OracleRequest(f"arm {i}", f=ucb, include=[i], exclude=banned, arm=i) for i in range(d)]
    reqs += [OracleRequest("pair", f=ucb, include=[0, j], exclude=banned, arm=0) for j in (1, 3)]
    reqs += [OracleRequest("lcb", f=lcb, exclude=banned), OracleRequest("lcb", f=lcb)]
    reqs += [OracleRequest("linear", scores=mu, include=[1])]
    batched = Oracle(family, ExpensiveLog()).batch(reqs, 7)
    for req, a in zip(reqs, batched):
        ref, _ = solve_request(family, req)
        assert (a is None) == (ref is None)  # include an excluded arm: infeasible
        assert a is None or np.array_equal(a, ref)
    one_by_one = ExpensiveLog()
    for req in reqs:
        Oracle(family, one_by_one).batch([req], 7)
    log = Oracle(family, ExpensiveLog())
    log.batch(reqs, 7)
    a, b = log.log.arrays(), one_by_one.arrays()
    for key in ("t", "purpose_code", "arm"):
        assert a[key].tolist() == b[key].tolist()
    assert log.log.adaptivity == 1 and log.log.queries == len(reqs)
    for bad in ([d], [-1]):  # the first use of an exclude mask, and a later one
        for ex in (None, banned):
            extra = [OracleRequest("x", f=ucb, include=bad, exclude=ex)]
            with pytest.raises(ValueError, match="include must list arms"):
                Oracle(family, ExpensiveLog()).batch(reqs[:2] + extra, 1)


def _approx_index_plain(arms, mu, G, inv_n, f):
    """``approx_index``'s values before its block plan was cached (inline indices)."""
    R, d = mu.shape
    k = arms.shape[1]
    x = np.where(np.isinf(inv_n), 0.0, inv_n)
    B = (x[:, :, None] * G * x[:, None, :]).reshape(R, d * d)
    iu, ju = np.triu_indices(k)
    flat = arms[:, iu] * d + arms[:, ju]
    q = np.take(B, flat, axis=1) @ np.where(iu == ju, 1.0, 2.0)
    lin = np.take(mu, arms, axis=1) @ np.ones(k)
    return lin + f * np.sqrt(np.maximum(q, 0.0))


@pytest.mark.parametrize(("d", "m"), [(4, 1), (6, 2), (10, 3), (7, 4)])
def test_cached_block_plan_gives_the_plain_values(d, m):
    from dashboard.algorithms.cmab.policies.covariance_index import action_table, approx_index

    rng = np.random.default_rng(d * 10 + m)
    _, _, arms = action_table(MSets(d, m))
    R = 3
    mu = rng.standard_normal((R, d))
    H = rng.standard_normal((R, d, d))
    G = H @ np.swapaxes(H, 1, 2) + np.eye(d)
    inv_n = 1.0 / rng.integers(1, 50, (R, d))
    for _ in range(2):  # the first call builds the plan, the second reads it
        v, _ = approx_index(arms, mu, G, inv_n, 0.7)
        assert np.array_equal(v, _approx_index_plain(arms, mu, G, inv_n, 0.7))
