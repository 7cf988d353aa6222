"""A live run that can execute in-process or on a Dask worker, answering without blocking.

The dashboard streams a run as *frames*: advance for a slice of wall time, then draw.  When a
whole class is served from one process, that simulation work must leave the server's event loop
(every session's run there blocks every other session).  A run is therefore reached through a
small handle with a non-blocking protocol:

* :meth:`RunHandle.request` asks for the next frame (advance towards ``target`` for about
  ``seconds``, or to the next decision point with ``step=True``) and returns at once;
* :meth:`RunHandle.poll` returns the finished :class:`Frame` (or ``None`` while the work is
  still running or queued), and raises :class:`RunLost` if the worker holding the run died;
* :meth:`RunHandle.close` forgets the run; on Dask the worker drops its state.

:class:`LocalRun` does the work in the caller's thread (notebooks, tests, ``make serve`` for one
user); :class:`DaskRun` keeps the :class:`~dashboard.simulation.runner.Simulation` inside a Dask
*actor* (a stateful object living on one worker) and polls its futures, so the server only
renders.  Both run the very same :class:`SimulationActor` code, and all randomness is counter
based, so the numbers are identical to :func:`~dashboard.simulation.runner.simulate`.
"""

from __future__ import annotations

import pickle
import time
import uuid
import weakref
from dataclasses import dataclass, field, replace
from typing import Any

from .frame_delta import DeltaJoiner, DeltaTrimmer, ResultDelta
from .results import SimulationResult
from .runner import Simulation
from .specs import ProblemSpec

__all__ = [
    "DaskRun",
    "Frame",
    "LocalRun",
    "RunHandle",
    "RunLost",
    "RunRequest",
    "SimulationActor",
    "activity",
    "pack_frame",
    "unpack_frame",
]

#: Every open run handle of this process (the instructor's view counts them).
_OPEN: weakref.WeakSet[RunHandle] = weakref.WeakSet()


class RunLost(RuntimeError):
    """The worker holding a run stopped (killed, out of memory, cluster gone)."""


@dataclass(frozen=True)
class RunRequest:
    """Everything needed to build a run (plain, picklable data)."""

    spec: ProblemSpec
    algorithms: tuple[str, ...]
    horizon: int
    runs: int = 1
    seed: int = 0
    params: dict[str, dict[str, Any]] = field(default_factory=dict)


@dataclass
class Frame:
    """One streamed snapshot of a run.

    ``result`` is the :class:`SimulationResult` up to round ``t`` (it carries the shift trace
    and the semiparametric instance the plots need; between a Dask worker and the server, a
    :class:`~dashboard.simulation.frame_delta.ResultDelta` that the handle joins back into
    one); ``busy_seconds`` is the wall time the
    worker spent simulating this frame; ``run_id`` names the actor that made it (Dask
    re-creates a lost actor from scratch on another worker: a new id means the run was lost).
    """

    t: int
    horizon: int
    done: bool
    result: SimulationResult | ResultDelta
    busy_seconds: float
    run_id: str = ""


class SimulationActor:
    """A :class:`Simulation` with frame-sized methods; lives in-process or on a Dask worker.

    ``delta=True`` (a Dask worker): each frame's result carries only what is new since the
    frame before (:mod:`~dashboard.simulation.frame_delta`); frames must then be consumed in
    order, as :class:`DaskRun` does.  Such a frame also leaves the worker as one pickled
    ``bytes`` (:func:`pack_frame`): Dask would otherwise send each of its ~150 small arrays
    (the events' data) as a separate message frame, and the web server's Dask thread, which
    shares the interpreter lock with the pages' event loop, read and rebuilt them one by one.
    """

    def __init__(self, request: RunRequest, delta: bool = False) -> None:
        self.sim: Simulation | None = Simulation(
            request.spec,
            list(request.algorithms),
            request.horizon,
            runs=request.runs,
            seed=request.seed,
            params={k: dict(v) for k, v in request.params.items()},
        )
        self.run_id = uuid.uuid4().hex
        self._trimmer = DeltaTrimmer() if delta else None

    def _require(self) -> Simulation:
        if self.sim is None:
            raise ValueError("this run was closed; start a new one")
        return self.sim

    def advance(self, target: int, seconds: float) -> Frame | bytes:
        """Advance towards round ``target`` for about ``seconds`` (at least one chunk; the
        pacing is :meth:`Simulation.advance_for`'s)."""
        sim = self._require()
        start = time.perf_counter()
        sim.advance_for(seconds, until=target)
        return self._frame(time.perf_counter() - start)

    def step(self) -> Frame | bytes:
        """Advance to the next decision point (see :meth:`Simulation.step`)."""
        sim = self._require()
        start = time.perf_counter()
        sim.step()
        return self._frame(time.perf_counter() - start)

    def snapshot(self) -> Frame | bytes:
        """The current frame without advancing."""
        return self._frame(0.0)

    def close(self) -> None:
        """Release the simulation (idempotent)."""
        sim, self.sim = self.sim, None
        if sim is not None:
            sim.close()

    def _frame(self, busy: float) -> Frame | bytes:
        sim = self._require()
        if sim.done:
            sim.close()  # the oracle executor is not needed any more
        trimmer = self._trimmer
        if trimmer is None:
            result: SimulationResult | ResultDelta = sim.result()
        else:  # only the grid rounds not sent yet (frame_delta.py)
            since = min(trimmer.grid_sent, sim.grid_recorded)
            result = trimmer.trim(sim.result(since=since), since=since)
        frame = Frame(
            t=sim.t,
            horizon=sim.horizon,
            done=sim.done,
            result=result,
            busy_seconds=busy,
            run_id=self.run_id,
        )
        return frame if self._trimmer is None else pack_frame(frame)


