"""Sweeps: a grid of problem settings x algorithm constants x algorithms, R repetitions each,
run on Dask (dask.distributed), saved as they complete and resumable.

A sweep point is one combination of the grid's values (problem fields such as ``d`` or
``horizon``, and algorithm constants such as ``AROQ-CMAB:C``).  Each point is what
:func:`~dashboard.simulation.runner.simulate` would run with those settings and the sweep's
seed, and its row equals simulate's output number for number (wall times aside).

The work is split into tasks by (problem setting, algorithm with its constants, block of
repetition ids).  Counter-based random numbers make repetition ``r``'s numbers independent of
the split, so the tasks' pieces merge (:func:`~dashboard.simulation.results.merge_results`)
into the same rows whatever the block size, the number of workers or the order of completion.
An algorithm whose constants are not swept at a point is run once and shared by the points
that differ only in other algorithms' constants.

The definition is :mod:`.sweep_grid` (:func:`make_sweep`), the rows :mod:`.sweep_rows`; this
module runs the tasks and re-exports both, so every name stays importable from here.

Where the tasks run (:func:`get_client`): ``scheduler="tcp://host:8786"`` (or the environment
variable ``BANDIT_DASHBOARD_SCHEDULER``) uses a running cluster; otherwise a
``LocalCluster`` (one single-threaded worker process per core) is started lazily on first use
and shared; ``scheduler="inprocess"`` (the default for tiny sweeps) runs them in this process.

A sweep shares the cluster with a class's live runs.  Its tasks go at a lower Dask priority
(:data:`SWEEP_PRIORITY`) than a live run's, and a dashboard sweep (``share=True``) keeps at
most :func:`fair_share` tasks on the cluster (a worker thread stays free for live runs) in
tasks cut to about :data:`SHARE_TASK_SECONDS`.  Cancel stops the queued tasks (Dask's cancel)
and the running ones: a task on a worker advances its run in slices of
:data:`STOP_CHECK_SECONDS` and checks between them the sweep's stop flag (a
``distributed.Event``), set as soon as the sweep is cancelled or fails.  Slicing never changes
a number (:meth:`~.runner.Simulation.advance_for`).
"""

from __future__ import annotations

import math
import os
import threading
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ..algorithms.base import validate_int
from . import shared_batch
from .budget import estimate_run
from .engine import (
    ENV_SCHEDULER,
    cancelled_by,
    check_address,
    close_clients,
    get_client,
    run_on_dask,
)
from .records import result_from_record
from .shared_batch import make_simulation, merge_plan, run_alone
from .specs import make_spec
from .store import ExperimentWriter
from .sweep_grid import (
    GRID_FIELDS,
    MAX_MEMORY,
    MAX_POINTS,
    Sweep,
    SweepEstimate,
    check_sweep_work,
    estimate_sweep,
    make_sweep,
)
from .sweep_rows import RowCollector, SweepProgress, SweepResult, SweepRow, load_sweep

__all__ = [
    "ENV_SCHEDULER",
    "GRID_FIELDS",
    "MAX_MEMORY",
    "MAX_POINTS",
    "SHARE_TASK_SECONDS",
    "STOP_CHECK_SECONDS",
    "SWEEP_PRIORITY",
    "TINY_WORK",
    "Sweep",
    "SweepEstimate",
    "SweepProgress",
    "SweepResult",
    "SweepRow",
    "check_sweep_work",
    "close_clients",
    "estimate_sweep",
    "fair_share",
    "get_client",
    "load_sweep",
    "make_simulation",
    "make_sweep",
    "run_sweep",
    "run_sweeps",
    "run_task",
    "run_tasks",
    "task_plan",
]

#: Sweeps with at most this many rounds x repetitions in all run in-process by default.
TINY_WORK = 200_000
#: Dask priority of a sweep's tasks: below a live run's (Dask's default 0), so that whenever a
#: worker thread frees up, a student's new live run starts before the sweep's next task.
SWEEP_PRIORITY = -10
#: A sharing sweep's tasks are cut by repetitions to about this many estimated seconds ...
SHARE_TASK_SECONDS = 30.0
#: ... but not below this many repetitions (where batched engines reach their full speed).
MIN_SHARE_BLOCK = 16
#: Seconds of simulation a task on a worker does between two checks of its stop flag.
STOP_CHECK_SECONDS = 0.5
#: Seconds a set stop flag stays on the scheduler (then it is cleared: every task that could
#: read it has stopped long before).
STOP_FLAG_SECONDS = 120.0

