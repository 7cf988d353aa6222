"""The R runs of one algorithm inside a :class:`~dashboard.simulation.runner.Simulation`:
R policies, or the declared batched engine covering all R at once (same numbers).

Which engine runs them is :data:`ENGINES`' choice: ``"fast"`` (the default) uses the
algorithm's fast engine where it has one (all R at once; for one repetition, or without
batching, the engine's ``one_repetition`` policy), ``"textbook"`` runs R textbook policies,
round by round as the paper reads (the same numbers, more slowly).
"""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from itertools import repeat
from typing import Any

import numpy as np

from ..algorithms.base import Policy
from ..algorithms.registry import AlgorithmInfo
from .selection import accepted_kwargs

__all__ = ["ENGINES", "AlgorithmGroup", "check_engine"]

#: The engines a run may use (see the module docstring); the first is the default.
ENGINES: tuple[str, ...] = ("fast", "textbook")


def check_engine(engine: Any) -> str:
    """``engine`` normalised (``"fast"`` or ``"textbook"``); ValueError otherwise."""
    key = engine.strip().lower() if isinstance(engine, str) else None
    if key not in ENGINES:
        raise ValueError(f"engine must be one of {', '.join(ENGINES)}, got {engine!r}")
    return key


#: Threads on which the repetitions of a group with a simulated oracle delay sleep together.
_THREADS = 16
_POOL: ThreadPoolExecutor | None = None
_POOL_LOCK = threading.Lock()


def _pool() -> ThreadPoolExecutor:
    global _POOL
    with _POOL_LOCK:
        if _POOL is None:
            _POOL = ThreadPoolExecutor(max_workers=_THREADS, thread_name_prefix="repetition")
        return _POOL


def _delayed(policy: Any) -> bool:
    """Whether the policy's oracle calls sleep (a built-in cmab policy with a delay)."""
    delay = getattr(policy, "oracle_delay", 0.0)
    builtin = type(policy).__module__.startswith("dashboard.algorithms.")
    return builtin and isinstance(delay, (int, float)) and delay > 0


class AlgorithmGroup:
    """The R runs of one algorithm (R policies, or one batched policy covering all R)."""

    def __init__(
        self,
        info: AlgorithmInfo,
        params: dict[str, Any],
        common: dict[str, Any],
        envs: list[Any],
        horizon: int,
        allow_batched: bool,
        engine: str = "fast",
    ) -> None:
        self.info = info
        self.engine = check_engine(engine)
        cls = info.load()
        fast = info.fast if self.engine == "fast" else None
        # one repetition (or no batching): the fast engine's own one-repetition policy
        cls = getattr(fast, "one_repetition", None) or cls
        kwargs = {**accepted_kwargs(cls, common), **params}
        self.params = {
            k: v for k, v in kwargs.items() if isinstance(v, (int, float, str, bool, type(None)))
        }
        self.envs = envs
        self.R = len(envs)
        # the fast engine (same numbers, R repetitions at once), if any
        # (a fast engine with ``batches = False`` is its one-repetition policy, R of them)
        batching = getattr(fast, "batches", True)
        batched_cls = fast if allow_batched and self.R > 1 and batching else None
        self.wall = np.zeros(self.R)
        if batched_cls is not None:
            self.batched = batched_cls(**kwargs)
            self.batched.reset(envs, horizon)
            self.policies: list[Any] = []
        else:
            self.batched = None
            self.policies = [cls(**kwargs) for _ in envs]
            for p, env in zip(self.policies, envs):
                p.reset(env, horizon)
        # a simulated oracle delay (seconds of sleep per call, e.g. lesson 3's 5 ms) is paid
        # by every repetition; their sleeps overlap on threads (each run stays sequential and
        # keeps its own numbers, log and wall time: the runs share no mutable state)
        self._overlap = self.batched is None and self.R > 1 and _delayed(self.policies[0])

    @property
    def t(self) -> int:
        if self.batched is not None:
            return int(self.batched.t)
        return min(p.t for p in self.policies)

    def advance(self, until: int) -> None:
        """Bring every run to round ``until`` (exactly)."""
        if self.batched is not None:
            start = time.perf_counter()
            while self.batched.t < until:
                before = self.batched.t
                self.batched.advance(until)
                if self.batched.t <= before:
                    raise RuntimeError(f"{self.info.name} made no progress at t={before}")
            self.wall += (time.perf_counter() - start) / self.R
            return
        if self._overlap:
            # the simulated oracle delay is sleep: the repetitions sleep side by side
            walls = list(_pool().map(self._advance_one, self.policies, repeat(until)))
            self.wall += np.asarray(walls)
            return
        for r, p in enumerate(self.policies):
            self.wall[r] += self._advance_one(p, until)

    def _advance_one(self, p: Any, until: int) -> float:
        """Bring one run to ``until``; its wall seconds."""
        start = time.perf_counter()
        while p.t < until:
            before = p.t
            p.advance(until)
            if p.t <= before or p.t > until:
                raise RuntimeError(
                    f"{self.info.name} advanced from t={before} to t={p.t} "
                    f"when asked to reach {until}"
                )
        return time.perf_counter() - start

    def cum_regret(self) -> np.ndarray:
        if self.batched is not None:
            return np.asarray(self.batched.cum_regret, dtype=float).copy()
        return np.array([p.cum_regret for p in self.policies], dtype=float)

    def alpha_regret(self) -> np.ndarray | None:
        """Exact alpha-regret per run (Theorem 7), for policies that report one (an
        approximate oracle: ``alpha_regret`` attribute, e.g. alpha-AROQ-CMAB); else None."""
        if self.batched is not None:
            value = getattr(self.batched, "alpha_regret", None)
        elif all(hasattr(p, "alpha_regret") for p in self.policies):
            value = [p.alpha_regret for p in self.policies]
        else:
            value = None
        return None if value is None else np.asarray(value, dtype=float).copy()

    def logs(self) -> list[Any]:
        if self.batched is not None:
            return list(self.batched.logs)
        return [p.log for p in self.policies]

    def events(self) -> list[list[Any]]:
        if self.batched is not None:
            return [list(e) for e in self.batched.events]
        return [list(p.events) for p in self.policies]

    def declared(self) -> tuple[np.ndarray, np.ndarray] | None:
        if self.batched is not None or self.info.problem != "semiparametric":
            return None
        if type(self.policies[0]).declared_arm is Policy.declared_arm:
            return None  # this algorithm never declares a best arm
        arms = np.array([-1 if p.declared_arm is None else p.declared_arm for p in self.policies])
        times = np.array(
            [np.nan if p.declaration_time is None else p.declaration_time for p in self.policies],
            dtype=float,
        )
        return arms, times
