"""The combinatorial oracle as the algorithms see it: accounting, cost and parallel batches.

Section 2 of the combinatorial paper assumes an oracle returning ``a^dagger in argmax_{a in A}
f(a)`` and measures oracle efficiency with two quantities (Figure 1):

* **query complexity**: the total number of individual oracle queries;
* **adaptivity complexity**: the number of *sequential rounds* of queries, where one round is a
  set of queries that do not depend on each other and may run in parallel.

Every call goes through :class:`Oracle`, which records it in an
:class:`~dashboard.algorithms.base.ExpensiveLog` with the round ``t``, an adaptivity round id,
a purpose and its wall time: :meth:`Oracle.call` is one query in its own adaptivity round,
:meth:`Oracle.batch` is several queries sharing one round id, so ``log.queries`` and
``log.adaptivity`` are exactly the two complexities.  Appendix A.1 lists which queries form one
round: in SROQ (Algorithm 2) the per-arm representative queries (line 6) *and* the
``max_a r^LCB`` query (line 7) are independent, hence one batch per epoch; in SROQ-C
(Algorithm 4) the pair queries join that batch but the query over the updated ``A'_tau`` needs
a second, sequential batch; in SROQ-GR (Algorithm 7) lines 5 and 6 form one batch.

A batch really runs concurrently on a pluggable :class:`concurrent.futures.Executor`
(:func:`make_executor`).  An artificial ``delay`` (seconds per call, spent sleeping, which
releases the GIL like a real external solver would) makes runtime comparisons such as
Figure 2(d)-(e) meaningful on cheap families.  ``Oracle.elapsed`` accumulates the wall time of
whole batches (what parallel execution saves), while the log holds per-call times (their sum is
the sequential cost).

Process pools need picklable work: the solver is the module-level :func:`solve_request`, the
family and request are pickled for every call, and a set-function query ``f`` must itself be
picklable (a module-level function or a :func:`functools.partial` of one; lambdas and closures
are rejected with a ValueError before anything is submitted).  Thread pools have no such
restriction and are the right choice for the simulated ``delay``.
"""

from __future__ import annotations

import pickle
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Executor, ProcessPoolExecutor, ThreadPoolExecutor
from dataclasses import dataclass, field
from itertools import repeat

import numpy as np

from ..base import ExpensiveLog, validate_int
from .actions import ActionFamily, restriction_masks

__all__ = [
    "EXECUTORS",
    "Oracle",
    "OracleRequest",
    "make_executor",
    "solve_request",
    "solve_set_function_many",
]

#: Kinds accepted by :func:`make_executor`.
EXECUTORS: tuple[str, ...] = ("none", "threads", "processes")

ApproxOracle = Callable[[ActionFamily, "OracleRequest"], "np.ndarray | None"]


@dataclass
class OracleRequest:
    """One query: maximise a linear score (``scores``) or a set function (``f``).

    Exactly one of ``scores`` and ``f`` is given.  ``include``/``exclude`` restrict the actions
    as in :meth:`ActionFamily.argmax_linear`; ``arm`` is the base arm the query is about (for the
    timeline), ``purpose`` a short label such as ``"representative of arm i"``.

    Raises
    ------
    ValueError
        If both or neither of ``scores`` and ``f`` are given.
    """

    purpose: str
    scores: np.ndarray | None = None
    f: Callable[[np.ndarray], float] | None = None
    include: Sequence[int] | np.ndarray = field(default_factory=tuple)
    exclude: np.ndarray | None = None
    arm: int = -1

    def __post_init__(self) -> None:
        if (self.scores is None) == (self.f is None):
            raise ValueError(
                "an oracle request needs exactly one of scores= (linear query) or f= "
                f"(set function); purpose {self.purpose!r} has "
                + ("neither" if self.scores is None else "both")
            )


def solve_request(
    family: ActionFamily,
    req: OracleRequest,
    delay: float = 0.0,
    approximate: ApproxOracle | None = None,
) -> tuple[np.ndarray | None, float]:
    """Answer one request and return ``(action or None, wall seconds)``.

    Set-function requests use ``family.argmax_set_function``; linear requests use
    ``approximate(family, req)`` when given (an alpha-approximation oracle, Algorithm 5) and
    ``family.argmax_linear`` otherwise.  ``delay`` seconds of sleep are added (simulated solver
    cost).  Module level so that process pools can pickle it.
    """
    start = time.perf_counter()
    if req.f is not None:
        action = family.argmax_set_function(req.f, req.include, req.exclude)
    elif approximate is not None:
        action = approximate(family, req)
    else:
        action = family.argmax_linear(req.scores, req.include, req.exclude)
    if delay:
        time.sleep(delay)
    return action, time.perf_counter() - start


