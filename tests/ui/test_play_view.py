"""The play-mode Viewer driven headlessly: click arms, submit, see outcomes, the regret curves
and, at the end, the truth; invalid choices give an escaped notice and change nothing."""

from __future__ import annotations

import numpy as np
from bokeh.document import Document

from dashboard.simulation.play import PLAYER
from dashboard.simulation.specs import make_spec
from dashboard.ui.play import PlayView


def _view(**kw):
    view = PlayView.new(make_spec("cmab", d=5, m=2), ["AROQ-CMAB"], horizon=4, seed=1, **kw)
    view.__panel__().get_root(Document())  # renders (a real Bokeh model tree)
    return view


def test_a_full_short_game() -> None:
    view = _view()
    assert len(view.arms.options) == 5 and view.reveal.visible is False
    for t in range(1, 5):
        view.arms.value = [0, 3]
        assert view.play_round()
        assert f"Round {t}" in view.outcome.object and "arm 3" in view.outcome.object
        # the player's curve beside AROQ-CMAB's, t rounds each, updated in place every
        # round (the plot once stayed empty after round 1)
        labels = {el.label for el in view.live.element}
        assert {PLAYER, "AROQ-CMAB"} <= labels
        sources = view.live.sources()  # per algorithm: band, mean curve, run traces
        for k in (1, 4):
            np.testing.assert_array_equal(sources[k].data["t"], np.arange(1, t + 1))
            assert np.isfinite(np.asarray(sources[k].data["regret"], dtype=float)).all()
    assert view.live.renders == 1
    assert view.game.done and view.submit.disabled
    assert view.reveal.visible and "True means" in view.reveal.object
    assert "Lowest regret" in view.reveal.object


def test_invalid_choices_give_a_notice_and_change_nothing() -> None:
    view = _view()
    view.arms.value = [0]
    assert not view.play_round()
    assert view.alert.visible and "not an action" in view.notice
    assert view.game.t == 0
    view.arms.value = [0, 1, 2]
    assert not view.play_round() and "at most m = 2" in view.notice
    # a valid round clears the notice
    view.arms.value = [0, 1]
    assert view.play_round() and not view.alert.visible
    for _ in range(3):
        view.play_round([0, 1])
    assert not view.play_round([0, 1]) and "the game is over" in view.notice


def test_notice_is_escaped() -> None:
    view = _view()
    assert not view.play_round(["<img src=x onerror=alert(1)>"])
    assert "<img" not in view.alert.object and "&#60;img" in view.alert.object


def test_semiparametric_game_in_the_view() -> None:
    view = PlayView.new(make_spec("semiparametric", d=3, K=4), ["SBE"], horizon=2, seed=0)
    assert len(view.arms.options) == 4
    assert not view.play_round([0, 1]) and "exactly one arm" in view.notice
    assert view.play_round([2]) and view.play_round([2])
    assert "Best arm" in view.reveal.object
