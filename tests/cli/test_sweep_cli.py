"""``sweep``, ``load`` and ``simulate --save``: every sweep row equals what ``simulate`` prints
for that point alone; bad grids are one-line errors with exit 2 before any work; Ctrl-C leaves
a resumable file."""

from __future__ import annotations

import io
import json

import pytest

from dashboard import sweep_cli
from dashboard.cli import main
from dashboard.simulation import sweep as sweep_mod


def run_cli(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _no_seconds(doc):
    doc = dict(doc)
    doc["results"] = [
        {k: v for k, v in r.items() if not k.endswith("seconds")} for r in doc["results"]
    ]
    return doc


SWEEP = [
    "sweep",
    "--problem",
    "cmab",
    "--algorithm",
    "AROQ-CMAB",
    "--algorithm",
    "SROQ-CMAB",
    "--m",
    "2",
    "--grid",
    "horizon=200,400",
    "--grid",
    "d=5,6",
    "--grid",
    "AROQ-CMAB:C=0.5,2",
    "--runs",
    "2",
    "--seed",
    "4",
    "--scheduler",
    "inprocess",
]


def test_every_row_equals_simulate_for_that_point(capsys, tmp_path):
    out = tmp_path / "s.jsonl"
    code, text, err = run_cli(capsys, *SWEEP, "--out", str(out), "--format", "json")
    assert code == 0, err
    rows = json.loads(text)
    assert len(rows) == 8
    assert rows[0]["point"] == {"horizon": 200, "d": 5, "AROQ-CMAB:C": 0.5}
    for row in rows[::3]:  # a few points keep the test short; test_sweep.py checks all
        p = row.pop("point")
        code, alone, err = run_cli(
            capsys,
            "simulate",
            "--problem",
            "cmab",
            "--algorithm",
            "AROQ-CMAB",
            "--algorithm",
            "SROQ-CMAB",
            "--m",
            "2",
            "--d",
            str(p["d"]),
            "--horizon",
            str(p["horizon"]),
            "--param",
            f"AROQ-CMAB:C={p['AROQ-CMAB:C']}",
            "--runs",
            "2",
            "--seed",
            "4",
            "--format",
            "json",
        )
        assert code == 0, err
        assert _no_seconds(row) == _no_seconds(json.loads(alone))
    # load prints the same rows (seconds included: they are saved)
    code, loaded, err = run_cli(capsys, "load", str(out), "--format", "json")
    assert code == 0 and json.loads(loaded) == json.loads(text)
    code, table, err = run_cli(capsys, "load", str(out))
    assert code == 0 and "AROQ-CMAB:C" in table and "8 point(s)" in table
    # the same command again skips everything and prints the same rows
    code, again, err = run_cli(capsys, *SWEEP, "--out", str(out), "--format", "json")
    assert code == 0 and json.loads(again) == json.loads(text)


def test_simulate_save_then_load_prints_the_same(capsys, tmp_path):
    path = tmp_path / "run.jsonl"
    argv = ["simulate", "--problem", "semiparametric", "--algorithm", "SBE", "--d", "3"]
    argv += ["--K", "5", "--horizon", "300", "--runs", "2", "--format", "json"]
    code, text, err = run_cli(capsys, *argv, "--save", str(path))
    assert code == 0, err
    code, loaded, err = run_cli(capsys, "load", str(path), "--format", "json")
    assert code == 0 and json.loads(loaded) == json.loads(text)
    code, table, _ = run_cli(capsys, "load", str(path), "--format", "table")
    assert code == 0 and "SBE" in table


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--grid", "colour=1,2"], "unknown grid field 'colour'"),
        (["--grid", "d="], "empty list"),
        (["--grid", "d"], "--grid must look like"),
        (["--grid", "d=0,5"], "d must be"),
        (["--grid", "d=1,5"], "m must be at most d"),
        (["--grid", "reward=linear,general"], "does not support the 'general' reward"),
        (["--grid", "AROQ-CMAB:nope=1"], "AROQ-CMAB has no constant 'nope'"),
        (["--grid", "SDCB:C=1"], "names no chosen algorithm"),
        (
            [
                *("--grid", f"d={','.join(map(str, range(2, 402)))}"),
                *("--grid", "horizon=1,2,3,4"),
                *("--grid", f"alpha={','.join(str(i / 100) for i in range(0, 101))}"),
            ],
            "at most 100,000",
        ),
        (["--format", "xml"], "unknown format"),
        (["--workers", "0", "--grid", "d=5"], "workers"),
        (
            ["--scheduler", "nonsense", "--grid", "d=5"],
            "scheduler address must look like tcp://HOST:PORT (got 'nonsense')",
        ),
    ],
)
def test_bad_grids_are_one_line_errors_before_any_work(capsys, monkeypatch, extra, message):
    def boom(*a, **k):  # any work started is a failure of the contract
        raise AssertionError("work started")

    monkeypatch.setattr(sweep_mod, "run_task", boom)
    argv = ["sweep", "--problem", "cmab", "--algorithm", "AROQ-CMAB", "--m", "2"]
    code, out, err = run_cli(capsys, *argv, "--horizon", "100", *extra)
    assert code == 2 and out == ""
    assert err.startswith("error: ") and err.count("\n") == 1 and message in err, err


