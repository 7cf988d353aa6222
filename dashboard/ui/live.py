"""Live plots: a pipe of data feeding a HoloViews plot that updates in place, cheaply.

HoloViews' own DynamicMap update recomputes ranges, legends and options for every layer on
every frame (about 20 ms per layer here), too slow for 10 frames per second with a dozen
layers.  A :class:`LivePlot` therefore renders its builder's element once (a normal HoloViews
Bokeh plot, with all styling, legends and hover tools) and, on each ``pipe.send(data)``, asks
each layer's HoloViews plot for the new column data (``ElementPlot.get_data``, the same
transformation HoloViews uses) and assigns it to the existing Bokeh ``ColumnDataSource``,
then adjusts the y range (and optionally the x range).  If the layer structure changed, or for
elements whose axes are categorical (heat maps), it falls back to a full re-render.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import holoviews as hv
import numpy as np
import panel as pn
from bokeh.core.property.validation import without_property_validation
from bokeh.document import Document
from bokeh.models import Range1d

from .patch_protocol import JsonNumbers, json_numbers

__all__ = ["LivePlot", "Pipe", "data_extent"]


def _layers(element: Any) -> list[Any]:
    return list(element.values()) if isinstance(element, hv.Overlay) else [element]


def data_extent(element: Any, axis: str = "y", positive: bool = False) -> tuple[float, float]:
    """Finite (min, max) of an element's values along ``axis`` (``"x"`` key dimension, ``"y"``
    value dimensions; stacked bars are summed).  ``(nan, nan)`` if there is no data."""
    lo, hi = np.inf, -np.inf
    for layer in _layers(element):
        if len(layer) == 0:
            continue
        if axis == "x":
            dims = layer.kdims[:1]
        elif isinstance(layer, hv.Area):
            dims = layer.vdims[:2]
        elif isinstance(layer, (hv.Segments, hv.Rectangles)):
            dims = [layer.kdims[1], layer.kdims[3]]
        else:
            dims = layer.vdims[:1]
        for dim in dims:
            if isinstance(layer, hv.Bars) and axis == "y" and len(layer.kdims) > 1:
                frame = layer.dframe()
                v = frame.groupby(layer.kdims[0].name)[dim.name].sum().to_numpy(dtype=float)
            else:
                v = np.asarray(layer.dimension_values(dim), dtype=float)
            v = v[np.isfinite(v)]
            if positive:
                v = v[v > 0]
            if v.size:
                lo, hi = min(lo, float(v.min())), max(hi, float(v.max()))
    return (lo, hi) if lo <= hi else (np.nan, np.nan)


class LivePlot:
    """A plot fed by a :class:`Pipe`.

    Parameters
    ----------
    name : str
        Plot name (the pane gets CSS class and name ``<name>-plot``).
    builder : callable
        ``builder(data) -> hv element`` (a function of :mod:`dashboard.ui.plots`).
    data : object
        Initial data (``None``: the builder draws the empty plot).
    patch : bool
        Update in place (True) or re-render on every send (False, for categorical axes).
    autoscale_x : bool
        Also fit the x range to the data on each update (rolling windows).
    x_range : bokeh Range1d, optional
        Shared x range (linked time axes); assigned after every render.
    on_render : callable, optional
        ``on_render(hv_plot)`` after each full render (e.g. to name renderers).
    frames : callable, optional
        ``frames(data) -> [columns per layer]``: the builder's data without building
        HoloViews elements (fast path; see ``plots.regret_frames``).
    y_keys : tuple of str
        Columns of ``frames`` that set the y range.
    x_keys : tuple of str
        Columns of ``frames`` that set the x range when ``autoscale_x`` (default: the first
        column of every layer).
    x_pad : float
        Fraction of the x extent added after the largest x (autoscale only).
    y_pad : float
        Fraction of the y extent added on each side of a linear y range (0: the exact data
        extent, e.g. heat-map-like cells).
    title : callable, optional
        ``title(data) -> str``: the figure title, updated in place with the data (for titles
        that carry numbers, e.g. the epoch or the number of arms left).
    """

    def __init__(
        self,
        name: str,
        builder: Callable[[Any], Any],
        data: Any = None,
        patch: bool = True,
        autoscale_x: bool = False,
        x_range: Range1d | None = None,
        on_render: Callable[[Any], None] | None = None,
        height: int = 440,
        frames: Callable[[Any], list[dict[str, np.ndarray]]] | None = None,
        y_keys: tuple[str, ...] = (),
        x_keys: tuple[str, ...] = (),
        x_pad: float = 0.0,
        y_pad: float = 0.05,
        title: Callable[[Any], str] | None = None,
    ) -> None:
        self.name = name
        self.builder = builder
        self.frames = frames
        self.y_keys = y_keys
        self.x_keys = x_keys
        self.x_pad = float(x_pad)
        self.y_pad = float(y_pad)
        self.title = title
        self.patch_enabled = patch
        self.autoscale_x = autoscale_x
        self.x_range = x_range
        self.on_render = on_render
        #: ``restyle(figure)`` after each full render (the board's fonts: present mode)
        self.restyle: Callable[[Any], None] | None = None
        self.sent = 0
        self.renders = 0
        self.hv_plot: Any = None
        self.element: Any = None
        self._doc: Document | None = None
        self.pane = _LazyBokeh(
            self,
            name=f"{name}-plot",
            css_classes=[f"{name}-plot"],
            sizing_mode="stretch_width",
            min_height=height,
        )
        self.pipe = Pipe(data, self._on_data)

    def ensure_rendered(self, doc: Document | None = None) -> None:
        """Render the plot if it has not been yet (plots render lazily, when first shown)."""
        if self.hv_plot is None:
            self._render(self.builder(self.pipe.data), doc)

    # ------------------------------------------------------------------ public
    def send(self, data: Any) -> None:
        """Push new data (the pipe keeps it for a later first render; the plot updates)."""
        self.pipe.send(data)

    @property
    def figure(self) -> Any:
        """The Bokeh figure currently shown."""
        return None if self.hv_plot is None else self.hv_plot.state

    def sources(self) -> list[Any]:
        """The Bokeh ColumnDataSources of the layers, in layer order."""
        return [sub.handles.get("source") for sub in self._subplots()]

    # ------------------------------------------------------------------ internals
    def _subplots(self) -> list[Any]:
        if self.hv_plot is None:
            return []
        subs = getattr(self.hv_plot, "subplots", None)
        return list(subs.values()) if subs else [self.hv_plot]

    def _on_data(self, data: Any = None) -> None:
        self.sent += 1
        if self.hv_plot is None:
            return  # not shown yet: the first render will use the pipe's latest data
        if self.patch_enabled and self.frames is not None and self._patch_frames(data):
            return
        element = self.builder(data)
        if not (self.patch_enabled and self._patch(element)):
            self._render(element)

    @without_property_validation  # our own columns and numbers (~10% of a frame's update)
    def _patch_frames(self, data: Any) -> bool:
        """Assign the frames' columns to the layers' sources (no HoloViews elements built)."""
        frames = self.frames(data)  # type: ignore[misc]
        subs = self._subplots()
        if len(frames) != len(subs):
            return False
        updates = []
        for sub, frame in zip(subs, frames):
            source = sub.handles.get("source")
            new = _columns(sub, frame)
            if source is None or new is None or set(new) != set(source.data):
                return False
            updates.append((source, new))
        for source, new in updates:
            _assign(source, new)
        self._fit_frames(frames)
        if self.title is not None:
            text = self.title(data)
            title = self.hv_plot.state.title
            if title is not None and title.text != text:
                title.text = text
        return True

    def _fit_frames(self, frames: list[dict[str, np.ndarray]]) -> None:
        logy = bool(getattr(self.hv_plot, "logy", False))
        values = [np.asarray(f[k], dtype=float) for f in frames for k in self.y_keys if k in f]
        v = np.concatenate(values) if values else np.zeros(0)
        v = v[np.isfinite(v)]
        if logy:
            v = v[v > 0]
        lo, hi = (float(v.min()), float(v.max())) if v.size else (np.nan, np.nan)
        self._set_y(lo, hi, logy)
        if self.autoscale_x and frames:
            if self.x_keys:
                columns = [f[k] for f in frames for k in self.x_keys if k in f]
            else:
                columns = [next(iter(f.values())) for f in frames if f]
            x = np.concatenate([np.asarray(c, dtype=float).ravel() for c in columns] or [[]])
            x = x[np.isfinite(x)]
            x_range = self.hv_plot.state.x_range
            if x.size and isinstance(x_range, Range1d):
                lo, hi = float(x.min()), float(max(x.max(), x.min() + 1))
                x_range.update(start=lo, end=hi + self.x_pad * (hi - lo))

    def _set_y(self, lo: float, hi: float, logy: bool) -> None:
        y_range = self.hv_plot.handles.get("y_range")
        if not isinstance(y_range, Range1d) or _fixed(self.hv_plot, "ylim") or not np.isfinite(lo):
            return
        if logy:
            y_range.update(start=lo / 1.5, end=hi * 1.5)
        elif self.y_pad == 0:
            y_range.update(start=lo, end=hi if hi > lo else lo + 1)
        else:
            f = self.y_pad
            pad = f * (hi - lo) if hi > lo else max(abs(hi), 1.0) * f
            y_range.update(start=0.0 if lo >= 0 else lo - pad, end=hi + pad)

    def close(self) -> None:
        """Release the HoloViews plot (it registers itself with the Bokeh document)."""
        if self.hv_plot is not None:
            self.hv_plot.cleanup()
            self.hv_plot = None

    def _render(self, element: Any, doc: Document | None = None) -> None:
        # the old plot holds a session-destroyed hook on the document: drop it, or every
        # re-render would keep a whole figure alive until the browser tab closes
        self.close()
        self.element = element
        doc = doc or self._doc or pn.state.curdoc or Document()
        self._doc = doc
        self.hv_plot = hv.renderer("bokeh").get_plot(element, doc=doc)
        if self.x_range is not None:
            self.hv_plot.state.x_range = self.x_range
        if self.on_render is not None:
            self.on_render(self.hv_plot)
        if self.restyle is not None:
            self.restyle(self.hv_plot.state)
        self.renders += 1
        self.pane.object = self.hv_plot.state

    def _patch(self, element: Any) -> bool:
        subs, layers = self._subplots(), _layers(element)
        if len(subs) != len(layers):
            return False
        try:
            updates = []
            for sub, layer in zip(subs, layers):
                source = sub.handles.get("source")
                if source is None:
                    return False
                style = sub.style[sub.cyclic_index]
                data, _, _ = sub.get_data(layer, {}, style)
                updates.append((source, dict(data)))
        except Exception:
            return False
        for source, data in updates:
            _assign(source, data)
        self.element = element
        self._fit_ranges(element)
        return True

    def _fit_ranges(self, element: Any) -> None:
        logy = bool(getattr(self.hv_plot, "logy", False))
        self._set_y(*data_extent(element, "y", positive=logy), logy)
        x_range = self.hv_plot.state.x_range
        if self.autoscale_x and isinstance(x_range, Range1d):
            lo, hi = data_extent(element, "x")
            if np.isfinite(lo):
                x_range.update(start=lo, end=hi if hi > lo else lo + 1)


class Pipe:
    """The latest data of a live plot and the plot's update on each :meth:`send`.

    Not a ``hv.streams.Pipe``: nothing here is a DynamicMap, and HoloViews' stream machinery
    around the one subscriber cost about as much as the update itself, on every frame of
    every plot of every session.
    """

    def __init__(self, data: Any, on_data: Callable[[Any], None]) -> None:
        self.data = data
        self._on_data = on_data

    def send(self, data: Any) -> None:
        """Keep ``data`` and update the plot with it."""
        self.data = data
        self._on_data(data)


class _LazyBokeh(pn.pane.Bokeh):
    """A Bokeh pane that asks its :class:`LivePlot` to render when first displayed."""

    def __init__(self, live: LivePlot, **params: Any) -> None:
        super().__init__(None, **params)
        self._live = live

    def _get_model(self, doc: Document, root: Any = None, parent: Any = None, comm: Any = None):
        if self._live.hv_plot is None:
            self._live.ensure_rendered(doc)
        return super()._get_model(doc, root, parent, comm)


def _columns(sub: Any, frame: dict[str, np.ndarray]) -> dict[str, Any] | None:
    """The Bokeh source columns HoloViews would produce for ``frame`` on subplot ``sub``."""
    kind = type(sub).__name__
    keys = list(frame)
    if kind == "AreaPlot":
        xs, top = frame[keys[0]], frame[keys[1]]
        bottom = frame[keys[2]] if len(keys) > 2 else np.zeros(len(xs))
        band_xs, band_ys = _area_outline(sub, xs, bottom, top)
        return {"x": band_xs, "y": band_ys}
    if kind == "RectanglesPlot":
        x0, y0, x1, y1 = (np.asarray(frame[k]) for k in keys[:4])
        out = {
            "left": np.minimum(x0, x1),
            "right": np.maximum(x0, x1),
            "bottom": np.minimum(y0, y1),
            "top": np.maximum(y0, y1),
        }
        out.update(frame)  # hover columns keep the dimension names
        return out
    if kind in ("CurvePlot", "PointPlot", "SegmentPlot"):  # hv.Scatter draws with PointPlot
        return dict(frame)
    return None


def _area_outline(sub: Any, xs: Any, lower: Any, upper: Any) -> tuple[Any, Any]:
    """HoloViews' ``AreaPlot._split_area(xs, lower, upper)`` (the band's outline: along
    ``lower`` and back along ``upper``), computed directly in the common case of one
    unbroken float area (no NaN or infinity to split at): the same arrays, without its
    splitting and list building (~5% of a served frame's plot update).  Anything else goes
    to HoloViews."""
    arrays = [np.asarray(a) for a in (xs, lower, upper)]
    if (
        all(a.ndim == 1 and a.dtype.kind == "f" and len(a) == len(arrays[0]) for a in arrays)
        and len(arrays[0])
        and all(np.isfinite(a).all() for a in arrays)
    ):
        x, lo, hi = arrays
        return np.append(x, x[::-1]), np.append(lo, hi[::-1])
    return sub._split_area(xs, lower, upper)


#: Numeric columns up to this length go to the page as JSON lists, longer ones as binary
#: buffers unless they are :data:`PLAIN_INLINE_MAX`-short and JSON carries them as they are.
#: Every binary buffer costs the server two more websocket writes per frame and page (a header
#: and the bytes); a list costs its numbers' text in the message's JSON.  Python floats print
#: as the shortest decimal that parses back to the same double, so the page gets the same
#: numbers either way.
INLINE_MAX = 64
#: Longer numeric columns (the regret curves' ~120-240 points) also go inline when every value
#: passes JSON as it is (:func:`~dashboard.ui.patch_protocol.json_numbers`: no NaN or
#: infinity), which the encoder then takes whole: a frame's 32 binary buffers (64 websocket
#: writes per page) drop to none on a running class.  NaN-holding columns stay buffers (a
#: list of them would be encoded value by value).
PLAIN_INLINE_MAX = 2048


def _assign(source: Any, columns: dict[str, Any]) -> None:
    """Give ``source`` these columns, numeric ones inline where :func:`_wire` says; nothing
    when it holds them already (e.g. an oracle timeline between calls: no event, no bytes);
    only the new rows when the columns grew by rows at their end (:func:`_appended`)."""
    old = source.data
    if _same_columns(columns, old):
        return
    tail = _appended(columns, old)
    if tail is not None:
        source.stream(tail)
    else:
        source.data = _wire(columns)


def _appended(new: dict[str, Any], old: Any) -> dict[str, Any] | None:
    """The rows ``new`` adds at the end of ``old`` (as :class:`JsonNumbers`), or None.

    A running frame's curves (the mean regret and its band columns, the oracle-call counts)
    are recorded at grid rounds that, once passed, never change: each frame only adds points.
    Streaming them sends those points instead of every column again (Bokeh's
    ``ColumnsStreamedEvent``: about half of a running frame's bytes, and the page appends
    rather than rebuilds).  Only when it is surely an append: the same columns, each held as
    plain JSON numbers (what :func:`_wire` sent), each new column the old one with the same
    number of plain rows after it.  A NaN anywhere, a shorter or changed column (a new run,
    a rescaled rate curve, a band's outline) sends the columns whole, as before."""
    if not old or new.keys() != old.keys():
        return None
    n_old = n_new = -1
    for k, v in new.items():
        w = old[k]
        if not isinstance(w, JsonNumbers) or not isinstance(v, np.ndarray) or v.ndim != 1:
            return None
        if n_old < 0:
            n_old, n_new = len(w), len(v)
        if len(w) != n_old or len(v) != n_new or n_new <= n_old or n_new > PLAIN_INLINE_MAX:
            return None
        if v.dtype.kind not in "fiub":
            return None
    tail = {}
    for k, v in new.items():
        rows = json_numbers(v[n_old:])
        if not isinstance(rows, JsonNumbers) or v[:n_old].tolist() != old[k]:
            return None
        tail[k] = rows
    return tail


def _wire(columns: dict[str, Any]) -> dict[str, Any]:
    """``columns`` with its short numeric arrays as lists (:data:`INLINE_MAX`), and its
    longer plain ones too (:data:`PLAIN_INLINE_MAX`)."""
    out = {}
    for k, v in columns.items():
        numeric = isinstance(v, np.ndarray) and v.ndim == 1 and v.dtype.kind in "fiub"
        if numeric and len(v) <= PLAIN_INLINE_MAX:
            listed = json_numbers(v)  # (plain ones pass the encoder whole: patch_protocol.py)
            if len(v) <= INLINE_MAX or isinstance(listed, JsonNumbers):
                v = listed
        out[k] = v
    return out


def _same_columns(new: dict[str, Any], old: Any) -> bool:
    """Whether a source surely holds ``new`` already: the same columns and the same values.
    Conservative: a long column that went as a buffer and is not the very same object, or a
    NaN in a column that went to the page as a list, counts as changed (its data is sent
    again, as every frame did before), so the check costs a few microseconds per layer."""
    if new.keys() != old.keys():
        return False
    for k, v in new.items():
        w = old[k]
        if v is w:
            continue
        if len(v) != len(w):
            return False
        if isinstance(w, list) and isinstance(v, np.ndarray) and v.dtype.kind in "fiub":
            # what _wire sent: the same Python numbers (the last one first: a column that
            # changed, e.g. the rate curve's, mostly differs there, so the whole list is
            # rarely built)
            if len(v) and v[-1].item() != w[-1]:
                return False
            if v.tolist() != w:
                return False
            continue
        if len(v) > INLINE_MAX:
            return False
        a, b = np.asarray(v), np.asarray(w)
        try:
            if not np.array_equal(a, b, equal_nan=True):
                return False
        except TypeError:  # strings or objects: no NaN to compare
            if not np.array_equal(a, b):
                return False
    return True


def _fixed(hv_plot: Any, opt: str) -> bool:
    """Whether the plot was given an explicit limit (e.g. ``ylim``) on both ends."""
    lim = getattr(hv_plot, opt, None)
    if lim is None:
        return False
    try:
        return all(v is not None and np.isfinite(v) for v in lim)
    except TypeError:
        return False
