"""Oracle accounting (Section 2 query / adaptivity complexity), parallel batches (Appendix A.1)."""

from __future__ import annotations

import functools
import time
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor

import numpy as np
import pytest

from dashboard.algorithms.base import ExpensiveLog
from dashboard.algorithms.cmab.actions import Matchings, MSets, Paths
from dashboard.algorithms.cmab.approx import greedy_oracle
from dashboard.algorithms.cmab.oracle import (
    EXECUTORS,
    Oracle,
    OracleRequest,
    make_executor,
    solve_request,
)


def _total_of_arms(weights: tuple[float, ...], a: np.ndarray) -> float:
    """A picklable set function (module level)."""
    return float(np.asarray(weights)[a].sum() ** 2)


def _requests(fam, n, seed=0):
    rng = np.random.default_rng(seed)
    return [
        OracleRequest(
            f"representative of arm {i}", scores=rng.normal(size=fam.d), include=[i], arm=i
        )
        for i in range(n)
    ]


def test_call_and_batch_accounting():
    fam = Paths(20, 3)
    log = ExpensiveLog()
    oracle = Oracle(fam, log)
    s = np.random.default_rng(0).random(20)
    a = oracle.call(OracleRequest("ucb", scores=s), t=1)
    assert np.array_equal(a, fam.argmax_linear(s))
    oracle.call(OracleRequest("ucb", scores=s), t=5)
    out = oracle.batch([*_requests(fam, 6), OracleRequest("lcb max", scores=-s)], t=9)
    assert len(out) == 7
    assert oracle.batch([], t=10) == []  # an empty batch is not an adaptivity round
    arr = log.arrays()
    # query complexity counts calls, adaptivity counts sequential rounds (Section 2)
    assert log.queries == 9
    assert log.adaptivity == 3
    assert arr["t"].tolist() == [1, 5] + [9] * 7
    r = arr["round_id"]
    assert r[0] != r[1] and len(set(r[2:].tolist())) == 1 and r[2] not in (r[0], r[1])
    assert arr["arm"].tolist() == [-1, -1, 0, 1, 2, 3, 4, 5, -1]
    assert [log.purposes[c] for c in arr["purpose_code"][-2:]] == [
        "representative of arm 5",
        "lcb max",
    ]
    q, ad = log.cumulative(np.array([0, 1, 4, 5, 9, 100]))
    assert q.tolist() == [0, 1, 1, 2, 9, 9]
    assert ad.tolist() == [0, 1, 1, 2, 3, 3]
    assert oracle.elapsed > 0 and log.seconds > 0


def test_batch_returns_actions_in_request_order_and_none_when_infeasible():
    fam = Matchings(10, 3)
    reqs = _requests(fam, 10, seed=3)
    reqs.append(OracleRequest("impossible", scores=np.ones(10), exclude=np.ones(10, bool)))
    out = Oracle(fam, ExpensiveLog()).batch(reqs, t=2)
    for req, a in zip(reqs[:-1], out[:-1]):
        assert np.array_equal(a, fam.argmax_linear(req.scores, req.include))
    assert out[-1] is None


