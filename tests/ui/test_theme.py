"""Themes and colours: WCAG contrast of every line the plots draw against both themes' plot
backgrounds, the palette's checks, and the theme switch."""

from __future__ import annotations

import pytest
from bokeh.models import GlyphRenderer
from hypothesis import given
from hypothesis import strategies as st

from dashboard.simulation import Simulation
from dashboard.simulation.specs import make_spec
from dashboard.ui import plots
from dashboard.ui.plots.common import PALETTE, REF_COLOR
from dashboard.ui.theme import (
    MIN_CONTRAST,
    PLOT_BACKGROUNDS,
    contrast_ratio,
    luminance,
    theme_switch,
)


def test_contrast_ratio_matches_wcag_reference_values():
    assert contrast_ratio("#000000", "#ffffff") == pytest.approx(21.0)
    assert contrast_ratio("#777777", "#ffffff") == pytest.approx(4.48, abs=0.01)
    assert contrast_ratio("#ffffff", "#777777") == contrast_ratio("#777777", "#ffffff")
    assert contrast_ratio("#123456", "#123456") == 1.0
    assert luminance("#ffffff") == pytest.approx(1.0) and luminance("#000000") == 0.0


@pytest.mark.parametrize("theme", sorted(PLOT_BACKGROUNDS))
@pytest.mark.parametrize("color", [*PALETTE, REF_COLOR])
def test_every_palette_colour_keeps_3_to_1_in_both_themes(theme, color):
    ratio = contrast_ratio(color, PLOT_BACKGROUNDS[theme])
    assert ratio >= MIN_CONTRAST, f"{color} on {theme}: {ratio:.2f}"


def test_the_palette_has_no_repeated_colour():
    assert len(set(PALETTE)) == len(PALETTE) and REF_COLOR not in PALETTE


@pytest.fixture(scope="module")
def result():
    spec = make_spec("cmab", d=6, m=2)
    with Simulation(spec, ["CUCB", "AROQ-CMAB", "SROQ-CMAB"], horizon=400, runs=2, seed=0) as s:
        return s.run()


def _line_colors(element) -> list[str]:
    import holoviews as hv

    fig = hv.render(element, backend="bokeh")
    colors = []
    for r in fig.select(GlyphRenderer):
        glyph = r.glyph
        for attr in ("line_color", "fill_color"):
            value = getattr(glyph, attr, None)
            alpha = getattr(glyph, attr.replace("color", "alpha"), 1)
            if isinstance(value, str) and value.startswith("#") and alpha not in (0, 0.0):
                colors.append(value.upper())
    return colors


def test_every_curve_band_and_reference_line_drawn_keeps_3_to_1(result):
    drawn = []
    for element in (
        plots.regret_plot(result),
        plots.complexity_plot(result),
        plots.oracle_timeline(result),
    ):
        drawn += _line_colors(element)
    assert len(drawn) >= 10
    for color in set(drawn):
        for theme, background in PLOT_BACKGROUNDS.items():
            assert contrast_ratio(color, background) >= MIN_CONTRAST, (color, theme)


@given(st.text(max_size=12))
def test_malformed_colours_are_a_value_error(text):
    try:
        value = luminance(text)
    except ValueError:
        return
    assert 0.0 <= value <= 1.0  # a well-formed #rrggbb


def test_the_switch_names_the_other_theme_and_flips_the_address():
    from bokeh.document import Document

    light, dark = theme_switch("default"), theme_switch("dark")
    assert light.label == "Dark theme" and dark.label == "Light theme"
    for button, is_dark in ((light, False), (dark, True)):
        model = button.get_root(Document())
        (callback,) = model.js_event_callbacks["button_click"]
        assert 'searchParams.set("theme"' in callback.code
        assert callback.args["dark"] is is_dark
