"""Adaptive frame pacing (dashboard/ui/pacing.py): the interval between a session's frames
grows while the server's event loop lags and returns to zero once it is quiet."""

from __future__ import annotations

import asyncio
import time

from dashboard.ui.pacing import LoopPacer


def test_interval_grows_under_lag_up_to_the_cap_and_falls_back_to_zero():
    p = LoopPacer(target_lag=0.04, max_interval=2.0)
    assert p.update(0.0) == 0.0
    seen = [p.update(0.5) for _ in range(40)]
    assert seen == sorted(seen) and seen[-1] == 2.0 and seen[0] >= 0.0
    for _ in range(200):
        p.update(0.0)
    assert p.interval == 0.0 and p.lag < 0.01
    p.update(-1.0)  # a clock oddity never counts as negative lag
    assert p.lag >= 0.0


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
    assert p.lag > 0.02 and p.interval >= 0.1
