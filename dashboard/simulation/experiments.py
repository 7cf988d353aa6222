"""Run the papers' figures (``python -m dashboard reproduce``) and describe the outcome.

The figures themselves (problem specs, algorithms, the ``test`` / ``classroom`` / ``paper``
scales) are declared in :mod:`.figures`; the PAC experiment's estimator is in :mod:`.pac`.
Their names stay importable from here.

:func:`run_experiment` returns an :class:`ExperimentResult` holding one
:class:`~dashboard.simulation.results.SimulationResult` per panel (or a :class:`PACResult` for
the PAC plot), a short text of what the paper shows and a text of what we get, computed from
the numbers.
"""

from __future__ import annotations

import csv
import io
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from .figures import FIGURES, SCALES, Figure, Panel, Scale, figure_names, get_figure
from .pac import PACResult, pure_exploration_errors
from .results import SimulationResult
from .specs import FIELDS, SemiparametricSpec, make_spec
from .tuning import PanelJob, PanelRun, panel_job, run_panels

__all__ = [
    "FIGURES",
    "SCALES",
    "ExperimentResult",
    "Figure",
    "PACResult",
    "Panel",
    "Scale",
    "figure_names",
    "get_figure",
    "panel_jobs",
    "pure_exploration_errors",
    "run_experiment",
    "run_experiments",
]


@dataclass
class ExperimentResult:
    """The outcome of :func:`run_experiment`.

    Attributes
    ----------
    figure : Figure
        The setting that was run.
    scale : str
        ``"test"``, ``"classroom"`` or ``"paper"``.
    seed, horizon, runs : int
        What was run.
    panels : dict
        Panel key -> :class:`SimulationResult` (regret figures) or :class:`PACResult`.
    paper_shows : str
        What the paper reports for this figure.
    we_get : str
        What our run shows, computed from the numbers.
    seconds : float
        Wall time of the whole experiment.
    """

    figure: Figure
    scale: str
    seed: int
    horizon: int
    runs: int
    panels: dict[str, SimulationResult | PACResult]
    paper_shows: str
    we_get: str
    seconds: float
    #: panel key -> algorithm -> chosen c and mean final regret per c (when tuned)
    tuning: dict[str, dict[str, Any]] = field(default_factory=dict)

    @property
    def name(self) -> str:
        """The figure's name."""
        return self.figure.name

    def panel_title(self, key: str) -> str:
        """Human-readable title of a panel."""
        for p in self.figure.panels:
            if p.key == key:
                return p.title
        raise KeyError(key)

    def rows(self) -> list[tuple[Any, ...]]:
        """Long-format rows ``(figure, panel, algorithm, run, t, metric, value)``."""
        out: list[tuple[Any, ...]] = []
        for key, res in self.panels.items():
            if isinstance(res, PACResult):
                scaled = res.scaled
                for rep in range(res.runs):
                    for j, t in enumerate(res.times):
                        out.append((self.name, key, "DEO", rep, int(t), "e_t", res.errors[rep, j]))
                        out.append(
                            (self.name, key, "DEO", rep, int(t), "sqrt_t_e_t", scaled[rep, j])
                        )
                continue
            for r in res.results:
                for rep in range(r.runs):
                    for j, t in enumerate(r.times):
                        base = (self.name, key, r.algorithm, rep, int(t))
                        out.append((*base, "cumulative_regret", r.regret[rep, j]))
                        out.append((*base, "queries", r.queries[rep, j]))
                        out.append((*base, "adaptivity", r.adaptivity[rep, j]))
                        if r.alpha_regret is not None:  # approximate oracle (Theorem 7)
                            out.append((*base, "alpha_regret", r.alpha_regret[rep, j]))
        return out

    def to_csv(self) -> str:
        """The curves as long-format CSV:
        ``figure,panel,algorithm,run,t,metric,value`` (one row per recorded value)."""
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(["figure", "panel", "algorithm", "run", "t", "metric", "value"])
        for row in self.rows():
            value = row[-1]
            text = str(int(value)) if float(value).is_integer() else f"{float(value):.10g}"
            w.writerow([*row[:-1], text])
        return buf.getvalue()

    def summary(self) -> dict[str, Any]:
        """JSON-able summary: setting, final numbers per panel and the two texts."""
        panels: dict[str, Any] = {}
        for key, res in self.panels.items():
            if isinstance(res, PACResult):
                panels[key] = {
                    "final_sqrt_t_e_t_mean": float(res.scaled[:, -1].mean()),
                    "max_sqrt_t_e_t": float(res.scaled.max()),
                    "bound_10_sqrt_d_log_K": res.bound,
                    "fraction_below_bound": res.fraction_below_bound(),
                }
            else:
                panels[key] = [r.summary() for r in res.results]
        return {
            "figure": self.name,
            "title": self.figure.title,
            "source": self.figure.source,
            "scale": self.scale,
            "seed": self.seed,
            "horizon": self.horizon,
            "runs": self.runs,
            "seconds": self.seconds,
            "paper_shows": self.paper_shows,
            "we_get": self.we_get,
            "panels": panels,
            **({"tuning": self.tuning} if self.tuning else {}),
        }