def make_executor(kind: str = "none", workers: int | None = None) -> Executor | None:
    """Executor for :class:`Oracle` batches.

    Parameters
    ----------
    kind : {"none", "threads", "processes"}
        ``"none"`` returns ``None`` (calls run one after another, still one adaptivity round
        per batch); ``"threads"`` a :class:`~concurrent.futures.ThreadPoolExecutor` (right for
        the simulated ``delay`` and for solvers that release the GIL); ``"processes"`` a
        :class:`~concurrent.futures.ProcessPoolExecutor` (needs picklable set functions).
    workers : int, optional
        Number of workers (default 4), between 1 and 256.

    Returns
    -------
    concurrent.futures.Executor or None
        The caller owns it and should ``shutdown()`` it when done.
    """
    k = str(kind).strip().lower()
    if k not in EXECUTORS:
        raise ValueError(f"unknown executor kind {kind!r}; choose from: {', '.join(EXECUTORS)}")
    n = 4 if workers is None else validate_int("workers", workers, 1, 256)
    if k == "none":
        return None
    if k == "threads":
        return ThreadPoolExecutor(max_workers=n, thread_name_prefix="oracle")
    return ProcessPoolExecutor(max_workers=n)


class Oracle:
    """Accounting wrapper around an :class:`ActionFamily`'s exact (or approximate) oracle.

    Parameters
    ----------
    family : ActionFamily
        The action set and its exact solvers.
    log : ExpensiveLog
        Where calls are recorded (usually the policy's ``log``).
    delay : float
        Extra seconds each call takes (simulated solver cost), default 0.
    executor : concurrent.futures.Executor, optional
        Runs the calls of one :meth:`batch` concurrently; ``None`` runs them one after another
        (they still share one adaptivity round id).
    approximate : callable, optional
        ``approximate(family, request) -> action`` replacing the exact linear solver (an
        alpha-approximation oracle, Algorithm 5), e.g.
        :func:`dashboard.algorithms.cmab.approx.greedy_oracle`.  Set-function queries always
        use the exact solver.

    Attributes
    ----------
    elapsed : float
        Wall seconds spent in :meth:`batch` calls (whole batches: with an executor this is
        less than the sum of per-call times recorded in the log).
    """

    def __init__(
        self,
        family: ActionFamily,
        log: ExpensiveLog,
        delay: float = 0.0,
        executor: Executor | None = None,
        approximate: ApproxOracle | None = None,
    ) -> None:
        if not delay >= 0:
            raise ValueError(f"oracle delay must be >= 0 seconds, got {delay}")
        self.family = family
        self.log = log
        self.delay = float(delay)
        self.executor = executor
        self.approximate = approximate
        self.elapsed = 0.0

    def _solve(self, req: OracleRequest) -> tuple[np.ndarray | None, float]:
        return solve_request(self.family, req, self.delay, self.approximate)

    def call(self, req: OracleRequest, t: int) -> np.ndarray | None:
        """One sequential call (its own adaptivity round)."""
        return self.batch([req], t)[0]

    def batch(self, requests: Sequence[OracleRequest], t: int) -> list[np.ndarray | None]:
        """Independent calls forming one adaptivity round; run concurrently if an executor is set.

        Returns the actions in request order.  Wall times recorded per call are those measured
        inside each call (so their sum is the sequential cost, while the batch's elapsed time,
        added to :attr:`elapsed`, is what parallel execution saves).  An empty batch records
        nothing and opens no adaptivity round.
        """
        if not requests:
            return []
        start = time.perf_counter()
        if self.executor is not None and len(requests) > 1:
            if isinstance(self.executor, ProcessPoolExecutor):
                _check_picklable(requests)
            results = list(
                self.executor.map(
                    solve_request,
                    repeat(self.family),
                    requests,
                    repeat(self.delay),
                    repeat(self.approximate),
                )
            )
        else:
            results = self._solve_all(requests)
        self.elapsed += time.perf_counter() - start
        rid = self.log.new_round()
        n = len(requests)
        self.log.record_many(
            np.full(n, t),
            rid,
            [req.purpose for req in requests],
            np.array([secs for _, secs in results], dtype=float),
            np.array([req.arm for req in requests], dtype=np.int64),
        )
        return [a for a, _ in results]

    def _solve_all(
        self, requests: Sequence[OracleRequest]
    ) -> list[tuple[np.ndarray | None, float]]:
        """One after another, except that set-function requests sharing one ``f`` with an
        ``argmax_rows_many`` method (the covariance index) are answered together (one SROQ-C
        epoch asks ~200 restricted queries of the same index): the same actions as one
        :func:`solve_request` each, the batch's wall time shared equally.  A delay is slept
        per call, so delayed requests always go one by one."""
        shared: dict[int, list[int]] = {}
        if not self.delay:
            for i, req in enumerate(requests):
                if req.f is not None and hasattr(req.f, "argmax_rows_many"):
                    shared.setdefault(id(req.f), []).append(i)
        results: list[tuple[np.ndarray | None, float] | None] = [None] * len(requests)
        for idx in shared.values():
            if len(idx) < 2:
                continue
            start = time.perf_counter()
            actions = solve_set_function_many(self.family, [requests[i] for i in idx])
            secs = (time.perf_counter() - start) / len(idx)
            for i, a in zip(idx, actions):
                results[i] = (a, secs)
        return [self._solve(r) if out is None else out for r, out in zip(requests, results)]


