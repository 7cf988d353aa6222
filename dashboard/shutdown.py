"""Clean shutdown of ``python -m dashboard serve``: SIGTERM or Ctrl-C stops everything it started.

One idea: the process that started a thing stops it, and no other process touches it.

``serve`` is one process (``--num-procs 1``) or a parent and its forked server processes
(tornado's ``fork_processes``: the parent only waits for its children and restarts those that
die of a signal).  The embedded Dask cluster (scheduler and nannies as threads of the parent,
one worker process each) belongs to the parent alone.  So:

* **a forked server process** stops its event loop on SIGTERM or SIGINT, closes its own Dask
  client (a connection to the parent's scheduler, or to ``--scheduler``'s) and leaves with
  ``os._exit(0)``: it never runs the parent's exit handlers, which would try to close the
  inherited copy of the parent's cluster from the wrong process (distributed's
  ``AssertionError: can only test a child process`` tracebacks), and exit status 0 tells
  tornado not to restart it;
* **the parent** on SIGTERM or SIGINT stops its loop (one process), or leaves tornado's wait
  for its children (``--num-procs`` > 1), sends them SIGTERM and waits for them, then closes
  its Dask client and, when it started one, the embedded cluster (``--scheduler``'s cluster
  is not ours: only our connection to it is closed);
* **the embedded cluster's worker processes** are started with SIGINT ignored (the setting is
  inherited), so a Ctrl-C, which the terminal sends to the whole process group, reaches them
  only through their nanny's orderly close and prints no ``KeyboardInterrupt`` of theirs.

Every step has a deadline (:data:`CHILD_SECONDS`, :data:`CLUSTER_SECONDS`), after which what is
left is killed, so the whole stop stays within a few seconds.  A second signal while stopping
is ignored (the deadlines bound the wait).
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import gc
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

__all__ = ["CHILD_SECONDS", "CLUSTER_SECONDS", "ServeStopped", "quiet_workers", "run_until_stopped"]

#: Longest wait for the forked server processes to leave after SIGTERM (then SIGKILL).
CHILD_SECONDS = 2.5
#: Longest wait for the Dask client and the embedded cluster to close (then their processes
#: are killed).
CLUSTER_SECONDS = 2.0
#: The signals that stop ``serve``.
STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)


class ServeStopped(BaseException):
    """Raised by the stop signal's handler where no event loop runs to be stopped (the parent
    waiting for its forked children, or a process still starting)."""


_stopping = threading.Event()


def _ignore(signum: int, frame: Any) -> None:
    """A stop signal while stopping: already under way (every step has a deadline)."""


def _on_stop_signal(signum: int, frame: Any) -> None:
    """SIGTERM / SIGINT: stop the running event loop, else raise :class:`ServeStopped`."""
    if _stopping.is_set():
        return
    _stopping.set()
    for sig in STOP_SIGNALS:
        signal.signal(sig, _ignore)
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:  # tornado's wait for the children, or not serving yet
        raise ServeStopped(signum) from None
    loop.call_soon_threadsafe(loop.stop)


def _install(handler: Callable[[int, Any], None]) -> bool:
    try:
        for sig in STOP_SIGNALS:
            signal.signal(sig, handler)
    except ValueError:  # not the main thread (an embedding caller): leave signals alone
        return False
    return True


@contextlib.contextmanager
def quiet_workers() -> Iterator[None]:
    """Within: SIGINT ignored, so that worker processes started here inherit "ignore Ctrl-C"
    (their nanny, in this process, stops them).  Outside the main thread, nothing changes."""
    try:
        old = signal.signal(signal.SIGINT, signal.SIG_IGN)
    except ValueError:
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, old)


def _own_cmdline() -> list[str]:
    try:
        with open(f"/proc/{os.getpid()}/cmdline", "rb") as f:
            return f.read().split(b"\0")
    except OSError:  # pragma: no cover - not Linux
        return []


def _children() -> set[int]:
    """Direct children of this process (psutil: distributed depends on it)."""
    try:
        import psutil

        return {p.pid for p in psutil.Process().children()}
    except Exception:  # pragma: no cover - psutil missing or /proc unreadable
        return set()


def _forked_servers(before: set[int]) -> list[int]:
    """This process's children started since ``before`` by forking (same command line as
    ours): the server processes, not a Dask worker a nanny restarted meanwhile."""
    mine = _own_cmdline()
    out = []
    for pid in sorted(_children() - before):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if f.read().split(b"\0") == mine:
                    out.append(pid)
        except OSError:
            continue
    return out


def _reap(pids: list[int], deadline: float) -> list[int]:
    """Wait (until ``deadline``) for ``pids``, our children, to exit; the ones left."""
    left = list(pids)
    while left:
        for pid in list(left):
            try:
                done, _ = os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                done = pid
            if done:
                left.remove(pid)
        if not left or time.monotonic() >= deadline:
            break
        time.sleep(0.02)
    return left


def _stop_servers(pids: list[int]) -> None:
    """SIGTERM to the forked server processes, wait, SIGKILL the ones still there."""
    for pid in pids:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGTERM)
    left = _reap(pids, time.monotonic() + CHILD_SECONDS)
    for pid in left:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
    _reap(left, time.monotonic() + 1.0)


def _close_dask(seconds: float) -> bool:
    """Close this process's Dask client and the embedded cluster it started (never a
    ``--scheduler`` cluster: only the connection to it), within ``seconds``."""
    from .simulation.engine import close_clients

    done = threading.Event()

    def close() -> None:
        with contextlib.suppress(Exception):
            close_clients()
        done.set()

    threading.Thread(target=close, name="close-dask", daemon=True).start()
    return done.wait(seconds)


def _kill_descendants() -> None:
    """SIGKILL what is left below this process (the embedded cluster's workers, when its
    orderly close overran its deadline)."""
    try:
        import psutil

        procs = psutil.Process().children(recursive=True)
    except Exception:  # pragma: no cover
        return
    for p in procs:
        with contextlib.suppress(Exception):
            p.kill()
    with contextlib.suppress(Exception):
        psutil.wait_procs(procs, timeout=1.0)


def _leave_child(server: Any) -> None:
    """A forked server process whose loop stopped: close what is its own, exit 0 at once."""
    _install(_ignore)
    with contextlib.suppress(Exception):
        if server is not None:
            server.stop()
    _close_dask(CHILD_SECONDS - 0.5)
    with contextlib.suppress(Exception):
        sys.stdout.flush()
        sys.stderr.flush()
    os._exit(0)


def _flush_quietly() -> None:
    with contextlib.suppress(Exception):
        sys.stdout.flush()
        sys.stderr.flush()


def run_until_stopped(serve: Callable[..., Any], start: bool = True) -> Callable[..., Any]:
    """``serve`` (``pn.serve``) wrapped so that SIGTERM and SIGINT stop every process it forks
    and the Dask cluster of this process (see the module docstring).  With ``start=False``
    (the caller runs the loop, as tests do) ``serve`` is returned unchanged."""
    if not start:
        return serve

    def run(*args: Any, **kwargs: Any) -> Any:
        parent = os.getpid()
        before = _children()
        _stopping.clear()
        if not _install(_on_stop_signal):
            return serve(*args, **kwargs)
        server = None
        try:
            server = serve(*args, **kwargs)
        except ServeStopped:
            pass
        except SystemExit:  # tornado's parent: every forked server process exited by itself
            if os.getpid() != parent:
                raise
        if os.getpid() != parent:
            _leave_child(server)
        _install(_ignore)
        _stopping.set()
        _stop_servers(_forked_servers(before))
        if server is not None:
            with contextlib.suppress(Exception):
                server.stop()
        if not _close_dask(CLUSTER_SECONDS):
            _kill_descendants()
            _flush_quietly()
            os._exit(0)  # the exit handlers would wait for the same cluster again
        # the interpreter's last garbage collection walks the whole heap of the pages' objects
        # (a second or more); the memory goes back to the system at exit all the same
        atexit.register(gc.freeze)
        return server

    return run
