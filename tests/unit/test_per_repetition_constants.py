"""Per-repetition constants of the per-round engines (issue 9, ``reproduce --tune``).

BOSE and SP-TS take Appendix I's ``c`` per repetition (``PerRoundBatch.per_repetition``), so
the four values of ``c`` run as one batch: repetition ``r`` of such a batch must compute
exactly what an engine constructed with ``c[r]`` computes for it (state, arms, regret: bit
for bit), whatever the other repetitions' values, and wrong input is a clear ValueError.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dashboard.algorithms.semiparametric import SemiparametricEnvironment, gap_instance, make_shift
from dashboard.algorithms.semiparametric.policies.bose import BatchedBOSE
from dashboard.algorithms.semiparametric.policies.linear_foils import BatchedLinUCB
from dashboard.algorithms.semiparametric.policies.spts import BatchedSemiparametricTS

ENGINES = {
    "SP-TS": (BatchedSemiparametricTS, ("B", "y"), {"n_mc": 30}),
    "BOSE": (BatchedBOSE, ("Gamma_inv", "b", "surviving"), {}),
}


def _envs(inst, shifts, reps):
    return [
        SemiparametricEnvironment(inst, make_shift(s, seed=2), 1.0, seed=5, rep=r)
        for s in shifts
        for r in reps
    ]


def _run(cls, kw, envs, T, constants=None, chunk=7):
    eng = cls(**kw)
    eng.reset(envs, T, constants=constants)
    for until in range(chunk, T + chunk, chunk):
        eng.advance(until)
    return eng


@pytest.mark.parametrize("alg", sorted(ENGINES))
@pytest.mark.parametrize(("d", "K"), [(3, 6), (12, 15)])  # SP-TS: LU and triangular inverses
def test_a_batch_over_c_equals_one_engine_per_c(alg, d, K):
    cls, state, kw = ENGINES[alg]
    inst = gap_instance(d, K, gap=0.3, seed=1)
    cs = [1.0, 2.0, 4.0, 8.0]
    shifts, reps, T = ("sine", "adversarial"), [0, 3], 90
    n = len(shifts) * len(reps)
    envs = [e for _ in cs for e in _envs(inst, shifts, reps)]
    batch = _run(cls, kw, envs, T, constants={"c": [c for c in cs for _ in range(n)]})
    for j, c in enumerate(cs):
        alone = _run(cls, {**kw, "c": c}, _envs(inst, shifts, reps), T, chunk=13)
        rows = slice(j * n, (j + 1) * n)
        assert batch.cum_regret[rows].tolist() == alone.cum_regret.tolist()
        for name in state:
            assert np.array_equal(getattr(batch, name)[rows], getattr(alone, name)), name
    # the constants are per repetition (BOSE eliminates nothing in 90 rounds: only its
    # widths show c; SP-TS's posterior draws differ, hence its arms)
    scale = batch.v if alg == "SP-TS" else batch.gamma
    assert len(set(scale.tolist())) == len(cs)
    if alg == "SP-TS":
        assert len({tuple(batch.cum_regret[j * n : (j + 1) * n]) for j in range(len(cs))}) > 1


def test_spts_v_and_bose_gamma_are_the_scalar_formulas_per_repetition():
    inst = gap_instance(4, 6, gap=0.3, seed=1)
    envs = _envs(inst, ("sine",), [0, 1, 2])
    T = 200
    ts = BatchedSemiparametricTS()
    ts.reset(envs, T, constants={"c": [1.0, 3.0, 0.5]})
    root = math.sqrt(4 * math.log(T))
    assert ts.v.tolist() == [1.0 * root, 3.0 * root, 0.5 * root]
    bose = BatchedBOSE(c=2.0)
    bose.reset(envs, T)  # no constants: the engine's own c for every repetition
    assert bose.constant("c") == [2.0, 2.0, 2.0]
    assert len(set(bose.gamma.tolist())) == 1


@pytest.mark.parametrize(
    ("cls", "constants", "message"),
    [
        (BatchedSemiparametricTS, {"n_mc": [10, 10]}, "cannot vary 'n_mc'.*allowed: c"),
        (BatchedLinUCB, {"c": [1.0, 2.0]}, "cannot vary 'c'.*allowed: none"),
        (BatchedBOSE, {"c": [1.0]}, r"constants\['c'\] has 1 values for 2 environments"),
        (BatchedBOSE, {"c": [1.0, 0.0]}, "c must be a finite number > 0, got 0.0"),
        (BatchedSemiparametricTS, {"c": [1.0, float("nan")]}, "c must be a finite number > 0"),
        (BatchedSemiparametricTS, {"c": [True, 1.0]}, "c must be a finite number > 0"),
    ],
)
def test_wrong_constants_are_a_clear_value_error(cls, constants, message):
    envs = _envs(gap_instance(3, 4, seed=0), ("none",), [0, 1])
    with pytest.raises(ValueError, match=message):
        cls().reset(envs, 50, constants=constants)


@settings(max_examples=40, deadline=None)
@given(
    st.sampled_from(sorted(ENGINES)),
    st.lists(
        st.one_of(
            st.floats(allow_nan=True, allow_infinity=True),
            st.integers(-3, 10),
            st.text(max_size=3),
            st.none(),
        ),
        min_size=0,
        max_size=4,
    ),
)
def test_any_constants_input_runs_or_raises_value_error(alg, values):
    cls, _, kw = ENGINES[alg]
    envs = _envs(gap_instance(3, 4, seed=0), ("none",), [0, 1, 2])
    eng = cls(**kw)
    try:
        eng.reset(envs, 20, constants={"c": values})
    except ValueError:
        return
    assert len(values) == 3 and all(c > 0 for c in eng.constant("c"))
    eng.advance(20)
    assert np.isfinite(eng.cum_regret).all()
