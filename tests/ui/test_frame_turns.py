"""Frames take turns (dashboard/ui/frame_turns.py): one frame at a time on the server's loop,
the session shown a frame longest ago first, every tick under its document's lock, and the
loop's other work (a click being read) before the next frame."""

from __future__ import annotations

import asyncio
import time

from hypothesis import given, settings
from hypothesis import strategies as st

from dashboard.ui import document
from dashboard.ui.frame_turns import FrameScheduler, FrameTurn, frame_timer


class FakeSession:
    """What the line needs of Bokeh's ``ServerSession``: ``destroyed`` and
    ``with_document_locked`` (which marks the lock held while the callback runs)."""

    def __init__(self) -> None:
        self.destroyed = False
        self._pending_writes = None
        self._lock = asyncio.Lock()
        self.locked_calls = 0

    async def with_document_locked(self, fn):
        async with self._lock:
            self._pending_writes = []
            try:
                self.locked_calls += 1
                return fn()
            finally:
                self._pending_writes = None


class FakeContext:
    def __init__(self, session: FakeSession) -> None:
        self.session = session


class FakeDoc:
    def __init__(self) -> None:
        self.session = FakeSession()
        self.session_context = FakeContext(self.session)


def _turn(scheduler, tick=lambda: True, period_ms=0, wanted=None):
    return FrameTurn(scheduler, FakeDoc(), tick, period_ms, wanted)


def test_the_session_shown_a_frame_longest_ago_goes_first():
    line = FrameScheduler()
    a, b, c = (_turn(line) for _ in range(3))
    for t in (a, b, c):
        t.start()
    a.last_frame, b.last_frame, c.last_frame = 3.0, 1.0, 2.0
    assert line.next_turn(10.0) is b
    b.in_flight = True  # its task has not run yet: not again
    assert line.next_turn(10.0) is c
    c.stop()
    assert line.next_turn(10.0) is a and c not in line.turns


def test_a_turn_is_due_period_ms_after_the_last_and_only_when_wanted():
    line = FrameScheduler(check_every=0.5)
    wanted = [False]
    turn = _turn(line, period_ms=100, wanted=lambda: wanted[0])
    turn.start()
    turn.last_turn = 10.0
    wanted[0] = True
    assert not turn.wants(10.05)  # within its period
    assert turn.wants(10.11)
    wanted[0] = False  # e.g. a Dask worker still computes the frame
    assert not turn.wants(10.2)
    assert turn.wants(10.51)  # checked at least every check_every anyway (a closed page)


def test_a_broken_wanted_predicate_takes_the_turn_rather_than_stopping_the_line():
    line = FrameScheduler()

    def broken() -> bool:
        raise RuntimeError("boom")

    turn = _turn(line, wanted=broken)
    turn.start()
    assert line.next_turn(time.perf_counter()) is turn


@settings(max_examples=15, deadline=None)
@given(st.integers(2, 6), st.integers(20, 60))
def test_sessions_get_fair_turns_and_every_tick_holds_its_documents_lock(n, frames):
    async def main():
        line = FrameScheduler(poll=0.001)
        assert line.start()
        shown = []
        turns = []
        for i in range(n):
            doc = FakeDoc()

            def tick(i=i, doc=doc) -> bool:
                assert document.holds_lock(doc.session)  # changes go straight to the page
                shown.append(i)
                return True

            turn = frame_timer(doc, tick, 0, scheduler=line)
            assert isinstance(turn, FrameTurn)  # the line runs on this loop: a turn
            turns.append(turn)
        while len(shown) < frames:
            await asyncio.sleep(0.001)
        for t in turns:
            t.stop()
        line._task.cancel()
        return shown, turns

    shown, turns = asyncio.run(main())
    counts = [shown.count(i) for i in range(n)]
    assert max(counts) - min(counts) <= 1, counts  # round robin by the oldest frame
    assert all(t.turns == t.frames for t in turns)
    assert all(t.doc.session.locked_calls == t.turns for t in turns)


def test_between_two_frames_the_loops_other_work_runs_first():
    """A page's message is handled in many steps, one per pass of the loop (a websocket's
    fragments, then the lock, then the answer): none of them waits for more than one frame."""

    async def main():
        line = FrameScheduler(poll=0.001, max_passes=64)
        line.start()
        log = []
        doc = FakeDoc()
        turn = frame_timer(doc, lambda: log.append("frame") or True, 0, scheduler=line)
        await asyncio.sleep(0.01)  # frames are streaming

        async def click(steps: int) -> None:
            for k in range(steps):
                log.append(f"step{k}")
                await asyncio.sleep(0)

        start = len(log)
        await asyncio.get_running_loop().create_task(click(20))
        turn.stop()
        line._task.cancel()
        return log[start:]

    log = asyncio.run(main())
    steps = [i for i, x in enumerate(log) if x.startswith("step")]
    frames_during = [x for x in log[steps[0] : steps[-1]] if x == "frame"]
    assert len(frames_during) <= 1, log


def test_a_turn_of_an_ended_session_leaves_the_line():
    async def main():
        line = FrameScheduler(poll=0.001)
        line.start()
        ticks = []
        doc = FakeDoc()
        turn = frame_timer(doc, lambda: ticks.append(1) or True, 0, scheduler=line)
        await asyncio.sleep(0.01)
        doc.session.destroyed = True
        await asyncio.sleep(0.01)
        line._task.cancel()
        return turn, line, len(ticks)

    turn, line, n = asyncio.run(main())
    assert n > 0 and turn not in line.turns and not turn.running


def test_without_the_line_on_this_loop_the_timer_is_a_periodic_callback():
    line_turn = frame_timer(None, lambda: True, 100)  # headless: no session, no loop
    try:
        assert not isinstance(line_turn, FrameTurn) and line_turn.running
    finally:
        line_turn.stop()
