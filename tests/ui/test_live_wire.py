"""What a frame sends: unchanged layers send nothing, short columns go inline (no binary
buffer, i.e. two websocket writes fewer per column, frame and page), long ones as buffers,
and the page gets the same numbers either way (live.py)."""

from __future__ import annotations

import functools
import json
import math

import holoviews as hv
import numpy as np
import panel as pn
from bokeh.document import Document
from bokeh.models import ColumnDataSource
from bokeh.protocol import Protocol
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from dashboard.ui.app import DashboardApp
from dashboard.ui.live import (
    INLINE_MAX,
    PLAIN_INLINE_MAX,
    _area_outline,
    _same_columns,
    _wire,
)

floats = st.floats(allow_nan=True, allow_infinity=True, width=64)


@settings(max_examples=60, deadline=None)
@given(hnp.arrays(np.float64, st.integers(0, 2 * INLINE_MAX), elements=floats))
def test_inline_columns_reach_the_page_as_the_same_doubles(values):
    source = ColumnDataSource(data={"x": np.zeros(0)})
    doc = Document()
    doc.add_root(source)
    events = []
    doc.callbacks.on_change(events.append)
    source.data = _wire({"x": values})
    msg = Protocol().create("PATCH-DOC", events)
    inline = len(values) <= INLINE_MAX or bool(np.isfinite(values).all())
    assert len(msg._buffers) == (0 if inline else 1)
    if not inline:
        return
    content = json.loads(msg.content_json)
    (sent,) = [e for e in content["events"] if e["kind"] == "ColumnDataChanged"]
    got = sent["data"]["entries"][0][1]
    assert len(got) == len(values)
    for g, v in zip(got, values):
        if isinstance(g, dict):  # Bokeh's encoding of the non-finite numbers
            assert g["type"] == "number"
            want = "nan" if math.isnan(v) else ("+inf" if v > 0 else "-inf")
            assert g["value"] == want
        else:
            assert float(g) == v and math.copysign(1, float(g)) == math.copysign(1, v)


def test_wire_keeps_long_and_non_numeric_columns_as_they_are():
    long = np.arange(INLINE_MAX + 1, dtype=float)
    gappy = long.copy()
    gappy[3] = np.nan  # a list of it would be encoded value by value: stays a buffer
    longest = np.arange(PLAIN_INLINE_MAX + 1, dtype=float)
    names = np.array(["a", "b"])
    out = _wire(
        {
            "t": long,
            "gappy": gappy,
            "longest": longest,
            "name": names,
            "k": np.arange(3),
            "ok": np.array([True, False]),
        }
    )
    assert out["gappy"] is gappy and out["longest"] is longest and out["name"] is names
    assert out["t"] == long.tolist()  # long but plain: inline, passed whole
    assert out["k"] == [0, 1, 2] and isinstance(out["k"][0], int)
    assert out["ok"] == [True, False]


@settings(max_examples=80, deadline=None)
@given(hnp.arrays(np.float64, st.integers(0, 2 * INLINE_MAX), elements=floats), st.booleans())
def test_same_columns_never_calls_changed_data_the_same(values, as_list):
    old = {"y": values.tolist() if as_list else values.copy()}
    # the usual case, a layer between events: what _wire sent (a list of the same numbers),
    # or a short buffer holding the same values
    if (as_list and not np.isnan(values).any()) or (not as_list and len(values) <= INLINE_MAX):
        assert _same_columns({"y": values}, old)
    assert _same_columns({"y": values}, {"y": values})  # the very same array
    assert not _same_columns({"y": values, "z": values}, old)  # other columns
    assert not _same_columns({"y": np.r_[values, 1.0]}, old)  # other length
    if values.size:
        changed = values.copy()
        changed[-1] = 0.5 if changed[-1] != 0.5 else -0.5
        assert not _same_columns({"y": changed}, old)
    if values.size > 1:  # a change before the last value (which is compared first)
        changed = values.copy()
        changed[0] = 0.5 if changed[0] != 0.5 else -0.5
        assert not _same_columns({"y": changed}, old)


@functools.cache
def _area_subplot():
    """One rendered HoloViews AreaPlot (its ``_split_area`` keeps no state between calls), so
    that each example does not render a plot again (~0.1 s each)."""
    overlay = hv.renderer("bokeh").get_plot(
        hv.Overlay([hv.Area(([0, 1], [1, 2], [2, 3]), vdims=["y", "y2"])]), doc=Document()
    )
    return next(iter(overlay.subplots.values()))


