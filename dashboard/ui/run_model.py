"""The run state machine of a dashboard session: :class:`RunModel`.

``idle -> running <-> paused -> done`` (and ``error``; ``stopped`` when the run was released
before T: its page closed, or it sat idle longer than the class allows, see
:mod:`dashboard.ui.lifecycle`) around one run handle (:mod:`dashboard.simulation.remote`):
in this process, or on a Dask worker for a served class.  The view calls :meth:`RunModel.tick`
from a periodic callback; Run on a new configuration closes the old run first, and Reset drops
every reference to it (so repeated Run/Reset cycles do not grow memory).  No Panel /
HoloViews imports: testable headless.
"""

from __future__ import annotations

import os
import threading
import time
from typing import Any

import numpy as np
import param

from ..simulation.remote import DaskRun, LocalRun, RunHandle, RunLost, activity
from .config import SPEEDS, Config, _sentence
from .pacing import PACER

__all__ = ["ENGINE_ENV", "RunModel", "default_engine"]

#: Set by ``python -m dashboard serve`` (see :mod:`dashboard.serve`): ``dask`` or ``in-process``.
ENGINE_ENV = "BANDIT_DASHBOARD_ENGINE"


class _RemoteView:
    """What the view may read of a run that lives on a Dask worker (no local Simulation)."""

    def __init__(self, horizon: int, algorithms: list[str]) -> None:
        self.horizon = horizon
        self.algorithms = algorithms


