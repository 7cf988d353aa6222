"""Entry point of ``panel serve dashboard``: build a fresh app for this session and serve it.

Everything is created inside :func:`dashboard.ui.app.create_app`, once per browser session, so
sessions never share state.
"""

from dashboard.ui.app import create_app

create_app().servable(title="Bandit teaching dashboard")
