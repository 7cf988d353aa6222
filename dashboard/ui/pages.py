"""Extra pages of a served class (``python -m dashboard serve``): ``/sweep`` and ``/play``.

Each page is built fresh per browser session, with the offline stylesheet handling of the main
app, and releases its work when the session ends.  ``/play?problem=semiparametric`` plays the
semiparametric problem; the default is the combinatorial one against AROQ-CMAB.
"""

from __future__ import annotations

from typing import Any

import panel as pn

from ..simulation.specs import make_spec
from .play import PlayView
from .safe import escape
from .server import serve_panel_css_locally
from .sweep_view import SweepView
from .template import page_template

__all__ = ["create_play_page", "create_sweep_page"]


def _template(title: str, body: Any) -> pn.template.BootstrapTemplate:
    return page_template(title, main=[body])


def create_sweep_page() -> pn.template.BootstrapTemplate:
    """The Sweep view on the server's shared Dask client (never on the event loop)."""
    pn.extension("filedropper", notifications=False)
    serve_panel_css_locally()
    view = SweepView()
    if pn.state.curdoc is not None:
        pn.state.curdoc.on_session_destroyed(lambda _ctx: view.dispose())
    return _template("Bandit teaching dashboard: sweeps", view)


def create_play_page() -> pn.template.BootstrapTemplate:
    """ "Can you beat AROQ?": a short game on the problem named by ``?problem=``."""
    pn.extension(notifications=False)
    serve_panel_css_locally()
    args = (pn.state.session_args or {}) if pn.state.curdoc is not None else {}
    raw = (args.get("problem") or [b"cmab"])[0]
    problem = raw.decode(errors="replace") if isinstance(raw, bytes) else str(raw)
    if problem not in ("cmab", "semiparametric"):
        body: Any = pn.pane.Alert(
            f"Unknown problem {escape(problem, 60)}; use ?problem=cmab or ?problem=semiparametric.",
            alert_type="warning",
        )
    elif problem == "cmab":
        body = PlayView.new(make_spec("cmab", d=6, m=2), ["AROQ-CMAB", "CUCB"], horizon=30)
    else:
        body = PlayView.new(make_spec("semiparametric", d=3, K=5), ["SBE", "BOSE"], horizon=40)
    return _template("Bandit teaching dashboard: can you beat AROQ?", body)
