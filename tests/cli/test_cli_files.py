"""File arguments, plug-in errors, fault messages and digits: every reproduced input of the
CLI findings gives one ``error:`` line with exit 2 (never a hang, never a traceback)."""

from __future__ import annotations

import errno
import logging
import os
import subprocess
import sys

import pytest

from dashboard.cli import main, prog_name, version_text

SIM = ["simulate", "--problem", "cmab", "--algorithm", "CUCB", "--horizon", "50"]
SEMI = ["simulate", "--problem", "semiparametric", "--algorithm", "SBE", "--horizon", "20"]
SWEEP = [
    "sweep", "--problem", "cmab", "--algorithm", "CUCB", "--m", "2", "--grid", "d=3,4,5",
    "--horizon", "40", "--runs", "2", "--scheduler", "inprocess", "--format", "json",
]  # fmt: skip


def one_error(capsys, argv):
    code = main(argv)
    _out, err = capsys.readouterr()
    assert code == 2 and err.startswith("error: ") and err.count("\n") == 1, (code, err)
    assert "Traceback" not in err
    return err


@pytest.fixture
def fifo(tmp_path):
    path = tmp_path / "pipe.csv"
    os.mkfifo(path)
    return str(path)


def _in_subprocess(argv, cwd):
    """The CLI in a child with a timeout, so that a blocking open fails the test, not hangs."""
    return subprocess.run(
        [sys.executable, "-m", "dashboard", *argv],
        capture_output=True, text=True, timeout=60, cwd=cwd,
    )  # fmt: skip


@pytest.mark.parametrize(
    "argv",
    [
        ["load", "{fifo}"],
        [*SEMI, "--features", "{fifo}"],
        ["design", "--features", "{fifo}"],
        ["algorithms", "--plugin", "{fifo}"],
        [*SIM, "--csv", "{fifo}"],
        [*SIM, "--save", "{fifo}"],
        [*SWEEP, "--out", "{fifo}"],
    ],
)
def test_a_fifo_argument_is_refused_without_blocking(argv, fifo, tmp_path):
    done = _in_subprocess([a.format(fifo=fifo) for a in argv], tmp_path)
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("error: ") and done.stderr.count("\n") == 1, done.stderr
    assert "named pipe (FIFO)" in done.stderr


@pytest.mark.parametrize(
    "argv",
    [["load", "/dev/zero"], [*SEMI, "--features", "/dev/zero"], [*SWEEP, "--out", "/dev/null"]],
)
def test_a_device_is_refused_at_once(capsys, argv):
    assert "device, not a regular file" in one_error(capsys, argv)


def test_load_reads_with_a_cap(capsys, tmp_path, monkeypatch):
    from dashboard.simulation import store

    big = tmp_path / "big.jsonl"
    big.write_bytes(b"x" * 2000)
    monkeypatch.setattr(store, "MAX_EXPERIMENT_BYTES", 1000)
    assert "larger than the 1000 bytes limit" in one_error(capsys, ["load", str(big)])


def test_an_oversized_csv_field_names_the_file_line_and_limit(capsys, tmp_path):
    csv = tmp_path / "arms.csv"
    csv.write_text("1,2\n3,4\n" + "9" * (128 * 1024 + 1) + ",1\n")
    for argv in ([*SEMI, "--features", str(csv)], ["design", "--features", str(csv)]):
        err = one_error(capsys, argv)
        assert "arms.csv, line 3" in err and "131,072 characters" in err


@pytest.mark.parametrize(
    ("source", "shown"),
    [
        ("raise KeyboardInterrupt\n", "KeyboardInterrupt"),
        ("import sys\nsys.exit(3)\n", "SystemExit: 3"),
        ("class Boom(BaseException):\n    pass\nraise Boom('no')\n", "Boom: no"),
    ],
)
def test_a_plugin_raising_any_base_exception_is_one_line(capsys, tmp_path, source, shown):
    plugin = tmp_path / "bad_plugin.py"
    plugin.write_text(source)
    err = one_error(capsys, ["algorithms", "--plugin", str(plugin)])
    assert "cannot load plug-in" in err and shown in err