def test_threads_run_a_batch_concurrently_with_identical_results(monkeypatch):
    import threading

    from dashboard.algorithms.cmab import oracle as oracle_module

    # Count how many simulated solver calls are in flight at once: a structural proof of
    # concurrency that does not depend on how loaded the machine is.
    real_sleep = time.sleep
    lock, state = threading.Lock(), {"now": 0, "max": 0}

    def counting_sleep(seconds):
        with lock:
            state["now"] += 1
            state["max"] = max(state["max"], state["now"])
        real_sleep(seconds)
        with lock:
            state["now"] -= 1

    monkeypatch.setattr(oracle_module.time, "sleep", counting_sleep)
    fam = Paths(20, 3)
    delay = 0.2
    reqs = _requests(fam, 8, seed=1)
    seq_log, par_log = ExpensiveLog(), ExpensiveLog()
    sequential = Oracle(fam, seq_log, delay=delay).batch(reqs, t=3)
    assert state["max"] == 1  # without an executor the calls run one after another
    with make_executor("threads", 8) as ex:
        parallel_oracle = Oracle(fam, par_log, delay=delay, executor=ex)
        parallel = parallel_oracle.batch(reqs, t=3)
    assert state["max"] >= 2  # the calls of one batch overlapped: they ran concurrently
    assert all(np.array_equal(a, b) for a, b in zip(sequential, parallel))
    # accounting is the same: one round, 8 queries, each call lasting at least `delay`
    for log in (seq_log, par_log):
        assert log.queries == 8 and log.adaptivity == 1
        assert np.all(log.arrays()["seconds"] >= delay)
    assert parallel_oracle.elapsed < 0.9 * par_log.seconds  # batch wall < sum of call times
    assert seq_log.seconds >= 8 * delay


def test_approximate_oracle_is_used_for_linear_queries_only():
    fam = Matchings(10, 3)
    calls = []

    def spy(family, req):
        calls.append(req.purpose)
        return greedy_oracle(family, req)

    oracle = Oracle(fam, ExpensiveLog(), approximate=spy)
    s = np.random.default_rng(0).random(10)
    a = oracle.call(OracleRequest("ucb", scores=s), t=1)
    assert calls == ["ucb"] and fam.is_action(a)
    f = functools.partial(_total_of_arms, tuple(s))
    b = oracle.call(OracleRequest("set function", f=f), t=2)
    assert calls == ["ucb"]  # set functions go to the exact enumeration solver
    assert np.array_equal(b, fam.argmax_set_function(f))


def test_solve_request_and_delay():
    fam = MSets(6, 2)
    s = np.arange(6.0)
    a, secs = solve_request(fam, OracleRequest("x", scores=s), delay=0.02)
    assert a.tolist() == [False] * 4 + [True] * 2 and secs >= 0.02


def test_process_pool_with_picklable_set_function():
    fam = MSets(5, 2)
    w = (0.3, -1.0, 0.2, 0.9, 0.1)
    reqs = [
        OracleRequest("f", f=functools.partial(_total_of_arms, w)),
        OracleRequest("lin", scores=np.array(w)),
    ]
    with make_executor("processes", 2) as ex:
        assert isinstance(ex, ProcessPoolExecutor)
        out = Oracle(fam, ExpensiveLog(), executor=ex).batch(reqs, t=1)
        bad = [OracleRequest("closure", f=lambda a: float(a.sum()))] * 2
        with pytest.raises(ValueError, match="cannot be sent to a process pool"):
            Oracle(fam, ExpensiveLog(), executor=ex).batch(bad, t=1)
    assert np.array_equal(out[0], fam.argmax_set_function(reqs[0].f))
    assert np.array_equal(out[1], fam.argmax_linear(np.array(w)))


def test_make_executor_and_validation():
    assert EXECUTORS == ("none", "threads", "processes")
    assert make_executor("none") is None
    ex = make_executor("Threads", 3)
    assert isinstance(ex, ThreadPoolExecutor) and ex._max_workers == 3
    ex.shutdown()
    with pytest.raises(ValueError, match="choose from: none, threads, processes"):
        make_executor("gpu")
    with pytest.raises(ValueError, match="workers must be between 1 and 256"):
        make_executor("threads", 0)
    with pytest.raises(ValueError, match="delay must be >= 0"):
        Oracle(MSets(3, 1), ExpensiveLog(), delay=-1)
    with pytest.raises(ValueError, match="delay must be >= 0"):
        Oracle(MSets(3, 1), ExpensiveLog(), delay=float("nan"))
    with pytest.raises(ValueError, match=r"exactly one of scores= .* has neither"):
        OracleRequest("empty")
    with pytest.raises(ValueError, match="has both"):
        OracleRequest("both", scores=np.zeros(3), f=lambda a: 0.0)
