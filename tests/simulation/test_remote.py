"""Live runs off the event loop: in-process and on a real ``distributed.LocalCluster``.

The contract: a handle never blocks (request/poll return at once), the frames end on exactly
the numbers of ``simulate``, a closed run's state leaves the workers, and a killed worker gives
its session a clear message while other runs carry on and a new run works.
"""

from __future__ import annotations

import os
import pickle
import signal
import time

import numpy as np
import pytest
from same_numbers import assert_same_events

from dashboard.simulation.cluster import direct_to_workers
from dashboard.simulation.frame_delta import DeltaJoiner
from dashboard.simulation.remote import (
    DaskRun,
    Frame,
    LocalRun,
    RunLost,
    RunRequest,
    SimulationActor,
    pack_frame,
    unpack_frame,
)
from dashboard.simulation.runner import simulate
from dashboard.simulation.specs import make_spec

distributed = pytest.importorskip("distributed")
from distributed.actor import ProxyRPC  # noqa: E402

REQUESTS = [
    RunRequest(make_spec("cmab", d=8, m=2), ("CUCB", "AROQ-CMAB", "SROQ-CMAB"), 3000, 3, 1),
    RunRequest(make_spec("cmab", d=6, m=2, reward="general"), ("SDCB", "AROQ-GR-CMAB"), 300, 2, 2),
    RunRequest(
        make_spec("semiparametric", d=4, K=8, shift="log"), ("SBE", "BOSE", "LinUCB"), 2000, 2, 3
    ),
    RunRequest(
        make_spec("cmab", d=8, m=2),
        ("AROQ-CMAB",),
        4000,
        2,
        4,
        params={"AROQ-CMAB": {"C": 0.7}},
    ),
]


def _expected(req: RunRequest):
    return simulate(
        req.spec, list(req.algorithms), req.horizon, req.runs, req.seed, params=req.params
    )


def _same(a, b) -> None:
    assert a.t == b.t
    for ra, rb in zip(a.results, b.results):
        assert ra.algorithm == rb.algorithm
        np.testing.assert_array_equal(ra.times, rb.times)
        np.testing.assert_array_equal(ra.regret, rb.regret)
        np.testing.assert_array_equal(ra.queries, rb.queries)
        np.testing.assert_array_equal(ra.adaptivity, rb.adaptivity)
        assert_same_events(ra.events, rb.events)  # a Dask frame's events are joined from deltas
    if a.features is not None or b.features is not None:
        for xa, xb in zip(a.features, b.features):
            np.testing.assert_array_equal(xa, xb)


def _drive(handles, deadline_s=120.0, seconds=0.02):
    """Poll every handle round robin, as a server's periodic callback would, until all done."""
    last = {i: None for i in range(len(handles))}
    stop = time.monotonic() + deadline_s
    while time.monotonic() < stop and not all(f is not None and f.done for f in last.values()):
        for i, h in enumerate(handles):
            frame = h.poll()
            if frame is not None:
                if last[i] is not None:
                    assert frame.t >= last[i].t  # frames never go back
                last[i] = frame
            if last[i] is None or not last[i].done:
                h.request(target=10**9, seconds=seconds)
        time.sleep(0.005)
    return last


def test_local_run_streams_to_the_numbers_of_simulate():
    for req in REQUESTS[:3]:
        run = LocalRun(req)
        first = run.poll()
        assert first is not None and first.t == 0 and not first.done
        last = _drive([run])[0]
        assert last.done and last.t == req.horizon
        _same(last.result, _expected(req))
        run.close()
        with pytest.raises(ValueError, match="closed"):
            run.request(target=10)


def test_local_run_step_stops_at_decision_points():
    req = REQUESTS[0]
    run = LocalRun(req)
    run.poll()
    ts = []
    for _ in range(5):
        run.request(step=True)
        ts.append(run.poll().t)
    assert ts == sorted(ts) and ts[-1] < req.horizon and len(set(ts)) == 5


