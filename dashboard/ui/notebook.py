"""The classroom notebooks' setup: Panel, HoloViews and MathJax with nothing from the network.

A classroom may be offline, so :func:`extension` loads BokehJS, Panel's JavaScript and the
MathJax bundle inline (from the kernel's installed packages, never a CDN) and makes every
HoloViews object display through Panel's own notebook path, which inlines Panel's component
stylesheets (HoloViews' renderer leaves four of them pointing at cdn.holoviz.org).

It can be run again in the same kernel: after a browser reload the page has lost BokehJS, and
Panel and HoloViews send only a small "reloading" script on a second call, so the plots stay
blank; a second call of :func:`extension` sends the whole inline bundle again.
"""

from __future__ import annotations

from typing import Any

__all__ = ["extension"]

_state = {"loaded": False}


def _panel_bundle(obj: Any, include: Any = None, exclude: Any = None) -> Any:
    """A HoloViews object's notebook output, rendered as a Panel pane (stylesheets inlined)."""
    import panel as pn

    return pn.panel(obj)._repr_mimebundle_(include, exclude)


def extension() -> None:
    """Load Panel, HoloViews (Bokeh) and MathJax for a notebook, every resource inline.

    Safe to call again in the same kernel (a re-executed setup cell after a browser reload):
    the full bundle is then sent again.
    """
    import holoviews as hv
    import panel as pn

    again = _state["loaded"]
    pn.config.inline = True
    # HoloViews first, with MathJax: one full inline bundle; Panel's call then only adds its
    # notebook comm manager and records "mathjax" (the dashboard's render script waits for it).
    hv.extension("bokeh", inline=True, enable_mathjax=True)
    pn.extension("mathjax", "filedropper", inline=True)
    if again:
        from panel.io.notebook import load_notebook

        load_notebook(True, reloading=False, enable_mathjax=True)
    _state["loaded"] = True
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - panel depends on IPython in notebooks
        return
    ip = get_ipython()
    if ip is None:
        return
    formatter = ip.display_formatter.mimebundle_formatter
    formatter.for_type(hv.core.Dimensioned, _panel_bundle)
