"""Smoke test of ``benchmarks/bench_certificates.py`` (BOSE's elimination bound and SP-TS's
normal table, each against the engine without it, side by side), so it cannot rot: a tiny
horizon gives identical states, a row per algorithm and size, and leaves SP-TS's table as it
found it."""

from __future__ import annotations

import numpy as np

from dashboard.algorithms.semiparametric.policies import certified_argmax as ca
from tests.conftest import load_benchmark


def _bench():
    return load_benchmark("bench_certificates")


def test_both_certificates_change_no_number_and_restore_the_table():
    table, error = ca._A.copy(), ca.TABLE_ERROR
    rows = _bench().run(horizon=240, chunk=120)
    assert [r["row"] for r in rows] == [
        "bose d=20 K=30",
        "bose d=5 K=10",
        "spts_table d=20 K=30",
        "spts_table d=5 K=10",
    ]
    assert all(r["identical"] is True and r["ratio"] > 0 for r in rows)
    assert rows[0]["certified"] > 0.5 and rows[1]["certified"] == 0  # K = 10: widths only
    assert rows[2]["recomputed_bits9"] >= rows[2]["recomputed_bits11"]
    assert np.array_equal(ca._A, table) and ca.TABLE_ERROR == error