def test_semiparametric_frames_carry_the_shift_and_the_instance():
    run = LocalRun(REQUESTS[2])
    run.poll()
    run.request(target=500, seconds=60.0)  # stops at the target
    frame = run.poll()
    t, nu = frame.result.shift
    assert frame.t == 500 and len(t) == len(nu) == 300 and t[-1] == 500
    X, theta = frame.result.features
    assert X.shape == (8, 4) and theta.shape == (4,)


@pytest.fixture(scope="module")
def client():
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster) as c,
    ):
        yield c


def _actors(client) -> int:
    return sum(client.run(lambda dask_worker: len(dask_worker.state.actors)).values())


def test_concurrent_dask_runs_equal_simulate(client):
    handles = [DaskRun(client, req) for req in REQUESTS]
    last = _drive(handles)
    for req, frame in zip(REQUESTS, last.values()):
        assert frame is not None and frame.done
        _same(frame.result, _expected(req))
    for h in handles:
        h.close()


def test_requests_and_polls_do_not_wait_for_the_work(client):
    """A 3-second frame is being computed on a worker while the caller goes on at once."""
    run = DaskRun(client, RunRequest(make_spec("cmab", d=10, m=3), ("CUCB",), 10**6, 8, 5))
    stop = time.monotonic() + 30
    while run.poll() is None and time.monotonic() < stop:
        time.sleep(0.02)
    t0 = time.perf_counter()
    run.request(target=10**6, seconds=3.0)
    polls = [run.poll() for _ in range(20)]
    elapsed = time.perf_counter() - t0
    assert polls == [None] * 20 and run.busy
    assert elapsed < 1.5, f"request + 20 polls took {elapsed:.2f} s while a 3 s frame ran"
    run.close()


def test_closed_runs_leave_the_workers(client):
    handles = [DaskRun(client, REQUESTS[0]) for _ in range(3)]
    _drive(handles, deadline_s=5.0)  # part of the way
    assert _actors(client) == 3
    for h in handles:
        h.close()
    stop = time.monotonic() + 10
    while _actors(client) and time.monotonic() < stop:
        time.sleep(0.1)
    assert _actors(client) == 0


def test_user_errors_come_back_as_value_errors(client):
    bad = RunRequest(make_spec("cmab", d=8, m=2), ("CUCB",), 100, 1, 0, params={"CUCB": {"C": -1}})
    run = DaskRun(client, bad)
    stop = time.monotonic() + 30
    with pytest.raises(ValueError, match="C"):
        while time.monotonic() < stop:
            run.poll()
            time.sleep(0.02)


def test_a_killed_worker_loses_only_its_runs(client):
    long_req = RunRequest(make_spec("cmab", d=10, m=3), ("CUCB",), 10**6, 8, 5)
    handles = [DaskRun(client, long_req) for _ in range(4)]
    stop = time.monotonic() + 90  # until every run lives on a worker (slow on a loaded machine)
    while time.monotonic() < stop and any(h._run_id is None for h in handles):
        for h in handles:
            if h.poll() is None and not h.busy:
                h.request(target=10**9, seconds=0.02)
        time.sleep(0.02)
    where = client.run(lambda dask_worker: list(dask_worker.state.actors))
    victim = next(addr for addr, keys in where.items() if keys)
    pid = client.run(os.getpid, workers=[victim])[victim]
    os.kill(pid, signal.SIGKILL)
    lost, alive = 0, 0
    stop = time.monotonic() + 120
    pending = set(range(4))
    while pending and time.monotonic() < stop:
        for i in list(pending):
            try:
                frame = handles[i].poll()
            except RunLost as exc:
                assert "press Run" in str(exc)
                lost += 1
                pending.discard(i)
                continue
            if frame is not None and frame.t > 0 and time.monotonic() > stop - 110:
                alive += 1
                pending.discard(i)
            elif not handles[i].busy:
                handles[i].request(target=10**9, seconds=0.02)
        time.sleep(0.02)
    assert lost >= 1, "the killed worker's runs must report a clear loss"
    for h in handles:
        h.close()
    client.wait_for_workers(2, timeout=120)
    again = DaskRun(client, REQUESTS[0])  # the session can run again
    frame = _drive([again])[0]
    assert frame.done
    _same(frame.result, _expected(REQUESTS[0]))
    again.close()


