"""A sweep resumed on a local Dask cluster, end to end: the real CLI in a child process.

Finding: a successful resume (exit 0) printed a worker's ``CommClosedError`` heartbeat
traceback at shutdown (the workers' heartbeat met the scheduler's closed connection while the
cluster closed).  The unit test of the filter that drops it is
``tests/cli/test_cli_files.py::test_the_worker_heartbeat_at_close_prints_no_traceback``; this
one runs ``python -m dashboard sweep --workers N --out FILE`` twice, the second time on a file
whose last pieces were cut off, and reads what each run printed to stderr.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

#: Two points of a few rounds; ``--workers`` puts even this tiny sweep on a LocalCluster
#: (without it a sweep this small runs in-process and no cluster starts).
SWEEP = [
    "sweep", "--problem", "cmab", "--algorithm", "CUCB", "--m", "2", "--grid", "d=3,4",
    "--horizon", "40", "--runs", "2", "--seed", "0", "--workers", "2", "--format", "json",
]  # fmt: skip


def _sweep(out: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONUNBUFFERED": "1"}
    env.pop("BANDIT_DASHBOARD_SCHEDULER", None)  # the embedded cluster, not a running one
    return subprocess.run(
        [sys.executable, "-m", "dashboard", *SWEEP, "--out", str(out)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=180,
    )  # fmt: skip


def _assert_clean_exit(done: subprocess.CompletedProcess[str]) -> None:
    assert done.returncode == 0, done.stderr[-3000:]
    noisy = [
        line
        for line in done.stderr.splitlines()
        if "Traceback" in line or "CommClosedError" in line or "error" in line.lower()
    ]
    assert not noisy, done.stderr[-3000:]


def _without_seconds(rows: object) -> object:
    if isinstance(rows, dict):
        return {k: _without_seconds(v) for k, v in rows.items() if "seconds" not in k}
    if isinstance(rows, list):
        return [_without_seconds(v) for v in rows]
    return rows


def test_a_resumed_sweep_on_a_local_cluster_exits_0_without_a_traceback(tmp_path):
    out = tmp_path / "sweep.jsonl"
    first = _sweep(out)
    _assert_clean_exit(first)
    whole = json.loads(first.stdout)
    assert [row["point"] for row in whole] == [{"d": 3}, {"d": 4}]

    lines = out.read_text().splitlines(keepends=True)
    assert len(lines) >= 3, lines  # the header and at least one piece per point
    out.write_text("".join(lines[:2]))  # as if stopped after the first piece

    resumed = _sweep(out)
    _assert_clean_exit(resumed)
    assert len(out.read_text().splitlines()) > 2, "the resumed run saved no piece"
    assert _without_seconds(json.loads(resumed.stdout)) == _without_seconds(whole)
