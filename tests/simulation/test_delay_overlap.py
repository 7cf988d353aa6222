"""Repetitions of a policy with a simulated oracle delay sleep side by side (issue 9: lesson
3's first frame, 16 runs x 21 queries x 5 ms, was 2 s of sleeping one run after another),
with the numbers, query logs and events of runs advanced one after another."""

from __future__ import annotations

import time

import numpy as np
from same_numbers import assert_same_numbers

from dashboard.simulation import CMABSpec, Simulation, group

ALGORITHMS = ["AROQ-CMAB", "SROQ-CMAB"]


def _sim(delay: float, runs: int = 4, horizon: int = 1500) -> Simulation:
    spec = CMABSpec(d=10, m=3, oracle_delay=delay)
    return Simulation(spec, ALGORITHMS, horizon, runs=runs, seed=3, grid_points=60)


def _logs_and_events(sim):
    out = []
    for g in sim.groups:
        for log, events in zip(g.logs(), g.events()):
            a = log.arrays()
            out.append(
                (
                    [a[k].tolist() for k in ("t", "round_id", "purpose_code", "arm")],
                    [
                        (e.t, e.kind, sorted((k, repr(v)) for k, v in e.data.items()))
                        for e in events
                    ],
                )
            )
    return out


def test_delayed_repetitions_overlap_with_the_same_numbers(monkeypatch):
    overlapped = _sim(0.001)
    assert all(g._overlap for g in overlapped.groups)
    overlapped.advance_to(500)
    overlapped.advance_to(1500)
    monkeypatch.setattr(group, "_delayed", lambda policy: False)
    sequential = _sim(0.001)
    assert not any(g._overlap for g in sequential.groups)
    sequential.advance_to(1500)
    assert_same_numbers(overlapped.result(), sequential.result())
    assert _logs_and_events(overlapped) == _logs_and_events(sequential)
    for g in overlapped.groups:  # every run's own wall time, including its own sleeps
        assert np.all(g.wall >= 0.001 * np.array([log.queries for log in g.logs()]))


def test_first_epoch_sleeps_overlap():
    """SROQ-CMAB's first epoch (d + 1 = 11 queries per run) of 8 runs at 10 ms per query:
    0.88 s one run after another, about a tenth of that side by side."""
    sim = Simulation(CMABSpec(d=10, m=3, oracle_delay=0.01), ["SROQ-CMAB"], 3000, runs=8)
    start = time.perf_counter()
    sim.advance_to(1)
    elapsed = time.perf_counter() - start
    serial = 8 * 11 * 0.01
    assert elapsed < 0.6 * serial


def test_no_delay_no_threads():
    sim = _sim(0.0)
    assert not any(g._overlap for g in sim.groups)
    assert not _sim(0.01, runs=1).groups[0]._overlap
