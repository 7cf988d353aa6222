"""Where sweeps run: Dask (dask.distributed) clients and a task loop with progress and cancel.

``get_client(scheduler)`` connects to a running cluster (``dask scheduler`` and ``dask worker
ADDRESS`` started by hand, or any deployment), named by ``scheduler`` or the environment
variable ``BANDIT_DASHBOARD_SCHEDULER``; without one it starts a ``LocalCluster`` lazily (one
single-threaded worker process per core, one BLAS thread each, no dashboard) shared by every
caller of this process, closed by :func:`close_clients`.  :func:`run_on_dask` submits tasks
and hands their results back in this thread as they complete.
"""

from __future__ import annotations

import os
import threading
import time
import warnings
from collections.abc import Callable
from typing import Any

from ..algorithms.base import validate_int

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
ENV_SCHEDULER = "BANDIT_DASHBOARD_SCHEDULER"
#: One BLAS thread per worker process (a worker runs one task at a time).
BLAS_ENV = {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}


_CLIENTS: dict[tuple[str, int], Any] = {}
_CLIENT_LOCK = threading.Lock()


def check_address(address: str) -> str:
    """``address`` if it names a scheduler (``tcp://host:port``, ``host:port`` ...), else
    ValueError (before any connection attempt)."""
    from distributed.comm.addressing import parse_address, parse_host_port

    text = str(address).strip()
    try:
        scheme, loc = parse_address(text)
        if scheme in ("tcp", "tls", "ws", "wss"):
            parse_host_port(loc)
    except (ValueError, TypeError) as exc:
        raise ValueError(f"bad scheduler address {text!r} ({exc}); e.g. tcp://host:8786") from None
    return text


def get_client(scheduler: str | None = None, workers: int | None = None) -> Any:
    """A shared ``distributed.Client``: to ``scheduler`` (or ``$BANDIT_DASHBOARD_SCHEDULER``)
    if given, else to a lazily started ``LocalCluster`` of ``workers`` single-threaded
    processes (default: one per core) with one BLAS thread each."""
    from distributed import Client

    address = scheduler or os.environ.get(ENV_SCHEDULER) or ""
    n = validate_int("workers", workers, 1, 512) if workers is not None else os.cpu_count() or 1
    key = (address, 0 if address else n)
    with _CLIENT_LOCK:
        client = _CLIENTS.get(key)
        if client is not None and client.status == "running":
            return client
        if address:
            check_address(address)
            try:
                client = Client(address, timeout="10s", set_as_default=False)
            except (OSError, TimeoutError, ValueError, TypeError) as exc:
                raise ValueError(f"cannot reach the Dask scheduler at {address!r}: {exc}") from None
        else:
            cluster = local_cluster(n)
            client = Client(cluster, set_as_default=False)
        _CLIENTS[key] = client
        return client


def local_cluster(n_workers: int) -> Any:
    """A ``LocalCluster`` of ``n_workers`` single-threaded processes, one BLAS thread each,
    no dashboard, quiet logs."""
    import logging

    from distributed import LocalCluster

    with warnings.catch_warnings():
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


def close_clients() -> None:
    """Close every client (and local cluster) this module started."""
    with _CLIENT_LOCK:
        for client in _CLIENTS.values():
            cluster = getattr(client, "cluster", None)
            client.close()
            if cluster is not None:
                cluster.close()
        _CLIENTS.clear()


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