def test_load_errors_are_one_line(capsys, tmp_path):
    code, _, err = run_cli(capsys, "load", str(tmp_path / "missing.jsonl"))
    assert code == 2 and "no such file" in err and err.count("\n") == 1
    other = tmp_path / "other.jsonl"
    other.write_text("not json\n")
    code, _, err = run_cli(capsys, "load", str(other))
    assert code == 2 and "not a saved experiment" in err


def test_ctrl_c_leaves_a_resumable_file(capsys, monkeypatch, tmp_path):
    out = tmp_path / "s.jsonl"
    real = sweep_mod.run_task
    calls = []

    def interrupted_after_three(unit, reps):
        calls.append(1)
        if len(calls) > 3:
            raise KeyboardInterrupt
        return real(unit, reps)

    monkeypatch.setattr(sweep_mod, "run_task", interrupted_after_three)
    code, text, err = run_cli(capsys, *SWEEP, "--out", str(out), "--format", "json")
    assert code == 130 and text == ""
    assert "interrupted" in err and "rerun the same command to resume" in err
    assert "Traceback" not in err
    monkeypatch.setattr(sweep_mod, "run_task", real)
    code, text, err = run_cli(capsys, *SWEEP, "--out", str(out), "--format", "json")
    assert code == 0
    code, full, _ = run_cli(capsys, *SWEEP, "--format", "json")
    resumed = [_no_seconds(r) for r in json.loads(text)]
    assert resumed == [_no_seconds(r) for r in json.loads(full)]
    # a different grid on the same file is refused in one line
    code, _, err = run_cli(capsys, *SWEEP[:-4], "--seed", "5", "--out", str(out))
    assert code == 2 and "different sweep (differs in: seed)" in err


def test_progress_bar_only_on_a_terminal(monkeypatch):
    class Tty(io.StringIO):
        def isatty(self):
            return True

    p = sweep_mod.SweepProgress(3, 12, 1, 4)
    tty = Tty()
    monkeypatch.setattr("sys.stderr", tty)
    bar = sweep_cli._Bar()
    bar(p)
    bar.close()
    assert "3/12 tasks, 1/4 points" in tty.getvalue() and "#######" in tty.getvalue()
    plain = io.StringIO()
    monkeypatch.setattr("sys.stderr", plain)
    bar = sweep_cli._Bar()
    bar(p)
    bar.close()
    assert plain.getvalue() == ""


def test_simulate_save_to_an_unwritable_place_is_one_line(capsys, tmp_path):
    argv = ["simulate", "--problem", "semiparametric", "--algorithm", "SBE", "--horizon", "20"]
    code, _, err = run_cli(capsys, *argv, "--save", str(tmp_path / "no" / "such" / "x.jsonl"))
    assert code == 2 and err.startswith("error: cannot write") and err.count("\n") == 1


def test_bench_registers_the_sweep_benchmark(capsys, monkeypatch):
    """``bench --only sweep`` runs benchmarks/bench_sweep.py (timings stubbed here: the real
    run starts two local clusters; see the README for measured ratios)."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    import benchmarks.bench_sweep as bench

    calls = []

    def timed(sweep, n_workers):
        calls.append(n_workers)
        return 2.0 / n_workers, sweep_mod.run_sweep(sweep, scheduler="inprocess")

    monkeypatch.setattr(
        bench,
        "_sweep",
        lambda quick: sweep_mod.make_sweep(
            "semiparametric", ["SBE"], horizon=50, runs=2, grid={"d": [2, 3]}
        ),
    )
    monkeypatch.setattr(bench, "_timed", timed)
    code, out, err = run_cli(capsys, "bench", "--only", "sweep", "--quick")
    assert code == 0, err
    doc = json.loads(out)["sweep"]
    assert calls == [1, 2] and doc["throughput_ratio"] == 2.0 and doc["identical_rows"] is True
    assert doc["tasks"] == 2 and doc["target_ratio"] == 1.7


def test_out_never_overwrites_a_file_that_is_not_an_experiment(capsys, tmp_path):
    notes = tmp_path / "notes.txt"
    notes.write_text("my precious notes\n")
    code, out, err = run_cli(capsys, *SWEEP, "--out", str(notes))
    assert code == 2 and out == "" and "not a saved experiment" in err
    assert notes.read_text() == "my precious notes\n"
    code, _, err = run_cli(capsys, *SWEEP, "--out", str(tmp_path / "missing-dir" / "s.jsonl"))
    assert code == 2 and err.startswith("error: cannot write") and err.count("\n") == 1