_share_lock = threading.Lock()
_sharing = {"sweeps": 0}


# ------------------------------------------------------------------------------ one task
def _stop_flag(name: str) -> Callable[[], bool]:
    """On a worker: whether the sweep's stop flag (a ``distributed.Event`` named ``name``)
    is set; a scheduler that cannot be reached counts as stopped (nobody waits for the
    result)."""
    from distributed import Event

    event = Event(name)

    def stopped() -> bool:
        try:
            return bool(event.is_set())
        except Exception:
            return True

    return stopped


def run_task(
    unit: dict[str, Any], reps: Sequence[int], stop: str | None = None
) -> dict[str, Any] | None:
    """Run one task: one algorithm at one setting, the repetition ids ``reps``.

    A plain top-level function (Dask pickles it by reference): returns the piece's record.
    ``stop``: the name of the sweep's stop flag (a ``distributed.Event``, on a worker): the
    run advances in slices of :data:`STOP_CHECK_SECONDS` and returns None as soon as the flag
    is set (the sweep was cancelled: nobody reads the result), the same record otherwise.
    """
    if stop is None:
        return run_alone(unit, reps)
    return run_alone(unit, reps, stop=_stop_flag(stop), slice_seconds=STOP_CHECK_SECONDS)


def run_tasks(units: Sequence[dict[str, Any]], reps: Sequence[int]) -> list[dict[str, Any]]:
    """Run several tasks on the same repetition ids, one record each: one task is
    :func:`run_task`; several that differ only in the shift share one batched engine
    (:func:`~.shared_batch.run_shared_task`, the same numbers)."""
    if len(units) == 1:
        return [run_task(units[0], reps)]
    return shared_batch.run_shared_task(units, reps)


def _blocks(reps: list[int], size: int) -> list[list[int]]:
    return [reps[i : i + size] for i in range(0, len(reps), size)]


def _default_block(sweep: Sweep, n_units: int, workers: int) -> int:
    """Whole repetition batches when there are enough units to keep the workers busy, else
    split the repetitions so that there are about two tasks per worker."""
    if n_units >= 2 * workers:
        return sweep.runs
    per_unit = math.ceil(2 * workers / max(n_units, 1))
    return max(1, math.ceil(sweep.runs / per_unit))


def _task_seconds(unit: dict[str, Any], n_reps: int) -> float:
    """Rough seconds of a task (:mod:`.budget`'s cost model), to start the longest first."""
    from ..algorithms.registry import algorithm_info

    spec = make_spec(unit["problem"], **{k: v for k, v in unit["spec"].items() if k != "problem"})
    info = algorithm_info(unit["algorithm"], spec.problem)
    params = {info.name.lower(): dict(unit["params"] or {})}
    return estimate_run(spec, [info], unit["horizon"], n_reps, params).seconds


def _use_client(
    work: int, scheduler: str | None, workers: int | None, client: Any
) -> tuple[bool, Any]:
    """``(in_process, client)`` for ``work`` rounds x repetitions (see :func:`run_sweep`)."""
    if scheduler not in (None, "inprocess"):
        check_address(scheduler)
    inprocess = client is None and (
        scheduler == "inprocess"
        or (
            scheduler is None
            and workers is None
            and not os.environ.get(ENV_SCHEDULER)
            and work <= TINY_WORK
        )
    )
    if not inprocess and client is None and work > 0:
        client = get_client(scheduler, workers)
    return inprocess, client


def worker_threads(client: Any) -> int:
    """The cluster's worker threads in all (at least 1)."""
    workers = client.scheduler_info().get("workers", {})
    return max(1, sum(int(w.get("nthreads", 1)) for w in workers.values()))