@settings(max_examples=60, deadline=None)
@given(
    st.integers(0, 12).flatmap(
        lambda n: st.tuples(
            *(
                hnp.arrays(st.sampled_from([np.float64, np.int64]), n, elements=st.integers(-9, 9))
                for _ in range(3)
            )
        )
    ),
    st.lists(st.tuples(st.integers(0, 2), st.integers(0, 11), st.sampled_from([np.nan, np.inf]))),
)
def test_area_outline_is_holoviews_split_area(arrays, holes):
    """The band outline built directly is HoloViews' own, with and without NaN / infinite
    values (those go to HoloViews), for float and integer columns."""
    xs, lo, hi = (a.copy() for a in arrays)
    for which, i, value in holes:
        column = (xs, lo, hi)[which]
        if i < len(column) and column.dtype.kind == "f":
            column[i] = value
    sub = _area_subplot()
    ours = _area_outline(sub, xs, lo, hi)
    theirs = sub._split_area(xs, lo, hi)
    for a, b in zip(ours, theirs):
        assert type(a) is type(b)
        a, b = np.asarray(a), np.asarray(b)
        assert a.dtype == b.dtype and np.array_equal(a, b, equal_nan=True)


def test_same_columns_compares_strings():
    assert _same_columns({"a": np.array(["x", "y"])}, {"a": ["x", "y"]})
    assert not _same_columns({"a": np.array(["x", "y"])}, {"a": ["x", "z"]})


def sources_with_data(doc: Document) -> list[ColumnDataSource]:
    return [
        m for m in doc.models if isinstance(m, ColumnDataSource) and any(map(len, m.data.values()))
    ]


def test_a_frame_sends_only_changed_layers_and_short_columns_inline():
    app = DashboardApp(autostart_timer=False, frame_seconds=0.02)
    app.config.param.update(d=6, m=2, horizon=3000, runs=2)
    doc = Document()
    doc.add_root(app.__panel__().get_root(doc))
    events = []
    doc.callbacks.on_change(events.append)
    app.run()
    for _ in range(200):
        app.tick()
        if app.run_model.status == "done":
            break
    assert app.run_model.status == "done"
    sent = [e for e in events if type(e).__name__ == "ColumnDataChangedEvent"]
    short = [v for e in sent for v in e.model.data.values() if 0 < len(v) <= INLINE_MAX]
    assert short and all(isinstance(v, list) for v in short)
    events.clear()
    with pn.io.hold():
        app.board.push(app.run_model.result, full=True, stride=1)  # the same data again
    again = [e.model for e in events if type(e).__name__ == "ColumnDataChangedEvent"]
    # only layers with a long column may go again (not compared, see _same_columns)
    assert all(any(len(v) > INLINE_MAX for v in s.data.values()) for s in again)
    assert len(again) < len(sources_with_data(doc))
    # the numbers are the simulation's: the regret plot's last point is the final mean regret
    regret = app.plots["regret"]
    (curve, *_) = [s for s in regret.sources() if "regret" in s.data and len(s.data["t"])]
    result = app.run_model.result.results[0]
    assert curve.data["t"][-1] == result.times[-1]
    assert math.isclose(curve.data["regret"][-1], float(result.regret[:, -1].mean()), rel_tol=1e-12)


numbers = st.one_of(
    hnp.arrays(np.float64, st.integers(0, INLINE_MAX), elements=floats),
    hnp.arrays(
        np.int64,
        st.integers(0, INLINE_MAX),
        elements=st.integers(-(2**62), 2**62)
        | st.sampled_from([2**53 - 1, -(2**53 - 1), 2**53, 2**53 - 2]),
    ),
    hnp.arrays(np.uint8, st.integers(0, INLINE_MAX)),
    hnp.arrays(np.bool_, st.integers(0, INLINE_MAX)),
)


@settings(max_examples=120, deadline=None)
@given(numbers)
def test_json_numbers_encode_exactly_as_bokeh_encodes_the_values_one_by_one(values):
    """A JsonNumbers column passes the encoder whole; the message's JSON is the same as
    Bokeh's value-by-value encoding of the plain list (NaN, infinities and unsafe integers
    are left to Bokeh: those lists stay plain)."""
    import warnings

    from bokeh.core.serialization import Serializer

    from dashboard.ui.patch_protocol import JsonNumbers, json_numbers

    wired = json_numbers(values)
    plain = values.tolist()
    assert json.dumps(list(wired)) == json.dumps(plain)  # (NaN != NaN: compare the text)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # Bokeh warns about unsafe integers
        want = Serializer().encode(plain)
        got = Serializer().encode(wired)
    assert json.dumps(got) == json.dumps(want)
    if isinstance(wired, JsonNumbers):
        assert got is wired  # passed through whole
    finite = values.dtype.kind != "f" or bool(np.isfinite(values).all())
    safe = values.dtype.kind not in "iu" or all(abs(int(v)) < 2**53 - 1 for v in plain)
    assert isinstance(wired, JsonNumbers) == (finite and safe)


