"""Canaries: the private (or semi-internal) Panel / HoloViews / Bokeh / Tornado behaviour the
dashboard relies on, each checked on its own so that an upgrade fails here, loudly, with
what broke, where the dashboard uses it and the upstream issue it works around, instead of
as a blank plot or a styled-less offline page in a classroom.

Found with ``grep -n '\\._' dashboard/ui dashboard/app_hooks.py`` and by reading
``dashboard/ui/live.py`` (which drives HoloViews plots below their public API for speed):

==============================================  ==========================================
private attribute / behaviour                   used by
==============================================  ==========================================
``Document._template_variables['dist_url']``    ``ui/server.py: serve_panel_css_locally``
``pn.pane.Bokeh._get_model`` (override)         ``ui/live.py: _LazyBokeh``
``AreaPlot._split_area``                        ``ui/live.py: _columns``
HoloViews plot ``subplots`` / ``handles`` /     ``ui/live.py: LivePlot`` (in-place updates)
``style`` / ``cyclic_index`` / ``get_data`` /
``current_frame`` / ``logy`` / ``ylim``
HoloViews Bokeh plot class names                ``ui/live.py: _columns``
``HTTPServer.conn_params.max_header_size``      ``ui/server.py: raise_header_limit``
``session_context.session.connection_count``    ``ui/app.py: _page_connected``
``panel.io.document.dispatch_tornado``          ``ui/ws_frames.py: coalesce_panel_writes``
==============================================  ==========================================
"""

from __future__ import annotations

import inspect

import holoviews as hv
import numpy as np
import panel as pn
import pytest
from bokeh.document import Document
from bokeh.models import ColumnDataSource, Range1d

from dashboard.ui import plots
from dashboard.ui.live import LivePlot, _columns

#: Upstream issues each workaround answers (printed by every failing canary).
PANEL_OFFLINE_CSS = "https://github.com/holoviz/panel/issues/7073"
HOLOVIEWS_SLOW_STREAM_UPDATES = "https://github.com/holoviz/holoviews/issues/1049"
BOKEH_NO_HEADER_SIZE_OPTION = "https://github.com/bokeh/bokeh/pull/6350"
BOKEH_CHOICES_ALLOW_HTML = "https://github.com/bokeh/bokeh/pull/9546"


def _canary(ok: bool, what: str, used_by: str, upstream: str, fix: str) -> None:
    if not ok:
        pytest.fail(
            f"CANARY: {what} changed upstream.\n  used by: {used_by}\n"
            f"  works around: {upstream}\n  what to do: {fix}",
            pytrace=False,
        )


# ---------------------------------------------------------------------------- Panel
def test_panel_reads_dist_url_from_the_documents_template_variables():
    """A session Bokeh builds from the websocket gets Panel's CDN stylesheets unless the
    document's ``dist_url`` is set before the models are built."""
    doc = Document()
    _canary(
        isinstance(getattr(doc, "_template_variables", None), dict),
        "bokeh Document._template_variables (a dict)",
        "dashboard/ui/server.py serve_panel_css_locally",
        PANEL_OFFLINE_CSS,
        "find where Panel now takes the stylesheet base URL of a server session",
    )
    doc._template_variables["dist_url"] = "/static/extensions/panel/"
    model = pn.Column(pn.widgets.Button(label="x")).get_root(doc)
    sheets = [
        getattr(s, "url", "") for m in model.references() for s in getattr(m, "stylesheets", [])
    ]
    urls = [u for u in sheets if isinstance(u, str) and u]
    _canary(
        bool(urls) and not any("cdn.holoviz.org" in u for u in urls),
        "Panel's use of Document._template_variables['dist_url'] for stylesheets",
        "dashboard/ui/server.py serve_panel_css_locally",
        PANEL_OFFLINE_CSS,
        "the offline page test (tests/browser) shows whether CDN CSS is back; re-point "
        "serve_panel_css_locally at Panel's new mechanism",
    )


