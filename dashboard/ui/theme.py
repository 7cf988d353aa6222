"""Light and dark themes: Panel's own mechanism, one visible switch, and the colour check.

The theme is Panel's: ``pn.config.theme`` reads the page address's ``?theme=dark`` (Panel's
session argument), the template and every Bokeh figure follow it (Panel's dark design sets
the figures' background to :data:`PLOT_BACKGROUNDS` ``["dark"]``).  :func:`theme_switch` is
the button that makes it visible: it reloads the page with ``theme=`` flipped and every other
key of the address kept, as Panel's Fast template's toggle does.

One palette serves both themes (:data:`dashboard.ui.plots.common.PALETTE`, reference lines
:data:`~dashboard.ui.plots.common.REF_COLOR`): every colour drawn as a line or a filled area
keeps a WCAG 2 contrast ratio of at least :data:`MIN_CONTRAST` against both plot backgrounds
(:func:`contrast_ratio`; ``tests/ui/test_theme.py`` renders the board's plots, the sweep plot
and the reproduce figures and checks every colour their glyphs draw).  Bands are the same
colour as their curve (the check is on that colour; the band is drawn translucent under
the curve, so it never hides a curve).  Plots that colour categories rather than algorithms
(surviving arms, DEO weights, wall time) take them from the palette's named roles here
(:data:`ROLE_COLORS`), the sweep plot and the reproduce figures from the palette itself:
no plot has a palette of its own.  The palette's colours all lie in the luminance band where
both ratios hold (WCAG relative luminance about 0.18-0.30), so they differ by hue; the one
category that must also read without telling hues apart (an optimal arm eliminated) carries
a hatch (:data:`LOST_HATCH`) as a second cue.
"""

from __future__ import annotations

from typing import Any

import panel as pn

__all__ = [
    "ALIVE_COLOR",
    "ANCHOR_COLOR",
    "ELIMINATED_COLOR",
    "LOST_COLOR",
    "LOST_HATCH",
    "MIN_CONTRAST",
    "OPTIMAL_COLOR",
    "ORACLE_COLOR",
    "OTHER_COLOR",
    "PLOT_BACKGROUNDS",
    "REST_COLOR",
    "ROLE_COLORS",
    "THEMES",
    "apply_theme",
    "contrast_ratio",
    "current_theme",
    "luminance",
    "theme_switch",
]

#: The themes a page can have (Panel's names).
THEMES: tuple[str, ...] = ("default", "dark")
#: Background of a Bokeh figure's drawing frame in each theme (Bokeh's default white; Panel's
#: dark Bokeh theme ``#2b3035``).
PLOT_BACKGROUNDS: dict[str, str] = {"default": "#ffffff", "dark": "#2b3035"}
#: WCAG's ratio for graphical objects (success criterion 1.4.11).
MIN_CONTRAST = 3.0

