"""The instructor's page (``/instructor`` of ``python -m dashboard serve``): reach and run a class.

* the link(s) students type, with a QR code of the first (:mod:`dashboard.ui.lan`);
* pages open on this server process, per page (:func:`track_session` counts every session the
  server builds, and forgets it when Bokeh discards the session);
* runs open and computing (a frame requested and not back yet: on a worker or queued);
* each Dask worker's load, and Dask's own dashboard on the host the instructor reached this
  page on (not the scheduler's loopback address);

refreshed every two seconds.  Who may open it is decided by the server's login
(:mod:`dashboard.ui.auth`): the instructor's password, or the server machine itself.  Every
value shown is escaped.  Reads only the simulation layer (:mod:`dashboard.simulation.remote`,
:mod:`dashboard.simulation.engine`).
"""

from __future__ import annotations

import html
import os
import threading
from collections.abc import Callable
from typing import Any

import panel as pn
import param

from ..simulation.engine import ENV_SCHEDULER
from ..simulation.remote import activity
from .lan import dask_link_for, host_of, qr_data_uri, student_urls

__all__ = [
    "LISTEN_ENV",
    "ORIGINS_ENV",
    "ClassLoad",
    "create_instructor_page",
    "open_sessions",
    "track_session",
    "tracked",
    "untrack_session",
]

#: ``address:port`` the server listens on (set by ``python -m dashboard serve``).
LISTEN_ENV = "BANDIT_DASHBOARD_LISTEN"
#: The ``--allow-websocket-origin`` values, comma-separated (what students were told to type).
ORIGINS_ENV = "BANDIT_DASHBOARD_ORIGINS"

_LOCK = threading.Lock()
_SESSIONS: dict[str, set[str]] = {}


def track_session(page: str) -> bool:
    """Count the current served session under ``page`` until Bokeh discards it; returns
    whether it was counted (not served: nothing to count)."""
    doc = pn.state.curdoc
    ctx = getattr(doc, "session_context", None)
    if doc is None or ctx is None:
        return False
    sid = str(ctx.id)
    with _LOCK:
        _SESSIONS.setdefault(page, set()).add(sid)

    def forget(_ctx: Any) -> None:
        with _LOCK:
            _SESSIONS.get(page, set()).discard(sid)

    doc.on_session_destroyed(forget)
    return True


def untrack_session(page: str) -> None:
    """Stop counting the current session under ``page``."""
    ctx = getattr(pn.state.curdoc, "session_context", None)
    if ctx is not None:
        with _LOCK:
            _SESSIONS.get(page, set()).discard(str(ctx.id))


def tracked(page: str, build: Callable[[], Any]) -> Callable[[], Any]:
    """``build`` (a page function of :func:`panel.serve`) with its sessions counted."""

    def page_function() -> Any:
        counted = track_session(page)
        try:
            return build()
        except BaseException:
            if counted:  # a page that failed to build is no open page
                untrack_session(page)
            raise

    page_function.__name__ = getattr(build, "__name__", "page")
    page_function.__doc__ = build.__doc__
    return page_function


def open_sessions() -> dict[str, int]:
    """Sessions open on this server process, per page."""
    with _LOCK:
        return {page: len(ids) for page, ids in sorted(_SESSIONS.items()) if ids}


def _listen() -> tuple[str, int]:
    address, _, port = os.environ.get(LISTEN_ENV, "").rpartition(":")
    try:
        return address, int(port)
    except ValueError:
        return "", 0


def _request_host() -> str:
    try:
        headers = pn.state.headers or {}
    except Exception:  # not served
        return ""
    return str(headers.get("Host", "") or "")


class ClassLoad(param.Parameterized):
    """Numbers shown on the instructor's page (refreshed by :meth:`refresh`)."""

    sessions = param.Integer(default=0, doc="Browser sessions open on this server process.")
    pages = param.Dict(default={}, doc="Sessions open per page (dashboard, sweep, ...).")
    runs_open = param.Integer(default=0, doc="Runs loaded (running, paused or finished).")
    runs_computing = param.Integer(default=0, doc="Runs whose next frame is being computed.")
    engine = param.String(default="in-process", doc="Where runs execute.")
    workers = param.List(default=[], doc="One dict per Dask worker: name, tasks, cpu, memory.")
    dask_dashboard = param.String(default="", doc="Link to Dask's own dashboard, if it has one.")

    def __init__(self, host: str = "", **params: Any) -> None:
        super().__init__(**params)
        self.host = host  # the Host header the instructor reached the page with

    def refresh(self) -> None:
        pages = open_sessions()
        act = activity()
        values: dict[str, Any] = {
            "sessions": sum(pages.values()),
            "pages": pages,
            "runs_open": act["open"],
            "runs_computing": act["computing"],
        }
        addr = os.environ.get(ENV_SCHEDULER)
        if os.environ.get("BANDIT_DASHBOARD_ENGINE") == "in-process" or not addr:
            values.update(engine="in-process (no Dask)", workers=[], dask_dashboard="")
        else:
            values["engine"] = f"Dask scheduler {addr}"
            values.update(self._workers())
            values["dask_dashboard"] = dask_link_for(values.get("dask_dashboard", ""), self.host)
        self.param.update(**values)

    @staticmethod
    def _workers() -> dict[str, Any]:
        try:
            from ..simulation.engine import get_client

            client = get_client()
            info = client.scheduler_info()
            link = getattr(client, "dashboard_link", "") or ""
        except Exception as exc:  # the cluster is down: say so, never raise into the page
            return {"workers": [{"name": f"unreachable ({type(exc).__name__})"}]}
        rows = []
        for addr, w in sorted(info.get("workers", {}).items()):
            metrics = w.get("metrics", {})
            rows.append(
                {
                    "name": str(w.get("name", addr)),
                    "tasks": int(metrics.get("executing", 0)),
                    "cpu %": round(float(metrics.get("cpu", 0.0)), 1),
                    "memory MB": round(float(metrics.get("memory", 0)) / 2**20, 1),
                }
            )
        return {"workers": rows, "dask_dashboard": link}