def test_panel_bokeh_pane_builds_its_model_through_get_model():
    signature = inspect.signature(pn.pane.Bokeh._get_model)
    _canary(
        list(signature.parameters)[:5] == ["self", "doc", "root", "parent", "comm"],
        f"pn.pane.Bokeh._get_model{signature}",
        "dashboard/ui/live.py _LazyBokeh (renders a plot when first shown)",
        HOLOVIEWS_SLOW_STREAM_UPDATES,
        "override the new model-building hook of Panel panes",
    )
    live = LivePlot("canary", lambda data: hv.Curve(([0, 1], [0, 1])))
    live.pane.get_root(Document())
    _canary(
        live.hv_plot is not None and live.renders == 1,
        "Panel calling Bokeh pane _get_model when a pane is first shown",
        "dashboard/ui/live.py _LazyBokeh",
        HOLOVIEWS_SLOW_STREAM_UPDATES,
        "render LivePlots eagerly or hook the new first-render path",
    )


# ---------------------------------------------------------------------------- HoloViews
def _rendered(element):
    return hv.renderer("bokeh").get_plot(element, doc=Document())


def test_holoviews_area_plot_split_area():
    from holoviews.plotting.bokeh.chart import AreaPlot

    split = getattr(AreaPlot, "_split_area", None)
    _canary(
        callable(split),
        "holoviews AreaPlot._split_area",
        "dashboard/ui/live.py _columns (regret bands updated in place)",
        HOLOVIEWS_SLOW_STREAM_UPDATES,
        "build the band's x / y columns like AreaPlot.get_data does now",
    )
    overlay = _rendered(hv.Overlay([hv.Area(([0, 1, 2], [1, 2, 3], [2, 3, 4]), vdims=["y", "y2"])]))
    sub = next(iter(overlay.subplots.values()))
    frame = {"x": np.array([0, 1, 2]), "y": np.array([1, 2, 3]), "y2": np.array([2, 3, 4])}
    ours = _columns(sub, frame)
    data, _, _ = sub.get_data(sub.current_frame, {}, sub.style[sub.cyclic_index])
    _canary(
        ours is not None
        and np.array_equal(np.asarray(ours["x"]), np.asarray(data["x"]))
        and np.array_equal(np.asarray(ours["y"]), np.asarray(data["y"])),
        "the columns AreaPlot._split_area returns (vs AreaPlot.get_data)",
        "dashboard/ui/live.py _columns",
        HOLOVIEWS_SLOW_STREAM_UPDATES,
        "mirror AreaPlot.get_data's new column layout in _columns",
    )


@pytest.mark.parametrize(
    ("element", "kind"),
    [
        (hv.Curve(([0, 1], [1, 2])), "CurvePlot"),
        (hv.Scatter(([0, 1], [1, 2])), "PointPlot"),  # HoloViews draws Scatter with PointPlot
        (hv.Segments(([0], [0], [1], [1])), "SegmentPlot"),
        (hv.Rectangles([(0, 0, 1, 1)]), "RectanglesPlot"),
        (hv.Area(([0, 1], [1, 2])), "AreaPlot"),
    ],
)
def test_holoviews_plot_internals_live_plots_patch(element, kind):
    """LivePlot assigns new columns to each layer's source itself (HoloViews' own update
    recomputes every layer per frame): the handles, the style lookup, ``get_data``'s
    3-tuple and the plot class names it dispatches on must stay."""
    plot = _rendered(hv.Overlay([element]))
    subs = list(getattr(plot, "subplots", {}).values())
    ok = len(subs) == 1
    sub = subs[0] if ok else None
    ok = ok and type(sub).__name__ == kind
    ok = ok and isinstance(sub.handles.get("source"), ColumnDataSource)
    ok = ok and isinstance(plot.handles.get("y_range"), Range1d)
    ok = ok and sub.handles.get("glyph_renderer") is not None
    ok = ok and hasattr(plot, "logy") and hasattr(plot, "ylim") and hasattr(plot, "cleanup")
    if ok:
        style = sub.style[sub.cyclic_index]
        out = sub.get_data(sub.current_frame, {}, style)
        ok = isinstance(out, tuple) and len(out) == 3 and isinstance(out[0], dict)
    _canary(
        ok,
        f"holoviews {kind} internals (subplots, handles['source'/'glyph_renderer'/'y_range'],"
        " style[cyclic_index], get_data -> (data, mapping, style), current_frame, logy, ylim)",
        "dashboard/ui/live.py LivePlot._patch / _patch_frames / _set_y and "
        "ui/app.py _name_regret_renderers",
        HOLOVIEWS_SLOW_STREAM_UPDATES,
        "adapt LivePlot to the new plot internals, or fall back to full re-renders "
        "(patch=False) until it is",
    )
    # and the fast path's columns are still what HoloViews itself would send
    frame = {
        "CurvePlot": {"x": np.array([0.0, 1.0]), "y": np.array([1.0, 2.0])},
        "PointPlot": {"x": np.array([0.0, 1.0]), "y": np.array([1.0, 2.0])},
    }.get(kind)
    if frame is not None:
        _canary(
            set(_columns(sub, frame)) == set(sub.handles["source"].data),
            f"the source columns of a {kind}",
            "dashboard/ui/live.py _columns",
            HOLOVIEWS_SLOW_STREAM_UPDATES,
            "update _columns for the plot's new column names",
        )