def pack_frame(frame: Frame) -> bytes:
    """``frame`` as one ``bytes`` (its arrays in-band) for the way from a worker to the server;
    :func:`unpack_frame` gives back an equal frame, array for array."""
    return pickle.dumps(frame, protocol=pickle.HIGHEST_PROTOCOL)


def unpack_frame(packed: Frame | bytes) -> Frame:
    """The frame :func:`pack_frame` packed (a frame that is not packed, as it is)."""
    if isinstance(packed, bytes):
        frame = pickle.loads(packed)
        if not isinstance(frame, Frame):
            raise TypeError(f"a packed frame holds a Frame, not {type(frame).__name__}")
        return frame
    return packed


def activity() -> dict[str, int]:
    """Open runs of this process: ``{"open": n, "computing": k}`` (``computing``: a frame has
    been requested and not yet returned, i.e. running on a worker or queued for one)."""
    handles = list(_OPEN)
    return {"open": len(handles), "computing": sum(1 for h in handles if h.busy)}


class RunHandle:
    """Non-blocking access to one run (see the module docstring)."""

    #: Whether a requested frame has not been collected by :meth:`poll` yet.
    busy: bool = False

    @property
    def ready(self) -> bool:
        """Whether :meth:`poll` would return a frame now (computed, not yet collected)."""
        return False

    @property
    def waiting_to_launch(self) -> bool:
        """Whether a requested frame waits to be sent to its worker (the next :meth:`poll`
        sends it once the run's worker state exists)."""
        return False

    def _register(self) -> None:
        _OPEN.add(self)

    def request(self, target: int = 0, seconds: float = 0.05, step: bool = False) -> None:
        """Ask for the next frame; returns at once.  Ignored while :attr:`busy`."""
        raise NotImplementedError

    def poll(self) -> Frame | None:
        """The requested frame once it is ready (each frame is returned once), else ``None``.

        Raises :class:`RunLost` if the run's worker died, ``ValueError`` if the run failed
        with a user error (e.g. a policy refused its constants).
        """
        raise NotImplementedError

    def close(self) -> None:
        """Forget the run and free its state (idempotent)."""
        raise NotImplementedError


class LocalRun(RunHandle):
    """In-process run: :meth:`request` does the work before it returns."""

    def __init__(self, request: RunRequest) -> None:
        self._actor: SimulationActor | None = SimulationActor(request)
        self._ready: Frame | None = self._actor.snapshot()
        self._error: Exception | None = None
        self._register()

    @property
    def simulation(self) -> Simulation | None:
        """The in-process :class:`Simulation` (``None`` once closed)."""
        return None if self._actor is None else self._actor.sim

    def request(self, target: int = 0, seconds: float = 0.05, step: bool = False) -> None:
        if self._actor is None:
            raise ValueError("this run was closed; start a new one")
        try:
            self._ready = self._actor.step() if step else self._actor.advance(target, seconds)
        except Exception as exc:  # reported by poll, as a Dask run's failure would be
            self._error = exc

    @property
    def ready(self) -> bool:
        return self._ready is not None or self._error is not None

    def poll(self) -> Frame | None:
        error, self._error = self._error, None
        if error is not None:
            self.close()
            raise error
        frame, self._ready = self._ready, None
        return frame

    def close(self) -> None:
        _OPEN.discard(self)
        actor, self._actor, self._ready = self._actor, None, None
        if actor is not None:
            actor.close()


