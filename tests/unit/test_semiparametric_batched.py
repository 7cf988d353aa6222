"""Batched (across repetitions) BOSE, SP-TS and LinUCB against R separate textbook runs.

The single runs are the textbook engines (:mod:`dashboard.algorithms.semiparametric.textbook`,
round by round as the papers read); these tests check that a batch of R repetitions gives,
repetition by repetition, exactly their numbers (regret, statistics, logs, shift history,
environment state), under oblivious and adaptive shifts, whatever the chunking, and that the
simulation runner uses the batched classes.
Horizons are small: the throughput comparison lives in benchmarks/bench_batched.py.
"""

from __future__ import annotations

import numpy as np
import pytest

from dashboard.algorithms.semiparametric import (
    SemiparametricEnvironment,
    gap_instance,
    make_shift,
)
from dashboard.algorithms.semiparametric.policies.bose import BatchedBOSE
from dashboard.algorithms.semiparametric.policies.linear_foils import BatchedLinUCB
from dashboard.algorithms.semiparametric.policies.spts import BatchedSemiparametricTS
from dashboard.algorithms.semiparametric.textbook.bose import BOSE
from dashboard.algorithms.semiparametric.textbook.linucb import LinUCB
from dashboard.algorithms.semiparametric.textbook.spts import SemiparametricTS
from dashboard.simulation.runner import Simulation
from dashboard.simulation.specs import SemiparametricSpec

PAIRS = [(BOSE, BatchedBOSE), (SemiparametricTS, BatchedSemiparametricTS), (LinUCB, BatchedLinUCB)]
# per-repetition statistics of each engine (name of the (R, ...) array)
STATE = {BatchedBOSE: ("Gamma_inv", "b"), BatchedSemiparametricTS: ("B", "y")}
STATE[BatchedLinUCB] = ("V_inv", "b")


def _envs(inst, shift, R, seed=4, reps=None):
    reps = range(R) if reps is None else reps
    return [
        SemiparametricEnvironment(inst, make_shift(shift, seed=seed), 1.0, seed=seed, rep=r)
        for r in reps
    ]


@pytest.mark.parametrize(("single", "batched"), PAIRS)
@pytest.mark.parametrize("shift", ["none", "log", "adversarial"])
@pytest.mark.parametrize(("d", "K", "T"), [(5, 10, 300), (20, 30, 120)])
def test_batched_equals_separate_single_runs(single, batched, shift, d, K, T):
    R = 3
    inst = gap_instance(d, K, gap=0.5, seed=1)
    b_envs = _envs(inst, shift, R)
    eng = batched()
    eng.run(b_envs, T)
    assert eng.t == T and eng.cum_regret.shape == (R,)
    for r, env in enumerate(_envs(inst, shift, R)):
        p = single().run(env, T)
        assert p.t == T
        assert eng.cum_regret[r] == p.cum_regret  # exact
        assert p.declared_arm is None and p.declaration_time is None
        assert eng.events[r] == p.events == []
        assert eng.logs[r].queries == p.log.queries == T
        assert eng.logs[r].adaptivity == p.log.adaptivity == T
        assert eng.logs[r].ranges[0][:3] == p.log.ranges[0][:3] == (1, T, batched.purpose)
        for name in STATE[batched]:
            assert np.array_equal(getattr(eng, name)[r], getattr(p, name)), name
        # the environments end in the same state, with the same shift history (for an
        # adaptive shift: decided from each repetition's own action distribution)
        assert b_envs[r].t_played == env.t_played == T
        assert np.array_equal(b_envs[r].shift_history()[1], env.shift_history()[1])
    if shift == "none":
        # the repetitions see different noise, so they are genuinely different runs
        assert len(set(eng.cum_regret.tolist())) > 1