def test_live_plot_fast_path_matches_holoviews_columns_for_every_dashboard_plot():
    """Every plot of the dashboard patched through ``frames`` gets exactly the columns the
    HoloViews plot created (otherwise LivePlot silently re-renders every frame)."""
    builders = [
        (lambda r: plots.regret_plot(r, ["A"]), lambda r: plots.regret_frames(r, ["A"])),
        (lambda r: plots.oracle_timeline(r, ["A"]), lambda r: plots.timeline_frames(r, ["A"])),
        (lambda r: plots.complexity_plot(r, ["A"]), lambda r: plots.complexity_frames(r, ["A"])),
        (plots.surviving_plot, plots.surviving_frames),
        (plots.design_weights_plot, plots.design_weights_frames),
        (lambda r: plots.wall_time_plot(r, ["A"]), lambda r: plots.wall_time_frames(r, ["A"])),
    ]
    for builder, frames in builders:
        live = LivePlot("canary", builder, frames=frames)
        live.ensure_rendered(Document())
        before = live.renders
        live.send(None)
        _canary(
            live.renders == before,
            f"the columns HoloViews gives the layers of {builder}",
            "dashboard/ui/live.py _columns / _patch_frames",
            HOLOVIEWS_SLOW_STREAM_UPDATES,
            "align the frames functions of dashboard/ui/plots.py with the new columns",
        )


# ---------------------------------------------------------------------------- Bokeh, Tornado
def test_tornado_http_server_connection_parameters():
    from tornado.httpserver import HTTPServer

    from dashboard.ui.server import raise_header_limit

    server = HTTPServer(lambda request: None)
    try:
        params = getattr(server, "conn_params", None)
        _canary(
            params is not None and isinstance(getattr(params, "max_header_size", None), int),
            "tornado HTTPServer.conn_params.max_header_size",
            "dashboard/ui/server.py raise_header_limit (links over 64 kB load)",
            BOKEH_NO_HEADER_SIZE_OPTION,
            "raise the limit through the server's new attribute, or pass "
            "http_server_kwargs={'max_header_size': ...} where the server is created",
        )
        assert raise_header_limit(2_000_000) >= 1
        assert server.conn_params.max_header_size == 2_000_000
    finally:
        server.stop()


def test_bokeh_session_context_exposes_the_sessions_connections():
    from bokeh.server.contexts import BokehSessionContext
    from bokeh.server.session import ServerSession

    ok = isinstance(inspect.getattr_static(BokehSessionContext, "session", None), property)
    ok = ok and isinstance(inspect.getattr_static(ServerSession, "connection_count"), property)
    ok = ok and isinstance(inspect.getattr_static(ServerSession, "destroyed"), property)
    _canary(
        ok,
        "bokeh BokehSessionContext.session / ServerSession.connection_count / .destroyed",
        "dashboard/ui/app.py DashboardApp._page_connected (no frames to closed sockets)",
        "https://github.com/bokeh/bokeh/issues/11301",
        "find the session's live connection count elsewhere, else closed pages log "
        "WebSocketClosedError again (tests/browser/test_safety.py)",
    )


