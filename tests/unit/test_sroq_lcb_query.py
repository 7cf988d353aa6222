"""SROQ-CMAB / SROQ-GR-CMAB ``lcb_query`` knob: Appendix A.1 (the max-LCB query shares the
representatives' parallel round) against Appendices A.4 / A.9 (it is one more sequential query).

Only the adaptivity count may differ between the readings; queries, actions, eliminations and
regret must be identical, and the sequential reading costs exactly one extra round per epoch.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from dashboard.algorithms.cmab.actions import MSets
from dashboard.algorithms.cmab.policies.general import SROQGR, DiscretizedSROQGR
from dashboard.algorithms.cmab.policies.sroq import LCB_QUERY_KINDS, SROQ, validate_lcb_query
from dashboard.algorithms.cmab.rewards import GeneralRewards, LinearRewards


def _linear_env(d=12, m=3, seed=0):
    return LinearRewards(d, seed=seed).environment(MSets(d, m), 0)


def _general_env(seed=0):
    return GeneralRewards(5, seed=seed).environment(MSets(5, 2), 0)


def _epochs(p):
    return [e for e in p.events if e.kind == "epoch"]


@pytest.mark.parametrize(
    ("make", "env", "T"),
    [
        (lambda **kw: SROQ(**kw), _linear_env, 20_000),
        (lambda **kw: SROQ(M=6, **kw), _linear_env, 5_000),
        (lambda **kw: SROQGR(**kw), _general_env, 4_000),
    ],
)
def test_sequential_lcb_query_adds_one_round_per_epoch_and_changes_nothing_else(make, env, T):
    par = make().run(env(), T)
    seq = make(lcb_query="sequential").run(env(), T)
    epochs = len(_epochs(par))
    assert epochs >= 2 and len(_epochs(seq)) == epochs
    # A.1: one adaptivity round per epoch; A.4 / A.9: the LCB query is one more round
    assert par.log.adaptivity == epochs
    assert seq.log.adaptivity == 2 * epochs
    # the same queries, the same decisions, the same numbers
    assert seq.log.queries == par.log.queries
    assert seq.cum_regret == par.cum_regret
    for a, b in zip(_epochs(par), _epochs(seq)):
        assert np.array_equal(a.data["surviving"], b.data["surviving"])
        assert a.data["max_lcb"] == b.data["max_lcb"]
    # the max-LCB query sits alone in its round, after the representatives' round
    arr = seq.log.arrays()
    purposes = seq.log.purposes
    lcb_codes = {i for i, s in enumerate(purposes) if "LCB" in s}
    rid, code = arr["round_id"], arr["purpose_code"]
    for r in np.unique(rid):
        in_round = code[rid == r]
        is_lcb = np.isin(in_round, list(lcb_codes))
        assert is_lcb.all() or not is_lcb.any()
        if is_lcb.all():
            assert in_round.size == 1


def test_default_is_the_a1_reading_and_params_report_it():
    assert SROQ().lcb_query == "parallel" and SROQ().params()["lcb_query"] == "parallel"
    assert SROQGR().params()["lcb_query"] == "parallel"
    assert SROQ(lcb_query="sequential").lcb_query == "sequential"
    # the discretised variant inherits the default reading
    assert DiscretizedSROQGR().lcb_query == "parallel"


@given(
    st.one_of(
        st.text(max_size=12).filter(lambda s: s.lower() not in LCB_QUERY_KINDS),
        st.integers(),
        st.none(),
        st.floats(allow_nan=True),
        st.booleans(),
    )
)
def test_invalid_lcb_query_is_a_value_error(value):
    with pytest.raises(ValueError, match=r"lcb_query (must be one of|needs a value)"):
        validate_lcb_query(value)
    with pytest.raises(ValueError, match=r"lcb_query (must be one of|needs a value)"):
        SROQ(lcb_query=value)
    with pytest.raises(ValueError, match=r"lcb_query (must be one of|needs a value)"):
        SROQGR(lcb_query=value)
