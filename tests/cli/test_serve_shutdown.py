"""``python -m dashboard serve`` stops cleanly (dashboard/shutdown.py): SIGTERM to its main
process, or Ctrl-C (SIGINT to its whole process group, as a terminal sends it), stops every
server process and the embedded Dask cluster's workers within :data:`STOP_SECONDS`, with no
traceback in the log, exit status 0 and the port free again; with ``--scheduler`` the
instructor's own cluster is left running.

Each test starts a real server (one Dask worker) in a new session, waits until it answers
HTTP, records every process below it, signals it and counts the processes still there."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
#: The promise: everything is gone this long after the signal.
STOP_SECONDS = 5.0

# real servers are timed: one at a time, on one xdist worker
pytestmark = pytest.mark.xdist_group("serve-shutdown")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _port_is_free(port: int) -> bool:
    """Nothing listens on ``port`` (a socket in TIME_WAIT from our requests does not count)."""
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def _descendants(pid: int) -> set[int]:
    """Every process below ``pid`` (psutil where installed, else a walk of /proc)."""
    try:
        import psutil

    except ImportError:  # pragma: no cover - distributed depends on psutil
        psutil = None
    if psutil is not None:
        try:
            return {p.pid for p in psutil.Process(pid).children(recursive=True)}
        except psutil.NoSuchProcess:
            return set()
    parents: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
            parents.setdefault(ppid, []).append(int(entry))
    out, todo = set(), [pid]
    while todo:
        for child in parents.get(todo.pop(), []):
            out.add(child)
            todo.append(child)
    return out


def _running(pid: int) -> bool:
    """Whether ``pid`` still runs (a zombie waiting for its parent has stopped)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()[:120]
    except OSError:
        return "?"


class _Serve:
    """``python -m dashboard serve ARGS`` in a new session, its output in ``log``."""

    def __init__(self, tmp_path: Path, *args: str) -> None:
        self.port = _free_port()
        self.log = tmp_path / "serve.log"
        env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONUNBUFFERED": "1"}
        env.pop("BANDIT_DASHBOARD_SCHEDULER", None)
        with self.log.open("wb") as out:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "dashboard", "serve", "--port", str(self.port), *args],
                cwd=ROOT,
                env=env,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )

    def wait_until_serving(self, timeout: float = 120.0) -> None:
        stop = time.monotonic() + timeout
        while time.monotonic() < stop:
            assert self.proc.poll() is None, f"serve exited early:\n{self.text()[-3000:]}"
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/", timeout=5) as r:
                    if r.status == 200:
                        return
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                pass
            time.sleep(0.2)
        raise AssertionError(f"serve did not answer within {timeout} s:\n{self.text()[-3000:]}")

    def text(self) -> str:
        return self.log.read_text(errors="replace")

    def stop_and_count(self, signum: int, group: bool) -> tuple[float, list[int]]:
        """Send ``signum`` (to the process group if ``group``); wait up to STOP_SECONDS for
        the main process and every process that was below it.  Returns (seconds until the
        last one stopped, the ones still running)."""
        procs = {self.proc.pid, *_descendants(self.proc.pid)}
        start = time.monotonic()
        if group:
            os.killpg(self.proc.pid, signum)
        else:
            os.kill(self.proc.pid, signum)
        left = set(procs)
        while left and time.monotonic() - start < STOP_SECONDS:
            self.proc.poll()  # reaps the main process
            left = {pid for pid in left if _running(pid)}
            time.sleep(0.02)
        return time.monotonic() - start, sorted(left)

    def kill(self) -> None:
        """Clean-up of a failed test: kill what is left by its PIDs."""
        for pid in [self.proc.pid, *_descendants(self.proc.pid)]:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        self.proc.wait(timeout=10)


def _check_stopped(serve: _Serve, signum: int, group: bool, expect_procs: int) -> None:
    try:
        serve.wait_until_serving()
        before = {serve.proc.pid, *_descendants(serve.proc.pid)}
        # main + forked server processes + the Dask worker (+ multiprocessing's tracker)
        assert len(before) >= expect_procs, [_cmdline(p) for p in before]
        seconds, left = serve.stop_and_count(signum, group)
        assert not left, (
            f"{len(left)} of {len(before)} processes still running {STOP_SECONDS} s after "
            f"{signal.Signals(signum).name}: {[_cmdline(p) for p in left]}"
        )
        assert serve.proc.wait(timeout=5) == 0
        log = serve.text()
        assert "Traceback" not in log, log[-4000:]
        assert _port_is_free(serve.port)
        print(f"{signal.Signals(signum).name}: {len(before)} processes gone in {seconds:.2f} s")
    finally:
        if serve.proc.poll() is None:
            serve.kill()


def test_sigterm_to_the_main_process_stops_two_server_processes_and_the_cluster(tmp_path):
    serve = _Serve(tmp_path, "--num-procs", "2", "--workers", "1")
    _check_stopped(serve, signal.SIGTERM, group=False, expect_procs=4)


def test_ctrl_c_to_the_group_stops_two_server_processes_and_the_cluster(tmp_path):
    serve = _Serve(tmp_path, "--num-procs", "2", "--workers", "1")
    _check_stopped(serve, signal.SIGINT, group=True, expect_procs=4)


@pytest.mark.parametrize(
    ("signum", "group"), [(signal.SIGTERM, False), (signal.SIGINT, True)], ids=["term", "ctrl-c"]
)
def test_one_server_process_stops_with_its_cluster(tmp_path, signum, group):
    serve = _Serve(tmp_path, "--num-procs", "1", "--workers", "1")
    _check_stopped(serve, signum, group=group, expect_procs=2)


def test_with_scheduler_the_instructors_cluster_is_left_running(tmp_path):
    distributed = pytest.importorskip("distributed")
    with (
        distributed.LocalCluster(
            n_workers=1,
            threads_per_worker=1,
            processes=False,
            protocol="tcp",
            dashboard_address=None,
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        serve = _Serve(tmp_path, "--num-procs", "2", "--scheduler", cluster.scheduler_address)
        _check_stopped(serve, signal.SIGTERM, group=False, expect_procs=3)
        # the cluster still runs: its worker is there and computes
        assert len(client.scheduler_info()["workers"]) == 1
        assert client.submit(sum, [1, 2], pure=False).result(timeout=30) == 3
