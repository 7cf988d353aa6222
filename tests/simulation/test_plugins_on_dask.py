"""A plug-in registered in this process runs on a real Dask cluster (a served class): the
workers get it, and its frames equal ``simulate``'s numbers in this process."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pytest

from dashboard import plugins
from dashboard.algorithms import registry
from dashboard.simulation.remote import DaskRun, RunRequest
from dashboard.simulation.runner import simulate
from dashboard.simulation.specs import make_spec

distributed = pytest.importorskip("distributed")
EXAMPLE = Path(__file__).resolve().parents[2] / "docs" / "examples" / "random_mset.py"


@pytest.fixture(scope="module")
def client():
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster) as c,
    ):
        yield c


def _forget_the_example() -> None:
    """Unregister the example and forget its file, so no later cluster of this test process
    (an in-process one runs its worker plug-ins here) installs it again."""
    registry.unregister_algorithm("Random-m-set")
    spec = str(EXAMPLE.resolve())
    if spec in plugins.LOADED_SPECS:
        plugins.LOADED_SPECS.remove(spec)


def _catalogue_names() -> list[str]:
    from dashboard.simulation import catalogue

    return catalogue.algorithm_names("cmab")


def test_a_plugin_file_reaches_every_worker_and_gives_the_same_numbers(client):
    plugins.load_plugin(str(EXAMPLE))
    try:
        req = RunRequest(make_spec("cmab", d=8, m=2), ("Random-m-set", "CUCB"), 800, 2, 5)
        run = DaskRun(client, req)
        on_workers = client.run(_catalogue_names)
        assert len(on_workers) == 2
        assert all("Random-m-set" in names for names in on_workers.values())
        deadline, last = time.monotonic() + 120, None
        while time.monotonic() < deadline and not (last is not None and last.done):
            frame = run.poll()
            if frame is not None:
                last = frame
                if not frame.done:
                    run.request(target=10**9, seconds=0.05)
            time.sleep(0.01)
        assert last is not None and last.done
        expected = simulate(req.spec, list(req.algorithms), req.horizon, req.runs, req.seed)
        for a, b in zip(last.result.results, expected.results):
            assert a.algorithm == b.algorithm
            np.testing.assert_array_equal(a.regret, b.regret)
        run.close()
    finally:
        _forget_the_example()


def test_a_sweep_of_a_plugin_runs_on_the_cluster(client):
    from dashboard.simulation import plugin_sharing
    from dashboard.simulation.sweep import make_sweep, run_sweep

    # fresh workers that know no plug-in, so only the sweep engine's sharing can teach them
    if plugin_sharing.PluginInstaller.name in client.run_on_scheduler(
        lambda dask_scheduler: list(dask_scheduler.worker_plugins)
    ):
        client.unregister_worker_plugin(plugin_sharing.PluginInstaller.name)
    plugin_sharing._shared.clear()
    client.restart()
    assert not any("Random-m-set" in n for n in client.run(_catalogue_names).values())
    plugins.load_plugin(str(EXAMPLE))
    try:
        sweep = make_sweep(
            "cmab",
            ["Random-m-set"],
            horizon=300,
            runs=2,
            seed=1,
            grid={"Random-m-set:block": [1, 50]},
            d=6,
            m=2,
        )
        on_cluster = run_sweep(sweep, client=client)
        here = run_sweep(sweep, scheduler="inprocess")
        assert on_cluster.complete and [r.point for r in on_cluster.rows] == [
            r.point for r in here.rows
        ]
        for a, b in zip(on_cluster.rows, here.rows):
            np.testing.assert_array_equal(a.result.results[0].regret, b.result.results[0].regret)
    finally:
        _forget_the_example()