def _cell(value: Any) -> str:
    """A table cell as text, never markup (worker names come from the cluster)."""
    return html.escape(str(value)).replace("|", "&#124;")


def _table(rows: list[dict[str, Any]]) -> str:
    if not rows:
        return "_No Dask workers (runs execute in the server process)._"
    cols = list(rows[0])
    head = "| " + " | ".join(cols) + " |\n|" + "---|" * len(cols) + "\n"
    body = "".join("| " + " | ".join(_cell(r.get(c, "")) for c in cols) + " |\n" for r in rows)
    return head + body


def _join_html(urls: list[str]) -> str:
    """The "students type" block: each link as text and a QR code of the first."""
    listen, _ = _listen()
    if not urls:
        return (
            "<p>This server listens only on this machine "
            f"(<code>{html.escape(listen or '127.0.0.1')}</code>): students cannot reach it. "
            "Restart it with <code>--address 0.0.0.0</code> to serve the room.</p>"
        )
    items = "".join(
        f'<li><a href="{html.escape(u)}"><code>{html.escape(u)}</code></a></li>' for u in urls
    )
    qr = qr_data_uri(urls[0])
    img = (
        f'<img src="{html.escape(qr)}" width="198" height="198" '
        f'alt="QR code of {html.escape(urls[0])}" style="image-rendering: pixelated">'
        if qr
        else ""
    )
    return (
        '<div style="display:flex; gap:2rem; align-items:center; flex-wrap:wrap">'
        f'<div><p style="margin:0">Students type:</p><ul style="font-size:24px">{items}</ul>'
        f"</div>{img}</div>"
    )


def create_instructor_page() -> pn.viewable.Viewable:
    """A fresh instructor page (one per session), refreshed every two seconds."""
    host = _request_host()
    load = ClassLoad(host=host)
    load.refresh()
    listen, port = _listen()
    if not port:  # listening on a free port (0): the port the instructor reached
        parsed = host_of(host)
        port = (parsed[1] if parsed else None) or 0
    origins = [o for o in os.environ.get(ORIGINS_ENV, "").split(",") if o]
    urls = student_urls(listen, port, origins) if listen or origins else []
    join = pn.pane.HTML(_join_html(urls), sizing_mode="stretch_width", styles={"font-size": "18px"})

    def summary(sessions, pages, runs_open, runs_computing, engine, workers, dask_dashboard):
        link = ""
        if dask_dashboard:
            url = _cell(dask_dashboard)
            link = f'\n\nDask\'s own dashboard: <a href="{url}">{url}</a>'
        per_page = ", ".join(f"{_cell(p)} {n}" for p, n in pages.items()) or "none"
        return pn.pane.Markdown(
            f"### Class load\n\n"
            f"* **{sessions}** page(s) open on this server process ({per_page}); a closed "
            f"page leaves the count within about 20 s\n"
            f"* **{runs_open}** run(s) loaded, **{runs_computing}** computing or queued\n"
            f"* Simulations run on: {_cell(engine)}\n\n"
            f"#### Workers\n\n{_table(workers)}{link}",
            sizing_mode="stretch_width",
            styles={"font-size": "18px"},
        )

    body = pn.bind(
        summary,
        load.param.sessions,
        load.param.pages,
        load.param.runs_open,
        load.param.runs_computing,
        load.param.engine,
        load.param.workers,
        load.param.dask_dashboard,
    )
    if pn.state.curdoc is not None and pn.state.curdoc.session_context is not None:
        from .document import periodic

        periodic(load.refresh, 2000)  # background: no server-wide busy flag
    page = pn.Column(
        pn.pane.Markdown("## Instructor: bandit teaching dashboard"), join, body, width=800
    )
    page.load = load  # handle for tests
    page.urls = urls
    return page
