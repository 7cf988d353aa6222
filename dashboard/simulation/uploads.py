"""The limits of a saved experiment opened from its bytes (a dashboard upload), checked line by
line before any result is built.

A served class shares one event loop and a few cores, so what one student's file may cost is
bounded by what this package itself writes for a classroom-sized run, and refused at the first
line that goes beyond it, before any array, sweep or plot exists:

* the file: 1 byte to :data:`MAX_UPLOAD_BYTES` (the browser refuses a bigger one before sending
  it, :mod:`dashboard.ui.upload`); at most :data:`MAX_UPLOAD_LINES` lines (counted at once, in C,
  before any line is parsed);
* a saved run (``simulate --save``): its one result line;
* a result: at most :data:`MAX_UPLOAD_ALGORITHMS` algorithms (what one ``Simulation`` compares),
  each with at most :data:`MAX_UPLOAD_RUNS` runs (rows) of at most :data:`MAX_UPLOAD_ROUNDS`
  recorded rounds (columns);
* a sweep (``sweep --out``): at most :data:`MAX_UPLOAD_POINTS` grid points and
  :data:`MAX_UPLOAD_ALGORITHMS` algorithms in its header.

Each refusal is one ValueError sentence naming the file and saying what fits; bigger files are
for ``python -m dashboard load FILE``.  Only the JSON structure is looked at here (list lengths);
:mod:`.store` then builds and checks the results themselves.
"""

from __future__ import annotations

import dataclasses
import json
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from .results import SimulationResult
from .runner import MAX_GRID_POINTS
from .specs import MAX_RUNS

__all__ = [
    "MAX_UPLOAD_ALGORITHMS",
    "MAX_UPLOAD_BYTES",
    "MAX_UPLOAD_LINES",
    "MAX_UPLOAD_POINTS",
    "MAX_UPLOAD_ROUNDS",
    "MAX_UPLOAD_RUNS",
    "UPLOAD_LIMITS",
    "UploadLimits",
    "describe_size",
    "read_upload",
    "thin_result",
]

#: Largest upload (bytes).  Decimal megabytes, as the browser's file picker reports sizes and
#: refuses files ("Maximum file size is 10 MB"); a file sent in 1 MB chunks, far below the
#: websocket's message limit (:data:`.store.WEBSOCKET_MAX_MESSAGE_BYTES`).
MAX_UPLOAD_BYTES = 10_000_000
#: Most lines (header included): a sweep writes one line per finished piece.
MAX_UPLOAD_LINES = 20_000
#: Most algorithms per result (and per sweep): what one ``Simulation`` compares at most.
MAX_UPLOAD_ALGORITHMS = 16
#: Most runs (rows of a curve) per algorithm: the schema's bound on R.
MAX_UPLOAD_RUNS = MAX_RUNS
#: Most recorded rounds (columns of a curve): ``grid_points`` at most, plus the horizon.
MAX_UPLOAD_ROUNDS = MAX_GRID_POINTS + 1
#: Most grid points of an uploaded sweep (one line per point and algorithm on its plot).
MAX_UPLOAD_POINTS = 200

_LOAD = "use `python -m dashboard load FILE` for bigger ones"
_MADE_BY = "choose a file written by `simulate --save FILE` or `sweep --out FILE`"


@dataclass(frozen=True)
class UploadLimits:
    """The bounds :func:`read_upload` checks (the defaults are the dashboard's)."""

    bytes: int = MAX_UPLOAD_BYTES
    lines: int = MAX_UPLOAD_LINES
    algorithms: int = MAX_UPLOAD_ALGORITHMS
    runs: int = MAX_UPLOAD_RUNS
    rounds: int = MAX_UPLOAD_ROUNDS
    points: int = MAX_UPLOAD_POINTS


UPLOAD_LIMITS = UploadLimits()


def describe_size(n: int) -> str:
    """``15728640`` -> ``"15,728,640 bytes (15.7 MB)"``: exact, and readable."""
    if n < 1_000_000:
        return f"{n:,} bytes"
    mb = n / 1e6
    return f"{n:,} bytes ({mb:.0f} MB)" if n % 1_000_000 == 0 else f"{n:,} bytes ({mb:.1f} MB)"


def _too_big(name: str, size: int, cap: int) -> ValueError:
    return ValueError(
        f"{name!r} is {describe_size(size)}; files up to {describe_size(cap)} can be opened "
        f"here; {_LOAD}"
    )


