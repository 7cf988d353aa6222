"""Themes and colours: WCAG contrast of every line, band and filled area the plots draw (the
board's plots, the sweep plot, the reproduce figures) against both themes' plot backgrounds,
legends outside the frame, the palette's checks, and the theme switch."""

from __future__ import annotations

import panel as pn
import pytest
from bokeh.models import GlyphRenderer
from hypothesis import given
from hypothesis import strategies as st

from dashboard.simulation import Simulation
from dashboard.simulation.specs import make_spec
from dashboard.ui import plots
from dashboard.ui.plots.common import PALETTE, REF_COLOR
from dashboard.ui.theme import (
    LOST_COLOR,
    LOST_HATCH,
    MIN_CONTRAST,
    PLOT_BACKGROUNDS,
    ROLE_COLORS,
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


def test_every_named_role_is_a_colour_of_the_one_palette():
    assert set(ROLE_COLORS.values()) <= {*PALETTE, REF_COLOR}
    # the surviving-arms states are four different colours
    states = [ROLE_COLORS[k] for k in ("eliminated", "alive", "optimal", "optimal, eliminated")]
    assert len(set(states)) == 4


def test_the_dark_background_is_panels_own():
    from bokeh.plotting import figure
    from panel.theme.base import BOKEH_DARK

    assert BOKEH_DARK["attrs"]["Plot"]["background_fill_color"] == PLOT_BACKGROUNDS["dark"]
    assert figure().background_fill_color == PLOT_BACKGROUNDS["default"]  # Bokeh's own


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


# ------------------------------------------------- every colour drawn, every legend placed
def _hex(color: str) -> str:
    """``#rrggbb`` of a colour as Bokeh accepts it (hex or a CSS name)."""
    from bokeh.colors import named

    text = color.strip()
    if text.startswith("#"):
        return text[:7].upper()
    return getattr(named, text.lower()).to_hex().upper()


def _alpha(glyph, attr: str) -> float:
    """The alpha that goes with ``line_color`` / ``fill_color`` / ``hatch_color``."""
    value = getattr(glyph, attr.replace("color", "alpha"), 1.0)
    value = getattr(value, "value", value)  # a Value(...) spec
    return 1.0 if value is None or not isinstance(value, (int, float)) else float(value)


def _spec_colors(renderer, value) -> list[str]:
    """The colours a colour property draws: a constant, a column of colours, or a column
    mapped through a colour mapper (its whole palette)."""
    if isinstance(value, str):
        return [_hex(value)]
    if hasattr(value, "value") and isinstance(value.value, str):
        return [_hex(value.value)]
    field = getattr(value, "field", None)
    transform = getattr(value, "transform", None)
    if transform is not None and hasattr(transform, "palette"):
        return [_hex(c) for c in transform.palette]
    if field is not None:
        return sorted({_hex(str(c)) for c in renderer.data_source.data[field]})
    raise AssertionError(f"unexpected colour spec {value!r}")


def _drawn(fig) -> tuple[list[tuple[str, str]], list[tuple[str, float, list[str]]]]:
    """Every (colour, where) drawn by a visible glyph renderer of a Bokeh figure as a line or a
    fill (bands and areas: fills, at any alpha above 0), in its normal and hover states; and
    every hatch as (colour, alpha, the fill colours it is drawn on)."""
    from bokeh.models import Glyph

    drawn, hatches = [], []
    for r in fig.select(GlyphRenderer):
        if not r.visible:
            continue
        for state in ("glyph", "hover_glyph"):
            glyph = getattr(r, state, None)
            if not isinstance(glyph, Glyph):
                continue
            for attr in ("line_color", "fill_color"):
                value = getattr(glyph, attr, None)
                if value is None or _alpha(glyph, attr) == 0:
                    continue
                where = f"{type(glyph).__name__}.{attr} ({state})"
                drawn += [(c, where) for c in _spec_colors(r, value)]
            if getattr(glyph, "hatch_pattern", None) not in (None, "", " "):
                fills = _spec_colors(r, glyph.fill_color)
                hatches.append((_hex(glyph.hatch_color), _alpha(glyph, "hatch_color"), fills))
    return drawn, hatches


def _assert_contrast(figures: dict[str, object]) -> set[str]:
    """Every colour drawn by these figures keeps 3:1 against both backgrounds, and every
    hatch 3:1 against the fill it is drawn on (blended at its alpha); returns the colours."""
    seen = set()
    failures = []
    for name, fig in figures.items():
        drawn, hatches = _drawn(fig)
        assert drawn, f"{name}: nothing drawn"
        for color, where in drawn:
            seen.add(color)
            for theme, background in PLOT_BACKGROUNDS.items():
                ratio = contrast_ratio(color, background)
                if ratio < MIN_CONTRAST:
                    failures.append(f"{name}: {where} {color} on {theme} {ratio:.2f}")
        for hatch, alpha, fills in hatches:
            for fill in fills:
                f, h = ([int(c[i : i + 2], 16) for i in (1, 3, 5)] for c in (fill, hatch))
                blended = "#" + "".join(
                    f"{round(a * alpha + b * (1 - alpha)):02x}" for a, b in zip(h, f)
                )
                ratio = contrast_ratio(blended, fill)
                if ratio < MIN_CONTRAST:
                    failures.append(f"{name}: hatch {hatch} on {fill} {ratio:.2f}")
    assert not failures, "\n".join(failures)
    return seen


def _assert_legends_outside(figures: dict[str, object]) -> None:
    """No legend that shows anything sits inside a drawing frame (Bokeh's ``center`` panel,
    over the data): every shown legend is below, beside or above the frame."""
    from bokeh.models import Legend

    for name, fig in figures.items():
        for legend in fig.select(Legend):
            if not (legend.visible and legend.items):
                continue  # no legend drawn (``show_legend=False``)
            assert legend not in fig.center, f"{name}: legend inside the frame {legend.location!r}"
            assert any(legend in side for side in (fig.below, fig.right, fig.left, fig.above))


def _figure(element):
    import holoviews as hv

    return hv.renderer("bokeh").get_plot(element).state


@pytest.fixture(scope="module")
def sp_result():
    spec = make_spec("semiparametric", d=3, K=6, shift="sine")
    with Simulation(spec, ["SBE", "LinUCB"], horizon=600, runs=2, seed=5) as s:
        return s.run()


def test_board_category_plots_draw_only_palette_colours_with_3_to_1(result, sp_result):
    figures = {
        "surviving (cmab)": _figure(plots.surviving_plot(result)),
        "surviving (semiparametric)": _figure(plots.surviving_plot(sp_result)),
        "surviving (empty)": _figure(plots.surviving_plot(None)),
        "weights": _figure(plots.design_weights_plot(sp_result)),
        "weights (empty)": _figure(plots.design_weights_plot(None)),
        "wall time": _figure(plots.wall_time_plot(result)),
    }
    seen = _assert_contrast(figures)
    assert seen <= {*PALETTE, REF_COLOR}, seen - {*PALETTE, REF_COLOR}
    assert set(ROLE_COLORS.values()) <= seen  # every role is drawn somewhere
    _assert_legends_outside(figures)
    # the eliminated-optimal state reads without its hue: its cells are hatched
    (_, hatches) = _drawn(figures["surviving (empty)"])
    assert [fills for _h, _a, fills in hatches] == [[LOST_COLOR]]
    assert hatches[0][0] == LOST_HATCH["hatch_color"]


def test_every_board_plot_keeps_3_to_1_and_its_legend_outside(result, sp_result):
    import numpy as np

    figures = {
        "regret": _figure(plots.regret_plot(result)),
        "regret (log, runs)": _figure(plots.regret_plot(result, log_axes=True, band="runs")),
        "timeline": _figure(plots.oracle_timeline(result)),
        "complexity": _figure(plots.complexity_plot(result)),
        "pac": _figure(plots.pac_plot(sp_result, None, None, ["SBE", "LinUCB"])),
        "shift": _figure(plots.shift_plot(np.arange(10), np.sin(np.arange(10)))),
    }
    seen = _assert_contrast(figures)
    assert seen <= {*PALETTE, REF_COLOR}, seen - {*PALETTE, REF_COLOR}
    _assert_legends_outside(figures)


@pytest.fixture(scope="module")
def sweep_result():
    from dashboard.simulation.sweep import make_sweep, run_sweep

    sweep = make_sweep(
        "cmab",
        ["CUCB", "AROQ-CMAB", "SROQ-CMAB"],
        runs=2,
        seed=1,
        grid={"horizon": [100, 200, 400], "d": [4, 5]},
        m=2,
    )
    return run_sweep(sweep, scheduler="inprocess")


def test_sweep_plot_uses_the_palette_with_3_to_1_and_a_legend_below(sweep_result):
    from dashboard.ui.sweep_plot import sweep_plot

    figures = {
        f"sweep {metric}, group {group}": _figure(
            sweep_plot(sweep_result, "horizon", metric, group)
        )
        for metric in ("final regret", "oracle queries")
        for group in (None, "d")
    }
    figures["sweep (empty)"] = _figure(sweep_plot(None, "horizon"))
    seen = _assert_contrast({k: v for k, v in figures.items() if k != "sweep (empty)"})
    assert seen <= {*PALETTE, REF_COLOR} and REF_COLOR in seen  # d log log T: a reference
    assert len(seen - {REF_COLOR}) == 6  # 3 algorithms x 2 values of d, 6 colours
    _assert_legends_outside(figures)
    assert (
        figures["sweep oracle queries, group d"].legend[0]
        in figures["sweep oracle queries, group d"].below
    )


def test_reproduce_figures_keep_3_to_1_and_their_legends_outside():
    from dashboard.reproduce import figure_layout
    from dashboard.simulation.experiments import run_experiment

    figures = {}
    for name in ("cmab-fig2", "semi-pac"):
        res = run_experiment(name, "test", seed=0, scheduler="inprocess")
        grid = figure_layout(res)[1]
        for k, pane in enumerate(grid.objects):
            figures[f"{name} plot {k}"] = _figure(pane.object)
    assert len(figures) == 4 + 4  # (a, b), (c), (d), (e, f); four PAC settings
    seen = _assert_contrast(figures)
    assert seen <= {*PALETTE, REF_COLOR}, seen - {*PALETTE, REF_COLOR}
    _assert_legends_outside(figures)


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


def test_figures_the_board_builds_later_take_the_dark_theme() -> None:
    """A figure built after the page rendered (a lesson's preset, other algorithms) gets the
    dark theme's frame too: Panel themes only what a pane renders first."""
    from bokeh.document import Document

    from dashboard.ui.board import PlotBoard
    from dashboard.ui.theme import PLOT_BACKGROUNDS

    with pn.config.set(theme="dark"):
        board = PlotBoard()
        for algorithms in (["CUCB"], ["AROQ-CMAB", "SROQ-CMAB"]):  # the second: a rebuild
            board.rebuild(algorithms, "cmab", False, None, horizon=500, band="sd")
            for live in board.plots.values():
                live.ensure_rendered(Document())
                fig = live.figure
                assert fig.background_fill_color == PLOT_BACKGROUNDS["dark"], live
        board.close()
    board = PlotBoard()  # the light theme: Bokeh's white frame
    board.rebuild(["CUCB"], "cmab", False, None, horizon=500, band="sd")
    for live in board.plots.values():
        live.ensure_rendered(Document())
        assert live.figure.background_fill_color in ("#ffffff", "white"), live
    board.close()
