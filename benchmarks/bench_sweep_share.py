"""Benchmark: live runs beside the biggest sweep the class's work limit allows, with and
without the sweep's fair share of the cluster.

On a local Dask cluster of 2 single-threaded worker processes, the sweep of
``sweep_view.largest_sweep(max_work)`` (the Sweep tab's biggest allowed sweep) starts; 3 s
later ``runs`` live runs (Dask actors, as a served class's) start and stream 0.05 s frames
for ``seconds``.  Printed per mode (``share``: ``run_sweep(share=True)`` as the Sweep tab runs
it; ``plain``: every task submitted at once, as before): each live run's first-frame delay and
its frames per second, and the seconds from Cancel until no worker thread runs a task.
Measured on the 2-core development machine (two runs, max-work 600 s: T = 17,751 to 53,254,
R = 256): with the share every live run's first frame came within 0.1-1.2 s, then 3-4
frames/s each; without it none started in 10-15 s; the workers were free 0.3-0.7 s after
Cancel in both modes.

Usage: ``python benchmarks/bench_sweep_share.py [--max-work 600] [--runs 4] [--seconds 15]``
prints a JSON dict; ``run(...)`` returns it.  Bounded: one cluster on 127.0.0.1, at most
``2 x (seconds + 15)`` seconds.
"""

from __future__ import annotations

import argparse
import json
import threading
import time
from typing import Any


def _mode(client: Any, sweep: Any, share: bool, runs: int, seconds: float) -> dict[str, Any]:
    from dashboard.simulation import make_spec
    from dashboard.simulation.remote import DaskRun, RunRequest
    from dashboard.simulation.sweep import run_sweep

    stop = threading.Event()
    thread = threading.Thread(
        target=lambda: run_sweep(sweep, client=client, cancel=stop, share=share), daemon=True
    )
    thread.start()
    time.sleep(3.0)  # the sweep's tasks are running
    spec = make_spec("cmab", d=10, m=3)
    handles = [
        DaskRun(client, RunRequest(spec, ("CUCB", "AROQ-CMAB"), 200_000, runs=3, seed=i))
        for i in range(runs)
    ]
    start = time.monotonic()
    first: list[float | None] = [None] * runs
    frames = [0] * runs
    try:
        while time.monotonic() - start < seconds:
            for i, handle in enumerate(handles):
                if handle.poll() is not None:
                    frames[i] += 1
                    if first[i] is None:
                        first[i] = round(time.monotonic() - start, 3)
                    handle.request(200_000, 0.05)
            time.sleep(0.01)
    finally:
        for handle in handles:
            handle.close()
    cancelled = time.monotonic()
    stop.set()
    thread.join(10)

    def busy() -> int:
        return sum(client.run(lambda dask_worker: len(dask_worker.active_threads)).values())

    while busy() and time.monotonic() - cancelled < 10:
        time.sleep(0.05)
    return {
        "first_frame_seconds": first,
        "frames_per_second": [round(f / seconds, 2) for f in frames],
        "workers_free_after_cancel_seconds": round(time.monotonic() - cancelled, 2),
    }


def run(max_work: float = 600.0, runs: int = 4, seconds: float = 15.0) -> dict[str, Any]:
    """Both modes on one fresh 2-worker cluster (see the module docstring)."""
    import distributed

    from dashboard.simulation.engine import local_cluster
    from dashboard.simulation.sweep import estimate_sweep, make_sweep
    from dashboard.ui.sweep_view import largest_sweep, parse_values

    settings = largest_sweep(max_work)
    grid = {"horizon": parse_values(settings["x_values"])}
    sweep = make_sweep(
        settings["problem"], settings["algorithms"], runs=settings["runs"], grid=grid
    )
    cluster = local_cluster(2)
    client = distributed.Client(cluster, set_as_default=False)
    try:
        out: dict[str, Any] = {
            "sweep": settings,
            "sweep_estimate_seconds": round(estimate_sweep(sweep).seconds, 1),
        }
        for name, share in (("share", True), ("plain", False)):
            out[name] = _mode(client, sweep, share, runs, seconds)
        return out
    finally:
        client.close()
        cluster.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-work", type=float, default=600.0)
    parser.add_argument("--runs", type=int, default=4)
    parser.add_argument("--seconds", type=float, default=15.0)
    args = parser.parse_args()
    print(json.dumps(run(args.max_work, args.runs, min(args.seconds, 120.0)), indent=2))


if __name__ == "__main__":
    main()