def read_upload(
    data: bytes, name: str = "the file", limits: UploadLimits = UPLOAD_LIMITS
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The JSON ``(header, pieces)`` of an uploaded experiment file, every limit checked.

    Lines are parsed one at a time and checked as they come: the first one over a limit
    stops the reading (a file of a million tiny lines is refused before any is parsed).  The
    text after the last newline is an unfinished line (a run killed while writing) and is
    ignored, as :func:`.store.parse_experiment` does.  ValueError (one sentence naming
    ``name``) for an empty or too big file, a line that is not JSON, or a limit passed; the
    header itself is checked by :func:`.store.parse_experiment`."""
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise ValueError(f"{name!r}: expected the file's bytes")
    data = bytes(data)
    if not data:
        raise ValueError(f"{name!r} is empty (0 bytes): {_MADE_BY}")
    if len(data) > limits.bytes:
        raise _too_big(name, len(data), limits.bytes)
    n_lines = data.count(b"\n")
    if n_lines > limits.lines:
        raise ValueError(
            f"{name!r} has {n_lines:,} lines; at most {limits.lines:,} (a header and one line "
            f"per saved piece) can be opened here; {_LOAD}"
        )
    header: dict[str, Any] | None = None
    pieces: list[dict[str, Any]] = []
    start, line = 0, 0
    while True:
        end = data.find(b"\n", start)
        if end < 0:
            break
        line += 1
        raw, start = data[start:end], end + 1
        try:
            obj = json.loads(raw)
        except (json.JSONDecodeError, UnicodeDecodeError, RecursionError):
            if header is None:
                raise ValueError(f"{name!r} is not a saved experiment of this dashboard") from None
            raise ValueError(f"{name!r} line {line} is not valid JSON") from None
        if header is None:
            if not isinstance(obj, dict):
                raise ValueError(f"{name!r} is not a saved experiment of this dashboard")
            header = obj
            _check_header(obj, name, limits)
            continue
        if not isinstance(obj, dict) or not isinstance(obj.get("result"), dict):
            raise ValueError(f"{name!r} line {line} is not a saved piece")
        if header.get("kind") == "simulation" and pieces:
            raise ValueError(
                f"{name!r} line {line}: a saved run holds one result line, this file has more"
            )
        _check_record(obj["result"], f"{name!r} line {line}", limits)
        pieces.append(obj)
    if header is None:
        raise ValueError(f"{name!r} is not a saved experiment of this dashboard")
    return header, pieces


def _length(x: Any) -> int:
    return len(x) if isinstance(x, list) else 0


def _check_header(header: dict[str, Any], name: str, limits: UploadLimits) -> None:
    """A sweep's size from its definition: points and algorithms, before any is built."""
    if header.get("kind") != "sweep":
        return
    d = header.get("definition")
    if not isinstance(d, dict):
        return  # malformed: the loader says so
    algorithms = _length(d.get("algorithms"))
    if algorithms > limits.algorithms:
        raise ValueError(
            f"{name!r} is a sweep of {algorithms:,} algorithms; at most {limits.algorithms} "
            f"can be opened here; {_LOAD}"
        )
    grid = d.get("grid")
    if isinstance(grid, list):
        sizes = [_length(g[1]) if isinstance(g, list) and len(g) == 2 else 0 for g in grid]
        points = math.prod(max(s, 1) for s in sizes) if sizes else 1
        if points > limits.points:
            raise ValueError(
                f"{name!r} is a sweep of {points:,} grid points; at most {limits.points} can "
                f"be opened here; {_LOAD}"
            )


def _check_record(rec: dict[str, Any], where: str, limits: UploadLimits) -> None:
    """A result record's algorithms, runs and rounds (list lengths only)."""
    algorithms = rec.get("algorithms")
    if not isinstance(algorithms, list):
        return  # malformed: the loader says so
    if len(algorithms) > limits.algorithms:
        raise ValueError(
            f"{where} holds {len(algorithms):,} algorithms; at most {limits.algorithms} can be "
            f"opened here (one run compares at most {MAX_UPLOAD_ALGORITHMS})"
        )
    if _length(rec.get("reps")) > limits.runs:
        raise ValueError(
            f"{where} holds {_length(rec.get('reps')):,} runs; at most {limits.runs} can be "
            "opened here"
        )
    for a in algorithms:
        if not isinstance(a, dict):
            continue
        label = str(a.get("algorithm"))[:40]
        rounds = _length(a.get("times"))
        if rounds > limits.rounds:
            raise ValueError(
                f"{where}: {label!r} has {rounds:,} recorded rounds; at most "
                f"{limits.rounds:,} can be opened here; {_LOAD}"
            )
        for key in ("regret", "queries", "adaptivity", "alpha_regret"):
            rows = a.get(key)
            if not isinstance(rows, list):
                continue
            if len(rows) > limits.runs:
                raise ValueError(
                    f"{where}: {label!r} has {len(rows):,} runs of {key}; at most "
                    f"{limits.runs} can be opened here"
                )
            if any(_length(row) > limits.rounds for row in rows):
                raise ValueError(
                    f"{where}: {label!r} has a {key} curve longer than {limits.rounds:,} "
                    f"rounds; {_LOAD}"
                )


def thin_result(result: SimulationResult, most: int) -> SimulationResult:
    """``result`` with every curve at no more than ``most`` of its recorded rounds (evenly
    spread, the first and the last always kept: a final value stays exact); for drawing a
    saved result, whose cost on every frame then no longer depends on its file."""
    most = max(int(most), 2)
    algorithms = []
    for r in result.results:
        g = int(r.times.size)
        if g <= most:
            algorithms.append(r)
            continue
        keep = np.unique(np.r_[np.linspace(0, g - 1, most).round().astype(int), g - 1])
        algorithms.append(
            dataclasses.replace(
                r,
                times=r.times[keep],
                regret=r.regret[:, keep],
                queries=r.queries[:, keep],
                adaptivity=r.adaptivity[:, keep],
                alpha_regret=None if r.alpha_regret is None else r.alpha_regret[:, keep],
            )
        )
    return dataclasses.replace(result, results=algorithms)
