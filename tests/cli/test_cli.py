"""The CLI contract others script against: names, JSON fields, one-line errors, exit code 2."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from dashboard.cli import main


def run_cli(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


CMAB = ["simulate", "--problem", "cmab", "--d", "8", "--m", "2", "--horizon", "2000"]
SEMI = ["simulate", "--problem", "semiparametric", "--d", "3", "--K", "5", "--horizon", "3000"]


def test_cmab_json_contract(capsys):
    code, out, err = run_cli(
        capsys,
        *CMAB,
        "--algorithm",
        "cucb",
        "--algorithm",
        "AROQ-CMAB",
        "--algorithm",
        "sroq-cmab",
        "--runs",
        "2",
        "--seed",
        "3",
        "--format",
        "json",
    )
    assert code == 0, err
    doc = json.loads(out)
    assert doc["problem"] == "cmab" and doc["horizon"] == 2000
    assert doc["runs"] == 2 and doc["seed"] == 3
    names = [r["algorithm"] for r in doc["results"]]
    assert names == ["CUCB", "AROQ-CMAB", "SROQ-CMAB"]  # paper spelling, whatever was typed
    for r in doc["results"]:
        for key in (
            "final_regret_mean",
            "final_regret_std",
            "oracle_queries_mean",
            "oracle_adaptivity_mean",
            "wall_seconds",
        ):
            assert isinstance(r[key], float)
    cucb, aroq, _ = doc["results"]
    assert cucb["oracle_queries_mean"] == 2000 == cucb["oracle_adaptivity_mean"]
    assert aroq["oracle_queries_mean"] < 200


def test_same_seed_same_numbers_and_table(capsys):
    args = [*CMAB, "--algorithm", "AROQ-CMAB", "--seed", "7", "--format", "json"]
    a = json.loads(run_cli(capsys, *args)[1])["results"][0]
    b = json.loads(run_cli(capsys, *args)[1])["results"][0]
    assert a["final_regret_mean"] == b["final_regret_mean"]
    code, out, _ = run_cli(capsys, *CMAB, "--algorithm", "AROQ-CMAB", "--format", "table")
    assert code == 0 and "AROQ-CMAB" in out and "regret" in out


def test_semiparametric_json_contract(capsys):
    code, out, err = run_cli(
        capsys,
        *SEMI,
        "--algorithm",
        "SBE",
        "--algorithm",
        "linucb",
        "--shift",
        "sine",
        "--runs",
        "2",
        "--format",
        "json",
    )
    assert code == 0, err
    doc = json.loads(out)
    assert doc["problem"] == "semiparametric"
    sbe = doc["results"][0]
    assert sbe["algorithm"] == "SBE"
    assert 0.0 <= sbe["best_arm_identified_rate"] <= 1.0
    assert "declaration_time_mean" in sbe


def test_design_json_contract(capsys, tmp_path):
    code, out, err = run_cli(
        capsys, "design", "--d", "4", "--K", "7", "--seed", "1", "--format", "json"
    )
    assert code == 0, err
    doc = json.loads(out)
    for key in (
        "weights",
        "support",
        "max_norm_to_anchor",
        "bound_2_sqrt_d",
        "max_norm_to_mean",
        "bound_4_sqrt_d",
        "kw_max_leverage",
        "span_dimension",
    ):
        assert key in doc
    assert len(doc["weights"]) == 7
    assert abs(sum(doc["weights"]) - 1) < 1e-9
    assert doc["max_norm_to_anchor"] <= doc["bound_2_sqrt_d"]
    csv = tmp_path / "arms.csv"
    csv.write_text("1,0\n0,1\n0.5,0.5\n")
    code, out, err = run_cli(capsys, "design", "--features", str(csv), "--format", "json")
    assert code == 0, err
    assert len(json.loads(out)["weights"]) == 3


@pytest.mark.parametrize(
    ("argv", "fragment"),
    [
        ([*CMAB, "--algorithm", "nope"], "unknown algorithm"),
        (
            [
                "simulate",
                "--problem",
                "cmab",
                "--algorithm",
                "CUCB",
                "--d",
                "3",
                "--m",
                "5",
                "--horizon",
                "10",
            ],
            "m must be at most d",
        ),
        (
            ["simulate", "--problem", "cmab", "--algorithm", "CUCB", "--m", "0", "--horizon", "10"],
            "m must be",
        ),
        ([*CMAB[:-2], "--horizon", "0", "--algorithm", "CUCB"], "horizon"),
        ([*CMAB, "--algorithm", "CUCB", "--runs", "0"], "runs"),
        ([*CMAB, "--algorithm", "CUCB", "--actions", "trees"], "action family"),
        ([*CMAB, "--algorithm", "CUCB", "--reward", "weird"], "reward model"),
        ([*CMAB, "--algorithm", "CUCB", "--format", "xml"], "format"),
        (
            ["simulate", "--problem", "chess", "--algorithm", "CUCB", "--horizon", "5"],
            "unknown problem",
        ),
        ([*SEMI, "--algorithm", "SBE", "--shift", "tidal"], "shift"),
        (
            [
                "simulate",
                "--problem",
                "semiparametric",
                "--algorithm",
                "SBE",
                "--K",
                "1",
                "--horizon",
                "10",
            ],
            "K must be",
        ),
        ([*SEMI, "--algorithm", "CUCB"], "unknown algorithm"),
        (["simulate", "--problem", "cmab", "--horizon", "10"], "--algorithm"),
        (
            ["simulate", "--problem", "cmab", "--algorithm", "CUCB", "--horizon", "ten"],
            "horizon T must be an integer from 1 to 10_000_000",
        ),
        (["design", "--features", "/nonexistent/arms.csv"], "arms.csv"),
    ],
)
def test_bad_input_is_one_line_exit_2(capsys, argv, fragment):
    code, _out, err = run_cli(capsys, *argv)
    assert code == 2
    assert err.startswith("error: ") and err.count("\n") == 1, err
    assert fragment.lower() in err.lower()
    assert "Traceback" not in err


def test_module_entry_point_runs_as_a_user_types_it(tmp_path):
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "dashboard",
            "simulate",
            "--problem",
            "cmab",
            "--algorithm",
            "AROQ-CMAB",
            "--d",
            "6",
            "--m",
            "2",
            "--horizon",
            "500",
            "--format",
            "json",
            "--csv",
            str(tmp_path / "curves.csv"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["results"][0]["algorithm"] == "AROQ-CMAB"
    assert (tmp_path / "curves.csv").read_text().startswith("algorithm,run,t,")
    bad = subprocess.run(
        [sys.executable, "-m", "dashboard", "simulate", "--problem", "cmab"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1
