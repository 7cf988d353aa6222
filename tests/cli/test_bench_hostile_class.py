"""The class-cannot-be-taken-down load test (``benchmarks/bench_hostile_class.py``): a real
``python -m dashboard serve`` (embedded Dask cluster), 10 browser-less websocket students
streaming while one uploads the worst saved-run file the upload accepts and another starts the
biggest sweep the class's work limit allows.  The streaming sessions keep at least 1 frame/s,
every Pause is answered within 1 s, the uploader is told what was overlaid, the sweeper's sweep
is accepted, and the server logs no traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("distributed")
pytest.importorskip("psutil")

from tests.conftest import load_benchmark

pytestmark = pytest.mark.xdist_group("served-load")


def _timely(bench, r) -> bool:
    return (
        r["fps_min"] >= bench.TARGETS["fps_each"]
        and r["pause_samples"] >= 10
        and r["pause_max_s"] <= bench.TARGETS["pause_max_s"]
    )


def test_ten_students_stream_while_one_uploads_and_one_sweeps():
    bench = load_benchmark("bench_hostile_class")
    result = bench.bench(students=10, seconds=8.0, pauses=2, timeout=90.0)
    if not _timely(bench, result["result"]):
        # The test shares the 2-core machine with the other xdist worker's tests (a floor
        # job's Pause took 1.14 s once): a timing miss is measured again, once; the second
        # measurement decides.  Everything else is asserted on whichever run is kept.
        result = bench.bench(students=10, seconds=8.0, pauses=2, timeout=90.0)
    r = result["result"]
    log = Path(result["server_log"]).read_text()[-3000:]
    assert r["connected"] == 10 and r["session_errors"] == [], (r, log)
    assert r["tracebacks"] == 0, log
    # the upload was read (its refusal would say so) and the sweep started, not refused
    assert "Overlaid" in r["upload_said"], r["upload_said"]
    assert "Cannot run" not in r["sweep_said"] and "points" in r["sweep_said"], r["sweep_said"]
    assert r["fps_min"] >= bench.TARGETS["fps_each"], r
    assert r["pause_samples"] >= 10 and r["pause_max_s"] <= bench.TARGETS["pause_max_s"], r
    assert all(line.startswith("- met") for line in bench.targets(result)), bench.to_markdown(
        result
    )
