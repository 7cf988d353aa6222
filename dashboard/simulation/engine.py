"""Where sweeps run: the process's shared Dask client, and a task loop with progress and cancel.

The client is :mod:`dashboard.simulation.cluster`'s, the one of this process (shared with the
served class's runs): a running cluster named by ``scheduler`` or the environment variable
``BANDIT_DASHBOARD_SCHEDULER`` (``dask scheduler`` and ``dask worker ADDRESS`` started by hand,
or any deployment), else a ``LocalCluster`` started lazily (one single-threaded worker process
per core, one BLAS thread each, no dashboard).  :func:`run_on_dask` submits tasks and hands
their results back in the calling thread as they complete.
"""

from __future__ import annotations

import threading
import time
import warnings
from collections.abc import Callable
from typing import Any

from .cluster import SCHEDULER_ENV, close_client, embedded_config, scheduler_address
from .cluster import get_client as _shared_client

__all__ = [
    "ENV_SCHEDULER",
    "cancelled_by",
    "check_address",
    "close_clients",
    "get_client",
    "local_cluster",
    "run_on_dask",
]

#: Environment variable naming the scheduler of an existing Dask cluster.
ENV_SCHEDULER = SCHEDULER_ENV
#: One BLAS thread per worker process (a worker runs one task at a time).
BLAS_ENV = {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}


def check_address(address: str) -> str:
    """``address`` if it names a scheduler (``tcp://HOST:PORT`` ...), else ValueError, before
    any connection attempt."""
    addr = scheduler_address(str(address))
    if addr is None:
        raise ValueError("scheduler address must look like tcp://HOST:PORT (got '')")
    return addr


def get_client(scheduler: str | None = None, workers: int | None = None) -> Any:
    """The process's shared ``distributed.Client`` (see :func:`.cluster.get_client`)."""
    with warnings.catch_warnings():
        # the scheduler's small HTTP server (health checks) moves off a busy port 8787
        warnings.filterwarnings("ignore", message="Port .* is already in use")
        return _shared_client(scheduler, workers)


def close_clients() -> None:
    """Close the shared client and its embedded cluster (idempotent)."""
    close_client()


def local_cluster(n_workers: int) -> Any:
    """A ``LocalCluster`` of ``n_workers`` single-threaded processes, one BLAS thread each,
    glibc malloc as :data:`.cluster.MALLOC_ENV`, Dask's monitors as
    :data:`.cluster.QUIET_MONITORS`, no dashboard, quiet logs."""
    import logging

    from distributed import LocalCluster

    with warnings.catch_warnings(), embedded_config():
        # the scheduler's small HTTP server (health checks) moves off a busy port 8787
        warnings.filterwarnings("ignore", message="Port .* is already in use")
        return LocalCluster(
            n_workers=n_workers,
            threads_per_worker=1,
            processes=True,
            dashboard_address=None,
            silence_logs=logging.ERROR,
            env=dict(BLAS_ENV),
        )


def cancelled_by(cancel: Any) -> bool:
    """Whether ``cancel`` (None, a ``threading.Event`` or a callable) asks to stop."""
    if cancel is None:
        return False
    if hasattr(cancel, "is_set"):
        return bool(cancel.is_set())
    return bool(cancel())


def run_on_dask(
    client: Any,
    tasks: list[tuple[Callable[..., Any], tuple[Any, ...], Any]],
    finish: Callable[[Any, Any], None],
    cancel: Any = None,
    retries: int = 2,
    in_flight: int | Callable[[], int] | None = None,
    priority: int = 0,
) -> bool:
    """Submit ``(function, args, tag)`` tasks to ``client``; call ``finish(tag, result)`` in
    this thread as each completes (any order).  Returns True if ``cancel`` stopped it (pending
    tasks are cancelled).  A failed task (after ``retries``) cancels the rest and raises
    ValueError; a lost worker's tasks are rescheduled by the scheduler; Ctrl-C cancels the
    pending tasks and propagates.

    ``in_flight``: at most that many tasks on the cluster at a time (a number, or a callable
    asked again at every completion, e.g. the cluster's worker threads as workers join),
    the next ones submitted in the order of ``tasks`` as soon as one completes, before its
    ``finish``.  With one per worker thread, the tasks start exactly in the given order,
    each on the first free worker (list scheduling: given longest first, the pool ends
    balanced).  Submitted all at once instead (the default), the scheduler assigns every
    task to a worker up front, and a long task can queue behind another on one worker while
    the other worker runs the short ones (``reproduce all``: a 16 s task started last, when
    the other worker had 5 s of tasks left).

    ``priority``: the tasks' Dask priority (higher first; Dask's default 0): a sweep's tasks
    go below a class's live runs (:data:`.sweep.SWEEP_PRIORITY`)."""
    from distributed import as_completed

    from .plugin_sharing import ensure_shared

    ensure_shared(client)  # plug-in algorithms and shifts must exist on the workers too
    queue = list(tasks)
    queue.reverse()  # popped from the end: the given order
    futures: dict[Any, Any] = {}
    ac = as_completed(loop=client.loop)
    lock = threading.Lock()
    # running: submitted, not done; want: the in-flight limit; stop: no more submissions
    state = {"running": 0, "want": 0, "stop": False}

    def limit() -> int:
        if in_flight is None:
            return len(tasks)
        return max(1, int(in_flight() if callable(in_flight) else in_flight))

    def top_up() -> None:
        """Submit the next tasks up to the limit (this thread, or Dask's callback thread as
        a task completes: the next one starts even while this thread is in ``finish``)."""
        with lock:
            while queue and not state["stop"] and state["running"] < state["want"]:
                fn, args, tag = queue.pop()
                future = client.submit(
                    fn, *args, retries=retries, pure=False, priority=int(priority)
                )
                futures[future] = tag
                state["running"] += 1
                ac.add(future)
                if in_flight is not None:
                    future.add_done_callback(on_done)

    def on_done(_future: Any) -> None:
        with lock:
            state["running"] -= 1
        top_up()

    def stop() -> None:
        with lock:
            state["stop"] = True
            left = [f for f in futures if not f.done()]
        client.cancel(left)

    state["want"] = limit()
    top_up()
    left = len(tasks)
    try:
        while left:
            if cancelled_by(cancel):
                stop()
                return True
            batch = ac.next_batch(block=False)
            if not batch:
                with lock:
                    stalled = bool(queue) and state["running"] == 0 and not state["stop"]
                if stalled:  # the callback thread could not submit (it logs why): here, a
                    top_up()  # failing submit raises in this thread instead of waiting on
                time.sleep(0.05)
                continue
            for f in batch:
                left -= 1
                if f.status == "error":
                    exc = f.exception()
                    stop()
                    raise ValueError(f"a task failed: {exc}") from None
                if in_flight is not None:  # a cluster that grew takes more at once
                    state["want"] = limit()
                    top_up()
                if f.status == "cancelled":
                    continue
                finish(futures.pop(f), f.result())
    except BaseException:
        stop()
        raise
    return False
