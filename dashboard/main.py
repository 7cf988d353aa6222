"""Entry point of ``panel serve dashboard``: build a fresh app for this session and serve it.

Everything is created inside :func:`dashboard.ui.app.create_app`, once per browser session, so
sessions never share state.  ``panel serve dashboard`` (the directory) guards the server in
``app_hooks.py`` before it listens; served as a single file (``panel serve
dashboard/main.py``) the guard of Panel's ``/components/`` route comes with the first session.
"""

from dashboard.ui.app import create_app
from dashboard.ui.routes import guard_routes

guard_routes()
create_app().servable(title="Bandit teaching dashboard")
