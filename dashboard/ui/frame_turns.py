"""Frames take turns: one frame at a time on a served class's event loop, with the sockets
read between any two.

A served session used to stream from its own periodic callback (every ``period_ms``).  Once a
class's frames cost the loop more than it has, every session's callback is due at every pass
of the loop, so each pass ran all of the frames that were ready: measured at 30 students,
passes of 100-230 ms with 50-120 ready callbacks.  The loop reads its sockets only between two
passes, so a student's Pause waited unread in its socket for most of a pass (a median 384 ms of
a 443 ms Pause; ``benchmarks/bench_classroom.py`` with ``BENCH_PAUSE_TRACE``).

:class:`FrameScheduler`, one per server process, replaces those callbacks with one line:

* a session on the line (a :class:`FrameTurn`) is *due* ``period_ms`` after its last turn and
  *wants* a turn when its frame can do something (``wanted()``: a Dask frame came back or must
  be asked for), or at least every ``check_every`` seconds (a page that closed, a queued run);
* of the due sessions that want one, the one that was shown a frame longest ago goes first
  (fair share: a class of N gets about 1/N of the loop each);
* each turn runs the session's ``tick`` under its document lock (Bokeh's
  ``ServerSession.with_document_locked``, as a periodic callback would) in its own task;
* between two turns the line lets the loop run its other work first: it waits pass after
  pass (up to ``max_passes``) until the loop has nothing else ready.  A page's message
  (a click, a frame acknowledgement) is read and handled in many short steps, one per pass:
  Tornado reads each websocket fragment in several awaits, then Bokeh takes the session's
  lock and answers.  With one frame per pass, each of those ~20 steps waited for one frame
  (~15 ms): measured at 30 students, a Pause still took 420 ms (p50), 293 ms of it before the
  click's message was read.  Frames come last, so a click passes between two frames.

Turns change only *when* a session's tick runs, never what it does: the numbers are the
same.  ``python -m dashboard serve`` starts :data:`SCHEDULER` (through
:func:`dashboard.ui.lifecycle.watch_session`); elsewhere (notebooks, ``panel serve dashboard``,
headless tests) :func:`frame_timer` falls back to a periodic callback.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import Any

from . import document

_LOG = logging.getLogger(__name__)

__all__ = ["SCHEDULER", "FrameScheduler", "FrameTurn", "frame_timer"]


class FrameTurn:
    """One session's place on the line; started and stopped like a periodic callback.

    Parameters
    ----------
    scheduler : FrameScheduler
        The line.
    doc : bokeh Document
        The served session's document (its lock is held during ``tick``).
    tick : callable
        ``tick() -> bool``: one frame; whether it showed new data.
    period_ms : int
        Least time between two turns of this session.
    wanted : callable, optional
        ``wanted() -> bool``: whether a turn would do anything now (cheap; default: always).
    """

    def __init__(
        self,
        scheduler: FrameScheduler,
        doc: Any,
        tick: Callable[[], Any],
        period_ms: int,
        wanted: Callable[[], bool] | None = None,
    ) -> None:
        self.scheduler = scheduler
        self.doc = doc
        self.tick = tick
        self.period = max(0.0, float(period_ms) / 1000.0)
        self.wanted = wanted
        self.running = False
        self.in_flight = False  # a turn's task has not run the tick yet
        self._task: Any = None  # (asyncio keeps only weak references to tasks)
        self.last_turn = -float("inf")
        self.last_frame = -float("inf")
        self.turns = 0
        self.frames = 0

    def start(self) -> None:
        self.running = True
        self.scheduler.add(self)

    def stop(self) -> None:
        self.running = False
        self.scheduler.discard(self)

    def wants(self, now: float) -> bool:
        """Whether this session is due a turn at ``now`` and would use it."""
        if self.in_flight or now - self.last_turn < self.period:
            return False
        if now - self.last_turn >= self.scheduler.check_every or self.wanted is None:
            return True
        try:
            return bool(self.wanted())
        except Exception:  # a broken predicate must not stop the line: take the turn
            return True

    def run(self) -> Any:
        """Schedule the tick under the document lock; the task, or ``None`` if the session
        ended (the turn then leaves the line)."""
        self.in_flight = True
        self.last_turn = time.perf_counter()
        self.turns += 1
        task = document.run_locked(self.doc, self._tick)
        if task is None:
            self.in_flight = False
            self.stop()
            return None
        self._task = task
        task.add_done_callback(self._done)
        return task

    def _tick(self) -> None:
        self.in_flight = False
        if not self.running:
            return  # stopped while its task waited for the lock
        if self.tick():
            self.frames += 1
            self.last_frame = time.perf_counter()

    def _done(self, task: Any) -> None:
        self.in_flight = False
        if self._task is task:
            self._task = None
        if not task.cancelled() and task.exception() is not None:
            _LOG.error("a frame failed: %s", task.exception(), exc_info=task.exception())


class FrameScheduler:
    """The process's line of streaming sessions (see the module docstring).

    Parameters
    ----------
    poll : float
        Seconds between two looks at the line while no session wants a turn (a Dask frame
        comes back on the client's thread, which cannot wake the loop's task).
    check_every : float
        A session gets a turn at least this often even if ``wanted()`` says no (its page may
        have closed, its run may be queued).
    max_passes : int
        Most passes of the loop between two turns while other work is ready (frames still
        get their share on a loop that never runs dry).
    """

    def __init__(self, poll: float = 0.005, check_every: float = 0.5, max_passes: int = 16) -> None:
        self.poll = float(poll)
        self.check_every = float(check_every)
        self.max_passes = max(1, int(max_passes))
        self._turns: list[FrameTurn] = []
        self._task: Any = None
        self._loop: Any = None

    @property
    def turns(self) -> list[FrameTurn]:
        """The sessions on the line now."""
        return list(self._turns)

    def start(self) -> bool:
        """Start the line on the running event loop (idempotent); ``False`` without a loop."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return False
        if self.running_on(loop):
            return True
        self._loop = loop
        self._task = loop.create_task(self._run())
        return True

    def running_on(self, loop: Any = None) -> bool:
        """Whether the line runs on ``loop`` (default: the running loop, if any)."""
        if loop is None:
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:
                return False
        return self._task is not None and not self._task.done() and self._loop is loop

    def add(self, turn: FrameTurn) -> None:
        if turn not in self._turns:
            self._turns.append(turn)

    def discard(self, turn: FrameTurn) -> None:
        if turn in self._turns:
            self._turns.remove(turn)

    def next_turn(self, now: float) -> FrameTurn | None:
        """Of the sessions that want a turn at ``now``, the one shown a frame longest ago."""
        best: FrameTurn | None = None
        for turn in self._turns:
            if turn.wants(now) and (best is None or turn.last_frame < best.last_frame):
                best = turn
        return best

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            try:
                turn = self.next_turn(time.perf_counter())
                if turn is not None:
                    turn.run()
            except Exception:  # never let one session's trouble stop everyone's frames
                _LOG.exception("frame line")
                turn = None
            if turn is None:
                await asyncio.sleep(self.poll)
                continue
            # the loop's other work first (the sockets are read at every pass): wait until
            # nothing else is ready, at most max_passes passes
            await asyncio.sleep(0)  # the turn's own task runs in this pass
            for _ in range(self.max_passes - 1):
                await asyncio.sleep(0)
                if not _others_ready(loop):
                    break