def test_bokeh_multichoice_still_renders_labels_as_html():
    """Not a dependency but a reason: Bokeh's MultiChoice passes ``allowHTML: true`` to
    Choices.js, so the picker's options (``Config.algorithms``' objects) are only registered
    names: ``AlgorithmSelector`` refuses any other name when set.  If this canary fails,
    Bokeh escapes labels itself; keep the check anyway (a picker offers what can run)."""
    from pathlib import Path

    import bokeh

    bundle = Path(bokeh.__file__).parent / "server" / "static" / "js" / "bokeh-widgets.min.js"
    text = bundle.read_text(encoding="utf-8", errors="replace") if bundle.exists() else ""
    _canary(
        "allowHTML:!0" in text,
        "BokehJS MultiChoice's Choices.js option allowHTML",
        "dashboard/ui/config.py AlgorithmSelector (keeps unregistered names out)",
        BOKEH_CHOICES_ALLOW_HTML,
        "check whether labels are now escaped; keep AlgorithmSelector's check either way",
    )


def test_panel_location_parses_its_query_with_a_module_level_parse_query():
    import panel.io.location as location
    from panel.io.location import Location

    from dashboard.ui.server import guard_panel_query_parser

    _canary(
        callable(getattr(location, "parse_query", None)),
        "panel.io.location.parse_query",
        "dashboard/ui/server.py guard_panel_query_parser (a 5000-digit value loads)",
        "no upstream issue found (Panel parses digit strings with int())",
        "guard the new parser Location.query_params uses",
    )
    guard_panel_query_parser()
    link = Location(search="?seed=" + "9" * 5000)  # Panel's own parse ran on this search
    _canary(
        link.query_params == {"seed": "9" * 5000},
        "Location.query_params going through panel.io.location.parse_query",
        "dashboard/ui/server.py guard_panel_query_parser",
        "no upstream issue found (Panel parses digit strings with int())",
        "guard the new parser Location.query_params uses",
    )


def test_bokeh_session_pending_writes_marks_the_lock():
    """``dashboard/ui/document.py holds_lock`` reads ``ServerSession._pending_writes`` (None
    outside the document lock, a list inside): Panel runs button events without the lock
    before the page reported ``document_ready``, and a Bokeh model changed there raises."""
    import asyncio

    from bokeh.server.session import ServerSession
    from bokeh.util.token import generate_jwt_token, generate_session_id
    from tornado.ioloop import IOLoop

    from dashboard.ui.document import holds_lock

    async def probe() -> tuple[object, list[bool]]:
        sid = generate_session_id()
        session = ServerSession(sid, Document(), IOLoop.current(), generate_jwt_token(sid))
        outside = getattr(session, "_pending_writes", "missing")
        inside: list[bool] = []
        await session.with_document_locked(
            lambda: inside.append(isinstance(session._pending_writes, list) and holds_lock(session))
        )
        inside.append(not holds_lock(session))
        return outside, inside

    outside, inside = asyncio.run(probe())
    _canary(
        outside is None and inside == [True, True],
        "bokeh ServerSession._pending_writes (None outside the document lock, a list inside)",
        "dashboard/ui/document.py holds_lock / needs_callback (Bokeh models change under the lock)",
        "https://github.com/bokeh/bokeh/issues/11301",
        "find another sign of the held document lock, else a Run click before document_ready "
        "logs '_pending_writes should be non-None' again (benchmarks/bench_classroom.py)",
    )


