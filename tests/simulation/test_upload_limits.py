"""The upload's limits (``dashboard.simulation.uploads``), with the exact inputs that froze or
killed a served class: 100 tiny algorithm entries (25 KB) and 300 entries (72 KB) are refused
at once with a sentence saying what fits, and so is a file of 10^6 tiny extra rows; a 15 MiB
file (valid or not) and an empty one get their message; the worst file allowed loads.  Every
refusal comes before anything is built (timed: well under a second)."""

from __future__ import annotations

import json
import time

import numpy as np
import pytest

from dashboard.simulation.runner import simulate
from dashboard.simulation.specs import make_spec
from dashboard.simulation.store import (
    FORMAT,
    MAX_UPLOAD_BYTES,
    WEBSOCKET_MAX_MESSAGE_BYTES,
    load_upload,
    result_to_record,
    saved_results,
)
from dashboard.simulation.upload_worst import worst_allowed_upload
from dashboard.simulation.uploads import (
    MAX_UPLOAD_ALGORITHMS,
    MAX_UPLOAD_LINES,
    MAX_UPLOAD_POINTS,
    MAX_UPLOAD_RUNS,
    describe_size,
    read_upload,
    thin_result,
)

NAME = "upload.jsonl"


def _header(kind: str = "simulation", definition: dict | None = None) -> dict:
    return {
        "format": FORMAT,
        "version": 1,
        "kind": kind,
        "package_version": "0",
        "created": "",
        "definition": definition or {},
    }


def _tiny_entries(n: int) -> bytes:
    """A saved run of ``n`` algorithm entries of one round each (the finding's file)."""
    algorithms = [
        {
            "algorithm": f"A{i}",
            "paper": "",
            "t": 10,
            "times": [10],
            "regret": [[0.5]],
            "queries": [[0]],
            "adaptivity": [[0]],
            "wall_seconds": [0.0],
            "oracle_seconds": [0.0],
        }
        for i in range(n)
    ]
    rec = {
        "spec": {"problem": "cmab"},
        "horizon": 10,
        "runs": 1,
        "seed": 0,
        "t": 10,
        "reps": [0],
        "instance": {},
        "algorithms": algorithms,
    }
    lines = [_header(), {"piece": {"reps": [0]}, "result": rec}]
    return "".join(json.dumps(x) + "\n" for x in lines).encode()


def _refused_fast(data: bytes, match: str) -> str:
    t0 = time.perf_counter()
    with pytest.raises(ValueError, match=match) as info:
        saved_results(data, NAME)
    assert time.perf_counter() - t0 < 1.0
    msg = str(info.value)
    assert "\n" not in msg and repr(NAME) in msg
    return msg


@pytest.mark.parametrize("n", [100, 300])
def test_many_tiny_algorithm_entries_are_refused_at_once(n):
    data = _tiny_entries(n)
    assert len(data) < 80_000  # 25 KB and 72 KB in the finding
    msg = _refused_fast(data, f"holds {n} algorithms; at most {MAX_UPLOAD_ALGORITHMS}")
    assert "line 2" in msg
    # the most a run compares still loads
    assert len(saved_results(_tiny_entries(MAX_UPLOAD_ALGORITHMS), NAME)[0][1].results) == 16


def test_a_million_tiny_extra_rows_are_refused_before_any_is_parsed():
    data = _tiny_entries(2) + b"{}\n" * 1_000_000
    assert len(data) <= MAX_UPLOAD_BYTES
    _refused_fast(data, f"has 1,000,002 lines; at most {MAX_UPLOAD_LINES:,}")
    # a saved run has one result line: a second one is refused at its own line
    lines = _tiny_entries(2).split(b"\n")
    _refused_fast(b"\n".join([*lines[:2], lines[1], b""]), "line 3: a saved run holds one result")


def test_rows_and_columns_are_bounded():
    """Too many runs (rows) or recorded rounds (columns) is refused before numpy sees them."""
    base = json.loads(_tiny_entries(1).split(b"\n")[1])
    alg = base["result"]["algorithms"][0]
    alg["regret"] = [[0.5]] * (MAX_UPLOAD_RUNS + 1)
    data = (json.dumps(_header()) + "\n" + json.dumps(base) + "\n").encode()
    _refused_fast(data, f"257 runs of regret; at most {MAX_UPLOAD_RUNS}")
    alg["regret"] = [[0.5]]
    alg["times"] = list(range(1, 100_003))
    data = (json.dumps(_header()) + "\n" + json.dumps(base) + "\n").encode()
    _refused_fast(data, "100,002 recorded rounds; at most 100,001")