def test_a_full_disk_names_the_file_and_the_way_forward(capsys, tmp_path, monkeypatch):
    from dashboard.simulation import store

    real, calls = os.fsync, []

    def full(fd):
        calls.append(fd)
        if len(calls) > 2:  # the header and one piece reach the disk
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real(fd)

    monkeypatch.setattr(store.os, "fsync", full)
    out = tmp_path / "s.jsonl"
    err = one_error(capsys, [*SWEEP, "--out", str(out)])
    assert "No space left on device" in err and repr(str(out)) in err
    assert "rerun the same command to resume" in err
    monkeypatch.setattr(store.os, "fsync", real)
    assert main([*SWEEP, "--out", str(out)]) == 0  # and it does resume
    capsys.readouterr()


def test_a_corrupt_byte_mid_file_says_which_line_and_the_flag_resumes(capsys, tmp_path):
    out = tmp_path / "s.jsonl"
    assert main([*SWEEP, "--out", str(out)]) == 0
    clean, _ = capsys.readouterr()
    lines = out.read_bytes().split(b"\n")
    lines[2] = lines[2][:20] + b"{" + lines[2][21:]  # one byte of line 3
    out.write_bytes(b"\n".join(lines))
    err = one_error(capsys, [*SWEEP, "--out", str(out)])
    assert "line 3 is not valid JSON" in err and "--drop-corrupt-lines" in err
    assert "head -n 2" in err
    assert "head -n 2" in one_error(capsys, ["load", str(out)])
    assert main([*SWEEP, "--out", str(out), "--drop-corrupt-lines"]) == 0
    resumed, err = capsys.readouterr()
    assert "set aside damaged line(s) 3" in err
    assert (tmp_path / "s.jsonl.corrupt").exists()

    def no_seconds(text):
        import json

        def strip(o):
            if isinstance(o, dict):
                return {k: strip(v) for k, v in o.items() if "seconds" not in k}
            return [strip(v) for v in o] if isinstance(o, list) else o

        return strip(json.loads(text))

    assert no_seconds(resumed) == no_seconds(clean)


@pytest.mark.parametrize("digits", ["1_000", "١٠٠٠", "１０００"])
@pytest.mark.parametrize("flag", ["--horizon", "--runs", "--seed", "--max-work"])
def test_numbers_are_ascii_digits_only(capsys, digits, flag):
    argv = [*SIM, flag, digits] if flag != "--horizon" else [*SIM[:-1], digits]
    assert "digits 0-9" in one_error(capsys, argv)


@pytest.mark.parametrize("digits", ["1_0", "١", "１"])
def test_sweep_and_serve_counts_are_ascii_digits_only(capsys, digits):
    one_error(capsys, [*SWEEP, "--workers", digits])
    one_error(capsys, ["serve", "--port", digits])


def test_version_and_usage_name_the_command_typed(capsys):
    assert prog_name("/usr/bin/bandit-dashboard") == "bandit-dashboard"
    assert prog_name("/x/dashboard/__main__.py") == "python -m dashboard"
    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    out, _ = capsys.readouterr()
    assert exc.value.code == 0 and out.strip() == version_text()
    assert out.startswith("bandit-dashboard ") and out.strip().split()[1][0].isdigit()
    script = os.path.join(os.path.dirname(sys.executable), "bandit-dashboard")
    if os.path.exists(script):
        done = subprocess.run([script, "simulate"], capture_output=True, text=True, timeout=60)
        assert done.returncode == 2 and done.stderr.startswith("error: bandit-dashboard simulate")


def test_the_worker_heartbeat_at_close_prints_no_traceback():
    from dashboard.simulation.cluster import HeartbeatAtClose

    class Worker:
        status = type("S", (), {"name": "running"})()

    worker = Worker()
    flt = HeartbeatAtClose(worker)

    def record():
        try:
            raise OSError("CommClosedError")
        except OSError:
            return logging.LogRecord(
                "distributed.worker", logging.ERROR, __file__, 1,
                "Failed to communicate with scheduler during heartbeat.", None, sys.exc_info(),
            )  # fmt: skip

    running = record()
    assert flt.filter(running) and running.exc_info is None  # one line while running
    worker.status = type("S", (), {"name": "closing"})()
    assert not flt.filter(record())  # dropped at a clean close
    other = logging.LogRecord("distributed.worker", logging.ERROR, "", 1, "other", None, None)
    assert flt.filter(other)


def test_ctrl_c_during_a_run_exits_130_without_a_traceback(capsys, monkeypatch):
    from dashboard import cli

    def interrupted(sim, stream=None):
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "_run_with_progress", interrupted)
    assert main(SIM) == 130
    _out, err = capsys.readouterr()
    assert err == "error: interrupted (Ctrl-C)\n"
