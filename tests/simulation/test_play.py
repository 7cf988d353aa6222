""" "Can you beat AROQ?" core: the human plays the same instance with the same random numbers.

The strongest check: a deterministic plug-in policy that always plays the same action, raced
in the game, has exactly the regret curve of a human who clicks that action every round, and
the human sees exactly the outcomes that policy's environment draws."""

from __future__ import annotations

import numpy as np
import pytest

from dashboard.algorithms import registry
from dashboard.plugins import AlgorithmDeclaration, Policy, register_algorithm
from dashboard.simulation.play import MAX_GAME_HORIZON, PLAYER, Game
from dashboard.simulation.specs import make_spec


class FirstTwo(Policy):
    """Always plays base arms {0, 1} (a test foil)."""

    declaration = AlgorithmDeclaration(
        name="test-first-two", problem="cmab", reference="test", rewards=("linear",)
    )

    def reset(self, env, horizon):
        Policy.__init__(self)
        self.env = env

    def advance(self, until):
        action = np.zeros(self.env.d, dtype=bool)
        action[[0, 1]] = True
        while self.t < until:
            t = self.t + 1
            self.env.play_fixed(action, t, 1)
            self.cum_regret += self.env.gap(action)
            self.t = t
        return self.t


@pytest.fixture
def first_two():
    register_algorithm(FirstTwo, replace=True)
    yield "test-first-two"
    registry.unregister_algorithm("test-first-two")


def test_same_actions_same_regret_curve_and_outcomes(first_two) -> None:
    spec = make_spec("cmab", d=6, m=2)
    game = Game(spec, [first_two, "AROQ-CMAB"], horizon=25, seed=3)
    twin = spec.environment(spec.build(3), 3, 0)  # the algorithms' repetition 0
    action = np.zeros(6, dtype=bool)
    action[[0, 1]] = True
    for t in range(1, 26):
        out = game.play([1, 0])
        assert out.t == t and out.arms == (0, 1)
        np.testing.assert_array_equal(out.outcomes, twin.play_fixed(action, t, 1)[0])
    res = game.result()
    me, foil = res[PLAYER], res[first_two]
    np.testing.assert_array_equal(me.times, np.arange(1, 26))
    np.testing.assert_array_equal(foil.times, me.times)
    np.testing.assert_allclose(me.regret, foil.regret, rtol=0, atol=1e-12)
    assert res["AROQ-CMAB"].times.size == 25


def test_partial_result_lines_up_round_by_round() -> None:
    game = Game(make_spec("cmab", d=5, m=2), ["CUCB"], horizon=30, seed=1)
    for _ in range(7):
        game.play([2, 3])
    res = game.result()
    assert res.t == 7 and [r.times.size for r in res.results] == [7, 7]
    assert res.instance == {}  # nothing is revealed before the end
    with pytest.raises(ValueError, match="revealed at the end"):
        game.reveal()


def test_optimal_clicks_have_zero_regret_and_the_truth_is_revealed() -> None:
    game = Game(make_spec("cmab", d=6, m=3), ["AROQ-CMAB"], horizon=10, seed=2)
    best = [int(i) for i in np.flatnonzero(game.env.optimal_action)]
    for _ in range(10):
        game.play(best)
    assert game.done and game.final_regrets()[PLAYER] == pytest.approx(0.0)
    info = game.reveal()
    assert info["optimal_action"] == best and len(info["mu"]) == 6
    assert game.result().instance == info


@pytest.mark.parametrize(
    "arms, message",
    [
        ([0], "not an action of the m-sets"),
        ([0, 1, 2], "at most m = 2"),
        ([0, 0], "chosen twice"),
        ([0, 7], "numbered 0 to 5"),
        ([-1, 2], "numbered 0 to 5"),
        ([0.5, 1], "integer indices"),
        ("ab", "integer indices"),
        (None, "integer indices"),
        ([], "at least one"),
    ],
)
def test_invalid_choices_change_nothing(arms, message) -> None:
    game = Game(make_spec("cmab", d=6, m=2), [], horizon=3, seed=0)
    with pytest.raises(ValueError, match=message):
        game.play(arms)
    assert game.t == 0 and game.history == [] and game.env.pulls.sum() == 0


def test_matchings_refuse_an_infeasible_pair() -> None:
    game = Game(make_spec("cmab", d=6, m=2, actions="matchings"), [], horizon=3, seed=0)
    fam = game.env.family
    bad = next(
        [i, j]
        for i in range(6)
        for j in range(i + 1, 6)
        if not fam.is_action(np.isin(np.arange(6), [i, j]))
    )
    with pytest.raises(ValueError, match="not an action of the matchings"):
        game.play(bad)


def test_after_the_end_and_bad_settings() -> None:
    game = Game(make_spec("cmab", d=4, m=2), [], horizon=1, seed=0)
    game.play([0, 1])
    with pytest.raises(ValueError, match="the game is over"):
        game.play([0, 1])
    with pytest.raises(ValueError, match="game horizon"):
        Game(make_spec("cmab", d=4, m=2), [], horizon=MAX_GAME_HORIZON + 1)
    with pytest.raises(ValueError):
        Game(make_spec("cmab", d=4, m=2), ["nope"], horizon=5)


def test_semiparametric_one_arm_same_noise_as_the_algorithms() -> None:
    spec = make_spec("semiparametric", d=3, K=5, shift="sine")
    game = Game(spec, ["SBE"], horizon=12, seed=4)
    twin = spec.environment(spec.build(4), 4, 0)
    with pytest.raises(ValueError, match="exactly one arm"):
        game.play([0, 1])
    for t in range(1, 13):
        arm = t % 5
        out = game.play([arm])
        assert out.outcomes[0] == pytest.approx(float(twin.play(np.array([arm]), t, None)[0]))
    gaps = [float(twin.regret(t % 5)) for t in range(1, 13)]
    np.testing.assert_allclose(game.result()[PLAYER].regret[0], np.cumsum(gaps))
    assert game.reveal()["best_arm"] == int(twin.best_arm)
