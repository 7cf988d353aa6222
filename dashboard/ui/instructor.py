"""The instructor's page (``/instructor`` of ``python -m dashboard serve``): how busy the class is.

Sessions open on this server process, runs open and computing (a frame requested and not back
yet: running on a worker or queued for one), and each Dask worker's load, refreshed every two
seconds.  Reads only the simulation layer (:mod:`dashboard.simulation.remote`,
:mod:`dashboard.simulation.engine`).
"""

from __future__ import annotations

import html
import os
from typing import Any

import panel as pn
import param

from ..simulation.engine import ENV_SCHEDULER
from ..simulation.remote import activity

__all__ = ["ClassLoad", "create_instructor_page"]


class ClassLoad(param.Parameterized):
    """Numbers shown on the instructor's page (refreshed by :meth:`refresh`)."""

    sessions = param.Integer(default=0, doc="Browser sessions open on this server process.")
    runs_open = param.Integer(default=0, doc="Runs loaded (running, paused or finished).")
    runs_computing = param.Integer(default=0, doc="Runs whose next frame is being computed.")
    engine = param.String(default="in-process", doc="Where runs execute.")
    workers = param.List(default=[], doc="One dict per Dask worker: name, tasks, cpu, memory.")
    dask_dashboard = param.String(default="", doc="Link to Dask's own dashboard, if it has one.")

    def refresh(self) -> None:
        info = pn.state.session_info or {}
        act = activity()
        values: dict[str, Any] = {
            "sessions": int(info.get("live", 0)),
            "runs_open": act["open"],
            "runs_computing": act["computing"],
        }
        addr = os.environ.get(ENV_SCHEDULER)
        if os.environ.get("BANDIT_DASHBOARD_ENGINE") == "in-process" or not addr:
            values.update(engine="in-process (no Dask)", workers=[], dask_dashboard="")
        else:
            values["engine"] = f"Dask scheduler {addr}"
            values.update(self._workers())
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


def create_instructor_page() -> pn.viewable.Viewable:
    """A fresh instructor page (one per session), refreshed every two seconds."""
    load = ClassLoad()
    load.refresh()

    def summary(sessions, runs_open, runs_computing, engine, workers, dask_dashboard):
        link = f"\n\nDask's own dashboard: <{dask_dashboard}>" if dask_dashboard else ""
        return pn.pane.Markdown(
            f"### Class load\n\n"
            f"* **{sessions}** session(s) open on this server process\n"
            f"* **{runs_open}** run(s) loaded, **{runs_computing}** computing or queued\n"
            f"* Simulations run on: {engine}\n\n"
            f"#### Workers\n\n{_table(workers)}{link}",
            sizing_mode="stretch_width",
            styles={"font-size": "18px"},
        )

    body = pn.bind(
        summary,
        load.param.sessions,
        load.param.runs_open,
        load.param.runs_computing,
        load.param.engine,
        load.param.workers,
        load.param.dask_dashboard,
    )
    if pn.state.curdoc is not None and pn.state.curdoc.session_context is not None:
        from .document import periodic

        periodic(load.refresh, 2000)  # background: no server-wide busy flag
    page = pn.Column(pn.pane.Markdown("## Instructor: bandit teaching dashboard"), body, width=800)
    page.load = load  # handle for tests
    return page
