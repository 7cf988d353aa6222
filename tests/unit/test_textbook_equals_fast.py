"""Fast must equal textbook: every algorithm's fast engine gives its textbook engine's numbers.

For every registered algorithm, on seeds used nowhere else in the tests (held out), on each
action family and reward model it supports (cmab) or shift kind (semiparametric), with
R in {1, 3, 17} repetitions and horizons that end in the middle of an epoch or phase, the
``engine="textbook"`` run (R textbook policies, round by round) and the ``engine="fast"`` run
(the fast engine: all R at once, or its one-repetition policy) agree exactly on

* the cumulative regret of every repetition after every one of the first rounds (so the
  action each round: its regret increment, and for cmab the pull counts of every arm) and at
  every stop of a chunked advance to the horizon;
* the oracle queries and adaptivity (and the round of every record);
* the events (kind, round and every datum);
* the statistics the algorithm keeps (counts and sums, ``V^-1``, ``B``, ``Gamma^-1`` ...).

Algorithms without a fast engine run their textbook engine either way (checked too).  Sizes
are small: the whole module takes a few seconds.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from dashboard.algorithms import registry
from dashboard.simulation.runner import Simulation
from dashboard.simulation.specs import make_spec

#: Seeds no other test uses (held out from the tests the fast engines were tuned on).
SEEDS = (90_001, 90_017)
REPETITIONS = (1, 3, 17)
#: Rounds checked one by one (each round's regret increment names the action played).
ROUNDS_ONE_BY_ONE = 30

#: Statistics each algorithm keeps, by attribute name (textbook policy: ``x``; fast engine:
#: ``x[r]`` of repetition ``r``).
STATE = {
    "CUCB": ("n", "sums"),
    "LinUCB": ("V_inv", "b"),
    "SP-TS": ("B", "y"),
    "BOSE": ("Gamma_inv", "b"),
    "AROQ-C-CMAB": ("n", "sy", "n2", "syy", "tau", "cur", "prev"),
    "SROQ-C-CMAB": ("n", "sy", "n2", "syy", "N", "allowed", "tau", "pair_phases"),
}

_CMAB_FAMILIES = (
    ("m-sets", {"d": 6, "m": 2}),
    ("paths", {"d": 9, "m": 3}),
    ("matchings", {"d": 9, "m": 3}),
)


def _cases() -> list[tuple[str, dict, dict, int]]:
    """(algorithm, spec keywords, constants, horizon): every algorithm with a fast engine on
    every family and reward model (cmab) or shift kind (semiparametric) it supports; the
    others (one engine serves both: ``info.fast is None``) on one problem each."""
    out = []
    for info in registry.algorithms_for(None):
        if info.plugin:
            continue
        name, fast = info.name, info.fast is not None
        if info.problem == "cmab":
            for reward in info.rewards:
                general = reward in ("general", "continuous")
                families = _CMAB_FAMILIES if reward == "linear" else _CMAB_FAMILIES[:1]
                for family, dims in families:
                    spec = {"actions": family, "reward": reward, **dims}
                    # per-round baselines: a few dozen rounds; rare-query ones end mid-epoch
                    horizon = 67 if info.per_round else 613
                    if general:
                        spec.update(d=4, m=2)
                        horizon = 41 if info.per_round else 97
                    out.append((name, spec, {}, horizon))
                    if not fast:
                        break
                if not fast:
                    break
        else:
            for shift in ("none", "sine", "adversarial") if fast else ("sine",):
                spec = {"d": 3, "K": 6, "shift": shift}
                out.append((name, spec, {}, 97 if info.per_round else 1_237))
    # the paper's per-round min-max program of BOSE (Appendix H)
    out.append(("BOSE", {"d": 3, "K": 6, "shift": "sine"}, {"distribution": "minmax"}, 53))
    # OLS-UCB-C without its warm-up (never-played arms: an infinite index)
    cov = {"actions": "m-sets", "reward": "covariance", "d": 6, "m": 2}
    out.append(("OLS-UCB-C", cov, {"warmup_fraction": 0.0}, 67))
    # AROQ-C without its warm-up, and with one ending after round 30 (lines 8-9 mid-run);
    # SROQ-C on three epochs with a longer pair phase, and with none
    out.append(("AROQ-C-CMAB", cov, {"warmup_fraction": 0.0}, 613))
    out.append(("AROQ-C-CMAB", cov, {"warmup_fraction": 0.3, "warmup_multiplier": 0.5}, 613))
    out.append(("SROQ-C-CMAB", cov, {"M": 3, "pair_fraction": 0.5}, 613))
    out.append(("SROQ-C-CMAB", cov, {"pair_fraction": 0.0}, 613))
    # SDCB with optimistic never-played arms instead of Chen et al.'s start
    gen = {"actions": "m-sets", "reward": "general", "d": 4, "m": 2}
    out.append(("SDCB", gen, {"initial_pass": False}, 41))
    # the general-reward rare-query algorithms off their defaults: laws rounded to a few atoms,
    # another epoch rule, the sequential max-LCB query, a given number of intervals
    cont = {"actions": "m-sets", "reward": "continuous", "d": 4, "m": 2}
    aroq_gr = {"max_atoms": 8, "threshold_scale": 0.5, "epoch0_size": 2}
    out.append(("AROQ-GR-CMAB", cont, aroq_gr, 97))
    out.append(("SROQ-GR-CMAB", cont, {"max_atoms": 8, "M": 4, "lcb_query": "sequential"}, 97))
    out.append(("Disc-AROQ-GR-CMAB", cont, {"s": 7, "threshold_scale": 0.5}, 97))
    out.append(("Disc-SROQ-GR-CMAB", cont, {"s": 7, "M": 4}, 97))
    return out


def _sim(name, problem, spec, params, horizon, runs, seed, engine) -> Simulation:
    return Simulation(
        make_spec(problem, **spec),
        [name],
        horizon,
        runs=runs,
        seed=seed,
        params={name: params} if params else None,
        engine=engine,
        max_work=None,
    )


def _state(group, r: int, names: tuple[str, ...]) -> dict[str, np.ndarray]:
    if group.batched is not None:
        return {k: np.asarray(getattr(group.batched, k))[r] for k in names}
    policy = group.policies[r]
    engine = getattr(policy, "_engine", None)  # a fast engine's one-repetition policy
    if engine is not None:
        return {k: np.asarray(getattr(engine, k))[0] for k in names}
    return {k: np.asarray(getattr(policy, k)) for k in names}


def _same(x, y) -> bool:
    if isinstance(x, dict):
        return x.keys() == y.keys() and all(_same(x[k], y[k]) for k in x)
    if isinstance(x, (list, tuple)):
        return len(x) == len(y) and all(_same(a, b) for a, b in zip(x, y))
    if isinstance(x, np.ndarray) or isinstance(y, np.ndarray):
        return np.array_equal(np.asarray(x), np.asarray(y), equal_nan=True)
    return x == y or (x != x and y != y)


def _events(group) -> list[list[tuple]]:
    return [[(e.t, e.kind, e.data) for e in run] for run in group.events()]


CASES = _cases()
#: Every case at each R; one engine serving both (no fast engine) needs no R = 17.
RUNS = [
    (*c, R)
    for c in CASES
    for R in REPETITIONS
    if R < 17 or registry.algorithm_info(c[0]).fast is not None
]


@pytest.mark.parametrize(
    ("name", "spec", "params", "horizon", "runs"),
    RUNS,
    ids=[f"{c[0]}-{'-'.join(str(v) for v in c[1].values())}-{c[2] or ''}-R{c[4]}" for c in RUNS],
)
def test_the_fast_engine_gives_the_textbook_numbers(name, spec, params, horizon, runs):
    info = registry.algorithm_info(name)
    seed = SEEDS[runs % 2]
    sims = [
        _sim(name, info.problem, spec, params, horizon, runs, seed, e) for e in ("textbook", "fast")
    ]
    textbook, fast = (s.groups[0] for s in sims)
    assert all(type(p) is info.textbook for p in textbook.policies)
    if info.fast is not None and runs > 1 and getattr(info.fast, "batches", True):
        assert isinstance(fast.batched, info.fast)
    elif info.fast is not None:  # R of the fast engine's one-repetition policies
        one = getattr(info.fast, "one_repetition", None) or info.textbook
        assert fast.batched is None and all(type(p) is one for p in fast.policies)
    # round by round: each regret increment (and each cmab pull count) names the action
    for t in range(1, min(ROUNDS_ONE_BY_ONE, horizon) + 1):
        for s in sims:
            s.advance_to(t)
        assert np.array_equal(textbook.cum_regret(), fast.cum_regret()), f"round {t}"
        if info.problem == "cmab":
            for a, b in zip(textbook.envs, fast.envs):
                assert np.array_equal(a.pulls, b.pulls), f"round {t}"
    # then in uneven chunks to a horizon that ends mid-epoch
    stops = sorted({min(horizon, ROUNDS_ONE_BY_ONE + k**3 * 5) for k in range(1, 12)})
    for t in stops:
        for s in sims:
            s.advance_to(t)
        assert np.array_equal(textbook.cum_regret(), fast.cum_regret()), f"round {t}"
    assert sims[0].t == sims[1].t == horizon
    every_round = np.arange(1, horizon + 1)
    for a, b in zip(textbook.logs(), fast.logs()):
        assert (a.queries, a.adaptivity) == (b.queries, b.adaptivity)
        assert _same(a.cumulative(every_round), b.cumulative(every_round))
    assert _same(_events(textbook), _events(fast))
    names = STATE.get(name, ())
    for r in range(runs):
        assert _same(_state(textbook, r, names), _state(fast, r, names)), f"repetition {r}"
    for s in sims:
        s.close()


def test_every_algorithm_is_checked():
    """Guard against a suite that passes vacuously: every built-in algorithm has cases."""
    names = {c[0] for c in CASES}
    builtin = {i.name for i in registry.algorithms_for(None) if not i.plugin}
    assert names == builtin and len(builtin) == 17
    fast = {i.name for i in registry.algorithms_for(None) if i.fast is not None}
    assert {"CUCB", "BOSE", "SP-TS", "LinUCB"} <= fast


# ------------------------------------------------------------------ the engine knob's boundary
_SPEC = {"d": 3, "K": 6}


@settings(max_examples=40, deadline=None)
@given(
    st.one_of(
        st.text(max_size=12),
        st.integers(),
        st.none(),
        st.booleans(),
        st.floats(allow_nan=True),
        st.lists(st.text(max_size=3), max_size=2),
    )
)
def test_an_unknown_engine_is_a_value_error_naming_the_choices(engine):
    assume(not (isinstance(engine, str) and engine.strip().lower() in ("fast", "textbook")))
    with pytest.raises(ValueError, match="engine must be one of fast, textbook"):
        _sim("LinUCB", "semiparametric", _SPEC, {}, 5, 1, 0, engine)


@pytest.mark.parametrize("engine", [" Textbook ", "FAST"])
def test_the_engine_name_is_case_and_space_insensitive(engine):
    sim = _sim("LinUCB", "semiparametric", _SPEC, {}, 5, 1, 0, engine)
    assert sim.engine == engine.strip().lower()
    assert sim.run().t == 5


def test_the_cli_engine_flag_runs_both_engines_and_refuses_others_in_one_line(capsys):
    from dashboard.cli import main

    base = ["simulate", "--problem", "cmab", "--algorithm", "CUCB", "--d", "5", "--m", "2"]
    base += ["--horizon", "40", "--runs", "2", "--format", "json", "--seed", "90001"]
    out = {}
    for engine in ("fast", "textbook"):
        assert main([*base, "--engine", engine]) == 0
        out[engine] = json.loads(capsys.readouterr().out)
    keys = ("final_regret_mean", "final_regret_std", "oracle_queries_mean")
    numbers = [[[r[k] for k in keys] for r in o["results"]] for o in out.values()]
    assert numbers[0] == numbers[1] and numbers[0][0][2] == 40
    assert main([*base, "--engine", "turbo"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: engine must be one of fast, textbook") and "\n" not in err


def test_the_algorithms_listing_names_every_textbook_file_and_fast_engine(capsys):
    from dashboard.cli import main

    assert main(["algorithms", "--format", "json"]) == 0
    listed = json.loads(capsys.readouterr().out)["algorithms"]
    assert len(listed) == 17
    root = Path(registry.__file__).resolve().parents[1]
    for a in listed:
        assert (root / a["textbook"]).is_file(), a["textbook"]
        info = registry.algorithm_info(a["name"])
        assert a["fast"] == info.fast_target and (a["fast"] is None) == (not a["batched"])