class DaskRun(RunHandle):
    """A run kept in a Dask actor on one worker; every method returns at once.

    Parameters
    ----------
    client : distributed.Client
        A synchronous client (e.g. :func:`dashboard.simulation.engine.get_client`).
    request : RunRequest
        What to run.  The first frame (round 0) is requested at once.
    """

    def __init__(self, client: Any, request: RunRequest) -> None:
        from .plugin_sharing import ensure_shared

        ensure_shared(client)  # plug-in algorithms and shifts must exist on the workers too
        self._client = client
        self._actor_future: Any = client.submit(
            SimulationActor, request, delta=True, actor=True, pure=False
        )
        self._joiner = DeltaJoiner()
        self._actor: Any = None
        self._pending: Any = None  # ActorFuture of the frame being computed
        self._closed = False
        self._queued: tuple[str, tuple[Any, ...]] | None = ("snapshot", ())
        self._run_id: str | None = None
        self.busy = True
        self._register()

    def _resolve_actor(self) -> bool:
        if self._actor is not None:
            return True
        fut = self._actor_future
        if not fut.done():
            return False
        if fut.status == "error":
            exc = fut.exception()
            self._fail()
            if isinstance(exc, ValueError):
                raise ValueError(str(exc)) from None
            raise RunLost(_lost_message(exc)) from None
        if fut.status != "finished":
            self._fail()
            raise RunLost("the worker holding this run stopped; press Run to start again")
        proxy = fut.result()
        # Bind the proxy to *this* client: the shared client is not the process default, and a
        # proxy unpickled without a current client cannot call its actor.
        from distributed.actor import Actor

        with self._client.as_current():
            self._actor = Actor(SimulationActor, proxy._address, fut.key)
        return True

    def _fail(self) -> None:
        _OPEN.discard(self)
        self._actor = self._pending = self._queued = None
        self.busy = False
        self._closed = True

    def request(self, target: int = 0, seconds: float = 0.05, step: bool = False) -> None:
        if self._closed:
            raise ValueError("this run was closed; start a new one")
        if self.busy:
            return
        self._queued = ("step", ()) if step else ("advance", (int(target), float(seconds)))
        self.busy = True
        self._launch()

    def _launch(self) -> None:
        if self._queued is None or self._pending is not None or not self._resolve_actor():
            return
        name, args = self._queued
        self._queued = None
        self._pending = getattr(self._actor, name)(*args)

    @property
    def ready(self) -> bool:
        pending = self._pending
        return pending is not None and pending.done()

    @property
    def waiting_to_launch(self) -> bool:
        return self._queued is not None and self._pending is None

    def poll(self) -> Frame | None:
        if self._closed:
            return None
        self._launch()
        pending = self._pending
        if pending is None or not pending.done():
            return None
        self._pending = None
        self.busy = False
        try:
            frame = unpack_frame(_finished_result(pending))
        except ValueError:
            self._fail()
            raise
        except Exception as exc:  # the actor's worker is gone, or the run crashed there
            self._fail()
            raise RunLost(_lost_message(exc)) from None
        if self._run_id is None:
            self._run_id = frame.run_id
        elif frame.run_id != self._run_id:  # Dask rebuilt the actor after its worker died
            self.close()
            raise RunLost(_lost_message(None))
        if isinstance(frame.result, ResultDelta):
            frame = replace(frame, result=self._joiner.join(frame.result))
        return frame

    def close(self) -> None:
        _OPEN.discard(self)
        if self._closed and self._actor_future is None:
            return
        self._closed = True
        actor, fut = self._actor, self._actor_future
        self._actor = self._pending = self._queued = self._actor_future = None
        self.busy = False
        # The actor proxy holds its own Future of the actor's key, and every method call leaves
        # a reference cycle through it (distributed's call closures), so it may live until the
        # garbage collector runs: release that Future now (Future.release is idempotent).
        # tests/simulation/test_remote.py::test_actor_proxy_private_future_canary guards the
        # private attribute.
        proxy_future = getattr(actor, "_future", None)
        if proxy_future is not None:
            try:
                proxy_future.release()
            except Exception:
                pass
        del actor
        if fut is not None:
            try:
                fut.release()  # the scheduler forgets the actor and the worker drops it
            except Exception:
                pass


def _finished_result(future: Any) -> Any:
    """The value (or the exception) of a *finished* actor call, read on this thread.

    ``ActorFuture.result()`` always goes through the Dask client's own event-loop thread and
    blocks the caller on a condition until that thread gets to it, even when the call has
    long finished.  On a served class the caller is the web server's event loop, and the
    client's thread is busy receiving 30 sessions' frames: every frame then stalled the loop
    (``distributed.utils.sync`` was 5% of the loop's time at 30 students, waiting rather than
    working).  A finished ``ActorFuture`` holds its outcome (``_out``, an ``_OK`` or an
    ``_Error`` with ``unwrap()``; private, guarded by
    ``tests/ui/test_canaries.py::test_a_finished_actor_future_holds_its_outcome``), so read it
    directly; any other future falls back to ``result()``.
    """
    out = getattr(future, "_out", None)
    if out is not None and hasattr(out, "unwrap"):
        return out.unwrap()
    return future.result()


def _lost_message(exc: BaseException | None) -> str:
    why = f" ({type(exc).__name__})" if exc is not None else ""
    return f"the worker running this simulation stopped{why}; press Run to start again"
