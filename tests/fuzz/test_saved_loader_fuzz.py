"""Property tests of the saved-experiment loader behind the dashboard's upload:
``store.saved_results`` (and ``load_experiment`` on bytes) given random bytes, truncated or
byte-flipped files, or valid JSON lines with the wrong shapes raises nothing but a ValueError
whose message is one clear line naming the file; a file it accepts holds finite regret curves.

The valid files are made once by the API (a single run and a two-point sweep, T <= 200).  The
upload's limits (algorithms, runs, rounds, lines) are fuzzed with small bounds: within them a
run loads with its shape, beyond any of them the refusal is one line naming the file."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from dashboard.simulation.runner import simulate
from dashboard.simulation.specs import make_spec
from dashboard.simulation.store import (
    FORMAT,
    load_experiment,
    load_upload,
    save_result,
    saved_results,
)
from dashboard.simulation.sweep import make_sweep, run_sweep
from dashboard.simulation.uploads import UploadLimits

SETTINGS = {
    "deadline": None,
    "max_examples": 150,
    "suppress_health_check": [HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
}
NAME = "upload.jsonl"


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[str, bytes]:
    tmp = tmp_path_factory.mktemp("fuzz")
    res = simulate(make_spec("cmab", d=4, m=2), ["AROQ-CMAB"], horizon=150, runs=2, seed=0)
    save_result(tmp / "run.jsonl", res)
    sweep = make_sweep("cmab", ["CUCB"], horizon=120, runs=2, seed=0, grid={"d": [3, 4]}, m=2)
    run_sweep(sweep, scheduler="inprocess", out=tmp / "sweep.jsonl")
    return {k: (tmp / f"{k}.jsonl").read_bytes() for k in ("run", "sweep")}


def _contract(data: bytes) -> None:
    """Either finite results, or one ValueError line naming the file."""
    try:
        entries = saved_results(data, NAME)
    except ValueError as exc:
        msg = str(exc)
        assert msg and "\n" not in msg and NAME in msg, msg
        assert "Traceback" not in msg
        return
    assert entries
    for _, res in entries:
        for r in res.results:
            assert np.isfinite(r.regret).all() and r.regret.shape[1] == r.times.size


@settings(**SETTINGS)
@given(data=st.binary(max_size=2000))
@example(data=b"")
@example(data=b"\n")
@example(data=b"[" * 100_000 + b"\n")  # too deeply nested for json
@example(data=b"\xff\xfe\n")
def test_random_bytes(data: bytes) -> None:
    _contract(data)


@settings(**SETTINGS)
@given(which=st.sampled_from(["run", "sweep"]), cut=st.floats(0, 1))
def test_truncated_files(files, which: str, cut: float) -> None:
    data = files[which]
    _contract(data[: int(cut * len(data))])


@settings(**SETTINGS)
@given(
    which=st.sampled_from(["run", "sweep"]),
    flips=st.lists(st.tuples(st.floats(0, 1), st.integers(0, 255)), min_size=1, max_size=8),
)
def test_byte_flips(files, which: str, flips: list[tuple[float, int]]) -> None:
    data = bytearray(files[which])
    for where, value in flips:
        data[min(int(where * len(data)), len(data) - 1)] = value
    _contract(bytes(data))


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=20,
)


@settings(**SETTINGS)
@given(
    which=st.sampled_from(["run", "sweep"]),
    line=st.integers(0, 3),
    path=st.lists(st.text(max_size=12), min_size=1, max_size=3),
    value=JSON,
)
@example(which="run", line=0, path=["version"], value=[1])
@example(which="run", line=0, path=["version"], value=True)
@example(which="run", line=1, path=["result"], value=[])
@example(which="run", line=1, path=["result", "algorithms"], value=[{"times": "x"}])
@example(which="sweep", line=0, path=["definition"], value=None)
@example(which="sweep", line=0, path=["definition", "grid"], value=[["d", [10**9]]])
def test_valid_json_with_wrong_shapes(files, which, line, path, value) -> None:
    """Replace one value (at a random key path) of one line of a valid file."""
    lines = files[which].split(b"\n")
    k = min(line, len(lines) - 2)
    obj = json.loads(lines[k])
    node = obj
    for key in path[:-1]:
        child = node.get(key) if isinstance(node, dict) else None
        if not isinstance(child, dict):
            child = {}
            node[key] = child
        node = child
    node[path[-1]] = value
    lines[k] = json.dumps(obj).encode()
    _contract(b"\n".join(lines))


def test_the_valid_files_load_and_a_foreign_file_is_refused(files) -> None:
    assert len(saved_results(files["run"], NAME)) == 1
    assert [p for p, _ in saved_results(files["sweep"], NAME)] == [{"d": 3}, {"d": 4}]
    with pytest.raises(ValueError, match="not a saved experiment of this dashboard"):
        saved_results(json.dumps({"format": FORMAT + "x"}).encode() + b"\n", NAME)
    with pytest.raises(ValueError, match="files up to 10 bytes can be opened here"):
        saved_results(files["run"], NAME, max_bytes=10)
    with pytest.raises(ValueError, match=r"malformed|not valid JSON|not a saved"):
        load_experiment(files["run"].replace(b'"algorithms"', b'"algos"'), NAME)


# ------------------------------------------------------------------ the upload's limits
SMALL = UploadLimits(bytes=200_000, lines=6, algorithms=3, runs=4, rounds=20, points=5)


def _run_file(n_alg: int, runs: int, rounds: int, extra_lines: int) -> bytes:
    """A saved run of ``n_alg`` algorithms x ``runs`` rows x ``rounds`` columns (every shape
    consistent, so only the limits can refuse it), plus ``extra_lines`` result lines."""
    times = list(range(1, rounds + 1))
    curve = [[float(k) for k in range(rounds)] for _ in range(runs)]
    ints = [[0] * rounds for _ in range(runs)]
    alg = {"paper": "", "t": rounds, "times": times, "regret": curve, "queries": ints}
    alg |= {"adaptivity": ints, "wall_seconds": [0.0] * runs, "oracle_seconds": [0.0] * runs}
    rec = {"spec": {"problem": "cmab"}, "horizon": max(rounds, 1), "runs": runs, "seed": 0}
    rec |= {"t": rounds, "reps": list(range(runs)), "instance": {}}
    rec["algorithms"] = [{"algorithm": f"A{i}", **alg} for i in range(n_alg)]
    head = {"format": FORMAT, "version": 1, "kind": "simulation", "definition": {}}
    piece = json.dumps({"piece": {"reps": rec["reps"]}, "result": rec})
    return (json.dumps(head) + "\n" + (piece + "\n") * (1 + extra_lines)).encode()


@settings(**SETTINGS)
@given(
    n_alg=st.integers(0, 6),
    runs=st.integers(1, 7),
    rounds=st.integers(1, 30),
    extra_lines=st.integers(0, 8),
)
@example(n_alg=4, runs=1, rounds=1, extra_lines=0)  # one algorithm too many
@example(n_alg=1, runs=5, rounds=1, extra_lines=0)  # one run too many
@example(n_alg=1, runs=1, rounds=21, extra_lines=0)  # one round too many
@example(n_alg=1, runs=1, rounds=1, extra_lines=6)  # too many lines
def test_every_limit_is_kept_or_named(n_alg, runs, rounds, extra_lines) -> None:
    """Within the limits the run loads with its shape; beyond any of them, one ValueError line
    naming the file (and never anything bigger than the limits built)."""
    data = _run_file(n_alg, runs, rounds, extra_lines)
    within = (
        n_alg <= SMALL.algorithms
        and runs <= SMALL.runs
        and (rounds <= SMALL.rounds or n_alg == 0)
        and extra_lines == 0
        and data.count(b"\n") <= SMALL.lines
    )
    try:
        res = load_upload(data, NAME, SMALL.bytes, SMALL)
    except ValueError as exc:
        msg = str(exc)
        assert "\n" not in msg and NAME in msg and "Traceback" not in msg
        assert not within, msg
        return
    assert within
    assert len(res.results) == n_alg
    for r in res.results:
        assert r.regret.shape == (runs, rounds)


@settings(**SETTINGS)
@given(lines=st.lists(JSON, min_size=0, max_size=8), which=st.sampled_from(["run", "sweep"]))
def test_random_json_lines_after_a_valid_header(files, lines, which) -> None:
    """A real header followed by random JSON values, one per line."""
    header = files[which].split(b"\n")[0]
    body = b"".join(json.dumps(v).encode() + b"\n" for v in lines)
    _contract(header + b"\n" + body)