_CODES: dict[int, tuple[np.ndarray, np.ndarray]] = {}


def _action_codes(A: np.ndarray, bits: np.ndarray) -> np.ndarray:
    """One integer per action row (bit ``i`` set if arm ``i`` is in it), cached per array."""
    hit = _CODES.get(id(A))
    if hit is not None and hit[0] is A:
        return hit[1]
    codes = (A.astype(np.int64) * bits[None, :]).sum(axis=1)
    if len(_CODES) >= 64:
        _CODES.clear()
    _CODES[id(A)] = (A, codes)
    return codes


def solve_set_function_many(
    family: ActionFamily, requests: Sequence[OracleRequest]
) -> list[np.ndarray | None]:
    """``[solve_request(family, r)[0] for r in requests]`` for set-function requests sharing
    one ``f`` with ``argmax_rows_many``: the feasible rows of every request (its ``include``
    and ``exclude``) as the columns of one mask, scored together."""
    f = requests[0].f
    A = family.enumerate()
    d = family.d
    if d > 62:  # no integer codes: one mask per request
        cols = []
        for req in requests:
            must, banned = restriction_masks(d, req.include, req.exclude)
            cols.append(np.all(A[:, must], axis=1) & ~np.any(A[:, banned], axis=1))
        ok = np.stack(cols)
    else:
        # each action and each restriction as an integer with one bit per arm
        bits = np.left_shift(np.int64(1), np.arange(d, dtype=np.int64))
        codes = _action_codes(A, bits)
        must_c = np.empty(len(requests), dtype=np.int64)
        banned_c = np.empty(len(requests), dtype=np.int64)
        seen: dict[int, int] = {}  # the requests of an epoch share one exclude mask
        for q, req in enumerate(requests):
            ex = req.exclude
            hit = None if ex is None else seen.get(id(ex))
            if hit is None:
                must, banned = restriction_masks(d, req.include, ex)
                if ex is not None:
                    seen[id(ex)] = int(bits[banned].sum())
                must_c[q], banned_c[q] = int(bits[must].sum()), int(bits[banned].sum())
            else:  # restriction_masks' check of include, then its bits
                inc = np.asarray(req.include, dtype=np.int64).ravel().tolist()
                if inc and (min(inc) < 0 or max(inc) >= d):
                    restriction_masks(d, inc, None)  # raises its ValueError
                code = 0
                for i in inc:
                    code |= 1 << i
                must_c[q], banned_c[q] = code, hit
        c = codes[None, :]
        ok = ((c & must_c[:, None]) == must_c[:, None]) & ((c & banned_c[:, None]) == 0)
    rows = f.argmax_rows_many(A, ok)  # type: ignore[union-attr]  # ok: (Q, n)
    return [None if r is None else A[int(r)].copy() for r in rows]


def _check_picklable(requests: Sequence[OracleRequest]) -> None:
    for req in requests:
        try:
            pickle.dumps(req)
        except Exception as exc:  # pickle raises several types (PicklingError, AttributeError)
            raise ValueError(
                f"oracle request {req.purpose!r} cannot be sent to a process pool ({exc}); "
                "use a module-level function (or functools.partial of one) as f, or "
                "make_executor('threads')"
            ) from None
