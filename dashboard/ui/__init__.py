"""Dashboard user interface: param models (``model``), plot builders (``plots``), the Panel
Viewer and template (``app``) and the lesson loader (``lessons``).

Import submodules explicitly (``from dashboard.ui.app import create_app``); importing this
package has no side effects.
"""