def test_a_finished_actor_future_holds_its_outcome():
    """``dashboard/simulation/remote.py _finished_result`` reads a finished Dask
    ``ActorFuture``'s ``_out`` (``_OK`` / ``_Error`` with ``unwrap()``) instead of calling
    ``result()``, which blocks the web server's loop on the Dask client's thread."""
    import asyncio

    from distributed.actor import _OK, ActorFuture, _Error
    from tornado.ioloop import IOLoop

    from dashboard.simulation.remote import _finished_result

    async def outcomes() -> tuple[object, str]:
        ok, bad = ActorFuture(IOLoop.current()), ActorFuture(IOLoop.current())
        ok._set_result(_OK(41))
        bad._set_result(_Error(ValueError("refused")))
        try:
            _finished_result(bad)
            error = "no error"
        except ValueError as exc:
            error = str(exc)
        return (_finished_result(ok), await ok, ok.done()), error

    (value, awaited, done), error = asyncio.run(outcomes())
    _canary(
        value == awaited == 41 and done and error == "refused",
        "distributed ActorFuture._out (an _OK or _Error with unwrap()) once the call finished",
        "dashboard/simulation/remote.py _finished_result (DaskRun.poll)",
        "https://github.com/dask/distributed/blob/main/distributed/actor.py",
        "read the outcome another way without ActorFuture.result(), which waits on the Dask "
        "client's thread and stalls the server's loop (benchmarks/bench_classroom.py)",
    )


def test_finished_result_falls_back_to_result_for_other_futures():
    from dashboard.simulation.remote import _finished_result

    class Plain:
        def result(self):
            return "via result()"

    assert _finished_result(Plain()) == "via result()"


def test_a_served_pages_websocket_stream_says_when_it_is_still_writing():
    """``dashboard/ui/document.py page_behind`` reads Bokeh's
    ``ServerSession._subscribed_connections`` -> ``ServerConnection._socket`` (the Tornado
    handler) -> ``ws_connection.stream.writing()``; here on a real Tornado websocket."""
    import asyncio

    from bokeh.server.connection import ServerConnection
    from bokeh.server.session import ServerSession
    from tornado.iostream import BaseIOStream
    from tornado.web import Application
    from tornado.websocket import WebSocketHandler, websocket_connect

    seen: dict[str, object] = {}

    class Handler(WebSocketHandler):
        def open(self) -> None:
            stream = getattr(self.ws_connection, "stream", None)
            seen["writing"] = stream.writing() if stream is not None else "missing"
            self.close()

    async def probe() -> None:
        from tornado.httpserver import HTTPServer
        from tornado.netutil import bind_sockets

        sockets = bind_sockets(0, "127.0.0.1")
        port = sockets[0].getsockname()[1]
        server = HTTPServer(Application([(r"/ws", Handler)]))
        server.add_sockets(sockets)
        client = await websocket_connect(f"ws://127.0.0.1:{port}/ws")
        await client.read_message()
        server.stop()

    asyncio.run(probe())
    ok = (
        seen.get("writing") is False
        and callable(getattr(BaseIOStream, "writing", None))
        and "_subscribed_connections" in ServerSession.__annotations__
        and "_socket" in ServerConnection.__init__.__code__.co_names
    )
    _canary(
        ok,
        "bokeh ServerSession._subscribed_connections, ServerConnection._socket and tornado's "
        "WebSocketHandler.ws_connection.stream.writing()",
        "dashboard/ui/document.py page_behind (a page still reading gets no new frame)",
        "https://www.tornadoweb.org/en/stable/iostream.html#tornado.iostream.BaseIOStream.writing",
        "find another sign that a page's websocket is behind, else a slow browser queues "
        "frames and shows Pause seconds late",
    )


def test_bokehs_websocket_write_lock_shows_when_it_is_held():
    """``dashboard/ui/document.py bokeh_sending`` reads Bokeh's ``WSHandler.write_lock`` (a
    ``tornado.locks.Lock``) and its private semaphore count ``_block._value``: 0 while a Bokeh
    message is being written fragment by fragment, 1 otherwise."""
    import asyncio
    import inspect

    from bokeh.server.views.ws import WSHandler
    from tornado.locks import Lock

    from dashboard.ui.document import bokeh_sending

    class Socket:
        write_lock = Lock()

    seen: list[bool] = []

    async def probe() -> None:
        seen.append(bokeh_sending(Socket))
        with await Socket.write_lock.acquire():
            seen.append(bokeh_sending(Socket))
        seen.append(bokeh_sending(Socket))

    asyncio.run(probe())
    ok = seen == [False, True, False] and "write_lock" in inspect.getsource(WSHandler.__init__)
    _canary(
        ok,
        "bokeh WSHandler.write_lock (tornado.locks.Lock, held while Bokeh writes a message's "
        "fragments) and tornado Lock._block._value",
        "dashboard/ui/document.py bokeh_sending (no frame interleaves with a Bokeh reply)",
        "https://www.tornadoweb.org/en/stable/locks.html#tornado.locks.Lock",
        "find another sign that Bokeh is mid-message on a socket, else a frame written then "
        "corrupts the page's stream (its receiver mis-assembles both messages)",
    )


