"""Server hooks of ``panel serve dashboard`` (Bokeh's directory-app ``app_hooks.py``):
links over 64 kB load and closed pages leave no tracebacks (see
:mod:`dashboard.ui.server`)."""

from __future__ import annotations

from typing import Any

from dashboard.ui.server import harden_server

__all__ = ["on_server_loaded"]


def on_server_loaded(server_context: Any) -> None:
    """Bokeh calls this on the event loop once the server is up (its HTTP server exists)."""
    harden_server()
