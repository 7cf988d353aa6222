"""Where sweeps run: the process's shared Dask client, and a task loop with progress and cancel.

The client is :mod:`dashboard.simulation.cluster`'s, the one of this process (shared with the
served class's runs): a running cluster named by ``scheduler`` or the environment variable
``BANDIT_DASHBOARD_SCHEDULER`` (``dask scheduler`` and ``dask worker ADDRESS`` started by hand,
or any deployment), else a ``LocalCluster`` started lazily (one single-threaded worker process
per core, one BLAS thread each, no dashboard).  :func:`run_on_dask` submits tasks and hands
their results back in the calling thread as they complete.
"""

from __future__ import annotations

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
) -> bool:
    """Submit ``(function, args, tag)`` tasks to ``client``; call ``finish(tag, result)`` in
    this thread as each completes (any order).  Returns True if ``cancel`` stopped it (pending
    tasks are cancelled).  A failed task (after ``retries``) cancels the rest and raises
    ValueError; a lost worker's tasks are rescheduled by the scheduler; Ctrl-C cancels the
    pending tasks and propagates."""
    from distributed import as_completed

    from .plugin_sharing import ensure_shared

    ensure_shared(client)  # plug-in algorithms and shifts must exist on the workers too
    futures = {}
    for fn, args, tag in tasks:
        futures[client.submit(fn, *args, retries=retries, pure=False)] = tag
    ac = as_completed(list(futures), loop=client.loop)
    pending = set(futures)
    try:
        while pending:
            if cancelled_by(cancel):
                client.cancel(list(pending))
                return True
            batch = ac.next_batch(block=False)
            if not batch:
                time.sleep(0.05)
                continue
            for f in batch:
                pending.discard(f)
                if f.status == "cancelled":
                    continue
                if f.status == "error":
                    exc = f.exception()
                    client.cancel(list(pending))
                    raise ValueError(f"a task failed: {exc}") from None
                finish(futures[f], f.result())
    except BaseException:
        client.cancel(list(pending))
        raise
    return False
