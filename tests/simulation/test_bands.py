"""Bands over repetitions (dashboard.simulation.bands): ddof = 1, Student-t interval, quantiles,
the degenerate single run, and the CSV / CLI / reproduce exports that use them."""

from __future__ import annotations

import csv
import io
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from dashboard.cli import main
from dashboard.simulation.bands import BANDS, band, check_band, experiment_band_csv
from dashboard.simulation.runner import simulate
from dashboard.simulation.specs import make_spec


def test_sd_uses_ddof_1_at_r_3() -> None:
    v = np.array([[0.0, 1.0], [1.0, 2.0], [5.0, 6.0]])
    b = band(v, "sd")
    sd = math.sqrt(((0 - 2) ** 2 + (1 - 2) ** 2 + (5 - 2) ** 2) / 2)  # sqrt(7), not sqrt(14/3)
    np.testing.assert_allclose(b.mean, [2.0, 3.0])
    np.testing.assert_allclose(b.hi - b.mean, [sd, sd])
    np.testing.assert_allclose(b.mean - b.lo, [sd, sd])


def test_se_and_ci95_use_sqrt_r_and_the_student_quantile() -> None:
    v = np.array([[0.0], [1.0], [5.0]])
    sd = math.sqrt(7.0)
    assert band(v, "se").hi[0] - 2.0 == pytest.approx(sd / math.sqrt(3))
    # t_{0.975, 2} = 4.3027 (not 1.96)
    assert band(v, "ci95").hi[0] - 2.0 == pytest.approx(4.302652729911275 * sd / math.sqrt(3))


def test_quantiles_and_runs() -> None:
    v = np.arange(11.0)[:, None]  # 0 .. 10
    b = band(v, "q10-90")
    assert (b.lo[0], b.mean[0], b.hi[0]) == pytest.approx((1.0, 5.0, 9.0))
    r = band(v, "runs")
    assert r.runs.shape == (11, 1) and r.lo[0] == r.hi[0] == r.mean[0]


@pytest.mark.parametrize("kind", list(BANDS))
def test_a_single_run_gives_a_degenerate_band_not_nan(kind) -> None:
    b = band(np.array([[1.0, 2.5, 4.0]]), kind)
    np.testing.assert_array_equal(b.lo, b.mean)
    np.testing.assert_array_equal(b.hi, b.mean)
    assert np.isfinite(b.lo).all()


def test_bad_inputs_are_value_errors() -> None:
    with pytest.raises(ValueError, match="unknown band 'iqr'; choose from: sd, se, ci95"):
        check_band("iqr")
    with pytest.raises(ValueError, match="R >= 1"):
        band(np.zeros((0, 3)), "sd")
    with pytest.raises(ValueError, match="finite"):
        band(np.array([[1.0], [np.nan]]), "sd")


@settings(max_examples=60, deadline=None)
@given(
    arrays(
        float,
        st.tuples(st.integers(1, 12), st.integers(1, 5)),
        elements=st.floats(-1e6, 1e6, allow_nan=False),
    )
)
def test_every_band_contains_its_mean_and_is_ordered(v) -> None:
    se = band(v, "se")
    for kind in BANDS:
        b = band(v, kind)
        tol = 1e-9 * (1 + np.abs(v).max(axis=0))
        assert (b.lo <= b.hi + tol).all()
        if kind != "q10-90":  # symmetric bands contain the mean (quantiles need not)
            assert (b.lo <= b.mean + tol).all() and (b.mean <= b.hi + tol).all()
        if kind in ("sd", "ci95") and v.shape[0] > 1:  # wider than the standard error
            assert (b.hi - b.lo >= se.hi - se.lo - tol).all()
    q = band(v, "q10-90")
    tol = 1e-9 * (1 + np.abs(v).max(axis=0))
    assert (q.lo >= v.min(axis=0) - tol).all() and (q.hi <= v.max(axis=0) + tol).all()


def test_ci95_covers_the_true_mean_about_95_percent_of_the_time() -> None:
    rng = np.random.default_rng(0)
    draws = rng.normal(3.0, 2.0, size=(4000, 3))  # 4000 experiments of R = 3 runs
    b = band(draws.T, "ci95")  # each column is one experiment
    coverage = np.mean((b.lo <= 3.0) & (3.0 <= b.hi))
    assert 0.93 < coverage < 0.97
    # the normal quantile (1.96 se) would cover far less at R = 3
    se = band(draws.T, "se")
    naive = np.mean(np.abs(se.mean - 3.0) <= 1.96 * (se.hi - se.mean))
    assert naive < 0.85


@pytest.fixture(scope="module")
def result():
    return simulate(make_spec("cmab", d=6, m=2), ["CUCB", "AROQ-CMAB"], horizon=200, runs=3, seed=4)


def test_banded_csv_has_one_row_per_algorithm_and_round(result) -> None:
    rows = list(csv.DictReader(io.StringIO(result.to_csv(band="sd"))))
    r = result["CUCB"]
    assert len(rows) == 2 * r.times.size
    first = [row for row in rows if row["algorithm"] == "CUCB"][-1]
    b = band(r.regret, "sd")
    assert float(first["cumulative_regret_mean"]) == pytest.approx(b.mean[-1])
    assert float(first["cumulative_regret_hi"]) == pytest.approx(b.hi[-1])
    assert first["band"] == "sd"
    assert result.to_csv(band="runs") == result.to_csv()


def test_cli_band_writes_the_banded_csv_and_refuses_bad_use(tmp_path, capsys) -> None:
    out = tmp_path / "c.csv"
    base = [
        "simulate",
        "--problem",
        "cmab",
        "--algorithm",
        "CUCB",
        "--d",
        "5",
        "--m",
        "2",
        "--horizon",
        "100",
        "--runs",
        "3",
    ]
    assert main([*base, "--csv", str(out), "--band", "ci95"]) == 0
    assert out.read_text().splitlines()[0].startswith("algorithm,t,band,cumulative_regret_mean")
    capsys.readouterr()
    assert main([*base, "--csv", str(out), "--band", "iqr"]) == 2
    assert capsys.readouterr().err.startswith("error: unknown band 'iqr'")
    assert main([*base, "--band", "sd"]) == 2
    assert "give --csv" in capsys.readouterr().err


def test_reproduce_band_file(tmp_path) -> None:
    from dashboard.reproduce import reproduce

    lines: list[str] = []
    reproduce("cmab-fig4", tmp_path, scale="test", runs=2, band="se", echo=lines.append)
    path = tmp_path / "cmab-fig4-band-se.csv"
    rows = list(csv.DictReader(io.StringIO(path.read_text())))
    assert rows and {r["metric"] for r in rows} == {"cumulative_regret", "queries", "adaptivity"}
    assert all(float(r["lo"]) <= float(r["mean"]) <= float(r["hi"]) for r in rows)
    with pytest.raises(ValueError, match="every run"):
        reproduce("cmab-fig4", tmp_path, scale="test", band="runs", echo=lines.append)


def test_experiment_band_csv_handles_pac_panels() -> None:
    from dashboard.simulation.experiments import run_experiment

    res = run_experiment("semi-pac", scale="test", runs=2)
    text = experiment_band_csv(res, "q10-90")
    rows = list(csv.DictReader(io.StringIO(text)))
    assert {r["metric"] for r in rows} == {"e_t", "sqrt_t_e_t"} and rows[0]["algorithm"] == "DEO"