def fair_share(threads: int, sweeps: int | None = None) -> int:
    """Tasks one sharing sweep may have on a cluster of ``threads`` worker threads at a time:
    all threads but one (kept free for the class's live runs), split among the ``sweeps``
    sharing sweeps of this process (default: those running now), at least one."""
    n = _sharing["sweeps"] if sweeps is None else int(sweeps)
    return max(1, (int(threads) - 1) // max(1, n))


def _share_block(unit: dict[str, Any], size: int) -> int:
    """``size`` halved while a task of that many repetitions is estimated above
    :data:`SHARE_TASK_SECONDS`, not below :data:`MIN_SHARE_BLOCK` (nor below 1)."""
    while size > MIN_SHARE_BLOCK and _task_seconds(unit, size) > SHARE_TASK_SECONDS:
        size = max(MIN_SHARE_BLOCK, math.ceil(size / 2))
    return size


def _raise_stop(client: Any, name: str) -> None:
    """Set the sweep's stop flag (its running tasks return within a slice), and clear it
    :data:`STOP_FLAG_SECONDS` later so that the scheduler forgets it."""
    try:
        from distributed import Event

        event = Event(name, client=client)
        event.set()
    except Exception:  # the cluster is gone: so are its tasks
        return

    def clear() -> None:
        try:
            event.clear()
        except Exception:
            pass

    timer = threading.Timer(STOP_FLAG_SECONDS, clear)
    timer.daemon = True
    timer.start()


def task_plan(
    sweeps: Sequence[Sweep], n_workers: int, prio: Sequence[int]
) -> list[tuple[list[dict[str, Any]], list[int], list[tuple[int, str]]]]:
    """The tasks :func:`run_sweeps` submits for ``sweeps`` on ``n_workers`` workers (``prio``:
    one group per sweep), in submission order: per task its units (several: one batched
    engine, :func:`run_tasks`), its repetition ids and its units' tags ``(sweep index, unit
    key)``.  ``benchmarks/bench_reproduce_tasks.py`` times the same plan task by task."""
    n_units = sum(len(sw.units) for sw in sweeps)
    tasks = []
    for i, sw in enumerate(sweeps):
        size = _default_block(sw, n_units, n_workers)
        for u, unit in sw.units.items():
            for reps in _blocks(list(range(sw.runs)), size):
                tasks.append((_task_seconds(unit, len(reps)), i, u, reps))
    # stable: ties keep the sweeps' order
    tasks.sort(key=lambda task: (prio[task[1]], -task[0]))
    # tasks that differ only in the shift or a per-repetition constant (Appendix I's c) run
    # as one batch where that does not make a task longer than the pool's ideal time per
    # worker, a long one cut by repetitions (shared_batch.py); one task: run_task
    plan = merge_plan(
        [(sec, prio[i], sweeps[i].units[u], reps) for sec, i, u, reps in tasks], n_workers
    )
    return [
        (
            [sweeps[tasks[k][1]].units[tasks[k][2]] for k in ks],
            reps,
            [(tasks[k][1], tasks[k][2]) for k in ks],
        )
        for ks, reps in plan
    ]


def run_sweeps(
    sweeps: Sequence[Sweep],
    *,
    scheduler: str | None = None,
    workers: int | None = None,
    client: Any = None,
    groups: Sequence[int] | None = None,
    on_sweep: Callable[[int, SweepResult], None] | None = None,
) -> list[SweepResult]:
    """Run several sweeps' tasks as one pool; return each sweep's result, as
    :func:`run_sweep` would.

    Run one after the other, each sweep ends on its longest task while the other workers idle
    (a figure's panels: SP-TS at d = 20 dominates its panel).  Here all tasks go to the
    cluster together, longest first by :mod:`.budget`'s estimate, with the repetition blocks
    :func:`run_sweep` would choose for that many units in all.  The numbers are those of
    separate runs (counter-based randomness: any split and order give the same rows).
    Arguments as :func:`run_sweep` (no experiment file, progress or cancel), and

    groups : sequence of int, optional
        One priority per sweep: the tasks of a lower group are submitted first (longest
        first within a group), so its sweeps complete early (``reproduce all``: a figure is
        written while the workers run the next ones).  Default: one group.
    on_sweep : callable, optional
        ``on_sweep(i, result)`` in this thread as soon as every task of sweep ``i`` has
        completed (the other sweeps' tasks keep running on the cluster meanwhile).
    """
    sweeps = list(sweeps)
    collectors = [RowCollector(sw) for sw in sweeps]
    work = sum(sw.work() for sw in sweeps)
    inprocess, client = _use_client(work, scheduler, workers, client)
    n_workers = 1
    if client is not None:
        n_workers = max(1, len(client.scheduler_info().get("workers", {})))
    prio = [0] * len(sweeps) if groups is None else [int(g) for g in groups]
    if len(prio) != len(sweeps):
        raise ValueError(f"groups has {len(prio)} entries for {len(sweeps)} sweeps")
    merged = task_plan(sweeps, n_workers, prio)
    # one record per unit of each merged task (a task cut by repetitions: one per piece)
    left = [0] * len(sweeps)
    for _, _, tags in merged:
        for i, _ in tags:
            left[i] += 1
    tasks_run = list(left)

    def result(i: int) -> SweepResult:
        rows = collectors[i].rows
        return SweepResult(
            sweeps[i],
            [rows[k] for k in sorted(rows)],
            tasks_run=tasks_run[i],
        )

    def finish(tag: tuple[int, str], rec: dict[str, Any]) -> None:
        collectors[tag[0]].add(tag[1], result_from_record(rec))
        left[tag[0]] -= 1
        if left[tag[0]] == 0 and on_sweep is not None:
            on_sweep(tag[0], result(tag[0]))

    def finish_all(tags: list[tuple[int, str]], recs: list[dict[str, Any]]) -> None:
        for tag, rec in zip(tags, recs):
            finish(tag, rec)

    if on_sweep is not None:  # sweeps without tasks are complete from the start
        for i in sorted(range(len(sweeps)), key=lambda i: prio[i]):
            if left[i] == 0:
                on_sweep(i, result(i))
    if inprocess:
        for units, reps, tags in merged:
            finish_all(tags, run_tasks(units, reps))  # (one task: run_task)
    elif merged:
        jobs: list[tuple[Callable[..., Any], tuple[Any, ...], Any]] = []
        for units, reps, tags in merged:
            if len(units) == 1:
                jobs.append((run_task, (units[0], reps), tags[0]))
            else:
                jobs.append((run_tasks, (units, reps), tags))
        # one task per worker thread at a time, the next longest as soon as one is free
        run_on_dask(
            client,
            jobs,
            lambda tag, rec: finish_all(tag, rec) if isinstance(tag, list) else finish(tag, rec),
            in_flight=lambda: worker_threads(client),
        )
    return [result(i) for i in range(len(sweeps))]


def _run_shared(
    client: Any,
    sweep: Sweep,
    tasks: list[tuple[str, list[int]]],
    finish: Callable[[str, dict[str, Any]], None],
    cancel: Any,
    retries: int,
    share: bool,
    priority: int,
) -> bool:
    """:func:`run_sweep`'s tasks on Dask, with its stop flag and (``share``) its fair share;
    True if cancelled."""
    stop = f"bandit-sweep-stop-{uuid.uuid4().hex}"
    jobs = [(run_task, (sweep.units[u], reps, stop), u) for u, reps in tasks]
    in_flight = (lambda: fair_share(worker_threads(client))) if share else None
    if share:
        with _share_lock:
            _sharing["sweeps"] += 1
    try:
        cancelled = run_on_dask(
            client, jobs, finish, cancel, retries, in_flight=in_flight, priority=priority
        )
    except BaseException:
        _raise_stop(client, stop)  # a failed task or Ctrl-C: the running ones stop too
        raise
    finally:
        if share:
            with _share_lock:
                _sharing["sweeps"] -= 1
    if cancelled:
        _raise_stop(client, stop)
    return cancelled


def run_sweep(
    sweep: Sweep,
    *,
    scheduler: str | None = None,
    workers: int | None = None,
    client: Any = None,
    block: int | None = None,
    out: str | Path | None = None,
    progress: Callable[[SweepProgress], None] | None = None,
    cancel: Any = None,
    retries: int = 2,
    max_work: float | None = None,
    share: bool = False,
    priority: int = SWEEP_PRIORITY,
) -> SweepResult:
    """Run a sweep; return its rows in grid order.

    Parameters
    ----------
    scheduler : ``"tcp://host:port"`` of a running Dask scheduler, ``"inprocess"``, or None
        (``$BANDIT_DASHBOARD_SCHEDULER`` if set, else in-process for tiny sweeps and a shared
        local cluster otherwise).
    workers : size of the local cluster (default: one per core); giving it uses the cluster
        even for a tiny sweep.
    client : an existing ``distributed.Client`` to use instead.
    block : repetitions per task (default: whole batches, or smaller to feed the workers).
    out : experiment file: finished pieces are appended as they complete; if it exists and
        was made by the same sweep, its pieces are reused and only missing ones run.
    progress : called after each finished task with a :class:`SweepProgress`.
    cancel : a ``threading.Event`` (or a callable returning True) to stop: pending tasks
        are cancelled, running ones stop within :data:`STOP_CHECK_SECONDS` of simulation,
        finished pieces stay in ``out``, and the result has ``cancelled``.
    retries : Dask retries of a failed task (a lost worker's tasks are rescheduled anyway).
    max_work : refuse (ValueError, before any work) a sweep estimated above this many
        seconds of simulation in all (:func:`check_sweep_work`); None: no limit.
    share : share the cluster with a class: at most :func:`fair_share` tasks at a time, each
        cut to about :data:`SHARE_TASK_SECONDS` (unless ``block`` is given).
    priority : Dask priority of the tasks (default :data:`SWEEP_PRIORITY`, below live runs).
    """
    if scheduler not in (None, "inprocess"):
        check_address(scheduler)
    if max_work is not None:
        check_sweep_work(
            sweep, max_work, override="max_work=None (CLI: --max-work SECONDS or --force)"
        )
    rows = RowCollector(sweep)
    writer: ExperimentWriter | None = None
    if out is not None:
        if Path(out).exists() and Path(out).stat().st_size > 0:
            writer, pieces = ExperimentWriter.resume(out, "sweep", sweep.definition())
            for p in pieces:
                rows.add(p["piece"]["unit"], result_from_record(p["result"]))
        else:
            writer = ExperimentWriter.create(out, "sweep", sweep.definition())
    skipped = sum(len(v) for v in rows.pieces.values())
    todo_units = [u for u in sweep.units if not rows.complete(u)]
    inprocess, client = _use_client(sweep.work() if todo_units else 0, scheduler, workers, client)
    n_workers = 1
    if client is not None:
        n_workers = max(1, len(client.scheduler_info().get("workers", {})))
    size = validate_int("block", block, 1) if block is not None else None
    sizes = {u: size or _default_block(sweep, len(todo_units), n_workers) for u in todo_units}
    if share and size is None:
        sizes = {u: _share_block(sweep.units[u], sizes[u]) for u in todo_units}
    tasks = [(u, b) for u in todo_units for b in _blocks(rows.missing(u), sizes[u])]
    total = len(tasks)
    state = {"done": 0}
    cancelled = False

    def finish(ukey: str, rec: dict[str, Any]) -> None:
        res = result_from_record(rec)
        if writer is not None:
            writer.append({"unit": ukey, "reps": res.reps}, rec)
        new = rows.add(ukey, res)
        state["done"] += 1
        if progress is not None:
            progress(SweepProgress(state["done"], total, len(rows.rows), len(sweep.rows), new))

    try:
        if progress is not None:
            done = [rows.rows[i] for i in sorted(rows.rows)]
            progress(SweepProgress(0, total, len(rows.rows), len(sweep.rows), done))
        if inprocess:
            for ukey, reps in tasks:
                if cancelled_by(cancel):
                    cancelled = True
                    break
                finish(ukey, run_task(sweep.units[ukey], reps))
        elif tasks:
            cancelled = _run_shared(client, sweep, tasks, finish, cancel, retries, share, priority)
    finally:
        if writer is not None:
            writer.close()
    return SweepResult(
        sweep,
        [rows.rows[i] for i in sorted(rows.rows)],
        cancelled=cancelled,
        tasks_run=state["done"],
        tasks_skipped=skipped,
    )
