""" "Can you beat AROQ?": a human plays the bandit against the algorithms (issue 11).

:class:`Game` builds the instance a spec makes from ``seed`` once, gives the human player the
environment of repetition 0 (the same random numbers as the algorithms' repetition 0: outcomes
are counter based, so the human's ``n``-th pull of a base arm sees exactly the outcome an
algorithm's ``n``-th pull of it sees; semiparametric noise and shift are indexed by the round)
and simulates the chosen algorithms on the same instance and seed, recording every round.
The human's actions come from outside (:meth:`Game.play`): ``m`` of the ``d`` base arms forming
an action of the family (combinatorial problem) or one of the ``K`` arms (semiparametric).
After each round the outcome of every chosen base arm is revealed, and
:meth:`Game.result` is a :class:`SimulationResult` holding the human's exact pseudo-regret
curve beside the algorithms', on the same rounds, so any regret plot draws them together.
The true means are only given by :meth:`Game.reveal` once the game is over.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..algorithms.base import ExpensiveLog, validate_int
from .results import AlgorithmResult, SimulationResult
from .runner import simulate
from .specs import ProblemSpec

__all__ = ["MAX_GAME_HORIZON", "PLAYER", "Game", "RoundOutcome"]

#: Longest game (rounds a person clicks through).
MAX_GAME_HORIZON = 500
#: The human player's name in results and plots.
PLAYER = "You"


@dataclass(frozen=True)
class RoundOutcome:
    """What the player learns after a round: the chosen base arms (or arm), the outcome of
    each, the reward and the round number.  ``regret`` is the pseudo-regret so far (for the
    curve; the player is not told the gap of this round's action)."""

    t: int
    arms: tuple[int, ...]
    outcomes: tuple[float, ...]
    reward: float
    regret: float


class Game:
    """A human against ``algorithms`` on the instance ``spec`` builds from ``seed``.

    Parameters
    ----------
    spec : CMABSpec or SemiparametricSpec
    algorithms : names of the algorithms to race (may be empty).
    horizon : rounds of the game, 1 to :data:`MAX_GAME_HORIZON`.
    seed : instance and noise seed.
    params : per-algorithm constants, as for :func:`~dashboard.simulation.runner.simulate`.

    Raises
    ------
    ValueError
        Invalid spec, algorithm, horizon or seed (one sentence).
    """

    def __init__(
        self,
        spec: ProblemSpec,
        algorithms: Sequence[str] = ("AROQ-CMAB",),
        horizon: int = 50,
        seed: int = 0,
        params: dict[str, dict[str, Any]] | None = None,
    ) -> None:
        self.horizon = validate_int("game horizon", horizon, 1, MAX_GAME_HORIZON)
        self.seed = validate_int("seed", seed, 0)
        spec.validate()
        self.spec = spec
        self.problem = spec.problem
        self.algorithms = list(algorithms)
        if self.algorithms:  # every round recorded: the curves line up round by round
            self._race = simulate(
                spec,
                self.algorithms,
                self.horizon,
                runs=1,
                seed=self.seed,
                params=params,
                grid_points=2 * self.horizon + 2,
            )
            self.algorithms = [r.algorithm for r in self._race.results]
        else:
            self._race = None
        self.env = spec.environment(spec.build(self.seed), self.seed, 0)
        self.t = 0
        self.history: list[RoundOutcome] = []
        self._regret: list[float] = []

    # ------------------------------------------------------------------ the rules
    @property
    def done(self) -> bool:
        """Whether every round has been played."""
        return self.t >= self.horizon

    @property
    def n_arms(self) -> int:
        """Number of arms to click: ``d`` base arms (cmab) or ``K`` arms (semiparametric)."""
        return int(self.env.d if self.problem == "cmab" else self.env.K)

    @property
    def choose(self) -> str:
        """The rule, in words (shown to the player)."""
        if self.problem == "cmab":
            fam = self.env.family
            return f"pick base arms forming an action of the {fam.describe()} family"
        return f"pick one of the K = {self.env.K} arms"

    def check(self, arms: Any) -> tuple[int, ...]:
        """The chosen arms as sorted distinct indices, or ValueError saying what is wrong
        (game over, not integers, out of range, repeated, wrong count, infeasible action)."""
        if self.done:
            raise ValueError(f"the game is over: all {self.horizon} rounds have been played")
        try:
            raw = [int(a) for a in arms]
        except (TypeError, ValueError):
            raise ValueError(f"arms must be integer indices, got {arms!r}") from None
        if any(not isinstance(a, (int, np.integer)) and float(a) != int(a) for a in arms):
            raise ValueError(f"arms must be integer indices, got {arms!r}")
        n = self.n_arms
        if any(a < 0 or a >= n for a in raw):
            raise ValueError(f"arms are numbered 0 to {n - 1}, got {sorted(raw)}")
        if len(set(raw)) != len(raw):
            raise ValueError(f"an arm is chosen twice: {sorted(raw)}")
        chosen = tuple(sorted(raw))
        if self.problem == "semiparametric":
            if len(chosen) != 1:
                raise ValueError(f"choose exactly one arm, got {len(chosen)}")
            return chosen
        if not chosen:
            raise ValueError("choose at least one base arm")
        if len(chosen) > self.env.m:
            raise ValueError(f"choose at most m = {self.env.m} base arms, got {len(chosen)}")
        action = np.zeros(self.env.d, dtype=bool)
        action[list(chosen)] = True
        if not self.env.family.is_action(action):
            raise ValueError(
                f"arms {list(chosen)} are not an action of the {self.env.family.describe()} family"
            )
        return chosen

    def play(self, arms: Any) -> RoundOutcome:
        """Play one round with ``arms`` (see :meth:`check`) and reveal the outcomes."""
        chosen = self.check(arms)
        t = self.t + 1
        if self.problem == "cmab":
            action = np.zeros(self.env.d, dtype=bool)
            action[list(chosen)] = True
            y = np.asarray(self.env.play_fixed(action, t, 1)[0], dtype=float)
            outcomes = tuple(float(v) for v in y)
            full = np.zeros(self.env.d)
            full[list(chosen)] = y
            reward = float(self.env.model.reward(action, full[None, :])[0])
            gap = float(self.env.gap(action))
        else:
            y = self.env.play(np.array(chosen, dtype=np.int64), t, None)
            outcomes = (float(y[0]),)
            reward = outcomes[0]
            gap = float(self.env.regret(chosen[0]))
        regret = (self._regret[-1] if self._regret else 0.0) + gap
        self._regret.append(regret)
        self.t = t
        out = RoundOutcome(t, chosen, outcomes, reward, regret)
        self.history.append(out)
        return out

    # ------------------------------------------------------------------ what is shown
    def result(self) -> SimulationResult:
        """The player's regret curve (rounds 1..t) beside the algorithms' on the same rounds."""
        times = np.arange(1, self.t + 1, dtype=np.int64)
        player = AlgorithmResult(
            algorithm=PLAYER,
            paper="",
            times=times,
            regret=np.array(self._regret, dtype=float)[None, :],
            queries=np.zeros((1, self.t), dtype=np.int64),
            adaptivity=np.zeros((1, self.t), dtype=np.int64),
            t=self.t,
            wall_seconds=np.zeros(1),
            oracle_seconds=np.zeros(1),
            logs=[ExpensiveLog()],
            events=[[]],
        )
        results = [player]
        if self._race is not None:
            for r in self._race.results:
                keep = np.isin(r.times, times)
                results.append(
                    AlgorithmResult(
                        algorithm=r.algorithm,
                        paper=r.paper,
                        times=r.times[keep],
                        regret=r.regret[:, keep],
                        queries=r.queries[:, keep],
                        adaptivity=r.adaptivity[:, keep],
                        t=self.t,
                        wall_seconds=r.wall_seconds,
                        oracle_seconds=r.oracle_seconds,
                        params=r.params,
                    )
                )
        return SimulationResult(
            spec=self.spec.to_dict(),
            horizon=self.horizon,
            runs=1,
            seed=self.seed,
            t=self.t,
            results=results,
            instance={} if not self.done else self.reveal(),
        )

    def final_regrets(self) -> dict[str, float]:
        """Regret at round t of the player and of each algorithm."""
        res = self.result()
        return {r.algorithm: float(r.final_regret[0]) if r.t else 0.0 for r in res.results}

    def reveal(self) -> dict[str, Any]:
        """The true means and the best action / arm; ValueError before the end."""
        if not self.done:
            raise ValueError("the true means are revealed at the end of the game")
        if self.problem == "cmab":
            return {
                "mu": [float(x) for x in self.env.model.mu],
                "optimal_action": [int(i) for i in np.flatnonzero(self.env.optimal_action)],
                "optimal_reward": float(self.env.optimal_reward),
            }
        return {
            "mean_rewards": [float(x) for x in self.env.mean_rewards],
            "best_arm": int(self.env.best_arm),
        }
