"""alpha-regret of alpha-AROQ-CMAB (Theorem 7, Appendix A.3) recorded by the simulation.

``R^alpha(t) = alpha t r(a*) - sum_{s<=t} r(a_s)``, so at every recorded round it must equal the
ordinary regret minus ``(1 - alpha) t r(a*)``: the invariant the tests check, on matchings
(where greedy is inexact) and with alpha = 1 (where both curves coincide).  alpha is validated
in one place (:func:`dashboard.algorithms.cmab.approx.validate_alpha`): the spec, the CLI and
the policy refuse alpha = 0.
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from dashboard.algorithms.cmab.approx import validate_alpha
from dashboard.algorithms.cmab.policies.aroq import AlphaAROQ
from dashboard.cli import main
from dashboard.simulation.results import merge_results
from dashboard.simulation.runner import simulate, stream
from dashboard.simulation.specs import make_spec
from dashboard.simulation.store import result_from_record, result_to_record

ALGS = ["alpha-AROQ-CMAB", "AROQ-CMAB"]


def _spec(alpha: float = 0.5):
    return make_spec("cmab", d=10, m=3, actions="matchings", alpha=alpha)


@pytest.fixture(scope="module")
def result():
    return simulate(_spec(0.5), ALGS, horizon=1500, runs=3, seed=2)


def test_alpha_regret_is_regret_minus_the_alpha_slack_at_every_grid_round(result) -> None:
    r = result["alpha-AROQ-CMAB"]
    assert r.alpha_regret is not None and r.alpha_regret.shape == r.regret.shape == (
        3,
        len(r.times),
    )
    best = result.instance["optimal_reward"]
    expected = r.regret - 0.5 * r.times[None, :] * best
    np.testing.assert_allclose(r.alpha_regret, expected, rtol=1e-9, atol=1e-7)
    # alpha < 1 and r(a*) > 0: the alpha-regret is strictly below the regret
    assert (r.alpha_regret[:, -1] < r.regret[:, -1]).all()


def test_only_algorithms_with_an_approximate_oracle_report_it(result) -> None:
    assert result["AROQ-CMAB"].alpha_regret is None
    summaries = {s["algorithm"]: s for s in result.to_dict()["results"]}
    a = summaries["alpha-AROQ-CMAB"]
    assert a["final_alpha_regret_mean"] == pytest.approx(
        float(result["alpha-AROQ-CMAB"].alpha_regret[:, -1].mean())
    )
    assert "final_alpha_regret_mean" not in summaries["AROQ-CMAB"]
    assert "alpha-regret" in result.to_table()


def test_alpha_one_gives_the_ordinary_regret() -> None:
    res = simulate(_spec(1.0), ["alpha-AROQ-CMAB"], horizon=600, runs=2, seed=1)
    r = res["alpha-AROQ-CMAB"]
    np.testing.assert_allclose(r.alpha_regret, r.regret, rtol=1e-12, atol=1e-9)


def test_csv_column_only_when_someone_reports_it(result) -> None:
    rows = list(csv.DictReader(io.StringIO(result.to_csv())))
    assert "alpha_regret" in rows[0]
    alpha = [row for row in rows if row["algorithm"] == "alpha-AROQ-CMAB"]
    other = [row for row in rows if row["algorithm"] == "AROQ-CMAB"]
    assert all(row["alpha_regret"] for row in alpha) and all(
        not row["alpha_regret"] for row in other
    )
    r = result["alpha-AROQ-CMAB"]
    assert float(alpha[-1]["alpha_regret"]) == pytest.approx(r.alpha_regret[-1, -1])
    plain = simulate(_spec(), ["AROQ-CMAB"], horizon=100, seed=2).to_csv()
    assert "alpha_regret" not in plain.splitlines()[0]


def test_streaming_merge_and_store_keep_it(result) -> None:
    *_, last = stream(_spec(0.5), ALGS, horizon=1500, runs=3, seed=2, frames=7)
    np.testing.assert_array_equal(
        last["alpha-AROQ-CMAB"].alpha_regret, result["alpha-AROQ-CMAB"].alpha_regret
    )
    parts = [
        simulate(_spec(0.5), ALGS, horizon=1500, runs=3, seed=2, reps=[0, 2]),
        simulate(_spec(0.5), ALGS, horizon=1500, runs=3, seed=2, reps=[1]),
    ]
    merged = merge_results(parts)
    np.testing.assert_array_equal(
        merged["alpha-AROQ-CMAB"].alpha_regret, result["alpha-AROQ-CMAB"].alpha_regret
    )
    back = result_from_record(json.loads(json.dumps(result_to_record(result))))
    np.testing.assert_allclose(
        back["alpha-AROQ-CMAB"].alpha_regret, result["alpha-AROQ-CMAB"].alpha_regret
    )
    assert back["AROQ-CMAB"].alpha_regret is None


@given(st.floats(allow_nan=True, allow_infinity=True))
def test_validate_alpha_accepts_exactly_the_half_open_unit_interval(x: float) -> None:
    if 0.0 < x <= 1.0:
        assert validate_alpha(x) == x
    else:
        with pytest.raises(ValueError, match=r"alpha must be a number > 0 and <= 1"):
            validate_alpha(x)


@pytest.mark.parametrize("bad", [0, 0.0, -0.1, 1.5, math.nan, True, "x", None])
def test_spec_and_policy_refuse_a_bad_alpha_with_the_same_sentence(bad) -> None:
    with pytest.raises(ValueError, match="alpha must be") as spec_err:
        make_spec("cmab", alpha=bad)
    with pytest.raises(ValueError, match="alpha must be") as policy_err:
        AlphaAROQ(alpha=bad)
    assert str(spec_err.value) == str(policy_err.value)


def test_cli_alpha_zero_is_one_error_line_and_exit_2(capsys) -> None:
    code = main(
        [
            "simulate",
            "--problem",
            "cmab",
            "--algorithm",
            "alpha-AROQ-CMAB",
            "--horizon",
            "50",
            "--alpha",
            "0",
        ]
    )
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith("error: ") and err.count("\n") == 1
    assert "alpha must be a number > 0 and <= 1" in err


def test_cli_json_has_final_alpha_regret_mean_only_for_alpha_aroq(capsys) -> None:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(
            [
                "simulate",
                "--problem",
                "cmab",
                "--algorithm",
                "alpha-AROQ-CMAB",
                "--algorithm",
                "CUCB",
                "--actions",
                "matchings",
                "--d",
                "8",
                "--m",
                "2",
                "--horizon",
                "300",
                "--alpha",
                "0.5",
                "--format",
                "json",
            ]
        )
    assert code == 0
    results = {r["algorithm"]: r for r in json.loads(out.getvalue())["results"]}
    assert (
        results["alpha-AROQ-CMAB"]["final_alpha_regret_mean"]
        < results["alpha-AROQ-CMAB"]["final_regret_mean"]
    )
    assert "final_alpha_regret_mean" not in results["CUCB"]