def test_adaptive_shift_reacts_to_each_repetitions_own_learner():
    # LinUCB is deterministic: the adversary reads the arm each repetition is about to play, so
    # the shift sequences differ between repetitions and each equals the single run's sequence
    inst = gap_instance(5, 10, gap=0.5, seed=2)
    R, T = 4, 200
    envs = _envs(inst, "adversarial", R, seed=7)
    eng = BatchedLinUCB().run(envs, T)
    histories = [e.shift_history()[1] for e in envs]
    assert any(not np.array_equal(histories[0], h) for h in histories[1:])
    for r in range(R):
        env = _envs(inst, "adversarial", 1, seed=7, reps=[r])[0]
        p = LinUCB().run(env, T)
        assert p.cum_regret == eng.cum_regret[r]
        assert np.array_equal(env.shift_history()[1], histories[r])


def test_single_run_equals_any_position_in_a_batch():
    # the repetitions need not be 0..R-1, nor share one seed: repetition (seed, rep) gives the
    # same numbers in a batch of 1 and at any position of a larger batch
    inst = gap_instance(5, 10, gap=0.5, seed=3)
    specs = [(0, 5), (9, 0), (4, 2), (0, 1), (2, 8)]

    def envs():
        return [
            SemiparametricEnvironment(inst, make_shift("sine", seed=s), 1.0, seed=s, rep=r)
            for s, r in specs
        ]

    for _, batched in PAIRS:
        big = batched().run(envs(), 150)
        for i, env in enumerate(envs()):
            small = batched().run([env], 150)
            assert small.cum_regret[0] == big.cum_regret[i]


@pytest.mark.parametrize(("single", "batched"), PAIRS)
def test_advance_never_passes_until_and_chunking_does_not_change_numbers(single, batched):
    inst = gap_instance(5, 10, gap=0.5, seed=2)
    T, R = 400, 3
    whole = batched().run(_envs(inst, "adversarial", R), T)
    eng = batched()
    eng.reset(_envs(inst, "adversarial", R), T)
    assert eng.t == 0 and np.array_equal(eng.cum_regret, np.zeros(R))
    last = eng.cum_regret.copy()
    for step in [1, 7, 1, 50, 0, 33, 1000]:
        dist = eng.action_distributions()
        assert dist.shape == (R, 10)
        assert np.allclose(dist.sum(axis=1), 1.0) and dist.min() >= 0
        until = eng.t + step
        before = eng.t
        t = eng.advance(until)
        assert t == eng.t == min(until, T) and t >= before
        assert np.all(eng.cum_regret >= last)
        last = eng.cum_regret.copy()
    assert eng.advance(T + 50) == T  # never beyond the horizon
    assert np.array_equal(eng.cum_regret, whole.cum_regret)
    for name in STATE[batched]:
        assert np.array_equal(getattr(eng, name), getattr(whole, name))
    assert [log.queries for log in eng.logs] == [T] * R


def test_action_distributions_are_those_of_the_single_policies():
    inst = gap_instance(5, 10, gap=0.5, seed=2)
    R, t = 3, 120
    for single, batched in PAIRS:
        eng = batched()
        eng.reset(_envs(inst, "log", R), 500)
        eng.advance(t)
        dist = eng.action_distributions()
        for r, env in enumerate(_envs(inst, "log", R)):
            p = single()
            p.reset(env, 500)
            p.advance(t)
            assert np.array_equal(p.action_distribution(), dist[r])
    bose = BatchedBOSE()
    bose.reset(_envs(inst, "log", R), 500)
    bose.advance(t)
    dist = bose.action_distributions()
    assert np.array_equal(dist > 0, bose.surviving)  # uniform over A_t
    for row in dist:
        assert np.allclose(row[row > 0], 1.0 / np.count_nonzero(row))


