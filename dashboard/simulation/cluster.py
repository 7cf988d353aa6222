"""The one Dask (dask.distributed) client of a process: sweeps and served classes share it.

Work that outgrows one process runs on an existing distributed engine, never a home-made pool:

* **embedded default**: a :class:`distributed.LocalCluster` of worker *processes* sized to the
  machine (one thread and one BLAS thread each, no Dask dashboard port), started lazily on
  first use and shared by every caller of this process (every session of a served class).
  Its workers run at a lower CPU priority (``nice`` :data:`WORKER_NICENESS`): they share the
  machine with the server, whose event loop must answer clicks and draw frames first;
* **a real cluster**: ``scheduler="tcp://host:8786"`` or the environment variable
  :data:`SCHEDULER_ENV` connects to a cluster the user started with ``dask scheduler`` and
  ``dask worker tcp://host:8786`` (add machines by starting more workers).

Workers import this package by name, so a real cluster's workers need it installed.
"""

from __future__ import annotations

import logging
import os
import threading
from typing import Any

__all__ = [
    "MALLOC_ENV",
    "QUIET_MONITORS",
    "SCHEDULER_ENV",
    "close_client",
    "default_workers",
    "direct_to_workers",
    "embedded_config",
    "get_client",
    "scheduler_address",
]

#: Environment variable naming a running scheduler (``tcp://host:8786``).
SCHEDULER_ENV = "BANDIT_DASHBOARD_SCHEDULER"

#: BLAS/OpenMP thread variables set to 1 on workers (one core per worker process).
_ONE_THREAD = {
    "OMP_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "VECLIB_MAXIMUM_THREADS": "1",
    "NUMEXPR_NUM_THREADS": "1",
}

#: glibc malloc settings of the embedded cluster's workers, set before they start (Dask's
#: ``distributed.nanny.pre-spawn-environ``).  Dask's own default ``MALLOC_TRIM_THRESHOLD_ =
#: 65536`` also freezes glibc's mmap threshold at 128 KB, so every array above it (SP-TS's
#: 0.5 MB windows, its products) is a fresh ``mmap`` whose pages fault in on every allocation:
#: SP-TS at d = 20 ran 2.2x slower on a worker than in a plain process (benchmarks/
#: bench_batched.py ``--malloc``).  With these, freed arrays up to 32 MB are reused from the
#: heap and up to 64 MB of free heap is kept per worker; numbers are unchanged.  Variables set
#: in the environment take precedence (Dask reads them first).
MALLOC_ENV = {"MALLOC_MMAP_THRESHOLD_": str(32 << 20), "MALLOC_TRIM_THRESHOLD_": str(64 << 20)}

#: Niceness of the embedded cluster's worker processes (batch work yields to the server).
WORKER_NICENESS = 10


#: Dask's own monitors in the embedded cluster, which runs its scheduler and its workers'
#: nannies inside the web server's process: each nanny reads its worker's memory every 100 ms
#: and the scheduler samples the machine every 500 ms (psutil parsing ``/proc``), under the
#: interpreter lock the pages' event loop needs.  With a class of 30 streaming that was ~7% of
#: the server process's time (py-spy, ``BENCH_PROFILE_DIR``).  A second is still far quicker
#: than any run's memory can grow (the run budget refuses runs that would not fit).
QUIET_MONITORS = {
    "distributed.worker.memory.monitor-interval": "1s",
    "distributed.admin.system-monitor.interval": "2s",
}


def embedded_config() -> Any:
    """A context in which a new embedded cluster starts: workers with :data:`MALLOC_ENV`,
    Dask's monitors at :data:`QUIET_MONITORS`."""
    import dask

    key = "distributed.nanny.pre-spawn-environ"
    return dask.config.set(
        {key: {**dict(dask.config.get(key, {})), **MALLOC_ENV}, **QUIET_MONITORS}
    )


class _LowerPriority:
    """Dask worker plugin: lower the worker process's CPU priority to ``niceness`` (also for
    workers the nanny restarts).  Best effort: a platform without ``setpriority`` is left
    as it is."""

    name = "bandit-dashboard-lower-priority"

    def __init__(self, niceness: int = WORKER_NICENESS) -> None:
        self.niceness = int(niceness)

    def setup(self, worker: Any) -> None:
        try:
            current = os.getpriority(os.PRIO_PROCESS, 0)
            if current < self.niceness:
                os.setpriority(os.PRIO_PROCESS, 0, self.niceness)
        except (AttributeError, OSError):  # pragma: no cover - not Linux, or not allowed
            pass
        quiet_heartbeat_at_close(worker)

    def teardown(self, worker: Any) -> None:
        pass


class HeartbeatAtClose(logging.Filter):
    """Logging filter of a worker: the heartbeat that meets the scheduler's closed connection
    while the worker itself is closing (a clean ``close_client()``, e.g. the end of a
    resumed sweep) is dropped instead of printing a ``CommClosedError`` traceback; while the
    worker runs it stays, in one line without the traceback."""

    MESSAGE = "Failed to communicate with scheduler during heartbeat"

    def __init__(self, worker: Any) -> None:
        super().__init__()
        self.worker = worker

    def filter(self, record: logging.LogRecord) -> bool:
        if not str(record.msg).startswith(self.MESSAGE):
            return True
        status = getattr(getattr(self.worker, "status", None), "name", "")
        if status in ("closing", "closed", "closing_gracefully", "failed"):
            return False
        record.exc_info = record.exc_text = None
        return True


def quiet_heartbeat_at_close(worker: Any) -> None:
    """Install :class:`HeartbeatAtClose` on ``distributed.worker``'s logger (once)."""
    log = logging.getLogger("distributed.worker")
    if not any(isinstance(f, HeartbeatAtClose) for f in log.filters):
        log.addFilter(HeartbeatAtClose(worker))