def _pair():
    """A served document with one source, and a page-side copy kept in sync through the
    PATCH-DOC messages the server would send (Bokeh's own encoder and decoder)."""
    source = ColumnDataSource(data={"t": [], "y": []})
    server = Document()
    server.add_root(source)
    page = Document.from_json(server.to_json())
    events = []
    server.callbacks.on_change(events.append)

    def sync():
        if events:
            msg = Protocol().create("PATCH-DOC", list(events))
            kinds = [e["kind"] for e in json.loads(msg.content_json)["events"]]
            page.apply_json_patch(msg.payload, setter="page")  # (payload: decoded, buffers)
            events.clear()
            return kinds, len(msg.content_json)
        return [], 0

    return source, page.get_model_by_id(source.id), sync


def _as_floats(column):
    return [float(v) for v in column]


_frame_steps = st.lists(
    st.tuples(
        st.sampled_from(["grow", "grow", "grow", "change", "regrow", "shrink", "same", "nan"]),
        st.integers(1, 40),
    ),
    min_size=1,
    max_size=12,
)


@settings(max_examples=60, deadline=None)
@given(_frame_steps, st.integers(0, 2**31 - 1))
def test_growing_columns_stream_their_new_rows_and_the_page_holds_every_value(steps, seed):
    from dashboard.ui.live import _assign

    rng = np.random.default_rng(seed)
    source, page_source, sync = _pair()
    t = np.zeros(0)
    y = np.zeros(0)
    for kind, n in steps:
        before = len(t)
        if kind in ("grow", "nan"):
            t = np.concatenate([t, (t[-1] if t.size else 0) + 1 + np.arange(n, dtype=float)])
            new = rng.normal(size=n)
            if kind == "nan":
                new[rng.integers(n)] = np.nan
            y = np.concatenate([y, new])
        elif kind in ("change", "regrow") and y.size:
            y = y.copy()
            y[rng.integers(y.size)] += 1.0  # an earlier point changed (a new run)...
            if kind == "regrow":  # ...and new points came too: not an append
                t = np.concatenate([t, t[-1] + 1 + np.arange(n, dtype=float)])
                y = np.concatenate([y, rng.normal(size=n)])
        elif kind == "shrink":
            t, y = t[: len(t) // 2], y[: len(y) // 2]
        was_plain = bool(np.isfinite(source.data["y"]).all()) if len(source.data["y"]) else True
        _assign(source, {"t": t, "y": y})
        kinds, _ = sync()
        assert np.array_equal(np.asarray(_as_floats(page_source.data["t"])), t)
        assert np.array_equal(np.asarray(_as_floats(page_source.data["y"])), y, equal_nan=True)
        streamed = "ColumnsStreamed" in kinds
        if streamed:  # only a surely plain append streams
            assert (
                kind == "grow" and was_plain and len(t) > before
            )  # (onto [] kept as JSON numbers too)
        elif kind == "grow" and before > 0 and was_plain and np.isfinite(y).all():
            assert kinds == ["ColumnsStreamed"], kinds  # a plain append always streams


def test_a_frame_streams_only_the_new_points_of_its_curves():
    from dashboard.ui.live import _assign

    source, page_source, sync = _pair()
    t = np.arange(1, 101, dtype=float)
    _assign(source, {"t": t, "y": t / 3})
    kinds, whole = sync()
    assert kinds == ["ColumnDataChanged"]
    t2 = np.arange(1, 104, dtype=float)
    _assign(source, {"t": t2, "y": t2 / 3})
    kinds, size = sync()
    assert kinds == ["ColumnsStreamed"] and size < whole / 5
    assert _as_floats(page_source.data["y"]) == (t2 / 3).tolist()
    t3 = t2.copy()
    t3[0] = -1.0  # an earlier point changed: the columns go whole
    _assign(source, {"t": t3, "y": t2 / 3})
    kinds, _ = sync()
    assert kinds == ["ColumnDataChanged"]
    assert _as_floats(page_source.data["t"]) == t3.tolist()
