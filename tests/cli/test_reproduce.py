"""``python -m dashboard reproduce``: offline HTML + long CSV, one-line errors with exit 2."""

from __future__ import annotations

import contextlib
import csv
import io
import re
import subprocess
import sys
from pathlib import Path

import pytest

from dashboard.cli import main

EXTERNAL_SCRIPT = re.compile(r"<script[^>]*\ssrc=[\"']?(?:https?:)?//", re.IGNORECASE)
EXTERNAL_LINK = re.compile(r"<link[^>]*\shref=[\"']?(?:https?:)?//", re.IGNORECASE)


@pytest.fixture(scope="module")
def fig2(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    out = tmp_path_factory.mktemp("reproduce") / "new" / "dir"  # created by the command
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        rc = main(["reproduce", "cmab-fig2", "--out", str(out), "--scale", "test", "--seed", "3"])
    assert rc == 0
    return out, buf.getvalue()


def test_writes_standalone_html_and_csv(fig2: tuple[Path, str]) -> None:
    out, printed = fig2
    html = out / "cmab-fig2.html"
    csv_path = out / "cmab-fig2.csv"
    assert html.stat().st_size > 10_000 and csv_path.stat().st_size > 1_000
    page = html.read_text(encoding="utf-8")
    # opens offline: no external scripts or stylesheets, Panel's CDN CSS inlined
    assert not EXTERNAL_SCRIPT.search(page)
    assert not EXTERNAL_LINK.search(page)
    assert "cdn.holoviz.org/panel" not in page
    assert "Bokeh" in page and "InlineStyleSheet" in page
    # the page says what the paper shows and what we get
    assert "What the paper shows" in page and "What we get" in page
    assert "AROQ-CMAB" in page and "CUCB" in page
    # it prints what it wrote
    assert str(html) in printed and str(csv_path) in printed


def test_csv_is_long_format_and_matches_the_seed(fig2: tuple[Path, str]) -> None:
    from dashboard.simulation.experiments import run_experiment

    out, _ = fig2
    text = (out / "cmab-fig2.csv").read_text()
    rows = list(csv.reader(io.StringIO(text)))
    assert rows[0] == ["figure", "panel", "algorithm", "run", "t", "metric", "value"]
    assert {r[2] for r in rows[1:]} == {"CUCB", "AROQ-CMAB", "SROQ-CMAB"}
    assert text == run_experiment("cmab-fig2", "test", seed=3).to_csv()


def test_pac_figure(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["reproduce", "semi-pac", "--out", str(tmp_path), "--scale", "test"]) == 0
    page = (tmp_path / "semi-pac.html").read_text(encoding="utf-8")
    assert "10 \\u221a(d log K)" in page and not EXTERNAL_SCRIPT.search(page)  # legend label
    rows = list(csv.reader((tmp_path / "semi-pac.csv").open()))
    assert {r[5] for r in rows[1:]} == {"e_t", "sqrt_t_e_t"}
    assert "semi-pac.csv" in capsys.readouterr().out


def test_unknown_figure_is_one_line_exit_2(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "dashboard", "reproduce", "fig9", "--out", str(tmp_path / "o")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1
    assert "unknown figure 'fig9'" in lines[0] and "cmab-fig2" in lines[0]
    assert "Traceback" not in proc.stderr
    assert not (tmp_path / "o").exists()  # validated before anything is written


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["cmab-fig2", "--scale", "huge"], "unknown scale 'huge'"),
        (["cmab-fig2", "--seed", "-1"], "seed must be"),
        (["all", "--scale", "gigantic"], "unknown scale 'gigantic'"),
    ],
)
def test_bad_options_are_one_line_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    rc = main(["reproduce", *args, "--out", str(tmp_path / "o")])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1 and message in err[0]


def test_unwritable_output_is_one_line_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    rc = main(["reproduce", "semi-pac", "--scale", "test", "--out", str(blocker / "sub")])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1
    assert "cannot create output directory" in err[0]
    rc = main(["reproduce", "semi-pac", "--scale", "test", "--out", str(blocker)])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1 and "not a directory" in err[0]


def test_missing_out_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["reproduce", "cmab-fig2"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--out" in err[0]