def _others_ready(loop: Any) -> bool:
    """Whether ``loop`` has callbacks ready to run besides the caller: asyncio's private
    ready queue (``BaseEventLoop._ready``; guarded by ``tests/ui/test_canaries.py``).  Without
    it, ``True`` (the line then always waits ``max_passes`` passes)."""
    ready = getattr(loop, "_ready", None)
    try:
        return ready is None or len(ready) > 0
    except TypeError:
        return True


#: The process's line (one event loop per server process).
SCHEDULER = FrameScheduler()


def frame_timer(
    doc: Any,
    tick: Callable[[], Any],
    period_ms: int,
    wanted: Callable[[], bool] | None = None,
    scheduler: FrameScheduler | None = None,
) -> Any:
    """A started streaming timer for a session: a :class:`FrameTurn` on ``scheduler`` (default
    :data:`SCHEDULER`) when it runs on this loop and ``doc`` is served, else a periodic
    callback (:func:`dashboard.ui.document.periodic`).  Both have ``running``, ``start()``,
    ``stop()``."""
    line = SCHEDULER if scheduler is None else scheduler
    if document.served(doc) and line.running_on():
        turn = FrameTurn(line, doc, tick, period_ms, wanted)
        turn.start()
        return turn
    return document.periodic(tick, period_ms)