# ------------------------------------------------------------------------------------ texts
def _ratio(a: float, b: float) -> str:
    if b <= 0:
        return "n/a" if a <= 0 else "inf"
    return f"{a / b:.2g}x"


def _describe_cmab(res: SimulationResult, baseline: str) -> str:
    base = res[baseline].summary()
    parts = [
        f"Over T = {res.horizon:,} rounds and {res.runs} run(s), {baseline} made "
        f"{base['oracle_queries_mean']:,.0f} oracle queries in "
        f"{base['oracle_adaptivity_mean']:,.0f} adaptive rounds "
        f"(final regret {base['final_regret_mean']:,.1f}, wall {base['wall_seconds']:.2f} s)."
    ]
    for r in res.results:
        if r.algorithm == baseline:
            continue
        s = r.summary()
        parts.append(
            f"{r.algorithm} used {s['oracle_queries_mean']:,.0f} queries in "
            f"{s['oracle_adaptivity_mean']:,.0f} adaptive rounds "
            f"({_ratio(s['oracle_queries_mean'], base['oracle_queries_mean'])} "
            f"{baseline}'s queries); its final regret is {s['final_regret_mean']:,.1f}, "
            f"{_ratio(s['final_regret_mean'], base['final_regret_mean'])} {baseline}'s; "
            f"wall time {s['wall_seconds']:.2f} s "
            f"({_ratio(s['wall_seconds'], base['wall_seconds'])} {baseline}'s)."
        )
    oracle_delay = res.spec.get("oracle_delay", 0.0)
    if not oracle_delay:
        parts.append(
            "(Oracle calls here are exact and cheap, so wall time mostly measures simulation, "
            "not solver cost; set oracle_delay to model an expensive oracle.)"
        )
    return " ".join(parts)


def _describe_semi(key: str, res: SimulationResult) -> str:
    rows = sorted((r.summary() for r in res.results), key=lambda s: s["final_regret_mean"])
    txt = ", ".join(f"{s['algorithm']} {s['final_regret_mean']:,.1f}" for s in rows)
    out = f"[{key}] final regret (mean of {res.runs}): {txt}; lowest: {rows[0]['algorithm']}."
    try:
        sbe = res["SBE"].summary()
    except KeyError:
        return out
    rate = sbe.get("best_arm_identified_rate")
    when = sbe.get("declaration_time_mean")
    if when is not None:
        out += (
            f" SBE declared the best arm in {rate:.0%} of runs (mean round {when:,.0f}); "
            "in those runs its regret is flat from then on."
        )
    else:
        out += " SBE did not finish eliminating within T (its regret is not flat yet)."
    return out


def _describe_pac(key: str, res: PACResult) -> str:
    final = res.scaled[:, -1]
    return (
        f"[{key}] sqrt(t) e_t at t = {int(res.times[-1]):,}: mean {final.mean():.2f} "
        f"(max over all t and runs {res.scaled.max():.2f}) vs 10 sqrt(d log K) = {res.bound:.2f}; "
        f"{res.fraction_below_bound():.0%} of recorded values are below the line."
    )