_lock = threading.Lock()
_state: dict[str, Any] = {"client": None, "cluster": None, "key": None, "pid": None}


def _forget_after_fork() -> None:
    """In a forked child (``serve --num-procs``): the parent's client and cluster stay the
    parent's (their threads did not fork), so the child never closes them; a fresh lock."""
    global _lock
    _lock = threading.Lock()
    _state.update(client=None, cluster=None, key=None, pid=os.getpid())


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_after_fork)


def default_workers() -> int:
    """Worker processes of the embedded cluster: the cores this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


def scheduler_address(scheduler: str | None = None) -> str | None:
    """The scheduler to use: the argument, else :data:`SCHEDULER_ENV`, else ``None``
    (embedded cluster).  ValueError for an address that is not ``tcp://HOST:PORT`` or
    ``tls://HOST:PORT`` (``inproc://`` and ``ucx://`` addresses are passed on as they are)."""
    addr = scheduler if scheduler is not None else os.environ.get(SCHEDULER_ENV)
    if addr is None or not str(addr).strip():
        return None
    addr = str(addr).strip()
    proto, sep, rest = addr.partition("://")
    ok = bool(sep) and proto in ("tcp", "tls", "inproc", "ucx") and bool(rest) and len(addr) <= 300
    if ok and proto in ("tcp", "tls"):
        host, colon, port = rest.rpartition(":")
        ok = bool(colon and host.strip("[]")) and port.isdigit() and 0 < int(port) < 65536
    if not ok:
        raise ValueError(
            f"scheduler address must look like tcp://HOST:PORT (got {addr[:60]!r}); "
            f"start one with `dask scheduler`"
        )
    return addr


def get_client(scheduler: str | None = None, workers: int | None = None) -> Any:
    """The process's shared :class:`distributed.Client` (created on first use).

    Parameters
    ----------
    scheduler : str, optional
        Address of a running scheduler; default :data:`SCHEDULER_ENV`, else an embedded
        local cluster.
    workers : int, optional
        Worker processes of the embedded cluster (default :func:`default_workers`); ignored
        with a scheduler address.

    It is the process's default client (actor proxies such as
    :class:`~dashboard.simulation.remote.DaskRun`'s find their client that way).  A later call
    with different settings closes the old client (and its embedded cluster) and starts the
    new one.
    """
    from distributed import Client, LocalCluster

    addr = scheduler_address(scheduler)
    if workers is not None and (isinstance(workers, bool) or not 1 <= int(workers) <= 256):
        raise ValueError(f"workers must be between 1 and 256, got {workers!r}")
    n = default_workers() if workers is None else int(workers)
    key = ("address", addr) if addr else ("local", n)
    with _lock:
        if _state["pid"] != os.getpid():
            # A forked child (``serve --num-procs``) inherits the parent's client without the
            # threads that run it: every call on it would hang.  Forget it (the parent owns
            # it and its cluster) and connect anew, to the address the parent exported.
            _state.update(client=None, cluster=None, key=None, pid=os.getpid())
        client = _state["client"]
        if client is not None and _state["key"] == key and client.status == "running":
            return client
        if client is not None and client.status == "running" and addr:
            if client.scheduler.address == addr:  # e.g. serve exported its embedded cluster
                return client
        _close_locked()
        if addr:
            try:
                client = Client(addr, timeout="10s", direct_to_workers=direct_to_workers(addr))
            except OSError as exc:
                raise ValueError(
                    f"cannot reach the Dask scheduler at {addr} ({exc}); is `dask scheduler` "
                    f"running there?"
                ) from None
            cluster = None
        else:
            with embedded_config():
                cluster = LocalCluster(
                    n_workers=n,
                    threads_per_worker=1,
                    processes=True,
                    dashboard_address=None,
                    env=dict(_ONE_THREAD),
                )
            client = Client(cluster, direct_to_workers=True)
            try:
                from distributed.diagnostics.plugin import WorkerPlugin

                plugin = type("LowerPriority", (_LowerPriority, WorkerPlugin), {})()
                client.register_plugin(plugin)
            except Exception:  # pragma: no cover - an older distributed: leave priorities
                pass
        _state.update(client=client, cluster=cluster, key=key, pid=os.getpid())
        return client


def direct_to_workers(address: str | None) -> bool | None:
    """Whether the client talks to workers directly (``True``) or through the scheduler.

    An actor's method call (a live run's every frame, :mod:`dashboard.simulation.remote`)
    otherwise goes client -> scheduler -> worker and back, and the scheduler unpacks and
    repacks each frame.  For the embedded cluster and one on this machine that scheduler
    lives in (or next to) the web server's process, so the relay cost that process every
    frame twice more (a class of 30: server CPU per frame 23.0 -> 21.1 ms once calls went
    direct).  A scheduler on another machine keeps Dask's default (the relay): its workers
    may not be reachable from the web server.
    """
    if address is None:
        return True
    host = address.split("://", 1)[-1].rsplit(":", 1)[0].strip("[]")
    local = host in ("127.0.0.1", "localhost", "::1") or address.startswith("inproc")
    return True if local else None


def _close_locked() -> None:
    client, cluster = _state["client"], _state["cluster"]
    _state.update(client=None, cluster=None, key=None)
    if client is not None:
        try:
            client.close()
        except Exception:
            pass
    if cluster is not None:
        try:
            cluster.close()
        except Exception:
            pass


def close_client() -> None:
    """Close the shared client and its embedded cluster (idempotent)."""
    with _lock:
        _close_locked()