@pytest.mark.parametrize("shift", ["log", "adversarial"])
def test_runner_uses_the_batched_classes_with_the_same_numbers(shift):
    spec = SemiparametricSpec(d=5, K=10, shift=shift)
    algos = ["BOSE", "SP-TS", "LinUCB"]
    T, seed = 150, 3
    with Simulation(spec, algos, T, runs=3, seed=seed) as sim:
        batched = [type(g.batched) for g in sim.groups]
        assert batched == [BatchedBOSE, BatchedSemiparametricTS, BatchedLinUCB]
        res = sim.run()
        built = sim.built
    with Simulation(spec, algos, T, runs=3, seed=seed, batched=False) as ref:
        assert all(g.batched is None for g in ref.groups)
        ref_res = ref.run()
    for single, a, b in zip((BOSE, SemiparametricTS, LinUCB), res.results, ref_res.results):
        assert np.array_equal(a.regret, b.regret)
        assert np.array_equal(a.queries, b.queries)
        assert a.declared_arm is None and b.declared_arm is None
        # repetition r of the runs=3 simulation uses the noise streams (seed, r)
        for r in range(3):
            p = single().run(spec.environment(built, seed, r), T)
            assert a.regret[r, -1] == p.cum_regret


@pytest.mark.parametrize("batched", [b for _, b in PAIRS])
def test_bad_input_raises_value_error(batched):
    inst = gap_instance(5, 10, gap=0.5, seed=0)
    other = gap_instance(5, 10, gap=0.5, seed=1)
    with pytest.raises(ValueError, match="at least one environment"):
        batched().reset([], 10)
    with pytest.raises(ValueError, match="horizon must be >= 1"):
        batched().reset(_envs(inst, "none", 2), 0)
    with pytest.raises(ValueError, match="share one feature matrix"):
        batched().reset(_envs(inst, "none", 1) + _envs(other, "none", 1), 10)
    used = _envs(inst, "none", 2)
    batched().run(used, 5)
    with pytest.raises(ValueError, match="fresh environments"):
        batched().reset(used, 10)
    with pytest.raises(RuntimeError, match="reset"):
        batched().advance(3)


@pytest.mark.parametrize(
    ("make", "match"),
    [
        (lambda: BatchedBOSE(c=0), "c must be"),
        (lambda: BatchedBOSE(distribution="qp"), "distribution must be one of"),
        (lambda: BatchedBOSE(delta=1.5), "delta"),
        (lambda: BatchedSemiparametricTS(n_mc=0), "n_mc must be"),
        (lambda: BatchedLinUCB(lam=-1), "lam"),
        (lambda: BatchedLinUCB(alpha=float("inf")), "alpha"),
    ],
)
def test_bad_parameters_raise(make, match):
    with pytest.raises(ValueError, match=match):
        make()


def test_params_match_the_single_classes():
    kwargs = {
        BOSE: {"c": 2.0, "delta": 0.1, "lam": 3.0},
        SemiparametricTS: {"c": 4.0, "n_mc": 17},
        LinUCB: {"lam": 2.0, "delta": 0.01, "alpha": 0.5, "sigma": 2.0},
    }
    for single, batched in PAIRS:
        assert batched(**kwargs[single]).params() == single(**kwargs[single]).params()
        assert batched.name == single.name and batched.problem == single.problem


@pytest.mark.parametrize("batched", [BatchedSemiparametricTS, BatchedBOSE])
def test_a_pickled_engine_goes_on_with_the_same_numbers(batched):
    """An engine moved mid-run (pickled, as to another process) keeps its numbers: its
    scratch buffers and their views are rebuilt, not left pointing at the old memory (SP-TS's
    scores are stored arm by arm and viewed per round; panels share streams here)."""
    import pickle

    inst = gap_instance(20, 30, gap=0.5, seed=0)
    envs = [
        SemiparametricEnvironment(inst, make_shift(shift, seed=0), 1.0, seed=0, rep=r)
        for shift in ("sine", "log")
        for r in range(3)
    ]
    engine = batched()
    engine.reset(envs, 400, {"c": [1.0, 8.0, 2.0] * 2})
    engine.advance(100)
    moved = pickle.loads(pickle.dumps(engine))
    engine.advance(400)
    moved.advance(400)
    assert np.array_equal(moved.cum_regret, engine.cum_regret)
    assert np.array_equal(moved.action_distributions(), engine.action_distributions())
