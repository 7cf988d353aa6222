"""``sweep --max-work SECONDS`` / ``--force``: a sweep is estimated as ``simulate`` would
estimate each of its points, summed, and refused above the limit (default 600 s) in one
``error:`` line with exit code 2, before any work; ``--force`` or a higher limit runs it."""

from __future__ import annotations

import pytest

from dashboard.cli import main
from dashboard.simulation import sweep as sweep_mod

#: The red-team's sweep: the Live tab's default algorithms, T = 10^7, R = 256, 3 points.
FINDING = ["sweep", "--problem", "cmab", "--algorithm", "CUCB", "--algorithm", "AROQ-CMAB"]
FINDING += ["--algorithm", "SROQ-CMAB", "--grid", "m=2,3,4", "--horizon", "1e7", "--runs", "256"]


@pytest.fixture
def no_work(monkeypatch):
    """run_sweep replaced by a stand-in that records that the sweep got past its checks."""
    started = []

    def interrupted(*a, **k):
        started.append(k)
        raise KeyboardInterrupt

    monkeypatch.setattr(sweep_mod, "run_sweep", interrupted)
    return started


@pytest.mark.parametrize(("extra", "limit"), [(["--max-work", "60"], "60 s"), ([], "10 min")])
def test_the_findings_sweep_is_one_error_line_before_any_work(capsys, no_work, extra, limit):
    code = main([*FINDING, *extra])
    out, err = capsys.readouterr()
    assert code == 2 and out == "" and err.count("\n") == 1
    assert err.startswith("error: this sweep would take about ")
    assert "(3 points, the largest about 21.9 h alone)" in err
    assert f"above the limit of {limit}; lower T, R or the number of points" in err
    assert "--max-work SECONDS or --force" in err
    assert no_work == []


@pytest.mark.parametrize("extra", [["--force"], ["--max-work", "1e9"]])
def test_force_or_a_higher_limit_runs_it(capsys, no_work, extra):
    code = main([*FINDING, *extra])
    _, err = capsys.readouterr()
    assert code == 130 and "interrupted" in err  # the stand-in was reached
    assert len(no_work) == 1


def test_a_small_sweep_runs_under_a_small_limit(capsys):
    argv = ["sweep", "--problem", "cmab", "--algorithm", "AROQ-CMAB", "--m", "2"]
    argv += ["--grid", "d=4,5", "--horizon", "100", "--scheduler", "inprocess"]
    assert main([*argv, "--max-work", "5"]) == 0
    assert "error" not in capsys.readouterr().err
