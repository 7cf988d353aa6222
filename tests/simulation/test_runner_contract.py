"""The runner's contract, checked with a tiny fake policy (independent of the real ones)."""

from __future__ import annotations

import numpy as np
import pytest

from dashboard.algorithms import registry
from dashboard.algorithms.base import Policy
from dashboard.algorithms.cmab.oracle import Oracle, OracleRequest
from dashboard.algorithms.declare import AlgorithmDeclaration
from dashboard.simulation import CMABSpec, Simulation, simulate, stream, time_grid


class FakeEpochPolicy(Policy):
    """Calls the oracle at rounds 1, 3, 7, 15, ... and plays greedy means in between.

    Decision points are the oracle rounds, so ``advance`` stops right before them.
    """

    declaration = AlgorithmDeclaration("FAKE", "cmab", "test", rewards=("linear",))

    def __init__(self, oracle_delay: float = 0.0, executor=None) -> None:
        super().__init__()
        self.delay = oracle_delay

    def reset(self, env, horizon):
        self.env, self.horizon, self.t, self.cum_regret = env, horizon, 0, 0.0
        self.sums = np.zeros(env.d)
        self.n = np.zeros(env.d)
        self.oracle = Oracle(env.family, self.log, delay=self.delay)
        self.next_call = 1
        self.action = None

    def advance(self, until):
        if self.t + 1 == self.next_call:
            idx = np.where(self.n > 0, self.sums / np.maximum(self.n, 1), np.inf)
            self.action = self.oracle.call(OracleRequest("argmax", scores=idx), self.t + 1)
            self.next_call = 2 * self.next_call + 1
        end = min(until, self.next_call - 1, self.horizon)
        L = end - self.t
        y = self.env.play_fixed(self.action, self.t + 1, L)
        self.sums[self.action] += y.sum(axis=0)
        self.n[self.action] += L
        self.cum_regret += L * self.env.gap(self.action)
        self.t = end
        return self.t


@pytest.fixture
def fake():
    info = registry.register_algorithm(FakeEpochPolicy)
    yield info
    registry.unregister_algorithm("FAKE")


def test_time_grid_contains_ends_and_is_increasing():
    g = time_grid(10**6, 400)
    assert g[0] == 1 and g[-1] == 10**6
    assert np.all(np.diff(g) > 0) and len(g) <= 401
    assert list(time_grid(3, 400)) == [1, 2, 3]


def test_stream_equals_batch_and_seed_reproduces(fake):
    spec = CMABSpec(d=8, m=2)
    batch = simulate(spec, ["fake"], horizon=500, runs=3, seed=4)
    frames = list(stream(spec, ["fake"], horizon=500, runs=3, seed=4, frames=7))
    assert frames[-1].t == 500 and len(frames) == 7
    last = frames[-1]["FAKE"]
    np.testing.assert_array_equal(last.regret, batch["FAKE"].regret)
    np.testing.assert_array_equal(last.queries, batch["FAKE"].queries)
    # an earlier frame is a prefix of the batch curves
    mid = frames[3]["FAKE"]
    k = len(mid.times)
    np.testing.assert_array_equal(mid.regret, batch["FAKE"].regret[:, :k])
    again = simulate(spec, ["fake"], horizon=500, runs=3, seed=4)
    np.testing.assert_array_equal(again["FAKE"].regret, batch["FAKE"].regret)
    other = simulate(spec, ["fake"], horizon=500, runs=3, seed=5)
    assert not np.array_equal(other["FAKE"].regret, batch["FAKE"].regret)


def test_queries_counted_at_grid_times(fake):
    res = simulate(CMABSpec(d=6, m=2), ["fake"], horizon=100, runs=1, seed=0)
    r = res["FAKE"]
    # oracle rounds 1, 3, 7, 15, 31, 63
    expected = np.searchsorted(np.array([1, 3, 7, 15, 31, 63]), r.times, side="right")
    np.testing.assert_array_equal(r.queries[0], expected)
    np.testing.assert_array_equal(r.adaptivity[0], expected)
    s = r.summary()
    assert s["oracle_queries_mean"] == 6 and s["algorithm"] == "FAKE"


def test_step_stops_at_decision_points(fake):
    with Simulation(CMABSpec(d=6, m=2), ["fake"], horizon=100) as sim:
        stops = [sim.step() for _ in range(4)]
    # the fake calls the oracle at rounds 1, 3, 7, 15: each Step shows one new call
    assert stops == [1, 3, 7, 15]


def test_advance_for_makes_progress_and_respects_horizon(fake):
    with Simulation(CMABSpec(d=6, m=2), ["fake"], horizon=2000, runs=2) as sim:
        t = sim.advance_for(0.05)
        assert 0 < t <= 2000
        while not sim.done:
            sim.advance_for(0.05)
        assert sim.result().t == 2000


def test_invalid_configurations_raise_clear_errors(fake):
    with pytest.raises(ValueError, match="horizon"):
        Simulation(CMABSpec(), ["fake"], horizon=0)
    with pytest.raises(ValueError, match="runs"):
        Simulation(CMABSpec(), ["fake"], horizon=10, runs=0)
    with pytest.raises(ValueError, match="unknown algorithm"):
        Simulation(CMABSpec(), ["nope"], horizon=10)
    with pytest.raises(ValueError, match="at least one"):
        Simulation(CMABSpec(), [], horizon=10)
    with pytest.raises(ValueError, match="m must be at most d"):
        Simulation(CMABSpec(d=3, m=4), ["fake"], horizon=10)
    with pytest.raises(ValueError, match="twice"):
        Simulation(CMABSpec(), ["fake", "FAKE"], horizon=10)


def test_csv_and_table_exports(fake):
    res = simulate(CMABSpec(d=6, m=2), ["fake"], horizon=50, runs=2, seed=1)
    lines = res.to_csv().strip().splitlines()
    assert lines[0] == "algorithm,run,t,cumulative_regret,queries,adaptivity"
    assert len(lines) == 1 + 2 * len(res["FAKE"].times)
    assert "FAKE" in res.to_table()