def test_a_sweep_with_too_many_points_is_refused_from_its_header():
    definition = {"algorithms": ["CUCB"], "grid": [["d", list(range(3, 30))], ["m", [1] * 10]]}
    data = (json.dumps(_header("sweep", definition)) + "\n").encode()
    _refused_fast(data, f"sweep of 270 grid points; at most {MAX_UPLOAD_POINTS}")
    definition = {"algorithms": [f"A{i}" for i in range(17)], "grid": [["d", [3]]]}
    data = (json.dumps(_header("sweep", definition)) + "\n").encode()
    _refused_fast(data, "sweep of 17 algorithms; at most 16")


def test_a_15_mib_file_and_an_empty_one_get_their_message():
    res = simulate(make_spec("cmab", d=4, m=2), ["CUCB"], horizon=50, runs=1, seed=0)
    line = json.dumps({"piece": {"reps": [0]}, "result": result_to_record(res)}) + "\n"
    valid = json.dumps(_header()) + "\n" + line
    padding = 15 * 2**20 - len(valid)
    big = (valid + " " * (padding - 1) + "\n").encode()  # still a valid saved run
    assert len(big) == 15 * 2**20
    msg = _refused_fast(big, "is 15,728,640 bytes")
    assert msg == (
        "'upload.jsonl' is 15,728,640 bytes (15.7 MB); files up to 10,000,000 bytes (10 MB) "
        "can be opened here; use `python -m dashboard load FILE` for bigger ones"
    )
    _refused_fast(big + b"x", r"15,728,641 bytes \(15.7 MB\)")
    msg = _refused_fast(b"", "is empty")
    assert "simulate --save FILE" in msg
    assert describe_size(MAX_UPLOAD_BYTES + 1) == "10,000,001 bytes (10.0 MB)"


def test_the_cap_fits_the_websocket_with_room_to_spare():
    """The upload is sent in 1 MB chunks; even sent whole and base64-encoded (4/3) with its
    JSON envelope it would fit in one websocket message."""
    assert MAX_UPLOAD_BYTES * 4 / 3 + 64_000 < WEBSOCKET_MAX_MESSAGE_BYTES


def test_the_worst_allowed_files_load():
    for kind in ("simulation", "sweep"):
        data = worst_allowed_upload(kind)
        assert len(data) <= MAX_UPLOAD_BYTES
        entries = saved_results(data, NAME)
        if kind == "simulation":
            ((_, res),) = entries
            assert len(res.results) == MAX_UPLOAD_ALGORITHMS
            assert res.results[0].regret.shape[0] == MAX_UPLOAD_RUNS
        else:
            assert len(entries) == MAX_UPLOAD_POINTS
    # one more byte of room is what the worst run uses: it fills the cap
    assert len(worst_allowed_upload()) > MAX_UPLOAD_BYTES * 0.99


def test_thinning_keeps_the_ends_and_at_most_the_points_asked():
    res = simulate(make_spec("cmab", d=4, m=2), ["CUCB"], horizon=3000, runs=2, seed=0)
    thin = thin_result(res, 50)
    full, cut = res.results[0], thin.results[0]
    assert cut.times.size <= 51 and cut.times[0] == full.times[0]
    assert cut.times[-1] == full.times[-1]
    np.testing.assert_array_equal(cut.regret[:, -1], full.regret[:, -1])
    idx = np.searchsorted(full.times, cut.times)
    np.testing.assert_array_equal(cut.regret, full.regret[:, idx])
    assert thin_result(res, 10_000).results[0] is full  # short curves stay as they are


def test_load_upload_gives_the_result_objects_and_names_the_file():
    lines = _tiny_entries(1)
    res = load_upload(lines, NAME)
    assert res.results[0].algorithm == "A0"
    with pytest.raises(ValueError, match=r"'x\.jsonl' line 2 is not valid JSON"):
        load_upload(lines.split(b"\n")[0] + b"\n{\n", "x.jsonl")
    with pytest.raises(ValueError, match="not a saved experiment"):
        read_upload(b"[1]\n", NAME)