class RunModel(param.Parameterized):
    """Run state machine around one run handle (:mod:`dashboard.simulation.remote`).

    ``status`` is ``idle`` (nothing simulated), ``running`` (ticks advance), ``paused``,
    ``done`` (t = T), ``error`` (the run raised: ``error`` holds one sentence) or ``stopped``
    (:meth:`release` freed the run before T: its results stay, ``released`` says why, Run
    starts again).

    The run lives behind a non-blocking handle: in this process (``engine="in-process"``, the
    default for ``panel serve dashboard`` and notebooks: every call does its work before it
    returns) or on a Dask worker (``engine="dask"``, what ``python -m dashboard serve`` sets
    for a class: :meth:`tick` only collects a finished frame and asks for the next one, so the
    server's event loop never waits for a simulation).  Pause and Reset change the state at
    once in both cases; a frame still in flight after Pause is shown when it arrives.
    """

    config = param.ClassSelector(class_=Config, doc="The configuration being run.")
    status = param.Selector(
        default="idle",
        objects=["idle", "running", "paused", "done", "error", "stopped"],
        doc="Run state.",
    )
    t = param.Integer(default=0, bounds=(0, None), doc="Rounds simulated so far.")
    horizon = param.Integer(default=0, bounds=(0, None), doc="T of the current run.")
    error = param.String(default="", doc="One-sentence message of the last failed run.")
    frame = param.Integer(default=0, doc="Incremented each time new results are available.")
    result = param.Parameter(default=None, doc="SimulationResult snapshot of the current run.")
    engine = param.Selector(
        default="in-process",
        objects=["in-process", "dask"],
        doc="Where runs execute: this process, or the shared Dask cluster (a served class).",
    )
    queued = param.Boolean(
        default=False,
        doc="A requested frame has waited over a second for a busy cluster (shown as queued).",
    )
    released = param.String(
        default="",
        doc="Why the run was released before T (idle too long, page closed); shown as a notice.",
    )

    #: Seconds after which an outstanding frame counts as queued.  A busy class's frames
    #: come every 0.5-1 s (fair share, ``benchmarks/bench_classroom.py``), so 1 s made the
    #: "Queued" notice flicker on and off between ordinary frames.
    QUEUED_AFTER = 2.0

    def __init__(self, config: Config | None = None, **params: Any) -> None:
        if "engine" not in params:
            params["engine"] = default_engine()
        super().__init__(config=config if config is not None else Config(), **params)
        self.handle: RunHandle | None = None
        self.sim: Any = None  # the local Simulation (in-process) or a _RemoteView (Dask)
        self._lock = threading.Lock()
        self._asked_at = 0.0  # when the outstanding frame was requested
        self._workers = 1  # Dask worker threads serving this run (fair share)
        self._touched = time.monotonic()  # the last user action (see idle_for)
        self._shown_at = 0.0  # when the last frame came back (perf_counter)

    # ------------------------------------------------------------------ state machine
    @property
    def can_run(self) -> bool:
        """Whether Run is allowed (the configuration is valid)."""
        return self.config.valid

    @property
    def busy(self) -> bool:
        """Whether a requested frame has not come back yet (the view keeps polling)."""
        return self.handle is not None and self.handle.busy

    def run(self) -> None:
        """Start a new run of the current configuration (cancelling any previous run)."""
        self._touched = time.monotonic()
        with self._lock:
            self._start()
            if self.handle is not None:
                self.status = "running"

    def pause(self) -> None:
        """Pause a running simulation (no-op otherwise)."""
        self._touched = time.monotonic()
        if self.status == "running":
            self.status = "paused"

    def resume(self) -> None:
        """Resume a paused simulation (no-op otherwise)."""
        self._touched = time.monotonic()
        if self.status == "paused":
            self.status = "running"

    def toggle_pause(self) -> None:
        """Pause if running, resume if paused."""
        if self.status == "running":
            self.pause()
        else:
            self.resume()

    def step(self) -> None:
        """Advance to the next decision point (oracle call, epoch or phase), then pause.

        Starts a paused run first if nothing is loaded (or the last one finished / failed).
        In-process the step is done when this returns; on Dask it arrives with a later
        :meth:`tick` (:attr:`busy` says one is due).
        """
        self._touched = time.monotonic()
        with self._lock:
            if self.handle is None or self.status in ("done", "error", "idle"):
                self._start()
                if self.handle is None:
                    return
            if self.status != "done":
                self.status = "paused"
            if not self.handle.busy:
                self._ask(step=True)
            self._collect()

    def reset(self) -> None:
        """Stop and forget the run (its state is released, on a worker too)."""
        self._touched = time.monotonic()
        with self._lock:
            self._drop()
            self.param.update(
                status="idle", t=0, horizon=0, error="", result=None, queued=False, released=""
            )
            self.frame += 1

    def close(self) -> None:
        """Release the run (the session ended)."""
        with self._lock:
            self._drop()
            if self.status == "running":
                self.status = "paused"

    def release(self, why: str) -> bool:
        """Free the run's state (on its Dask worker too) and keep its results on screen and in
        the CSV: status ``stopped`` (``done`` and ``error`` stay), ``released`` = ``why``.
        Run starts again.  Returns whether a run was released (``False``: nothing held)."""
        with self._lock:
            if self.handle is None:
                return False
            self._drop()
            if self.status in ("done", "error"):  # nothing is lost: no notice
                self.param.update(queued=False)
            else:
                self.param.update(status="stopped", released=why, queued=False)
            self.frame += 1
            return True

    def idle_for(self, now: float | None = None) -> float:
        """Seconds since the last user action (Run, Pause, Resume, Step, Reset)."""
        return (time.monotonic() if now is None else now) - self._touched

    def release_if_idle(self, seconds: float, now: float | None = None) -> bool:
        """:meth:`release` a run that holds state but is not running (paused, finished,
        stopped on an error) and saw no user action for ``seconds``.  A running run is never
        released: it ends at T (and the class's work limit bounds T x runs)."""
        if self.handle is None or self.status == "running" or self.idle_for(now) < seconds:
            return False
        minutes = max(1, round(seconds / 60))
        return self.release(
            f"This run was released after {minutes} minute{'s' if minutes > 1 else ''} without "
            "activity, to give the class's workers back; its results stay here and in the CSV. "
            "Press Run to start it again."
        )

    def tick(self, seconds: float = 0.06) -> bool:
        """One frame: show a finished frame if one came back, and while running ask for the
        next (about ``seconds`` of simulation, capped by the playback speed, a fraction of T
        per frame).  Returns whether new results exist.  Overlapping calls (periodic callbacks
        on several threads) return ``False`` instead of waiting.
        """
        if self.handle is None or not self._lock.acquire(blocking=False):
            return False
        try:
            # On Dask a frame is shown at most every PACER.interval while the server's loop is
            # behind (pacing.py); the next one is computed meanwhile, so it is ready when due.
            due = self.engine != "dask" or time.perf_counter() - self._shown_at >= PACER.interval
            changed = self._collect() if due else False
            if self.status == "running" and self.handle is not None and not self.handle.busy:
                self._ask(seconds=seconds)
                if due:
                    changed = self._collect() or changed  # in-process: the frame is ready
            waited = time.perf_counter() - self._asked_at
            ready = self.handle is not None and self.handle.ready
            queued = self.busy and not ready and waited > self.QUEUED_AFTER
            if queued != self.queued:
                self.queued = queued
            return changed
        finally:
            self._lock.release()

    def frame_wanted(self) -> bool:
        """Whether :meth:`tick` would do anything now: cheap, for the served class's frame
        line (:mod:`dashboard.ui.frame_turns`).  False only while a Dask worker is still
        computing the requested frame."""
        handle = self.handle
        if handle is None or not handle.busy:
            return True
        return handle.ready or handle.waiting_to_launch

    # ------------------------------------------------------------------ data for plots
    def shift_window(self, rounds: int = 300) -> tuple[np.ndarray, np.ndarray]:
        """``(t, nu_t)`` over the last simulated rounds (semiparametric only): the trace the
        result carries (:meth:`Simulation.shift_trace`)."""
        empty = (np.zeros(0, dtype=np.int64), np.zeros(0))
        shift = None if self.result is None else self.result.shift
        if shift is None:
            return empty
        t, nu = shift
        return t[-rounds:], nu[-rounds:]

    def notices(self) -> list[str]:
        """One sentence per place where a run departs from the paper's schedule (e.g. AROQ-C's
        warm-up or SROQ-C's pair phase clamped to fit the horizon), from run 1's events, and
        one when the run waits for a busy cluster."""
        out: list[str] = []
        result = self.result
        for r in [] if result is None else result.results:
            seen: set[str] = set()
            for e in r.events[0] if r.events else []:
                if "clamped" not in e.kind or e.kind in seen:
                    continue
                seen.add(e.kind)
                paper, used = e.data.get("paper"), e.data.get("used")
                detail = ""
                if paper is not None and used is not None:
                    detail = (
                        f" (the paper asks {float(paper):,.0f} rounds, "
                        f"this run uses {float(used):,.0f})"
                    )
                out.append(f"{r.algorithm}: {e.kind}{detail}.")
        if self.released:
            out.append(self.released)
        if self.queued:
            out.append(
                "Queued: the server is busy with the class's runs; your next frame will come "
                "as soon as a worker is free."
            )
        return out

    def instance_arrays(self) -> tuple[np.ndarray, np.ndarray] | None:
        """``(X, theta*)`` of the semiparametric instance being run (carried by the result),
        else ``None``."""
        return None if self.result is None else self.result.features

    # ------------------------------------------------------------------ internals
    def _start(self) -> None:
        self._drop()
        self.param.update(error="", t=0, result=None, queued=False, released="")
        if not self.config.valid:
            self.param.update(status="error", error=self.config.errors[0])
            self.frame += 1
            return
        try:
            request = self.config.run_request()
            if self.engine == "dask":
                from ..simulation.cluster import get_client

                client = get_client()
                self._workers = max(1, len(client.scheduler_info().get("workers", {})))
                self.handle = DaskRun(client, request)
                self.sim = _RemoteView(request.horizon, list(request.algorithms))
            else:
                handle = LocalRun(request)
                self.handle = handle
                self.sim = handle.simulation
        except Exception as exc:  # bad combination found only when building the instance
            self._drop()
            self.param.update(status="error", error=_message(exc), horizon=0)
            self.frame += 1
            return
        self._asked_at = time.perf_counter()
        self.param.update(status="paused", horizon=request.horizon, t=0)
        self._collect()

    def _drop(self) -> None:
        handle, self.handle, self.sim = self.handle, None, None
        if handle is not None:
            handle.close()

    def _ask(self, seconds: float = 0.0, step: bool = False) -> None:
        """Request the next frame (never waits for a worker)."""
        handle = self.handle
        if handle is None:
            return
        if step:
            handle.request(step=True)
        else:
            fraction = SPEEDS[self.config.speed]
            T = self.horizon
            target = T if fraction is None else self.t + max(1, int(fraction * T))
            if self.engine == "dask":
                # fair share: with more runs computing than workers, shorter slices keep every
                # session's frames coming (each worker serves its runs' frames in turn)
                computing = max(1, activity()["computing"] + 1)
                seconds = max(0.01, seconds * min(1.0, self._workers / computing))
            handle.request(target=min(target, T), seconds=seconds)
        self._asked_at = time.perf_counter()

    def _collect(self) -> bool:
        """Show the frame that came back, if any; a failed run becomes a message."""
        handle = self.handle
        if handle is None:
            return False
        try:
            frame = handle.poll()
        except Exception as exc:  # RunLost (worker died) or a user error raised by the run
            self._drop()
            self.param.update(status="error", error=_message(exc), queued=False)
            self.frame += 1
            return True
        if frame is None:
            return False
        self._shown_at = time.perf_counter()
        # only what may have changed goes through param (its per-value bookkeeping was
        # ~0.3 ms of every frame on a served class; unchanged values trigger nothing anyway)
        changes: dict[str, Any] = {"t": frame.t, "result": frame.result}
        if frame.done and self.status != "done":
            changes["status"] = "done"
        if self.queued:
            changes["queued"] = False
        self.param.update(**changes)
        self.frame += 1
        if frame.done and self.engine == "dask":
            # a finished run needs nothing more from its worker: give the memory back now
            # (the result is here; Step or Run starts a new run)
            self.handle = None
            handle.close()
        return True


def default_engine() -> str:
    """``dask`` when ``python -m dashboard serve`` chose it for this server, else
    ``in-process`` (``panel serve dashboard``, notebooks, tests)."""
    return "dask" if os.environ.get(ENGINE_ENV) == "dask" else "in-process"


def _message(exc: BaseException) -> str:
    """A one-sentence, traceback-free description of a failed run."""
    kind = "" if isinstance(exc, (ValueError, RunLost)) else f" ({type(exc).__name__})"
    return f"The run stopped: {_sentence(str(exc) or type(exc).__name__)[:-1]}{kind}."
