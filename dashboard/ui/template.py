"""The page template of every served session: Bootstrap, without Panel's shared busy spinner.

Panel syncs every template's ``busy_indicator`` with the process-wide ``pn.state.busy``, which
any event of any session flips.  On a served class that turns each click of one student into
a spinner update for *every* open page; an update for another session's document is queued
as a next-tick callback behind that document's lock, so with 30 pages each click queued 30
updates and a student's own Pause waited seconds behind the others' spinners (measured with
``benchmarks/bench_classroom.py``: Pause p50 2.2 s at 30 students, all of it spent waiting
for the session lock).  A page shows its own state instead: the progress text says running,
queued, paused or done.
"""

from __future__ import annotations

from typing import Any

import panel as pn

__all__ = ["HEADER_BACKGROUND", "page_template"]

#: The header colour of every page (the dashboard, /sweep, /play, /design).
HEADER_BACKGROUND = "#0b3d63"


def page_template(title: str, **kwargs: Any) -> pn.template.BootstrapTemplate:
    """A Bootstrap template for one session's page, with no busy indicator tied to the
    server-wide ``pn.state.busy`` (see the module docstring)."""
    kwargs.setdefault("header_background", HEADER_BACKGROUND)
    return pn.template.BootstrapTemplate(title=title, busy_indicator=None, **kwargs)
