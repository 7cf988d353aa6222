"""Shared conventions of the plot modules: colours, fonts, dimensions, small helpers.

Readable on a projector: one colour per algorithm name everywhere (:func:`algorithm_colors`),
time axes are the dimension ``t`` labelled "round t", fonts >= 12 pt, heights of about
300 px, responsive widths, hover tools showing exact values.  The browser never receives more
than a few thousand points per curve: curves are recorded on the simulation's grid (~400
rounds), bands are thinned to :data:`BAND_POINTS`.
"""

from __future__ import annotations

import functools
import zlib
from collections.abc import Sequence
from typing import Any

import holoviews as hv
import numpy as np
from bokeh.models import BasicTicker, NumeralTickFormatter

from ...simulation import catalogue
from ...simulation.bands import BANDS, band

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
DT = ["dictionary"]

T_DIM = hv.Dimension("t", label="round t")


def t_format() -> NumeralTickFormatter:
    """Tick format of round axes: 20k, 1.5m ...  A new Bokeh model per plot: a Bokeh model
    belongs to one document, and a module-level one made the second dashboard of a process
    rendered outside a server (a notebook cell run again) fail with "Models must be owned by
    only a single document"."""
    return NumeralTickFormatter(format="0.[0]a")


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
    """Indices of at most ``most`` points out of ``n``, always keeping the last one (cached:
    every live frame asks for the same few; the array is read-only)."""
    return _thin_cached(int(n), int(most))


@functools.lru_cache(maxsize=256)
def _thin_cached(n: int, most: int) -> np.ndarray:
    if n <= most:
        keep = np.arange(n)
    else:
        keep = np.unique(np.r_[np.linspace(0, n - 1, most).round().astype(int), n - 1])
    keep.flags.writeable = False
    return keep


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


def _positive(x: np.ndarray) -> np.ndarray:
    """Non-positive values become NaN (not drawn on log axes)."""
    x = np.asarray(x, dtype=float)
    return np.where(x > 0, x, np.nan)


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


def band_title(kind: str) -> str:
    """The band's description for a plot title, e.g. "mean ± 1 sd over runs (ddof = 1)"."""
    return BANDS.get(kind, kind)


def band_layers(
    t: np.ndarray, values: np.ndarray | None, kind: str, floor: float | None = None
) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray], dict[str, np.ndarray]]:
    """The three layers of one algorithm's banded curve, as column data (no band math here:
    :func:`dashboard.simulation.bands.band` computes it).

    Returns ``(area, curve, traces)``:

    * ``area``: ``{"x", "lo", "hi"}`` thinned to :data:`BAND_POINTS` (empty for ``runs``);
    * ``curve``: ``{"x", "mean", "lo", "hi"}`` at every recorded round (the band's bounds for
      the hover);
    * ``traces``: ``{"x", "y"}``, every run as its own line, thinned to :data:`BAND_POINTS`
      points each and separated by NaN (one glyph draws R thin lines; empty unless ``runs``).

    ``floor`` clips the band's lower bound (e.g. 0 for a regret, which is never negative).
    ``values`` is ``(R, G)`` (``None`` or no rounds: every layer empty).
    """
    empty = np.zeros(0)
    if values is None or not len(t):
        return (
            {"x": empty, "lo": empty, "hi": empty},
            {"x": empty, "mean": empty, "lo": empty, "hi": empty},
            {"x": empty, "y": empty},
        )
    t = np.asarray(t, dtype=float)
    b = band(values, kind)
    lo = b.lo if floor is None else np.maximum(b.lo, floor)
    keep = _thin(t.size, BAND_POINTS)
    curve = {"x": t, "mean": b.mean, "lo": lo, "hi": b.hi}
    if kind == "runs":
        area = {"x": empty, "lo": empty, "hi": empty}
        runs = b.runs[:, keep]
        n_runs, k = runs.shape
        ys = np.full((n_runs, k + 1), np.nan)
        ys[:, :k] = runs
        xs = np.full((n_runs, k + 1), np.nan)
        xs[:, :k] = t[keep]
        traces = {"x": xs.ravel()[:-1], "y": ys.ravel()[:-1]}
    else:
        area = {"x": t[keep], "lo": lo[keep], "hi": b.hi[keep]}
        traces = {"x": empty, "y": empty}
    return area, curve, traces