# ------------------------------------------------------------------------------------ running
def run_experiment(
    name: str,
    scale: str = "classroom",
    seed: int = 0,
    horizon: int | None = None,
    runs: int | None = None,
    params: dict[str, dict[str, Any]] | None = None,
    scheduler: str | None = None,
    tune: bool | None = None,
    client: Any = None,
) -> ExperimentResult:
    """Run a registered figure's setting and describe the outcome.

    Parameters
    ----------
    name : str
        One of :data:`FIGURES` (``cmab-fig2``, ``cmab-fig3``, ``cmab-fig4``, ``semi-regret``,
        ``semi-pac``).
    scale : str
        ``"test"``, ``"classroom"`` (default) or ``"paper"``.
    seed : int
        Instance and noise seed (same seed, same numbers).
    horizon, runs : int, optional
        Override the scale's ``T`` / ``R``.
    params : dict, optional
        Per-algorithm constructor arguments, merged over the figure's own (e.g.
        ``{"SBE": {"c": 2}}``); an algorithm not in a panel is ignored for that panel.
    scheduler, client : where the panels' repetitions run (see
        :func:`~dashboard.simulation.sweep.run_sweep`): in-process when tiny, else a local
        Dask cluster, or the cluster at ``scheduler`` / ``client``.  Default: in-process
        below the paper scale.
    tune : bool, optional
        Follow Appendix I's protocol for the figure's ``tuned`` algorithms: run each with
        c in {1, 2, 4, 8} and keep the best per panel (reported in ``tuning`` and the text).
        Default: at the paper scale only.

    Returns
    -------
    ExperimentResult
    """
    # one figure is a pool of one: every panel's tasks go to the workers together (none idles
    # at the end of a panel); smaller scales stay in this process (notebooks, tests)
    (result,) = run_experiments([name], scale, seed, horizon, runs, params, scheduler, tune, client)
    return result


def run_experiments(
    names: Sequence[str],
    scale: str = "classroom",
    seed: int = 0,
    horizon: int | None = None,
    runs: int | None = None,
    params: dict[str, dict[str, Any]] | None = None,
    scheduler: str | None = None,
    tune: bool | None = None,
    client: Any = None,
    on_result: Callable[[ExperimentResult], None] | None = None,
) -> list[ExperimentResult]:
    """:func:`run_experiment` for several figures, their panels' tasks as one pool.

    The numbers are each figure's own (counter-based randomness: any split and order of the
    tasks give the same rows).  Run one after the other, each figure ends on its longest task
    while the other workers idle, and the workers idle again while the figure is written.
    Here every figure is planned first, then all tasks go to the cluster at once as one pool,
    longest first whatever their figure (:func:`~.sweep.run_sweeps`; ordering figure by
    figure instead left one worker idle for the last 34 s of ``reproduce all --scale paper``
    while the other ran the last figure's long tasks), and ``on_result(result)`` is
    called in this thread as soon as a figure's tasks are all done,
    while the workers run the remaining figures' tasks (``reproduce all`` writes each
    figure's page there); a PAC figure (computed in this process) is finished at the first
    completed task.  Returns the results
    in the order of ``names``; arguments otherwise as :func:`run_experiment`.
    """
    plans = [_plan(name, scale, seed, horizon, runs, params, tune) for name in names]
    if scheduler is None and client is None and not all(p.paper for p in plans):
        scheduler = "inprocess"
    jobs: list[PanelJob] = []
    owner: list[int] = []
    for f, plan in enumerate(plans):
        jobs.extend(plan.jobs.values())
        owner.extend([f] * len(plan.jobs))
    got: list[dict[int, PanelRun]] = [{} for _ in plans]
    results: list[ExperimentResult | None] = [None] * len(plans)

    def complete(f: int) -> None:
        n = len(plans[f].jobs)
        ordered = [got[f][i] for i in sorted(got[f])]
        if len(ordered) == n and results[f] is None:
            results[f] = _finish(plans[f], ordered)
            if on_result is not None:
                on_result(results[f])

    first = [owner.index(f) if f in owner else -1 for f in range(len(plans))]
    jobless = [f for f in range(len(plans)) if not plans[f].jobs]  # PAC figures

    def on_done(i: int, run: PanelRun) -> None:
        while jobless:  # computed here, while the workers run the pool
            complete(jobless.pop(0))
        f = owner[i]
        got[f][i - first[f]] = run
        complete(f)

    if jobs:
        run_panels(
            jobs,
            scheduler=scheduler,
            client=client,
            on_done=on_done,
        )
    while jobless:
        complete(jobless.pop(0))
    out = []
    for res in results:
        assert res is not None  # every figure's jobs completed (or it had none)
        out.append(res)
    return out


