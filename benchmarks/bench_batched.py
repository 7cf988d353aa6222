"""Benchmark: batched per-round semiparametric baselines vs sequential single runs.

For BOSE, SP-TS and LinUCB on the Appendix I instances (gap ``Delta* = 1/2``, sigma = 1) at
``d = 5, K = 10`` and ``d = 20, K = 30``, time

* **sequential** -- ``R = 16`` single-repetition runs one after the other
  (``cls().run(env_r, T)`` for ``r = 0..15``), what the runner did before;
* **batched** -- one ``Batched<cls>().run([env_0, ..., env_15], T)``,

and report the throughput ratio ``sequential / batched`` (target >= 5) together with a check
that both give exactly the same cumulative regrets.  The shift is the oblivious log-alternating
one of Appendix I; the full run also measures the adaptive (adversarial) shift, where every
repetition's environment is asked for ``nu_t`` each round, so the ratio is lower.  Each timing
is the best of ``repeats`` runs (1 with ``--quick``, 2 otherwise).

SP-TS draws ``(n_mc + 1) d`` standard normals per round and repetition (2020 at d = 20); the
counter-based uniforms cost ~5 ns each, a floor that batching cannot remove.  Their inverse
normal CDF (``ndtri``, ~16 ns) is now paid only where needed: the draws are scored with table
normals and their arg-maxima certified (``policies/certified_argmax.py``).  ``sampler`` rows
time that engine against the exact computation for every repetition (``certify = False``, the
former sampler: ``ndtri`` of every uniform and the exact products), both batched over R = 16,
interleaved, best of ``repeats``; the numbers must be identical, and ``recomputed`` is the
fraction of repetition-rounds the certificate sent to the exact path.

Issue 9 rows (each with its own flag, side by side in one process unless said otherwise):

* ``--rng``: the counter-based uniforms at the sizes SP-TS and BOSE draw them (a window of
  ~60k values), the former implementation (a copy below: fresh temporaries for every step)
  against :func:`~dashboard.algorithms.randomness.uniform` (in place, block by block) and
  :func:`~dashboard.algorithms.randomness.uniform_run` (consecutive counters, cached counter
  products); identical bits required;
* ``--malloc``: SP-TS at d = 20, K = 30, R = 10 in fresh subprocesses under Dask's default
  worker setting ``MALLOC_TRIM_THRESHOLD_=65536`` and under the embedded cluster's
  :data:`~dashboard.simulation.cluster.MALLOC_ENV`: CPU and system seconds, page faults,
  identical regrets;
* ``--pool``: ``semi-regret``'s four panels (T = ``--pool-horizon``, R = 10, no tuning) on one
  2-worker ``LocalCluster``, panel after panel (:func:`run_panel` each) against all panels'
  tasks as one pool (:func:`run_panels`), wall seconds, same numbers required.

* ``--pool-all``: ``reproduce all --scale paper --tune no`` at ``--pool-horizon`` rounds on one
  2-worker ``LocalCluster``: figure after figure (each run, then written) against all
  figures' tasks as one pool, each figure written as soon as it completes, wall seconds,
  identical CSVs required;
* ``--reproduce``: ``semi-regret``'s SP-TS tasks (d = 20, K = 30 and d = 5, K = 10, R = 10,
  ``--reproduce-horizon`` rounds) with the former kernels (``former_reproduce.py``) and the
  current ones side by side in one process: CPU seconds, ratio, identical records required.

* ``--lockstep``: SP-TS's engine before this round's per-round work (``former_reproduce.py``)
  and the current one on the same environments (d = 20, K = 30 and d = 5, K = 10, R = 10,
  ``--reproduce-horizon`` rounds), advanced in turn in chunks of a few dozen rounds in one
  process, so that all see the same load: CPU seconds, ratios, identical state required (a
  more stable ratio than ``--reproduce`` on a shared machine); ``pair``: semi-regret's two
  panels of the size, two former engines against one current engine over both (as
  ``simulation/shared_batch.py`` runs them);
* ``--shared``: ``semi-regret``'s tasks (paper constants, R = 10, ``--reproduce-horizon``
  rounds, in process) with the tasks that differ only in the shift sharing one batched
  engine (``simulation/shared_batch.py``: SP-TS and BOSE at both sizes) against every task
  alone, and against every task alone with the former SP-TS engine (the code before this
  round), interleaved, CPU seconds, identical rows required.

Usage: ``python benchmarks/bench_batched.py [--quick] [--sampler] [--rng] [--malloc]
[--pool] [--reproduce] [--lockstep] [--shared]`` prints a JSON dict (each flag: only those
rows); ``run(quick)`` returns the default rows.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from typing import Any

import numpy as np

from dashboard.algorithms.semiparametric import SemiparametricEnvironment, gap_instance, make_shift
from dashboard.algorithms.semiparametric.policies.bose import BOSE, BatchedBOSE
from dashboard.algorithms.semiparametric.policies.linear_foils import BatchedLinUCB, LinUCB
from dashboard.algorithms.semiparametric.policies.spts import (
    BatchedSemiparametricTS,
    SemiparametricTS,
)

PAIRS = [(BOSE, BatchedBOSE), (SemiparametricTS, BatchedSemiparametricTS), (LinUCB, BatchedLinUCB)]
SIZES = [(5, 10), (20, 30)]
R = 16


def _envs(inst: Any, shift: str, seed: int) -> list[SemiparametricEnvironment]:
    return [
        SemiparametricEnvironment(inst, make_shift(shift, seed=seed), 1.0, seed=seed, rep=r)
        for r in range(R)
    ]


def _time(fn: Any, repeats: int) -> tuple[float, Any]:
    best, out = float("inf"), None
    for _ in range(repeats):
        start = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - start)
    return best, out


def measure(
    single: type, batched: type, d: int, K: int, T: int, shift: str, repeats: int, seed: int = 0
) -> dict[str, Any]:
    """Time R sequential single runs and one batched run of ``T`` rounds; compare regrets."""
    inst = gap_instance(d, K, gap=0.5, seed=seed)

    def sequential() -> np.ndarray:
        return np.array([single().run(e, T).cum_regret for e in _envs(inst, shift, seed)])

    def together() -> np.ndarray:
        return batched().run(_envs(inst, shift, seed), T).cum_regret.copy()

    t_seq, reg_seq = _time(sequential, repeats)
    t_bat, reg_bat = _time(together, repeats)
    return {
        "algorithm": single.name,
        "d": d,
        "K": K,
        "T": T,
        "R": R,
        "shift": shift,
        "sequential_s": round(t_seq, 4),
        "batched_s": round(t_bat, 4),
        "us_per_round_rep_sequential": round(t_seq / (T * R) * 1e6, 2),
        "us_per_round_rep_batched": round(t_bat / (T * R) * 1e6, 2),
        "ratio": round(t_seq / t_bat, 2),
        "identical_regret": bool(np.array_equal(reg_seq, reg_bat)),
    }


def measure_sampler(d: int, K: int, T: int, repeats: int, seed: int = 0) -> dict[str, Any]:
    """SP-TS batched over R: certified sampler vs the exact one, same process, interleaved."""
    inst = gap_instance(d, K, gap=0.5, seed=seed)
    best = {True: float("inf"), False: float("inf")}
    out: dict[bool, Any] = {}
    for _ in range(repeats):
        for certify in (False, True):
            eng = BatchedSemiparametricTS()
            eng.certify = certify
            t, _ = _time(lambda eng=eng: eng.run(_envs(inst, "log", seed), T), 1)
            best[certify] = min(best[certify], t)
            out[certify] = eng
    new, old = out[True], out[False]
    return {
        "algorithm": "SP-TS sampler",
        "d": d,
        "K": K,
        "T": T,
        "R": R,
        "exact_s": round(best[False], 4),
        "certified_s": round(best[True], 4),
        "us_per_round_exact": round(best[False] / T * 1e6, 1),
        "us_per_round_certified": round(best[True] / T * 1e6, 1),
        "ratio": round(best[False] / best[True], 2),
        "recomputed": round(new.recomputed / (R * T), 4),
        "identical": bool(
            np.array_equal(new.cum_regret, old.cum_regret)
            and np.array_equal(new.B, old.B)
            and np.array_equal(new.y, old.y)
        ),
    }


def run_sampler(quick: bool = False, seed: int = 0) -> list[dict[str, Any]]:
    """The SP-TS sampler rows at d = 5 / K = 10 and d = 20 / K = 30."""
    T = 150 if quick else 600
    return [measure_sampler(d, K, T, 2 if quick else 3, seed) for d, K in SIZES]


def run(quick: bool = False, seed: int = 0) -> dict[str, Any]:
    """Run the benchmark; returns ``{"rows": [...], "min_ratio": ..., "target": 5}``."""
    T = 150 if quick else 600
    repeats = 1 if quick else 2
    shifts = ["log"] if quick else ["log", "adversarial"]
    rows = [
        measure(single, batched, d, K, T, shift, repeats, seed)
        for shift in shifts
        for d, K in SIZES
        for single, batched in PAIRS
    ]
    oblivious = [r["ratio"] for r in rows if r["shift"] == "log"]
    return {
        "rows": rows,
        "sampler": run_sampler(quick, seed),
        "min_ratio_oblivious_shift": min(oblivious),
        "all_identical": all(r["identical_regret"] for r in rows),
        "target": 5.0,
    }


# ------------------------------------------------------------------------------ issue 9 rows
def _former_uniform(key: Any, counter: Any) -> np.ndarray:
    """The former ``randomness.uniform`` verbatim (a fresh array for every step)."""
    from dashboard.algorithms.randomness import _GOLDEN, _M1, _M2, _S11, _S27, _S30, _S31

    c = np.asarray(counter, dtype=np.uint64)
    with np.errstate(over="ignore"):
        x = np.asarray(key, dtype=np.uint64) + (c + np.uint64(1)) * _GOLDEN
        x = x ^ (x >> _S30)
        x = x * _M1
        x ^= x >> _S27
        x *= _M2
        x ^= x >> _S31
    return ((x >> _S11).astype(np.float64) + 0.5) * 2.0**-53


def _interleaved(fns: dict[str, Any], calls: int) -> dict[str, float]:
    """Best single-call time of each function (microseconds), calls interleaved."""
    best = dict.fromkeys(fns, float("inf"))
    for _ in range(calls):
        for k, f in fns.items():
            start = time.perf_counter()
            f()
            best[k] = min(best[k], time.perf_counter() - start)
    return {k: round(v * 1e6, 1) for k, v in best.items()}


def run_rng(quick: bool = False) -> list[dict[str, Any]]:
    """Former vs current uniforms on SP-TS windows (R = 10, n_mc = 100) and BOSE's."""
    from dashboard.algorithms import randomness as rnd

    rows = []
    for what, R, nd in (("SP-TS d=20", 10, 101 * 20), ("SP-TS d=5", 10, 101 * 5), ("BOSE", 10, 1)):
        W = max(1, 65536 // (nd * R)) if nd > 1 else 4096
        keys = np.array([rnd.stream_key(0, r, "bench") for r in range(R)], dtype=np.uint64)
        t = 1234
        counters = (np.arange(t, t + W)[:, None] * nd + np.arange(nd))[:, None, :]
        former = _former_uniform(keys[None, :, None], counters)
        run = rnd.uniform_run(keys, t * nd, W * nd).reshape(R, W, nd).transpose(1, 0, 2)
        same = np.array_equal(former, rnd.uniform(keys[None, :, None], counters))
        same = same and np.array_equal(former, run)
        k3, first, count = keys[None, :, None], t * nd, W * nd
        us = _interleaved(
            {
                "former": lambda k3=k3, c=counters: _former_uniform(k3, c),
                "uniform": lambda k3=k3, c=counters: rnd.uniform(k3, c),
                "uniform_run": lambda k=keys, a=first, n=count: rnd.uniform_run(k, a, n),
            },
            100 if quick else 400,
        )
        rows.append(
            {
                "what": what,
                "values": int(former.size),
                "us": us,
                "ratio_uniform": round(us["former"] / us["uniform"], 2),
                "ratio_uniform_run": round(us["former"] / us["uniform_run"], 2),
                "identical": bool(same),
            }
        )
    return rows


_CHILD = """
import json, resource, sys, time
import numpy as np
from dashboard.algorithms.semiparametric import SemiparametricEnvironment, gap_instance, make_shift
from dashboard.algorithms.semiparametric.policies.spts import BatchedSemiparametricTS
T = int(sys.argv[1])
inst = gap_instance(20, 30, gap=0.5, seed=0)
envs = [SemiparametricEnvironment(inst, make_shift("log", seed=0), 1.0, seed=0, rep=r)
        for r in range(10)]
r0 = resource.getrusage(resource.RUSAGE_SELF)
eng = BatchedSemiparametricTS().run(envs, T)
r1 = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps({"cpu": r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime,
                  "sys": r1.ru_stime - r0.ru_stime, "faults": r1.ru_minflt - r0.ru_minflt,
                  "regret": eng.cum_regret.tolist()}))
"""


def run_malloc(quick: bool = False) -> dict[str, Any]:
    """SP-TS (d = 20, K = 30, R = 10) in subprocesses under Dask's default worker malloc
    setting and under the embedded cluster's; best of 2 (1 with ``quick``), alternated."""
    from dashboard.simulation.cluster import MALLOC_ENV

    T = 150 if quick else 600
    settings = {"dask_default": {"MALLOC_TRIM_THRESHOLD_": "65536"}, "cluster": MALLOC_ENV}
    base = {k: v for k, v in os.environ.items() if not k.startswith("MALLOC_")}
    base.update(OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    best: dict[str, dict[str, Any]] = {}
    for _ in range(1 if quick else 2):
        for name, extra in settings.items():
            out = subprocess.run(
                [sys.executable, "-c", _CHILD, str(T)],
                env={**base, **extra},
                capture_output=True,
                text=True,
                check=True,
            )
            rec = json.loads(out.stdout.strip().splitlines()[-1])
            if name not in best or rec["cpu"] < best[name]["cpu"]:
                best[name] = rec
    a, b = best["dask_default"], best["cluster"]
    return {
        "T": T,
        **{
            name: {
                k: round(v, 3) if isinstance(v, float) else v
                for k, v in rec.items()
                if k != "regret"
            }
            for name, rec in best.items()
        },
        "ratio_cpu": round(a["cpu"] / b["cpu"], 2),
        "identical_regret": a["regret"] == b["regret"],
    }


def _semi_regret_panels(horizon: int) -> list[tuple[Any, ...]]:
    """semi-regret's panels as ``(problem, spec, algorithms, T, runs=10, seed=0, params)``."""
    from dashboard.simulation.figures import get_figure

    out = []
    for panel in get_figure("semi-regret").panels:
        spec = dict(panel.spec)
        problem = spec.pop("problem")
        params = {k: dict(v) for k, v in panel.params.items()}
        out.append((problem, spec, list(panel.algorithms), horizon, 10, 0, params))
    return out


def run_pool(horizon: int = 5000) -> dict[str, Any]:
    """semi-regret's panels on one 2-worker LocalCluster: one after the other vs one pool."""
    from distributed import Client

    from dashboard.simulation.engine import local_cluster
    from dashboard.simulation.tuning import panel_job, run_panel, run_panels

    args = _semi_regret_panels(horizon)
    with local_cluster(2) as cluster, Client(cluster, set_as_default=False) as client:
        # warm-up: every worker imports the package and builds the instances once
        run_panels([panel_job(*a[:3], 50, 10, *a[5:]) for a in args], client=client)
        start = time.perf_counter()
        separate = [run_panel(*a, client=client) for a in args]
        t_sep = time.perf_counter() - start
        start = time.perf_counter()
        pooled = run_panels([panel_job(*a) for a in args], client=client)
        t_pool = time.perf_counter() - start
    same = all(
        np.array_equal(x.result[alg].regret, y.result[alg].regret)
        for x, y in zip(separate, pooled)
        for alg in args[0][2]
    )
    return {
        "T": horizon,
        "R": 10,
        "panel_after_panel_s": round(t_sep, 2),
        "pooled_s": round(t_pool, 2),
        "ratio": round(t_sep / t_pool, 2),
        "identical": bool(same),
    }


def run_pool_all(horizon: int = 10_000) -> dict[str, Any]:
    """``reproduce all --scale paper --tune no --horizon H`` on one 2-worker LocalCluster:
    figure after figure (run_experiment then write_figure, the former loop) vs every
    figure's tasks as one pool with each figure written as it completes (run_experiments);
    wall seconds, identical CSVs required."""
    import tempfile
    from pathlib import Path

    from distributed import Client

    from dashboard.reproduce import write_figure
    from dashboard.simulation.engine import local_cluster
    from dashboard.simulation.experiments import FIGURES, run_experiment, run_experiments

    names = list(FIGURES)
    kw = {"scale": "paper", "tune": False, "horizon": horizon}
    with (
        local_cluster(2) as cluster,
        Client(cluster, set_as_default=False) as client,
        tempfile.TemporaryDirectory() as tmp,
    ):
        # warm-up: imports on the workers and in this process (plots), one figure each
        write_figure(run_experiment("cmab-fig2", client=client, **{**kw, "horizon": 50}), tmp)
        a, b = Path(tmp, "a"), Path(tmp, "b")
        start = time.perf_counter()
        for name in names:
            write_figure(run_experiment(name, client=client, **kw), a)
        t_seq = time.perf_counter() - start
        start = time.perf_counter()
        run_experiments(names, client=client, on_result=lambda r: write_figure(r, b), **kw)
        t_pool = time.perf_counter() - start
        same = all((a / f"{n}.csv").read_bytes() == (b / f"{n}.csv").read_bytes() for n in names)
    return {
        "T": horizon,
        "R": 10,
        "figure_after_figure_s": round(t_seq, 2),
        "pooled_s": round(t_pool, 2),
        "ratio": round(t_seq / t_pool, 2),
        "identical_csv": bool(same),
    }


#: ``--reproduce`` rows: (former kernels, figure, algorithm, panel).
REPRODUCE_ROWS = [("spts", "semi-regret", "SP-TS", 1), ("spts", "semi-regret", "SP-TS", 0)]


def run_reproduce(horizon: int = 3000, repeats: int = 2) -> list[dict[str, Any]]:
    """The ``--reproduce`` rows (see the module docstring)."""
    from former_reproduce import side_by_side

    return [
        side_by_side(row, fig, alg, panel, horizon, 10, repeats)
        for row, fig, alg, panel in REPRODUCE_ROWS
    ]


def run_lockstep(horizon: int = 3000, chunk: int = 30) -> list[dict[str, Any]]:
    """The ``--lockstep`` rows (see the module docstring)."""
    import former_reproduce as fr

    class FormerSPTS(BatchedSemiparametricTS):
        """The former engine (its methods verbatim from former_reproduce.py)."""

    for _, attr, fn in fr._spts_patches():
        setattr(FormerSPTS, attr, fn)

    def envs(inst: Any, shift: str) -> list[SemiparametricEnvironment]:
        return [
            SemiparametricEnvironment(inst, make_shift(shift, seed=0), 1.0, seed=0, rep=r)
            for r in range(10)
        ]

    rows = []
    for d, K in ((20, 30), (5, 10)):
        inst = gap_instance(d, K, gap=0.5, seed=0)
        # former / current: one panel (sine); former pair / shared: both panels of the size,
        # two former engines against one current engine over both (shared_batch.py)
        engines: dict[str, Any] = {
            "former": FormerSPTS(),
            "current": BatchedSemiparametricTS(),
            "former_sine": FormerSPTS(),
            "former_log": FormerSPTS(),
            "shared": BatchedSemiparametricTS(),
        }
        for name, eng in engines.items():
            shifts = {"former_log": ["log"], "shared": ["sine", "log"]}.get(name, ["sine"])
            eng.reset([e for sh in shifts for e in envs(inst, sh)], 100_000)
        cpu = {name: 0.0 for name in engines}
        names = list(engines)
        for j, until in enumerate(range(chunk, horizon + 1, chunk)):
            k = j % len(names)
            for name in names[k:] + names[:k]:  # rotate who goes first
                start = time.process_time()
                engines[name].advance(until)
                cpu[name] += time.process_time() - start
        a, b = engines["former"], engines["current"]
        pair = np.concatenate([engines["former_sine"].B, engines["former_log"].B])
        pair_regret = np.concatenate(
            [engines["former_sine"].cum_regret, engines["former_log"].cum_regret]
        )
        shared = engines["shared"]
        former_pair = cpu["former_sine"] + cpu["former_log"]
        rows.append(
            {
                "algorithm": "SP-TS engine, former vs current",
                "d": d,
                "K": K,
                "R": 10,
                "T": horizon,
                "former_cpu_s": round(cpu["former"], 3),
                "current_cpu_s": round(cpu["current"], 3),
                "speedup": round(cpu["former"] / cpu["current"], 3),
                "former_pair_cpu_s": round(former_pair, 3),
                "shared_pair_cpu_s": round(cpu["shared"], 3),
                "speedup_pair": round(former_pair / cpu["shared"], 3),
                "identical": bool(
                    np.array_equal(a.B, b.B)
                    and np.array_equal(a.y, b.y)
                    and np.array_equal(a.cum_regret, b.cum_regret)
                    and np.array_equal(pair, shared.B)
                    and np.array_equal(pair_regret, shared.cum_regret)
                ),
            }
        )
    return rows


def run_shared(horizon: int = 3000, repeats: int = 2) -> dict[str, Any]:
    """The ``--shared`` row (see the module docstring)."""
    from dashboard.simulation import sweep
    from dashboard.simulation.tuning import panel_job

    sweeps = []
    for problem, spec, algorithms, T, runs, seed, params in _semi_regret_panels(horizon):
        job = panel_job(problem, spec, algorithms, T, runs, seed, params=params)
        sweeps.append(job.sweep)
    alone = lambda tasks, workers=1: [([i], t[3]) for i, t in enumerate(tasks)]  # noqa: E731
    sweep.run_sweeps(sweeps, scheduler="inprocess")  # imports and caches outside the clock
    import contextlib

    from former_reproduce import former

    best = {"former": float("inf"), "alone": float("inf"), "shared": float("inf")}
    rows: dict[str, list[Any]] = {}
    real = sweep.merge_plan
    for _ in range(repeats):
        for which in best:
            # former: the former SP-TS engine, every task alone (the code before this round)
            sweep.merge_plan = real if which == "shared" else alone
            ctx = former("spts") if which == "former" else contextlib.nullcontext()
            try:
                with ctx:
                    start = time.process_time()
                    res = sweep.run_sweeps(sweeps, scheduler="inprocess")
                    best[which] = min(best[which], time.process_time() - start)
            finally:
                sweep.merge_plan = real
            rows[which] = [
                [a.regret.tolist() for row in r.rows for a in row.result.results] for r in res
            ]
    return {
        "task": "semi-regret, every panel and algorithm, R = 10, in process",
        "T": horizon,
        "former_engine_alone_cpu_s": round(best["former"], 3),
        "alone_cpu_s": round(best["alone"], 3),
        "shared_cpu_s": round(best["shared"], 3),
        "speedup_shared_vs_alone": round(best["alone"] / best["shared"], 3),
        "speedup_vs_former": round(best["former"] / best["shared"], 3),
        "identical": rows["alone"] == rows["shared"] == rows["former"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="T = 150 instead of 600")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--sampler", action="store_true", help="only the SP-TS sampler rows")
    parser.add_argument("--rng", action="store_true", help="former vs current uniforms")
    parser.add_argument("--malloc", action="store_true", help="SP-TS under two malloc settings")
    parser.add_argument("--pool", action="store_true", help="panels one by one vs pooled")
    parser.add_argument("--pool-horizon", type=int, default=5000)
    parser.add_argument("--reproduce", action="store_true", help="former vs current paper tasks")
    parser.add_argument("--pool-all", action="store_true", help="reproduce all: pooled vs not")
    parser.add_argument("--reproduce-horizon", type=int, default=3000)
    parser.add_argument("--lockstep", action="store_true", help="SP-TS engines interleaved")
    parser.add_argument("--shared", action="store_true", help="shift-only tasks in one batch")
    args = parser.parse_args()
    out: Any = {}
    if args.sampler:
        out["sampler"] = run_sampler(quick=args.quick, seed=args.seed)
    if args.rng:
        out["rng"] = run_rng(quick=args.quick)
    if args.malloc:
        out["malloc"] = run_malloc(quick=args.quick)
    if args.pool:
        out["pool"] = run_pool(args.pool_horizon)
    if args.reproduce:
        out["reproduce"] = run_reproduce(args.reproduce_horizon)
    if args.pool_all:
        out["pool_all"] = run_pool_all(args.pool_horizon)
    if args.lockstep:
        out["lockstep"] = run_lockstep(args.reproduce_horizon)
    if args.shared:
        out["shared"] = run_shared(args.reproduce_horizon)
    if not out:
        out = run(quick=args.quick, seed=args.seed)
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
