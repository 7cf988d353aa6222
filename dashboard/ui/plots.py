"""Plot builders: plain functions from simulation results (or arrays) to HoloViews elements.

Nothing here knows about widgets or sessions.  Every builder accepts a partial result (a
streaming snapshot), an empty one, or ``None``, and returns the *same layer structure* for the
same ``algorithms`` list, so a ``hv.DynamicMap`` fed by a ``hv.streams.Pipe`` can update the
browser's data sources in place while a run streams.

Conventions (readable on a projector): one colour per algorithm name everywhere
(:func:`algorithm_colors`), time axes are the dimension ``t`` labelled "round t" (Panel links
axes of plots sharing a dimension), fonts >= 12 pt, heights of about 300 px, responsive widths,
hover tools showing exact values.  The browser never receives more than a few thousand points
per curve: curves are recorded on the simulation's grid (~400 rounds), bands are thinned to
:data:`BAND_POINTS`, and the oracle timeline is binned to at most ``max_ticks`` ticks per
algorithm, with per-round baselines drawn as bands from ``ExpensiveLog.ranges``.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from typing import Any

import holoviews as hv
import numpy as np
from bokeh.core.properties import value
from bokeh.models import BasicTicker, NumeralTickFormatter

from ..simulation import catalogue

__all__ = [
    "BAND_POINTS",
    "FONTS",
    "PALETTE",
    "algorithm_colors",
    "complexity_frames",
    "complexity_plot",
    "design_weights_frames",
    "design_weights_plot",
    "design_weights_title",
    "oracle_timeline",
    "pac_plot",
    "rate_shape",
    "regret_frames",
    "regret_plot",
    "shift_frames",
    "shift_plot",
    "surviving_frames",
    "surviving_plot",
    "surviving_title",
    "timeline_frames",
    "wall_time_frames",
    "wall_time_plot",
]

if "bokeh" not in hv.Store.renderers:  # load the Bokeh backend without notebook output
    hv.renderer("bokeh")
hv.Store.set_current_backend("bokeh")

#: Colour-blind friendly palette (Okabe-Ito, then Tableau) used for algorithms.
PALETTE: tuple[str, ...] = (
    "#0072B2",
    "#D55E00",
    "#009E73",
    "#CC79A7",
    "#E69F00",
    "#56B4E9",
    "#8C564B",
    "#7F7F7F",
    "#BCBD22",
    "#17BECF",
    "#9467BD",
    "#1F3A93",
)
#: Font sizes (projector friendly).
FONTS: dict[str, Any] = {
    "title": "15pt",
    "labels": "14pt",
    "xticks": "12pt",
    "yticks": "12pt",
    "legend": "12pt",
}
#: Most points sent for a band (hv.Area resends its whole data on each update).
BAND_POINTS = 120
HEIGHT = 320
#: Data interface of the elements built here (plain dicts of numpy arrays: no pandas per frame).
_DT = ["dictionary"]

T_DIM = hv.Dimension("t", label="round t")
#: Tick format of round axes: 20k, 1.5m ...
_T_FORMAT = NumeralTickFormatter(format="0.[0]a")
T_LOG_DIM = hv.Dimension("t_log", label="round t (log scale)")
REF_COLOR = "#444444"


def algorithm_colors(names: Sequence[str] | None = None) -> dict[str, str]:
    """One colour per algorithm name, the same in every plot and every session.

    Registered algorithms get a colour from :data:`PALETTE` by their position among their
    problem's algorithms; other names (test fakes) get a colour derived from a hash of the name.
    """
    colors: dict[str, str] = {}
    for problem in ("cmab", "semiparametric"):
        infos = catalogue.declarations(problem)
        for k, info in enumerate(infos):
            colors[info.name] = PALETTE[k % len(PALETTE)]
    if names is None:
        return colors
    return {n: colors.get(n, PALETTE[zlib.crc32(n.encode()) % len(PALETTE)]) for n in list(names)}


def _base_opts(**extra: Any) -> dict[str, Any]:
    opts: dict[str, Any] = {
        "responsive": True,
        "height": HEIGHT,
        "min_height": HEIGHT,
        "fontsize": FONTS,
        "show_grid": True,
        "toolbar": "right",
    }
    opts.update(extra)
    return opts


def _names(result: Any, algorithms: Sequence[str] | None) -> list[str]:
    if algorithms is not None:
        return list(algorithms)
    return [] if result is None else [r.algorithm for r in result.results]


def _get(result: Any, name: str) -> Any:
    if result is None:
        return None
    for r in result.results:
        if r.algorithm.lower() == name.lower():
            return r
    return None


def _xlim(result: Any, log: bool = False) -> tuple[float, float] | None:
    if result is None:
        return None
    return (1.0, float(max(result.horizon, 2))) if log else (0.0, float(max(result.horizon, 1)))


def _thin(n: int, most: int) -> np.ndarray:
    """Indices of at most ``most`` points out of ``n``, always keeping the last one."""
    if n <= most:
        return np.arange(n)
    return np.unique(np.r_[np.linspace(0, n - 1, most).round().astype(int), n - 1])


def _legend_stub(frame: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """An empty layer gets one NaN row: Bokeh draws no legend swatch for an empty source, and
    a legend that is a key (states, roles, line styles) should list every entry."""
    if all(len(v) == 0 for v in frame.values()):
        return {k: np.full(1, np.nan) for k in frame}
    return frame


def _integer_ticks(*axes: str) -> Any:
    """A HoloViews hook: integer ticks (epochs, phases, arms) on the given axes."""

    def hook(plot: Any, _element: Any) -> None:
        for axis in axes:
            for ax in getattr(plot.state, f"{axis}axis"):
                ax.ticker = BasicTicker(min_interval=1, desired_num_ticks=10)

    return hook


def _overlay(layers: list[Any], kdim: Any = None, vdim: Any = None) -> hv.Overlay:
    """An overlay that always renders (an empty curve stands in when there are no layers)."""
    if not layers:
        layers = [hv.Curve([], kdims=[kdim or T_DIM], vdims=[vdim or "y"])]
    return hv.Overlay(layers)


def _spec(result: Any) -> dict[str, Any]:
    return {} if result is None else dict(result.spec)


# ---------------------------------------------------------------------------- regret
def rate_shape(problem: str, t: np.ndarray, spec: dict[str, Any]) -> np.ndarray:
    """The theoretical regret rate as a function of ``t`` (constants dropped).

    Combinatorial paper (Theorems 1-2): ``sqrt(m d t log t)``; semiparametric paper
    (Theorem 2): ``sqrt(d t log K)``.
    """
    t = np.asarray(t, dtype=float)
    d = float(spec.get("d", 1))
    if problem == "semiparametric":
        return np.sqrt(d * t * np.log(max(float(spec.get("K", 2)), 2.0)))
    m = float(spec.get("m", 1))
    return np.sqrt(m * d * t * np.log(np.maximum(t, np.e)))


def _positive(x: np.ndarray) -> np.ndarray:
    """Non-positive values become NaN (not drawn on log axes)."""
    x = np.asarray(x, dtype=float)
    return np.where(x > 0, x, np.nan)


def regret_frames(
    result: Any,
    algorithms: Sequence[str] | None = None,
    log_axes: bool = False,
    show_rate: bool = True,
) -> list[dict[str, np.ndarray]]:
    """Column data of :func:`regret_plot`'s layers, in layer order (plain numpy, no HoloViews):
    per algorithm a band ``{x, regret, regret_hi}`` then a curve ``{x, regret, std}``, then the
    rate shape ``{x, regret}``, where ``x`` is ``t`` (``t_log`` with log axes)."""
    names = _names(result, algorithms)
    x = "t_log" if log_axes else "t"
    frames: list[dict[str, np.ndarray]] = []
    finals: list[float] = []
    for name in names:
        r = _get(result, name)
        if r is not None and r.times.size:
            t = r.times.astype(float)
            mean = r.regret.mean(axis=0)
            std = r.regret.std(axis=0) if r.runs > 1 else np.zeros_like(mean)
            finals.append(float(mean[-1]))
        else:
            t = mean = std = np.zeros(0)
        keep = _thin(t.size, BAND_POINTS)
        lo = np.maximum(mean - std, 0.0)[keep]
        hi = (mean + std)[keep]
        if log_axes:
            lo, hi, mean = np.maximum(lo, 1e-3), np.maximum(hi, 1e-3), _positive(mean)
        frames.append({x: t[keep], "regret": lo, "regret_hi": hi})
        frames.append({x: t, "regret": mean, "std": std})
    if show_rate:
        problem = _spec(result).get("problem", "cmab")
        rt = np.zeros(0)
        if result is not None and result.t > 0:
            rt = (
                np.geomspace(1, max(result.t, 1), 200)
                if log_axes
                else np.linspace(1, result.t, 200)
            )
        shape = rate_shape(problem, rt, _spec(result))
        if finals and shape.size and shape[-1] > 0:
            shape = shape * (float(np.median(finals)) / shape[-1])
        frames.append({x: rt, "regret": _positive(shape) if log_axes else shape})
    return frames


def regret_plot(
    result: Any,
    algorithms: Sequence[str] | None = None,
    log_axes: bool = False,
    show_rate: bool = True,
) -> hv.Overlay:
    """Cumulative regret: mean over repetitions with a +-1 standard deviation band, per
    algorithm, and the theoretical rate shape scaled to the median final mean regret.

    Parameters
    ----------
    result : SimulationResult or None
        A (partial) result.
    algorithms : names, optional
        Fixes the layers (defaults to the result's algorithms).
    log_axes : bool
        Log-log axes (the x dimension is then ``t_log``, not linked to the linear plots).
    show_rate : bool
        Draw the "rate shape" reference curve.
    """
    names = _names(result, algorithms)
    colors = algorithm_colors(names)
    tdim = T_LOG_DIM if log_axes else T_DIM
    ydim = hv.Dimension("regret", label="cumulative regret")
    frames = regret_frames(result, names, log_axes, show_rate)
    layers: list[Any] = []
    for k, name in enumerate(names):
        band = hv.Area(
            frames[2 * k], kdims=[tdim], vdims=[ydim, "regret_hi"], label=name, datatype=_DT
        ).opts(color=colors[name], alpha=0.18, line_alpha=0, show_legend=False, clone=False)
        curve = hv.Curve(
            frames[2 * k + 1],
            kdims=[tdim],
            vdims=[ydim, hv.Dimension("std", label="sd over runs")],
            label=name,
            datatype=_DT,
        ).opts(color=colors[name], line_width=3, tools=["hover"], clone=False)
        layers += [band, curve]
    if show_rate:
        problem = _spec(result).get("problem", "cmab")
        formula = "√(d t log K)" if problem == "semiparametric" else "√(m d t log t)"
        layers.append(
            hv.Curve(
                frames[-1],
                kdims=[tdim],
                vdims=[ydim],
                label=f"rate shape {formula}",
                datatype=_DT,
            ).opts(color=REF_COLOR, line_dash="dashed", line_width=2, clone=False)
        )
    return hv.Overlay(layers).opts(
        **_base_opts(
            title="Cumulative regret (mean ± 1 sd over runs)",
            legend_position="right",
            logx=log_axes,
            logy=log_axes,
            xlim=_xlim(result, log_axes) or (None, None),
            xformatter=_T_FORMAT,
        )
    )


# ---------------------------------------------------------------------------- oracle timeline
def _batches(log: Any) -> tuple[np.ndarray, np.ndarray]:
    """Round t and size of each adaptivity round (batch) of individually recorded calls."""
    a = log.arrays()
    if not a["t"].size:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    ids, inverse, counts = np.unique(a["round_id"], return_inverse=True, return_counts=True)
    t = np.full(ids.size, np.iinfo(np.int64).max)
    np.minimum.at(t, inverse, a["t"])
    order = np.argsort(t, kind="stable")
    return t[order], counts[order]


def _bin_batches(
    t: np.ndarray, size: np.ndarray, max_ticks: int, horizon: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """At most ``max_ticks`` ticks: (x, calls, largest batch) per non-empty bin of rounds."""
    if t.size <= max_ticks:
        return t.astype(float), size, size
    edges = np.linspace(0.5, max(horizon, int(t.max())) + 0.5, max_ticks + 1)
    idx = np.clip(np.searchsorted(edges, t, side="right") - 1, 0, max_ticks - 1)
    calls = np.bincount(idx, weights=size, minlength=max_ticks)
    big = np.zeros(max_ticks)
    np.maximum.at(big, idx, size)
    nz = calls > 0
    centres = 0.5 * (edges[:-1] + edges[1:])
    return centres[nz], calls[nz].astype(np.int64), big[nz].astype(np.int64)


def timeline_frames(
    result: Any, algorithms: Sequence[str] | None = None, max_ticks: int = 1500
) -> list[dict[str, np.ndarray]]:
    """Column data of :func:`oracle_timeline`'s layers: per algorithm a band of per-round
    ranges ``{t, row, t_end, row_end, calls}`` then the batch ticks
    ``{t, row, t_end, row_end, calls, batch}`` (first algorithm on the top row)."""
    names = _names(result, algorithms)
    data = []
    biggest = 1
    for name in names:
        r = _get(result, name)
        if r is not None and r.logs:
            t, size = _batches(r.logs[0])
            x, calls, big = _bin_batches(t, size, max_ticks, result.horizon)
            ranges = np.array([(a, b) for a, b, _, _ in r.logs[0].ranges], dtype=float)
        else:
            x = calls = big = np.zeros(0)
            ranges = np.zeros((0, 2))
        biggest = max(biggest, int(big.max()) if big.size else 1)
        data.append((x, calls, big, ranges.reshape(-1, 2)))
    frames: list[dict[str, np.ndarray]] = []
    n = len(names)
    for i, (x, calls, big, ranges) in enumerate(data):
        row = float(n - 1 - i)
        ones = np.ones(len(ranges))
        frames.append(
            {
                "t": ranges[:, 0] - 0.5,
                "row": (row - 0.3) * ones,
                "t_end": ranges[:, 1] + 0.5,
                "row_end": (row + 0.3) * ones,
                "calls": ranges[:, 1] - ranges[:, 0] + 1,
            }
        )
        h = 0.2 + 0.55 * np.log1p(big) / np.log1p(biggest) if big.size else np.zeros(0)
        frames.append(
            {
                "t": np.asarray(x, dtype=float),
                "row": row - h / 2,
                "t_end": np.asarray(x, dtype=float),
                "row_end": row + h / 2,
                "calls": np.asarray(calls, dtype=float),
                "batch": np.asarray(big, dtype=float),
            }
        )
    return frames


def oracle_timeline(
    result: Any,
    algorithms: Sequence[str] | None = None,
    max_ticks: int = 1500,
) -> hv.Overlay:
    """One tick per oracle call (cmab) / expensive computation (semiparametric), run 1.

    x is the round t, each algorithm has its own row.  Calls of one parallel adaptivity round
    form one tick whose height grows with the batch size (hover shows it).  Per-round
    baselines are drawn as a band over the ranges ``log.ranges`` (one call in every round),
    and more than ``max_ticks`` batches are binned, so the data sent to the browser stays
    bounded whatever T is.
    """
    names = _names(result, algorithms)
    colors = algorithm_colors(names)
    problem = _spec(result).get("problem", "cmab")
    what = "oracle calls" if problem == "cmab" else "expensive computations"
    ydim = hv.Dimension("row", label="algorithm")
    kdims = [T_DIM, ydim, "t_end", "row_end"]
    frames = timeline_frames(result, names, max_ticks)
    layers: list[Any] = []
    for i, name in enumerate(names):
        rect = hv.Rectangles(
            frames[2 * i],
            kdims=kdims,
            vdims=[hv.Dimension("calls", label=f"{what} (one per round)")],
            label=name,
            datatype=_DT,
        ).opts(color=colors[name], alpha=0.35, line_alpha=0, tools=["hover"], clone=False)
        seg = hv.Segments(
            frames[2 * i + 1],
            kdims=kdims,
            vdims=[
                hv.Dimension("calls", label=what),
                hv.Dimension("batch", label="largest batch"),
            ],
            label=name,
            datatype=_DT,
        ).opts(color=colors[name], line_width=2, tools=["hover"], clone=False)
        layers += [rect, seg]
    n = len(names)
    ticks = [(n - 1 - i, name) for i, name in enumerate(names)]
    return _overlay(layers, vdim=ydim).opts(
        **_base_opts(
            title=f"{what.capitalize()}, run 1",
            yticks=ticks,
            show_legend=False,
            xlim=_xlim(result) or (None, None),
            ylim=(-0.6, max(n, 1) - 0.4),
            ylabel="",
            xformatter=_T_FORMAT,
        )
    )


# ---------------------------------------------------------------------------- complexity
def complexity_frames(
    result: Any, algorithms: Sequence[str] | None = None
) -> list[dict[str, np.ndarray]]:
    """Column data of :func:`complexity_plot`'s layers: per algorithm the mean cumulative
    queries then adaptivity ``{t, calls}``, then (if there are algorithms) two empty layers,
    the legend's line-style key, then the references ``T`` and ``d log log T``."""
    names = _names(result, algorithms)
    frames: list[dict[str, np.ndarray]] = []
    for name in names:
        r = _get(result, name)
        if r is not None and r.times.size:
            t = r.times.astype(float)
            q = r.queries.mean(axis=0).astype(float)
            a = r.adaptivity.mean(axis=0).astype(float)
        else:
            t = q = a = np.zeros(0)
        frames.append({"t": t, "calls": _positive(q)})
        frames.append({"t": t, "calls": _positive(a)})
    if names:  # the line-style key of the legend (empty: drawn in the legend only)
        frames += [_legend_stub({"t": np.zeros(0), "calls": np.zeros(0)}) for _ in _STYLE_KEY]
    T = float(result.horizon) if result is not None else 0.0
    rt = np.array([1.0, T]) if T >= 1 else np.zeros(0)
    frames.append({"t": rt, "calls": rt.copy()})
    frames.append({"t": rt, "calls": np.full(rt.size, max(_dloglog(result), 1.0))})
    return frames


def _dloglog(result: Any) -> float:
    if result is None:
        return 0.0
    d = float(_spec(result).get("d", 1))
    return d * np.log(max(np.log(max(float(result.horizon), 3.0)), 1.0))


#: Legend key of the complexity plot: line style -> quantity.
_STYLE_KEY = (("solid", "solid: queries"), ("dashed", "dashed: adaptivity"))


def complexity_plot(result: Any, algorithms: Sequence[str] | None = None) -> hv.Overlay:
    """Cumulative query complexity (solid) and adaptivity complexity (dashed), mean over runs,
    on a log y axis, with the references ``T`` (one call per round) and ``d log log T``
    (the order of SROQ's query complexity, Theorem 2 of the combinatorial paper).

    A compact legend: each algorithm's name in its colour (its solid queries curve is the
    legend entry), then the line-style key "solid: queries" / "dashed: adaptivity" in grey,
    then the two references (grey, dotted and dash-dotted).  Curve labels stay
    ``"<name> queries"`` / ``"<name> adaptivity"``; a hook renames the legend entries.
    """
    names = _names(result, algorithms)
    colors = algorithm_colors(names)
    problem = _spec(result).get("problem", "cmab")
    what = "oracle calls" if problem == "cmab" else "expensive computations"
    ydim = hv.Dimension("calls", label=f"cumulative {what}")
    frames = complexity_frames(result, names)
    layers: list[Any] = []
    for i, name in enumerate(names):
        for j, (kind, dash) in enumerate((("queries", "solid"), ("adaptivity", "dashed"))):
            layers.append(
                hv.Curve(
                    frames[2 * i + j],
                    kdims=[T_DIM],
                    vdims=[ydim],
                    label=f"{name} {kind}",
                    datatype=_DT,
                ).opts(
                    color=colors[name],
                    line_width=3,
                    line_dash=dash,
                    tools=["hover"],
                    show_legend=kind == "queries",
                    clone=False,
                )
            )
    n = 2 * len(names)
    if names:
        for frame, (dash, label) in zip(frames[n : n + 2], _STYLE_KEY):
            layers.append(
                hv.Curve(frame, kdims=[T_DIM], vdims=[ydim], label=label, datatype=_DT).opts(
                    color="#777777", line_dash=dash, line_width=3, clone=False
                )
            )
    for frame, label, dash in (
        (frames[-2], "T (one call per round)", "dotted"),
        (frames[-1], "d log log T", "dashdot"),
    ):
        layers.append(
            hv.Curve(frame, kdims=[T_DIM], vdims=[ydim], label=label, datatype=_DT).opts(
                color=REF_COLOR, line_dash=dash, line_width=2, clone=False
            )
        )
    return hv.Overlay(layers).opts(
        **_base_opts(
            title="Query and adaptivity complexity",
            logy=True,
            legend_position="right",
            xlim=_xlim(result) or (None, None),
            xformatter=_T_FORMAT,
            hooks=[_legend_names(names)],
        )
    )


def _legend_names(names: Sequence[str]) -> Any:
    """A HoloViews hook renaming the legend entries ``"<name> queries"`` to ``"<name>"``."""
    renames = {f"{name} queries": name for name in names}

    def hook(plot: Any, _element: Any) -> None:
        for legend in plot.state.legend:
            for item in legend.items:
                label = item.label.get("value") if isinstance(item.label, dict) else None
                label = label if label is not None else getattr(item.label, "value", None)
                if label in renames:
                    item.label = value(renames[label])  # a value, not a column name

    return hook


# ---------------------------------------------------------------------------- surviving arms
_STATES = ("eliminated", "alive", "optimal, alive", "optimal, eliminated")
_STATE_COLORS = ("#d9d9d9", "#6baed6", "#E69F00", "#D62728")


def _elimination_events(result: Any) -> tuple[str | None, list[Any]]:
    """The first algorithm whose run-1 events carry ``surviving`` arms, and those events."""
    if result is None:
        return None, []
    for r in result.results:
        if not r.events:
            continue
        evs = [
            e
            for e in r.events[0]
            if e.kind in ("epoch", "phase") and e.data.get("surviving") is not None
        ]
        if evs:
            return r.algorithm, evs
    return None, []


def _optimal_arms(result: Any) -> set[int]:
    if result is None:
        return set()
    inst = result.instance or {}
    if inst.get("best_arm") is not None:
        return {int(np.asarray(inst["best_arm"]).ravel()[0])}
    opt = inst.get("optimal_action")
    if opt is None:
        return set()
    opt = np.asarray(opt).ravel()
    if opt.dtype == bool:
        opt = np.flatnonzero(opt)
    return {int(a) for a in opt}


def _problem(result: Any, problem: str | None) -> str:
    return problem or _spec(result).get("problem", "cmab")


def surviving_frames(result: Any, problem: str | None = None) -> list[dict[str, np.ndarray]]:
    """Column data of :func:`surviving_plot`'s four layers (one per state of
    :data:`_STATES`): cells ``{epoch, arm, epoch_end, arm_end, start, alive}`` of width 1
    centred on (epoch / phase number, arm); a state without cells has one NaN row (its
    legend swatch)."""
    _name, events = _elimination_events(result)
    kind = _problem(result, problem)
    n_arms = int(_spec(result).get("d" if kind == "cmab" else "K", 0))
    optimal = _optimal_arms(result)
    cells: list[list[tuple[float, float, float, float]]] = [[] for _ in _STATES]
    for k, e in enumerate(events):
        alive = {int(a) for a in np.asarray(e.data["surviving"]).ravel()}
        n_arms = max(n_arms, max(alive, default=-1) + 1)
        label = int(e.data.get("epoch", e.data.get("phase", k + 1)))
        t0 = int(e.data.get("start", e.data.get("t_start", e.t)))
        for arm in range(n_arms):
            s = (1 if arm in alive else 0) + (2 if arm in optimal else 0)
            cells[{0: 0, 1: 1, 2: 3, 3: 2}[s]].append((label, arm, t0, len(alive)))
    frames = []
    for rows in cells:
        a = np.asarray(rows, dtype=float).reshape(-1, 4)
        frames.append(
            _legend_stub(
                {
                    "epoch": a[:, 0] - 0.5,
                    "arm": a[:, 1] - 0.5,
                    "epoch_end": a[:, 0] + 0.5,
                    "arm_end": a[:, 1] + 0.5,
                    "start": a[:, 2],
                    "alive": a[:, 3],
                }
            )
        )
    return frames


def surviving_title(result: Any) -> str:
    """Title of :func:`surviving_plot` (it changes at every epoch / phase)."""
    name, events = _elimination_events(result)
    if name is None:
        return "Surviving arms (run SROQ-CMAB or SBE)"
    last = len(np.asarray(events[-1].data["surviving"]).ravel())
    return f"Surviving arms: {name}, run 1 ({last} left)"


def surviving_plot(result: Any, problem: str | None = None) -> hv.Overlay:
    """Which arms are still alive at each SROQ epoch / SBE phase (run 1 of the first
    eliminating algorithm): a raster arm x epoch, one layer per state (legend): alive (blue),
    eliminated (grey), the optimal action's arms (cmab) or the best arm (semiparametric) in
    orange, red if it was eliminated.  Rectangles (not a heat map) so a live plot can update
    the cells in place at each new epoch."""
    kind = "epoch" if _problem(result, problem) == "cmab" else "phase"
    frames = surviving_frames(result, problem)
    kdims = [
        hv.Dimension("epoch", label=f"{kind} (SROQ epoch / SBE phase)"),
        hv.Dimension("arm", label="arm"),
        "epoch_end",
        "arm_end",
    ]
    vdims = [hv.Dimension("start", label="starts at round"), hv.Dimension("alive", label="alive")]
    layers = [
        hv.Rectangles(frame, kdims=kdims, vdims=vdims, label=state, datatype=_DT).opts(
            color=color, line_color="white", line_width=0.5, tools=["hover"], clone=False
        )
        for frame, state, color in zip(frames, _STATES, _STATE_COLORS)
    ]
    return hv.Overlay(layers).opts(
        **_base_opts(
            title=surviving_title(result),
            show_grid=False,
            legend_position="right",
            xlabel=f"{kind} number",
            ylabel="arm",
            hooks=[_integer_ticks("x", "y")],
        )
    )


# ---------------------------------------------------------------------------- DEO weights
_ROLES = (("best arm", "#E69F00"), ("anchor x_1", "#7F7F7F"), ("other arms", "#0072B2"))


def _latest_design(result: Any) -> tuple[str | None, Any]:
    """The algorithm and the latest phase event carrying DEO ``weights`` (run 1)."""
    if result is not None:
        for r in result.results:
            if not r.events:
                continue
            evs = [e for e in r.events[0] if e.kind == "phase" and "weights" in e.data]
            if evs:
                return r.algorithm, evs[-1]
    return None, None


def design_weights_frames(result: Any) -> list[dict[str, np.ndarray]]:
    """Column data of :func:`design_weights_plot`'s three layers (best arm, anchor, other
    arms): bars ``{x0, y0, x1, y1, arm_id, p}`` of width 0.8 centred on the arm (one NaN
    row for a role without arms: its legend swatch)."""
    _name, ev = _latest_design(result)
    w = np.zeros(0) if ev is None else np.asarray(ev.data["weights"], dtype=float).ravel()
    arms = np.arange(w.size)
    best = _optimal_arms(result)
    anchor = int(ev.data.get("anchor", -1)) if ev is not None else -1
    role = np.array([0 if a in best else (1 if a == anchor else 2) for a in arms], dtype=int)
    frames = []
    for k in range(len(_ROLES)):
        sel = role == k
        x = arms[sel].astype(float)
        frames.append(
            _legend_stub(
                {
                    "x0": x - 0.4,
                    "y0": np.zeros(x.size),
                    "x1": x + 0.4,
                    "y1": w[sel],
                    "arm_id": x,
                    "p": w[sel],
                }
            )
        )
    return frames


def design_weights_title(result: Any) -> str:
    """Title of :func:`design_weights_plot`: phase and Theorem 1's check."""
    name, ev = _latest_design(result)
    if ev is None:
        return "DEO design weights (choose SBE)"
    title = f"DEO weights ({name}, phase {ev.data.get('phase', '?')})"
    norm, bound = ev.data.get("max_norm_to_anchor"), ev.data.get("bound_2_sqrt_d")
    if norm is not None and bound is not None:
        ok = "≤" if float(norm) <= float(bound) + 1e-9 else ">"
        title += f"; Theorem 1: max norm {float(norm):.2f} {ok} 2√d = {float(bound):.2f}"
    return title


def design_weights_plot(result: Any) -> hv.Overlay:
    """DEO design weights (Algorithm 1 of the semiparametric paper) of the latest SBE phase,
    run 1, with Theorem 1's achieved norm against its bound 2 sqrt(d) in the title.  Bars are
    rectangles, one layer per role (legend: best arm, anchor x_1, other arms), so a live plot
    updates them in place."""
    kdims = [
        hv.Dimension("x0", label="arm"),
        hv.Dimension("y0", label="design weight p_i"),
        "x1",
        "y1",
    ]
    vdims = [hv.Dimension("arm_id", label="arm"), hv.Dimension("p", label="p_i")]
    layers = [
        hv.Rectangles(frame, kdims=kdims, vdims=vdims, label=role, datatype=_DT).opts(
            color=color, line_alpha=0, tools=["hover"], clone=False
        )
        for frame, (role, color) in zip(design_weights_frames(result), _ROLES)
    ]
    return hv.Overlay(layers).opts(
        **_base_opts(
            title=design_weights_title(result),
            legend_position="top_right",
            hooks=[_integer_ticks("x")],
        )
    )


# ---------------------------------------------------------------------------- shift, PAC, wall
def shift_frames(t: np.ndarray, nu: np.ndarray) -> list[dict[str, np.ndarray]]:
    """Column data of :func:`shift_plot`: ``[{t_recent, nu}]``."""
    return [{"t_recent": np.asarray(t, dtype=float), "nu": np.asarray(nu, dtype=float)}]


def shift_plot(t: np.ndarray, nu: np.ndarray) -> hv.Curve:
    """The shift nu_t over the most recent rounds (semiparametric reward model, Section 2.1)."""
    return hv.Curve(
        shift_frames(t, nu)[0],
        kdims=[hv.Dimension("t_recent", label="round t (most recent rounds)")],
        vdims=[hv.Dimension("nu", label="shift ν_t")],
        datatype=_DT,
    ).opts(
        **_base_opts(
            title="Shift ν_t (most recent rounds)",
            color="#555555",
            line_width=2,
            tools=["hover"],
            xformatter=NumeralTickFormatter(format="0,0"),
            # before any round: a whole-number axis (a unit range would read "0 0 0 0")
            **({} if len(t) else {"xlim": (0, 100)}),
        )
    )


def pac_plot(
    result: Any,
    X: np.ndarray | None,
    theta: np.ndarray | None,
    algorithms: Sequence[str] | None = None,
) -> hv.Overlay:
    """PAC view: ``sqrt(t) e_t`` at the end of each phase, where
    ``e_t = max_i |(x_i - x_1)^T (theta_hat - theta*)|`` (x_1 the phase's anchor arm), for
    every algorithm whose phase events carry ``theta_hat``, with the ``10 sqrt(d log K)``
    reference of Appendix I.  Only algorithms with at least one estimate get a layer (and a
    legend entry), so the layer count grows when the first phase ends (one re-render)."""
    names = _names(result, algorithms)
    colors = algorithm_colors(names)
    ydim = hv.Dimension("pac", label="√t · e_t")
    layers: list[Any] = []
    shown: list[str] = []
    for name in names:
        r = _get(result, name)
        ts: list[float] = []
        vals: list[float] = []
        if r is not None and X is not None and theta is not None:
            for rep_events in r.events:
                for e in rep_events:
                    th = e.data.get("theta_hat") if e.kind == "phase" else None
                    if th is None:
                        continue
                    anchor = int(e.data.get("anchor", 0))
                    diff = (X - X[anchor]) @ (np.asarray(th, dtype=float) - theta)
                    ts.append(float(e.t))
                    vals.append(float(np.sqrt(max(e.t, 1)) * np.abs(diff).max()))
        if not ts:
            continue  # the legend lists only algorithms with estimates
        shown.append(name)
        layers.append(
            hv.Scatter((ts, vals), kdims=[T_DIM], vdims=[ydim], label=name, datatype=_DT).opts(
                color=colors[name], size=9, tools=["hover"], clone=False
            )
        )
    d = float(_spec(result).get("d", 1))
    K = float(_spec(result).get("K", 2))
    ref = 10 * np.sqrt(d * np.log(max(K, 2.0)))
    T = float(result.horizon) if result is not None else 0.0
    rt = np.array([1.0, T]) if T >= 1 else np.zeros(0)
    layers.append(
        hv.Curve(
            (rt, np.full(rt.size, ref)),
            kdims=[T_DIM],
            vdims=[ydim],
            label="10 √(d log K)",
            datatype=_DT,
        ).opts(color=REF_COLOR, line_dash="dashed", line_width=2, clone=False)
    )
    return hv.Overlay(layers).opts(
        **_base_opts(
            title="PAC view: √t · e_t per phase" + ("" if shown else " (none yet)"),
            xformatter=_T_FORMAT,
            legend_position="top_right",
            xlim=_xlim(result) or (None, None),
        )
    )


def _wall_parts(result: Any) -> tuple[str, str]:
    problem = _spec(result).get("problem", "cmab")
    inside = "oracle calls" if problem == "cmab" else "expensive computations"
    return inside, "rest of the simulation"


def wall_time_frames(
    result: Any, algorithms: Sequence[str] | None = None
) -> list[dict[str, np.ndarray]]:
    """Column data of :func:`wall_time_plot`'s two layers (time inside oracle calls /
    expensive computations, then the rest): horizontal bars
    ``{s0, row, s1, row_end, seconds}``, one row per algorithm (first on top)."""
    names = _names(result, algorithms)
    n = len(names)
    inside, rest = np.zeros(n), np.zeros(n)
    for i, name in enumerate(names):
        r = _get(result, name)
        wall = float(np.sum(r.wall_seconds)) if r is not None else 0.0
        oracle = float(np.sum(r.oracle_seconds)) if r is not None else 0.0
        inside[i] = min(oracle, wall) if wall > 0 else oracle
        rest[i] = max(wall - inside[i], 0.0)
    row = (n - 1 - np.arange(n)).astype(float)
    return [
        {
            "s0": np.zeros(n),
            "row": row - 0.35,
            "s1": inside,
            "row_end": row + 0.35,
            "seconds": inside,
        },
        {
            "s0": inside,
            "row": row - 0.35,
            "s1": inside + rest,
            "row_end": row + 0.35,
            "seconds": rest,
        },
    ]


def wall_time_plot(result: Any, algorithms: Sequence[str] | None = None) -> hv.Overlay:
    """Wall time per algorithm (summed over runs), split into time inside oracle calls /
    expensive computations (orange) and the rest of the simulation (light blue): stacked
    horizontal bars, one row per algorithm (named on the y axis), updated in place."""
    names = _names(result, algorithms)
    parts = _wall_parts(result)
    kdims = [
        hv.Dimension("s0", label="wall time (s), summed over runs"),
        hv.Dimension("row", label="algorithm"),
        "s1",
        "row_end",
    ]
    layers = [
        hv.Rectangles(
            frame,
            kdims=kdims,
            vdims=[hv.Dimension("seconds", label="wall time (s)")],
            label=part,
            datatype=_DT,
        ).opts(color=color, line_alpha=0, tools=["hover"], clone=False)
        for frame, part, color in zip(
            wall_time_frames(result, names), parts, ("#D55E00", "#9ecae1")
        )
    ]
    n = len(names)
    return hv.Overlay(layers).opts(
        **_base_opts(
            title="Wall time: oracle vs the rest",
            legend_position="bottom_right",
            show_grid=False,
            yticks=[(n - 1 - i, name) for i, name in enumerate(names)],
            ylim=(-0.6, max(n, 1) - 0.4),
            ylabel="",
        )
    )
