"""Smoke test of the classroom load benchmark (``benchmarks/bench_classroom.py``), so it
cannot rot: a real ``python -m dashboard serve`` (embedded Dask cluster of one worker), one
browser-less websocket student with a tiny horizon presses Run and Pause; frames arrive, the
Pause latency is measured, the server logs no traceback and is always stopped."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

pytest.importorskip("distributed")
pytest.importorskip("psutil")

from tests.conftest import load_benchmark


def _bench():
    return load_benchmark("bench_classroom")


def test_one_student_streams_pauses_and_leaves_no_traceback():
    bench = _bench()
    result = bench.bench(
        [1],
        seconds=3.0,
        pauses=2,
        horizon=20_000,
        runs=2,
        speed="normal",
        classes=1,
        settle=0.0,
        server_args=["--workers", "1"],
        timeout=60.0,
        idle_timeout=3.0,
    )
    (row,) = result["results"]
    assert row["connected"] == 1 and row["session_errors"] == [], row
    assert row["frames_total"] > 0, "no frame reached the student"
    assert math.isfinite(row["first_frame_s_max"]) and row["fps_min"] >= 0
    # the run advanced in the window (rounds per second of the progress text)
    assert row["rounds_per_s_median"] > 0 and row["rounds_per_s_min"] <= row["rounds_per_s_median"]
    assert row["pause_samples"] >= 1 and row["pause_timeouts"] == 0
    assert 0 < row["pause_p50_ms"] < 60_000
    assert row["tracebacks"] == 0, Path(result["server_log"]).read_text()[-3000:]
    assert row["rss_after_mb"][0] > 0 and row["rss_after_mb"][1] > 0  # server and workers
    table = bench.to_markdown(result)
    assert "| 1 | 1 |" in table and "frames/s" in table
