"""Adaptive frame pacing (dashboard/ui/pacing.py): while the server's event loop lags, frames
first get cheaper (the small plots' stride grows), then rarer (the interval between a
session's frames grows); once the loop is quiet both return, in the reverse order."""

from __future__ import annotations

import asyncio
import itertools
import time

from dashboard.ui.pacing import LoopPacer


def test_interval_grows_under_lag_up_to_the_cap_and_falls_back_to_zero():
    p = LoopPacer(target_lag=0.04, max_interval=2.0, max_stride=1)
    assert p.update(0.0) == 0.0
    seen = [p.update(0.5) for _ in range(40)]
    assert seen == sorted(seen) and seen[-1] == 2.0 and seen[0] >= 0.0
    for _ in range(200):
        p.update(0.0)
    assert p.interval == 0.0 and p.lag < 0.01
    p.update(-1.0)  # a clock oddity never counts as negative lag
    assert p.lag >= 0.0


def test_frames_get_cheaper_before_they_get_rarer_and_recover_in_reverse():
    p = LoopPacer(target_lag=0.04, max_interval=2.0, max_stride=3, settle=4)
    strides, intervals = [], []
    for _ in range(60):
        intervals.append(p.update(0.5))
        strides.append(p.stride)
    assert strides == sorted(strides) and strides[-1] == 3
    first_rarer = next(i for i, v in enumerate(intervals) if v > 0)
    assert strides[first_rarer] == 3  # the interval grows only once the stride is maxed
    # each stride step waits `settle` samples to see its effect
    steps = [i for i in range(1, 60) if strides[i] != strides[i - 1]]
    assert all(b - a >= 4 for a, b in itertools.pairwise(steps))
    back = []
    for _ in range(400):
        p.update(0.0)
        back.append((p.interval, p.stride))
    assert back[-1] == (0.0, 1)
    first_stride_down = next(i for i, (_, s) in enumerate(back) if s < 3)
    assert back[first_stride_down][0] == 0.0  # stride relaxes only after the interval did


def test_a_quiet_loop_stays_neutral():
    p = LoopPacer(target_lag=0.04)
    for lag in [0.0, 0.01, 0.015, 0.0] * 20:
        p.update(lag)
    assert (p.interval, p.stride) == (0.0, 1)


def test_probe_measures_a_blocked_loop():
    p = LoopPacer(target_lag=0.02, probe=0.01)
    assert p.start() is False  # no running loop: nothing to pace

    async def busy_loop() -> None:
        assert p.start() and p.start()  # idempotent
        for _ in range(15):
            time.sleep(0.06)  # a callback hogging the loop
            await asyncio.sleep(0)
        p._task.cancel()

    asyncio.run(busy_loop())
    assert p.lag > 0.02 and p.stride > 1  # first the small plots are updated less often
