"""Smoke test of ``benchmarks/bench_baselines.py`` (the batched OLS-UCB-C and SDCB engines
against a former commit, side by side), so it cannot rot: a tiny horizon against this very
commit (``HEAD``, extracted with ``git archive`` as the benchmark does) gives identical regrets
and a row per engine."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import load_benchmark

ROOT = Path(__file__).resolve().parents[2]


def _bench():
    return load_benchmark("bench_baselines")


def test_both_engines_against_head_are_identical_and_reported():
    if shutil.which("git") is None:
        pytest.skip("git is needed to extract the former engines")
    inside = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True
    )
    if inside.returncode != 0:
        pytest.skip("not a git checkout")
    rows = _bench().measure("HEAD", 300, 1, ["OLS-UCB-C", "SDCB"])
    assert [r["algorithm"] for r in rows] == ["OLS-UCB-C", "SDCB"]
    for row in rows:
        assert row["identical"] is True and row["T"] == 300 and row["R"] == 10
        assert row["former_cpu_s"] > 0 and row["new_cpu_s"] > 0 and row["ratio"] > 0
