"""Every served page's template keeps out of Panel's process-wide busy spinner.

One student's click must not update the other students' pages: Panel syncs each template's
``busy_indicator`` with the process-wide ``pn.state.busy``, and an update of another session's
document waits behind that document's lock (dashboard/ui/template.py).
"""

from __future__ import annotations

import panel as pn
import pytest
from bokeh.document import Document
from panel.util import edit_readonly

from dashboard.ui.app import create_app
from dashboard.ui.pages import create_play_page, create_sweep_page
from dashboard.ui.template import page_template


@pytest.mark.parametrize("factory", [create_app, create_sweep_page, create_play_page])
def test_no_page_has_a_spinner_tied_to_the_whole_server(factory):
    before = list(pn.state._indicators)
    template = factory()
    template.server_doc(Document())
    assert template.busy_indicator is None
    assert pn.state._indicators == before  # nothing of this page follows pn.state.busy
    app = getattr(template, "app", None)
    if app is not None:
        app.dispose()


def test_server_busy_changes_nothing_on_a_page():
    template = page_template("t", main=[pn.pane.Markdown("x")])
    doc = Document()
    template.server_doc(doc)
    models_before = {m.id: m.css_classes for m in doc.models if hasattr(m, "css_classes")}
    events: list = []
    doc.on_change(events.append)
    with edit_readonly(pn.state):
        pn.state.busy = True  # as Panel does around another session's event
        pn.state.busy = False
    assert events == []
    assert {m.id: m.css_classes for m in doc.models if hasattr(m, "css_classes")} == models_before


def test_panels_default_template_would_follow_the_server_busy_flag():
    # canary: if Panel stops syncing templates with pn.state.busy, page_template's reason is gone
    template = pn.template.BootstrapTemplate(title="t")
    template.server_doc(Document())
    try:
        assert template.busy_indicator in pn.state._indicators
    finally:
        pn.state._indicators.remove(template.busy_indicator)
