"""A lesson's named preset (``preset NAME`` block) is a button in the lesson pane that applies
it to the configuration through the same path as the main preset (lesson 4's inexact-alpha
experiment: paths, alpha-AROQ-CMAB, the alpha-regret plot appears)."""

from __future__ import annotations

from dashboard.ui.app import DashboardApp
from dashboard.ui.lessons import load_lesson


def test_the_named_preset_button_applies_it_and_shows_the_alpha_regret_plot():
    app = DashboardApp(autostart_timer=False)
    try:
        lesson = load_lesson(4)
        app.lessons_view.select.value = lesson.slug
        (button,) = app.lessons_view.named_buttons.objects
        assert button.label == "Load preset: inexact alpha"
        assert "preset-inexact-alpha" in button.css_classes
        assert "Click *Load preset: inexact alpha*" in app.lessons_view.text.object
        button.clicks += 1
        c = app.config
        preset = lesson.named_presets["inexact-alpha"]
        assert (c.actions, c.alpha, c.d, c.m, c.horizon, c.seed) == (
            "paths",
            0.9,
            20,
            3,
            preset["horizon"],
            preset["seed"],
        )
        assert c.algorithms == preset["algorithms"] and c.errors == []
        assert "alpha-regret" in app.plots  # the idle board follows the new algorithms
        # the main preset is still the main button's
        app.lessons_view.preset_button.clicks += 1
        assert c.actions == lesson.preset["actions"] and c.reward == "covariance"
        # an unknown name applies nothing; a lesson without named presets has no buttons
        assert not app.load_lesson_preset("nope")
        app.lessons_view.select.value = load_lesson(1).slug
        assert app.lessons_view.named_buttons.objects == []
    finally:
        app.dispose()