def test_actor_proxy_private_future_canary(client):
    """DaskRun.close releases ``Actor._future`` (private in distributed) so a closed run's
    actor leaves its worker without waiting for the garbage collector.  If this fails after a
    distributed upgrade, update DaskRun.close (closed runs would linger on the workers)."""
    run = DaskRun(client, REQUESTS[0])
    stop = time.monotonic() + 30
    while run._actor is None and time.monotonic() < stop:
        run.poll()
        time.sleep(0.02)
    fut = getattr(run._actor, "_future", None)
    assert isinstance(fut, distributed.Future), (
        "distributed.Actor no longer keeps its key's Future in `_future`: see DaskRun.close"
    )
    assert hasattr(fut, "release")
    run.close()


def test_shared_client_uses_a_running_scheduler(client):
    from dashboard.simulation.engine import close_clients, get_client

    addr = client.scheduler.address
    try:
        shared = get_client(scheduler=addr)
        assert get_client(scheduler=addr) is shared  # one client per process
        assert distributed.default_client() is client  # not the default: bound explicitly
        assert len(shared.scheduler_info()["workers"]) == 2
        # a scheduler on this machine: actor calls go to the worker directly, not relayed
        # through the scheduler (which would unpack and repack every frame)
        assert shared.direct_to_workers is True
        run = DaskRun(shared, REQUESTS[0])
        frame = _drive([run])[0]
        _same(frame.result, _expected(REQUESTS[0]))
        assert not isinstance(run._actor._worker_rpc, ProxyRPC)
        run.close()
    finally:
        close_clients()
    with pytest.raises(ValueError, match="cannot reach"):
        get_client(scheduler="tcp://127.0.0.1:9")


def test_a_packed_frame_is_one_bytes_and_unpacks_to_the_same_numbers():
    actor = SimulationActor(REQUESTS[2], delta=True)
    plain = SimulationActor(REQUESTS[2])
    joiner = DeltaJoiner()
    for _ in range(3):
        packed = actor.advance(10**9, 0.01)
        assert isinstance(packed, bytes)  # one message frame on Dask's wire, not ~150
        frame = unpack_frame(packed)
        want = plain.advance(frame.t, 10.0)
        assert isinstance(frame, Frame) and frame.t == want.t
        # a delta: the events and the curves' grid rounds since the last frame
        joined = joiner.join(frame.result)
        for ra, rb in zip(joined.results, want.result.results):
            np.testing.assert_array_equal(ra.regret, rb.regret)
            np.testing.assert_array_equal(ra.times, rb.times)
    assert unpack_frame(want) is want  # in-process frames are not packed
    assert unpack_frame(pack_frame(want)).t == want.t
    with pytest.raises(TypeError, match="holds a Frame"):
        unpack_frame(pickle.dumps({"not": "a frame"}))


@pytest.mark.parametrize(
    "address, direct",
    [
        (None, True),  # the embedded cluster
        ("tcp://127.0.0.1:8786", True),
        ("tcp://localhost:8786", True),
        ("tcp://[::1]:8786", True),
        ("inproc://10.0.0.1/1/2", True),
        ("tcp://10.0.0.5:8786", None),  # another machine: Dask's default (the relay)
        ("tls://scheduler.example.org:8786", None),
    ],
)
def test_direct_to_workers_only_on_this_machine(address, direct):
    assert direct_to_workers(address) is direct