def panel_jobs(
    names: Sequence[str],
    scale: str = "classroom",
    seed: int = 0,
    horizon: int | None = None,
    runs: int | None = None,
    params: dict[str, dict[str, Any]] | None = None,
    tune: bool | None = None,
) -> list[PanelJob]:
    """The panels' jobs that :func:`run_experiments` would run for ``names`` (validated,
    nothing runs; PAC panels, computed in the calling process, have none), in its order:
    ``benchmarks/bench_reproduce_tasks.py`` times their tasks one by one."""
    plans = [_plan(name, scale, seed, horizon, runs, params, tune) for name in names]
    return [job for plan in plans for job in plan.jobs.values()]


@dataclass
class _Plan:
    """A figure's validated settings, its PAC panels (spec and DEO settings) and its other
    panels' jobs."""

    fig: Figure
    scale: str
    seed: int
    T: int
    R: int
    paper: bool
    start: float
    pac: dict[str, tuple[SemiparametricSpec, dict[str, Any]]]
    jobs: dict[str, PanelJob]


def _plan(
    name: str,
    scale: str,
    seed: int,
    horizon: int | None,
    runs: int | None,
    params: dict[str, dict[str, Any]] | None,
    tune: bool | None,
) -> _Plan:
    """Validate a figure's settings and build its panels' jobs (nothing runs yet)."""
    fig = get_figure(name)
    sc = fig.scale(scale)
    seed = FIELDS["seed"].check(seed)
    T = sc.horizon if horizon is None else FIELDS["horizon"].check(horizon)
    R = sc.runs if runs is None else FIELDS["runs"].check(runs)
    extra = {str(k).lower(): dict(v) for k, v in (params or {}).items()}
    paper = str(scale).strip().lower() == "paper"
    if tune is None:
        tune = paper
    start = time.perf_counter()
    pac: dict[str, tuple[SemiparametricSpec, dict[str, Any]]] = {}
    jobs: dict[str, PanelJob] = {}
    for panel in fig.panels:
        kwargs = dict(panel.spec)
        problem = kwargs.pop("problem")
        spec = make_spec(problem, **kwargs)
        if fig.kind == "pac":
            assert isinstance(spec, SemiparametricSpec)
            deo = extra.get("deo", {})
            bad = sorted(set(deo) - {"delta", "design_tol", "anchor"})
            if bad:
                raise ValueError(
                    f"unknown DEO setting(s): {', '.join(bad)}; allowed: anchor, delta, design_tol"
                )
            pac[panel.key] = (spec, dict(deo))  # computed by _finish
            continue
        merged = {k: dict(v) for k, v in panel.params.items()}
        for alg in panel.algorithms:
            if alg.lower() in extra:
                merged.setdefault(alg, {}).update(extra[alg.lower()])
        jobs[panel.key] = panel_job(
            problem,
            kwargs,
            list(panel.algorithms),
            T,
            R,
            seed,
            params=merged,
            tune=fig.tuned if tune else (),
        )
    return _Plan(fig, str(scale).strip().lower(), seed, T, R, paper, start, pac, jobs)


def _finish(plan: _Plan, done: list[PanelRun]) -> ExperimentResult:
    """The figure's result: its PAC panels computed here (in this process), its other panels
    from its jobs' runs (in the order of ``plan.jobs``)."""
    fig = plan.fig
    panels: dict[str, SimulationResult | PACResult] = {}
    texts: list[str] = []
    tuning: dict[str, dict[str, Any]] = {}
    for key, (spec, deo) in plan.pac.items():
        inst, _ = spec.build(plan.seed)
        res = pure_exploration_errors(
            inst.X,
            inst.theta,
            plan.T,
            runs=plan.R,
            seed=plan.seed,
            shift=spec.shift,
            noise=spec.noise,
            **deo,
        )
        res.spec = spec.to_dict()
        panels[key] = res
        texts.append(_describe_pac(key, res))
    for key, run in zip(plan.jobs, done):
        sim = run.result
        panels[key] = sim
        if fig.baseline is not None:
            texts.append(_describe_cmab(sim, fig.baseline))
        else:
            texts.append(_describe_semi(key, sim))
        if run.chosen:
            tuning[key] = run.summary()
            texts.append(run.describe(key))
    return ExperimentResult(
        figure=fig,
        scale=plan.scale,
        seed=plan.seed,
        horizon=plan.T,
        runs=plan.R,
        panels=panels,
        paper_shows=fig.paper_shows,
        we_get=" ".join(texts) if fig.baseline is not None else "\n".join(texts),
        seconds=time.perf_counter() - plan.start,
        tuning=tuning,
    )
