"""Shared conventions of the plot modules: colours, fonts, dimensions, small helpers.

Readable on a projector: one colour per algorithm name everywhere (:func:`algorithm_colors`),
time axes are the dimension ``t`` labelled "round t", fonts >= 12 pt, heights of about
440 px (a legend below the frame), responsive widths, hover tools showing exact values.
Legends sit outside the
drawing frame (below it, in columns), titles are short (the band's description is a
subtitle), and every axis drops a tick label that would overlap its neighbour
(``NoOverlap``) on top of asking for few ticks (:func:`axis_hook`).  Every colour drawn as a
line (curves, band edges, reference lines) keeps a WCAG contrast of at least 3:1 against the
plot background of both themes (light: white, dark: Panel's ``#2b3035``; see
:mod:`dashboard.ui.theme`, whose test computes the ratios).  The browser never receives more
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

#: Colour-blind friendly palette used for algorithms: the Okabe-Ito hues first (blue lifted to
#: #2F86C9 and orange darkened to #A07000 so that both keep 3:1 against a white *and* a dark
#: plot background), then Tol/Tableau hues of the same luminance band (0.19-0.30).
PALETTE: tuple[str, ...] = (
    "#2F86C9",
    "#D55E00",
    "#009E73",
    "#CC79A7",
    "#A07000",
    "#8E7CC3",
    "#9C755F",
    "#2E9C9C",
    "#7E8B2E",
    "#E0607E",
    "#5F87C8",
    "#C45C8E",
)
#: Font sizes (projector friendly).
FONTS: dict[str, Any] = {
    "title": "15pt",
    "labels": "14pt",
    "xticks": "12pt",
    "yticks": "12pt",
    "legend": "12pt",
}
#: Font sizes in present mode (a projector at the back of a hall): axis labels >= 18 px,
#: titles >= 22 px (applied to the Bokeh figures by :func:`style_figure`).
PRESENT_FONTS: dict[str, str] = {
    "title": "26px",
    "subtitle": "19px",
    "labels": "22px",
    "ticks": "19px",
    "legend": "19px",
}
#: Most points sent for a band (hv.Area resends its whole data on each update).
BAND_POINTS = 120
HEIGHT = 440
#: Ticks asked of an axis: few enough that labels like "100k" never touch at a 320 px frame
#: (Bokeh's ``NoOverlap`` policy drops any label that still would).
DESIRED_TICKS = 5
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
#: Reference lines (rate shapes, bounds): a mid grey, >= 3:1 against both plot backgrounds.
REF_COLOR = "#808080"


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


def axis_hook(plot: Any, _element: Any = None) -> None:
    """A HoloViews hook: every axis asks for :data:`DESIRED_TICKS` ticks and hides a label
    that would overlap its neighbour (categorical and fixed-tick axes keep their ticks)."""
    from bokeh.models import NoOverlap

    fig = plot.state
    for ax in [*fig.xaxis, *fig.yaxis]:
        ax.major_label_policy = NoOverlap()
        ticker = ax.ticker
        if type(ticker).__name__ == "FixedTicker":
            # the policy walks the ticks in increasing order (rows listed top-down would
            # all but the first be taken for overlaps and hidden)
            ticker.ticks = sorted(ticker.ticks)
        elif hasattr(ticker, "desired_num_ticks"):
            ticker.desired_num_ticks = min(int(ticker.desired_num_ticks), DESIRED_TICKS)


def subtitle_hook(text: str) -> Any:
    """A HoloViews hook adding ``text`` as a second, smaller title line (e.g. the band's
    description), so the title itself stays short enough never to be cut."""

    def hook(plot: Any, _element: Any) -> None:
        from bokeh.models import Title

        fig = plot.state
        if not any(getattr(t, "name", "") == "subtitle" for t in fig.above):
            size = FONTS["legend"]
            fig.add_layout(
                Title(text=text, name="subtitle", text_font_size=size, text_font_style="italic"),
                "above",
            )

    return hook


def style_figure(fig: Any, present: bool) -> None:
    """Set a Bokeh figure's fonts for present mode (``present``) or back to normal: title,
    subtitle, axis labels, tick labels and legend.  Applied by the board after each render
    and when present mode is switched (no re-render)."""
    sizes = (
        PRESENT_FONTS
        if present
        else {
            "title": FONTS["title"],
            "subtitle": FONTS["legend"],
            "labels": FONTS["labels"],
            "ticks": FONTS["xticks"],
            "legend": FONTS["legend"],
        }
    )
    if fig.title is not None and fig.title.text_font_size != sizes["title"]:
        fig.title.text_font_size = sizes["title"]
    for t in fig.above:
        if getattr(t, "name", "") == "subtitle":
            t.text_font_size = sizes["subtitle"]
    for ax in [*fig.xaxis, *fig.yaxis]:
        if ax.axis_label_text_font_size != sizes["labels"]:
            ax.axis_label_text_font_size = sizes["labels"]
            ax.major_label_text_font_size = sizes["ticks"]
    for legend in fig.legend:
        if legend.label_text_font_size != sizes["legend"]:
            legend.label_text_font_size = sizes["legend"]


def _base_opts(**extra: Any) -> dict[str, Any]:
    """Options every plot shares; a ``legend_position`` of ``"bottom"`` gets two columns
    (below the frame: it never covers data), ``hooks`` run after :func:`axis_hook`."""
    opts: dict[str, Any] = {
        "responsive": True,
        "height": HEIGHT,
        "min_height": HEIGHT,
        "fontsize": FONTS,
        "show_grid": True,
        "toolbar": "right",
    }
    hooks = [axis_hook, *extra.pop("hooks", [])]
    opts.update(extra)
    if opts.get("legend_position") == "bottom":
        opts.setdefault("legend_cols", 2)
        opts.setdefault(
            "legend_opts", {"margin": 8, "padding": 6, "label_height": 24, "glyph_height": 22}
        )
    opts["hooks"] = hooks
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
                ax.ticker = BasicTicker(min_interval=1, desired_num_ticks=DESIRED_TICKS + 1)

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