def test_connections_ask_their_protocol_for_patches_and_documents_track_new_models():
    """``dashboard/ui/patch_protocol.py`` gives a served page's ``ServerConnection`` its own
    protocol (``_protocol``, read through ``.protocol`` by Bokeh's and Panel's writers) and
    asks ``DocumentModelManager._new_models`` / ``get_by_id`` which models are synced."""
    from bokeh.server.connection import ServerConnection
    from panel.io.document import dispatch_tornado

    from dashboard.ui.patch_protocol import FastPatchProtocol

    conn = ServerConnection.__new__(ServerConnection)
    conn._protocol = FastPatchProtocol()
    doc = Document()
    ok = (
        conn.protocol is conn._protocol
        and "_protocol" in ServerConnection.__init__.__code__.co_names
        and "protocol" in dispatch_tornado.__code__.co_names
        and isinstance(getattr(doc.models, "_new_models", None), set)
        and callable(getattr(doc.models, "get_by_id", None))
    )
    _canary(
        ok,
        "bokeh ServerConnection._protocol / .protocol, DocumentModelManager._new_models / "
        "get_by_id, panel dispatch_tornado's conn.protocol",
        "dashboard/ui/patch_protocol.py use_fast_patches (each frame's PATCH-DOC without "
        "listing all ~640 models first)",
        "bokeh/protocol/messages/patch_doc.py create: Serializer(references=all synced models)",
        "drop use_fast_patches from DashboardApp.tick (frames cost the server ~16% more at "
        "30 students) or follow Bokeh's new names",
    )


def test_asyncio_loops_keep_their_ready_callbacks_in_ready():
    """``dashboard/ui/frame_turns.py`` lets the server loop's other work run before the next
    frame while asyncio's ``BaseEventLoop._ready`` (the callbacks of the next pass) is not
    empty, and ``ServerSession.with_document_locked`` runs a turn's tick under the lock."""
    import asyncio

    from bokeh.server.session import ServerSession

    async def probe() -> tuple[bool, bool]:
        loop = asyncio.get_running_loop()
        ready = getattr(loop, "_ready", None)
        empty_before = ready is not None and len(ready) == 0
        loop.call_soon(lambda: None)
        return empty_before, ready is not None and len(ready) == 1

    empty_before, seen = asyncio.run(probe())
    ok = empty_before and seen and callable(getattr(ServerSession, "with_document_locked", None))
    _canary(
        ok,
        "asyncio BaseEventLoop._ready (the next pass's callbacks) or "
        "bokeh ServerSession.with_document_locked",
        "dashboard/ui/frame_turns.py (_others_ready; FrameTurn.run through document.run_locked)",
        "asyncio runs every ready callback of a pass before reading sockets again",
        "without _ready the line waits max_passes passes between frames (still correct, a "
        "little slower); without with_document_locked, run turns as next-tick callbacks",
    )


def test_panel_writes_a_pages_events_through_a_module_level_dispatch_tornado(monkeypatch):
    import panel.io.document as document
    from tornado.websocket import WebSocketHandler

    from dashboard.ui.ws_frames import coalesce_panel_writes

    seen = []
    monkeypatch.setattr(
        document, "dispatch_tornado", lambda conn, events=None, msg=None: seen.append(events) or []
    )
    conn = type("Conn", (), {"_socket": WebSocketHandler.__new__(WebSocketHandler)})()
    doc = Document()
    document.write_events(doc, [conn], ["an event"])
    _canary(
        seen == [["an event"]],
        "panel.io.document.write_events -> module-level dispatch_tornado(conn, events)",
        "dashboard/ui/ws_frames.py coalesce_panel_writes (one socket write per page update)",
        "no upstream issue (Tornado sends each websocket message with its own send call)",
        "install dispatch_coalesced where Panel now writes a page's messages",
    )
    monkeypatch.undo()
    coalesce_panel_writes()
    _canary(
        document.dispatch_tornado.__name__ == "dispatch_coalesced",
        "panel.io.document.dispatch_tornado replaced by coalesce_panel_writes",
        "dashboard/ui/ws_frames.py",
        "no upstream issue",
        "install dispatch_coalesced where Panel now writes a page's messages",
    )


