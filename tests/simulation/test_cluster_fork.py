"""``serve --num-procs N`` forks the server after it connected to the class's Dask cluster: a
child must not use the client it inherited (its threads did not survive the fork, so every
call on it hung and no student's Run ever produced a frame), but connect anew to the same
scheduler (dashboard/simulation/cluster.py)."""

from __future__ import annotations

import os
import signal
import time

import pytest

distributed = pytest.importorskip("distributed")


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork (as tornado's --num-procs)")
def test_a_forked_server_process_connects_its_own_client_to_the_same_cluster(monkeypatch):
    from dashboard.simulation.cluster import SCHEDULER_ENV, close_client, get_client

    with distributed.LocalCluster(
        n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None
    ) as cluster:
        monkeypatch.setenv(SCHEDULER_ENV, cluster.scheduler_address)  # as serve exports it
        try:
            parent = get_client()
            assert parent.submit(sum, [1, 2]).result(timeout=30) == 3
            pid = os.fork()
            if pid == 0:  # the child: as a forked server process would
                code = 3
                try:
                    child = get_client()
                    same = child.scheduler.address == cluster.scheduler_address
                    fresh = child is not parent
                    code = 0 if fresh and same and child.submit(sum, [2, 3]).result(30) == 5 else 1
                finally:
                    os._exit(code)
            deadline, status = time.monotonic() + 60, None
            while time.monotonic() < deadline:
                done, status = os.waitpid(pid, os.WNOHANG)
                if done:
                    break
                time.sleep(0.1)
            else:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                pytest.fail("the forked child hung on its Dask client")
            assert os.waitstatus_to_exitcode(status) == 0
            assert get_client() is parent  # the parent keeps its own
        finally:
            close_client()