# The palette's named roles: each is a colour of ``PALETTE`` (Okabe-Ito hues adjusted in
# lightness) or its reference grey ``REF_COLOR`` (the test checks it), written out here because
# this module is imported by the plot modules (it cannot import them).  Contrast against
# white / #2b3035: blue 3.91 / 3.41, vermillion 3.87 / 3.44, reddish purple 3.06 / 4.35,
# grey 3.95 / 3.37.  Deuteranopia / protanopia keep blue, vermillion and grey apart (CIELAB
# distance >= 39 after Machado et al.'s simulation); the reddish purple is nearest the grey
# (12), hence its hatch.
_BLUE, _VERMILLION, _PURPLE, _GREY = "#2F86C9", "#D55E00", "#CC79A7", "#808080"
#: The optimal action's arms / the best arm (surviving arms, DEO weights).
OPTIMAL_COLOR = _VERMILLION
#: Arms still alive (surviving arms).
ALIVE_COLOR = _BLUE
#: Eliminated arms (surviving arms).
ELIMINATED_COLOR = _GREY
#: An optimal arm that was eliminated (surviving arms): drawn with :data:`LOST_HATCH`.
LOST_COLOR = _PURPLE
#: Bokeh hatch pattern of :data:`LOST_COLOR` cells (and the hatch's colour, inside the cell).
LOST_HATCH: dict[str, object] = {
    "hatch_pattern": "x",
    "hatch_color": "#000000",
    "hatch_alpha": 0.6,
    "hatch_scale": 8.0,
}
#: DEO weights: the anchor arm x_1, and the other arms.
ANCHOR_COLOR = _GREY
OTHER_COLOR = _BLUE
#: Wall time: inside oracle calls / expensive computations, and the rest of the simulation.
ORACLE_COLOR = _VERMILLION
REST_COLOR = _BLUE
#: Every role by name (the test checks each belongs to the palette and keeps 3:1).
ROLE_COLORS: dict[str, str] = {
    "optimal": OPTIMAL_COLOR,
    "alive": ALIVE_COLOR,
    "eliminated": ELIMINATED_COLOR,
    "optimal, eliminated": LOST_COLOR,
    "anchor": ANCHOR_COLOR,
    "other": OTHER_COLOR,
    "oracle": ORACLE_COLOR,
    "rest": REST_COLOR,
}


def luminance(color: str) -> float:
    """WCAG 2 relative luminance of a ``#rrggbb`` colour (0 black .. 1 white)."""
    text = color.strip().lstrip("#")
    if len(text) != 6:
        raise ValueError(f"not a #rrggbb colour: {color!r}")
    try:
        channels = [int(text[i : i + 2], 16) / 255 for i in (0, 2, 4)]
    except ValueError:
        raise ValueError(f"not a #rrggbb colour: {color!r}") from None
    lin = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]


def contrast_ratio(a: str, b: str) -> float:
    """WCAG 2 contrast ratio of two colours, from 1 (same) to 21 (black on white)."""
    la, lb = sorted((luminance(a), luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


def apply_theme(fig: Any, theme: str | None = None) -> None:
    """Give a Bokeh figure (and every model in it) the page theme's Bokeh colours.

    Panel themes a figure when a pane first renders it; a figure the board builds later (a
    lesson's preset, another algorithm) is swapped into the page without that step and kept
    Bokeh's white frame in the dark theme.  The theme's colours and alphas are set as plain
    property values (a Bokeh theme's values are not sent for a model added to a page later);
    fonts and sizes stay the board's (:func:`~dashboard.ui.plots.common.style_figure`).  The
    light theme has no Bokeh theme: nothing to do.
    """
    theme = theme or current_theme()
    if theme != "dark":
        return
    from panel.theme.bootstrap import Bootstrap

    attrs = Bootstrap._themes["dark"].bokeh_theme._json.get("attrs", {})
    for model in fig.references():
        for cls in type(model).__mro__:
            for prop, value in attrs.get(cls.__name__, {}).items():
                if ("color" in prop or "alpha" in prop) and model.lookup(prop, raises=False):
                    if getattr(model, prop) != value:
                        setattr(model, prop, value)


def current_theme() -> str:
    """The session's theme (``"default"`` or ``"dark"``), as Panel reads it."""
    theme = str(getattr(pn.config, "theme", "default") or "default")
    return theme if theme in THEMES else "default"


_FLIP_JS = """
const url = new URL(window.location.href);
url.searchParams.set("theme", dark ? "default" : "dark");
window.location.assign(url.toString());
"""


def theme_switch(theme: str | None = None, **kwargs: Any) -> pn.widgets.Button:
    """A button that reloads the page in the other theme (``?theme=dark`` / ``default``),
    keeping every other key of the address.  Its label names the theme it switches to."""
    theme = theme or current_theme()
    dark = theme == "dark"
    button = pn.widgets.Button(
        label="Light theme" if dark else "Dark theme",
        css_classes=["theme-button"],
        description="Switch between the light and the dark theme (the address keeps theme=)",
        **kwargs,
    )
    button.js_on_click(args={"dark": dark}, code=_FLIP_JS)
    return button