# ------------------------------------------------------------- Panel's /components/ route
PANEL_COMPONENT_ROUTE_IMPORTS = "panel/io/server.py ComponentResourceHandler.parse_url_path"


def test_panels_component_route_imports_only_in_parse_url_path():
    """``dashboard/ui/routes.py`` guards ``parse_url_path``: that is only enough while it is
    the one method of the handler that imports what a URL names, and while Tornado's static
    handler resolves every request's path through it."""
    import panel.io.server as server
    from tornado.web import StaticFileHandler

    handler = server.ComponentResourceHandler
    importing = sorted(
        name
        for name, member in vars(handler).items()
        if callable(getattr(member, "__func__", member))
        and "import" in inspect.getsource(getattr(member, "_dashboard_original", member))
    )
    _canary(
        importing == ["parse_url_path"],
        f"ComponentResourceHandler methods that import ({importing})",
        "dashboard/ui/routes.py guard_component_route",
        PANEL_COMPONENT_ROUTE_IMPORTS,
        "read the new handler: guard every method that imports a module named by the URL "
        "before its import (or replace the route's handler class in the served app)",
    )
    _canary(
        "self.parse_url_path(" in inspect.getsource(StaticFileHandler.get),
        "tornado StaticFileHandler.get resolving its path through parse_url_path",
        "dashboard/ui/routes.py guard_component_route",
        PANEL_COMPONENT_ROUTE_IMPORTS,
        "guard the method Tornado now calls with the URL's path",
    )


def test_the_component_route_is_served_by_the_guarded_class():
    """Both serve paths (``panel serve`` and ``pn.serve``) build the route with
    ``get_static_routes``; the guard patches the class those routes name."""
    import panel.io.server as server

    from dashboard.ui.routes import guard_component_route

    guard_component_route()
    routes = [r for r in server.get_static_routes({}) if "components" in str(r[0])]
    _canary(
        len(routes) == 1 and routes[0][1] is server.ComponentResourceHandler,
        f"the /components/ route of panel.io.server.get_static_routes ({routes})",
        "dashboard/ui/routes.py guard_component_route",
        PANEL_COMPONENT_ROUTE_IMPORTS,
        "find the class Panel now routes /components/ to and guard its parse_url_path",
    )
    resolved = routes[0][1].parse_url_path
    _canary(
        getattr(resolved, "_dashboard_guard", False),
        "the guard on the routed class's parse_url_path (a subclass overrides it?)",
        "dashboard/ui/routes.py guard_component_route",
        PANEL_COMPONENT_ROUTE_IMPORTS,
        "guard the method on the class that really serves the route",
    )


def test_panels_autoload_route_is_served_by_the_guarded_class():
    """``/<app>/autoload.js`` builds a session; Panel's handler does not check the login
    itself, ``dashboard/ui/routes.py guard_autoload_route`` does."""
    import panel.io.server as server
    from bokeh.server.urls import per_app_patterns

    from dashboard.ui.routes import guard_routes

    guard_routes()
    routed = [h for p, h in per_app_patterns if p.endswith("autoload.js")]
    _canary(
        routed == [server.AutoloadJsHandler],
        f"the autoload.js route of bokeh's per_app_patterns ({routed})",
        "dashboard/ui/routes.py guard_autoload_route",
        "panel/io/server.py AutoloadJsHandler.get (no @authenticated)",
        "guard the get() of the class that now serves /<app>/autoload.js",
    )
    _canary(
        getattr(routed[0].get, "_dashboard_guard", False),
        "the login check on AutoloadJsHandler.get",
        "dashboard/ui/routes.py guard_autoload_route",
        "panel/io/server.py AutoloadJsHandler.get (no @authenticated)",
        "guard the method that now answers GET /<app>/autoload.js",
    )
