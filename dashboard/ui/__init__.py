"""Dashboard user interface.

State: ``model`` (param models ``Config`` and ``RunModel``, no Panel).  View: small Viewers
``settings``, ``constants``, ``controls``, ``lesson_view`` and ``board`` (the plot modules of
``plots/``, drawn by ``live``), composed by ``app`` (``create_app`` for a served page).
Safety: ``safe`` (the one escaping helper), ``urlstate`` (the URL, key by key, with notices),
``document`` (thread and closed-page rules of a served document), ``server`` (server
hardening).  Lessons: ``lessons`` (loader) and ``lesson_view``.

Import submodules explicitly (``from dashboard.ui.app import create_app``); importing this
package has no side effects.
"""
