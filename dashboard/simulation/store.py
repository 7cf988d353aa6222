"""Saved experiments: one self-describing JSON-lines file per run or sweep.

Format (``bandit-dashboard-experiment``, version 1), one JSON object per line:

* line 1, the header: ``format``, ``version``, ``kind`` (``"simulation"`` or ``"sweep"``),
  the package ``package_version``, ``created`` (UTC) and ``definition``: everything that
  determines the numbers (problem spec, algorithms, constants, horizon, runs, seed, grid).
* every further line, one finished piece: ``{"piece": {...}, "result": {...}}`` where
  ``result`` holds the spec, seed, instance, repetition ids and, per algorithm, the recorded
  rounds, the curves (regret, oracle queries, adaptivity, one row per repetition) and the
  finals (wall / oracle seconds, declared arms).

Why JSON lines: a piece is appended (and flushed to disk) the moment it completes, so a sweep
killed at any time leaves every finished piece readable; a half-written last line is ignored
and cut off when the sweep resumes.  Floats are written with Python's shortest round-trip
``repr``, so a loaded result equals the computed one bit for bit.  Per-call oracle logs and
policy events are not saved (they can hold one record per round); loaded results have empty
``logs`` / ``events``.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import json
import os
from pathlib import Path
from typing import IO, Any

import numpy as np

from .records import result_from_record, result_to_record
from .results import SimulationResult
from .sweep_rows import load_sweep
from .uploads import MAX_UPLOAD_BYTES, UPLOAD_LIMITS, UploadLimits, read_upload, thin_result
from .user_files import MAX_EXPERIMENT_BYTES, describe_os_error, open_output, read_capped

__all__ = [
    "FORMAT",
    "FORMAT_VERSION",
    "MAX_UPLOAD_BYTES",
    "WEBSOCKET_MAX_MESSAGE_BYTES",
    "CorruptLine",
    "ExperimentWriter",
    "keep_valid_pieces",
    "load_experiment",
    "load_upload",
    "parse_experiment",
    "read_experiment",
    "result_from_record",
    "result_to_record",
    "save_result",
    "saved_results",
]

FORMAT = "bandit-dashboard-experiment"
FORMAT_VERSION = 1
#: Largest message a page may send over its websocket: Bokeh's (Tornado's) default, 20 MiB,
#: which is also all that ``panel serve dashboard`` allows (an app cannot raise it there), so
#: that ``python -m dashboard serve`` (``pn.serve(websocket_max_message_size=...)``) behaves
#: the same.  An upload is at most :data:`~.uploads.MAX_UPLOAD_BYTES` (10 MB), refused above
#: that in the browser and sent in 1 MB binary chunks (:mod:`dashboard.ui.upload`), far below.
WEBSOCKET_MAX_MESSAGE_BYTES = 20 * 2**20
#: Exceptions a malformed file can raise inside the loaders (turned into one ValueError).
_MALFORMED = (KeyError, TypeError, AttributeError, IndexError, RecursionError, OverflowError)


def _package_version() -> str:
    from .. import __version__

    return __version__


def _header(kind: str, definition: dict[str, Any]) -> dict[str, Any]:
    return {
        "format": FORMAT,
        "version": FORMAT_VERSION,
        "kind": kind,
        "package_version": _package_version(),
        "created": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "definition": definition,
    }


def _dumps(obj: Any) -> str:
    return json.dumps(obj, separators=(",", ":"), allow_nan=False)


class CorruptLine(ValueError):
    """A line inside a saved experiment is damaged (not JSON, or not a saved piece): its
    ``line`` number (1-based) and ``good_lines``, how many lines before it are intact."""

    def __init__(self, message: str, line: int) -> None:
        super().__init__(message)
        self.line = line
        self.good_lines = line - 1


def read_experiment(path: str | Path) -> tuple[dict[str, Any], list[dict[str, Any]], int]:
    """Read a saved experiment: ``(header, pieces, good_bytes)``.

    ``good_bytes`` is the length of the file up to the last complete line (a half-written
    last line, left by a run killed while writing, is ignored).  ValueError if the file is
    not an experiment file, not a regular file (a FIFO or device is refused without
    blocking) or above :data:`~.user_files.MAX_EXPERIMENT_BYTES`; :class:`CorruptLine` for a
    damaged line.
    """
    data = read_capped(path, MAX_EXPERIMENT_BYTES)
    return parse_experiment(data, str(path))


def parse_experiment(
    data: bytes, name: str = "the file"
) -> tuple[dict[str, Any], list[dict[str, Any]], int]:
    """:func:`read_experiment` on the file's bytes (e.g. an upload); ``name`` for messages."""
    lines = data.split(b"\n")
    good = 0
    header: dict[str, Any] | None = None
    pieces: list[dict[str, Any]] = []
    for i, raw in enumerate(lines[:-1]):  # the text after the last newline is unfinished
        try:
            obj = json.loads(raw)
        except (json.JSONDecodeError, UnicodeDecodeError, RecursionError):
            if header is None:
                break
            raise CorruptLine(f"{name!r} line {i + 1} is not valid JSON", i + 1) from None
        if header is None:
            header = obj
        else:
            if not isinstance(obj, dict) or "result" not in obj:
                raise CorruptLine(f"{name!r} line {i + 1} is not a saved piece", i + 1)
            pieces.append(obj)
        good += len(raw) + 1
    if (
        not isinstance(header, dict)
        or header.get("format") != FORMAT
        or header.get("kind") not in ("simulation", "sweep")
    ):
        raise ValueError(f"{name!r} is not a saved experiment of this dashboard")
    version = header.get("version", 0)
    if not isinstance(version, int) or isinstance(version, bool):
        raise ValueError(f"{name!r} has no valid format version")
    if version > FORMAT_VERSION:
        raise ValueError(f"{name!r} was written by a newer version (format {header['version']})")
    return header, pieces, good


def _is_piece(obj: Any) -> bool:
    return (
        isinstance(obj, dict)
        and isinstance(obj.get("result"), dict)
        and isinstance(obj.get("piece"), dict)
    )


def _readable_piece(obj: Any, kind: str) -> bool:
    """Whether ``obj`` is a whole piece of a ``kind`` file (valid JSON can still be damaged:
    one changed byte in a key)."""
    if not _is_piece(obj) or (kind == "sweep" and not isinstance(obj["piece"].get("unit"), str)):
        return False
    try:
        result_from_record(obj["result"])
    except (ValueError, *_MALFORMED):
        return False
    return True


def keep_valid_pieces(path: str | Path) -> tuple[Path | None, int, list[int]]:
    """Set the damaged lines of a saved experiment aside so that it can be resumed.

    The file as it is moves to ``<path>.corrupt`` (``.corrupt.1`` ... if that exists); ``path``
    gets its header and every intact piece (a line that is a whole saved piece; the others
    are recomputed by the resumed sweep).  Returns ``(backup, pieces_kept, dropped_lines)``;
    a file without a damaged line is left as it is (``backup`` None).
    ValueError if the header itself is damaged (nothing to resume from) or the file cannot be
    read or written.
    """
    p = Path(path)
    data = read_capped(p, MAX_EXPERIMENT_BYTES)
    lines = data.split(b"\n")
    try:
        header = json.loads(lines[0]) if len(lines) > 1 else None
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError):
        header = None
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise ValueError(f"{str(p)!r} has no intact header line: there is nothing to keep")
    kept = [lines[0]]
    dropped: list[int] = []
    kind = str(header.get("kind"))
    for i, raw in enumerate(lines[1:-1], start=2):
        try:
            ok = _readable_piece(json.loads(raw), kind)
        except (json.JSONDecodeError, UnicodeDecodeError, RecursionError):
            ok = False
        if ok:
            kept.append(raw)
        else:
            dropped.append(i)
    if not dropped:
        return None, len(kept) - 1, []
    backup = p.with_name(p.name + ".corrupt")
    n = 0
    while backup.exists():
        n += 1
        backup = p.with_name(f"{p.name}.corrupt.{n}")
    tmp = p.with_name(p.name + ".keep-tmp")
    try:
        with open_output(tmp, "w", encoding="utf-8") as fh:
            fh.write(b"\n".join(kept).decode("utf-8", "replace") + "\n")
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(p, backup)
        os.replace(tmp, p)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise ValueError(f"cannot write {str(p)!r}: {describe_os_error(exc)}") from None
    return backup, len(kept) - 1, dropped


class ExperimentWriter:
    """Appends finished pieces to an experiment file, each flushed and synced at once.

    ``ExperimentWriter.create(path, kind, definition)`` starts a new file;
    ``ExperimentWriter.resume(path, kind, definition)`` reopens one whose header has the same
    kind and definition (ValueError otherwise), cuts off a half-written last line and returns
    the writer with the pieces already there.
    """

    def __init__(self, path: Path, fh: IO[str], kind: str = "sweep") -> None:
        self.path = path
        self.kind = kind
        self._fh: IO[str] | None = fh

    @classmethod
    def create(cls, path: str | Path, kind: str, definition: dict[str, Any]) -> ExperimentWriter:
        p = Path(path)
        fh = open_output(p, "w")
        w = cls(p, fh, kind)
        w._write(_header(kind, definition))
        return w

    @classmethod
    def resume(
        cls, path: str | Path, kind: str, definition: dict[str, Any]
    ) -> tuple[ExperimentWriter, list[dict[str, Any]]]:
        header, pieces, good = read_experiment(path)
        if header.get("kind") != kind:
            raise ValueError(f"{str(path)!r} holds a {header.get('kind')}, not a {kind}")
        if header.get("package_version") != _package_version():
            raise ValueError(
                f"{str(path)!r} was made by version {header.get('package_version')} (this is "
                f"{_package_version()}): its numbers may differ; use another output file"
            )
        old = header.get("definition") or {}
        new = json.loads(_dumps(definition))
        if old != new:
            keys = sorted(k for k in set(old) | set(new) if old.get(k) != new.get(k))
            raise ValueError(
                f"{str(path)!r} was made by a different {kind} (differs in: {', '.join(keys)}); "
                "use another output file or delete this one"
            )
        for n, piece in enumerate(pieces, start=2):
            if not _readable_piece(piece, kind):
                raise CorruptLine(f"{str(path)!r} line {n} is not a saved piece", n)
        p = Path(path)
        fh = open_output(p, "r+")
        try:
            fh.truncate(good)
            fh.seek(good)
        except OSError as exc:
            fh.close()
            raise ValueError(f"cannot write {str(path)!r}: {describe_os_error(exc)}") from None
        return cls(p, fh, kind), pieces

    def _write(self, obj: dict[str, Any]) -> None:
        if self._fh is None:
            raise ValueError(f"{str(self.path)!r} is closed")
        try:
            self._fh.write(_dumps(obj) + "\n")
            self._fh.flush()
            os.fsync(self._fh.fileno())
        except OSError as exc:
            # a full disk or a lost network drive: name the file and the way forward (a
            # half-written last line is cut off when the sweep resumes)
            forward = (
                "the pieces saved before are kept: rerun the same command to resume"
                if self.kind == "sweep"
                else "nothing usable was saved: free some space and rerun the same command"
            )
            raise ValueError(
                f"cannot write {str(self.path)!r}: {describe_os_error(exc)}; {forward}"
            ) from None

    def append(self, piece: dict[str, Any], result: SimulationResult | dict[str, Any]) -> None:
        """Append one finished piece (its identity and its result)."""
        rec = result if isinstance(result, dict) else result_to_record(result)
        self._write({"piece": piece, "result": rec})

    def close(self) -> None:
        if self._fh is not None:
            fh, self._fh = self._fh, None
            try:
                fh.close()
            except OSError:  # every piece was synced when written; a failed write reported
                pass

    def __enter__(self) -> ExperimentWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def save_result(
    path: str | Path, result: SimulationResult, definition: dict[str, Any] | None = None
) -> Path:
    """Write one run (``simulate --save``) as an experiment file of kind ``"simulation"``."""
    defn = definition or {
        "spec": result.spec,
        "algorithms": [r.algorithm for r in result.results],
        "params": {r.algorithm: r.params for r in result.results if r.params},
        "horizon": result.horizon,
        "runs": result.runs,
        "seed": result.seed,
    }
    with ExperimentWriter.create(path, "simulation", defn) as w:
        w.append({"reps": list(result.reps or [])}, result_to_record(result, arrays=True))
    return Path(path)


def load_simulation(header: dict[str, Any], pieces: list[dict[str, Any]]) -> SimulationResult:
    """The single run a ``"simulation"`` file holds."""
    if not pieces:
        raise ValueError("the file holds no finished result")
    return result_from_record(pieces[0]["result"])


def load_experiment(source: str | Path | bytes, name: str | None = None) -> Any:
    """A saved experiment (a path, or the file's bytes) as result objects: a
    :class:`SimulationResult` (``simulate --save``) or a ``SweepResult`` (``sweep --out``;
    only the finished points if it was interrupted).  A file that is not one, or is
    malformed anywhere, raises ValueError naming it (never another exception)."""
    label = name or ("the file" if isinstance(source, bytes) else str(source))

    def read() -> tuple[dict[str, Any], list[dict[str, Any]]]:
        if isinstance(source, bytes):
            return parse_experiment(source, label)[:2]
        return read_experiment(source)[:2]

    return _as_results(label, read)


def load_upload(
    data: bytes,
    name: str = "the file",
    max_bytes: int = MAX_UPLOAD_BYTES,
    limits: UploadLimits = UPLOAD_LIMITS,
) -> Any:
    """:func:`load_experiment` for a dashboard upload: the file's bytes, every limit of
    :mod:`.uploads` (size, lines, algorithms, runs, rounds, sweep points) checked line by line
    *before* any result is built.  ValueError (one sentence naming ``name``) otherwise."""
    if max_bytes != limits.bytes:
        limits = dataclasses.replace(limits, bytes=int(max_bytes))

    def read() -> tuple[dict[str, Any], list[dict[str, Any]]]:
        header, pieces = read_upload(data, name, limits)
        raw = bytes(data)
        parse_experiment(raw[: raw.index(b"\n") + 1], name)  # the header's format and version
        return header, pieces

    return _as_results(name, read)


def _as_results(label: str, read: Any) -> Any:
    """``read() -> (header, pieces)`` as result objects, every failure one ValueError."""
    try:
        header, pieces = read()
        if header["kind"] == "simulation":
            return load_simulation(header, pieces)
        return load_sweep(header, pieces)
    except ValueError as exc:
        msg = " ".join(str(exc).split())
        if repr(label) in msg:
            raise
        raise ValueError(f"{label!r}: {msg}") from None
    except _MALFORMED as exc:
        kind = "too deeply nested" if isinstance(exc, RecursionError) else type(exc).__name__
        raise ValueError(f"{label!r} is a malformed saved experiment ({kind})") from None


def saved_results(
    data: bytes,
    name: str = "the file",
    max_bytes: int = MAX_UPLOAD_BYTES,
    points: int | None = None,
) -> list[tuple[dict[str, Any], SimulationResult]]:
    """The results a saved file (its bytes, e.g. a dashboard upload) holds, for drawing:
    ``[(point, result)]``, one entry for a single run (``point = {}``) and one per finished
    grid point of a sweep (``point = {field: value}``).  ValueError (one clear sentence) for
    an empty file, one above ``max_bytes`` or any limit of :mod:`.uploads` (checked before
    anything is built, :func:`load_upload`), not an experiment of this dashboard, malformed,
    without any finished result, or with curves that are not finite numbers.  ``points``
    thins every curve to at most that many recorded rounds (:func:`~.uploads.thin_result`,
    for drawing).  A plain function of bytes, so that a server can run it in another process
    (:mod:`dashboard.ui.upload`)."""
    loaded = load_upload(data, name, max_bytes)
    if isinstance(loaded, SimulationResult):
        entries = [({}, loaded)]
    else:
        entries = [(dict(row.point), row.result) for row in loaded.rows]
    if not entries:
        raise ValueError(f"{name!r} holds no finished result")
    for _, res in entries:
        for r in res.results:
            if not r.times.size or not np.isfinite(r.regret).all():
                raise ValueError(f"{name!r}: {r.algorithm}'s regret curve is empty or not finite")
    if points is not None:
        entries = [(point, thin_result(res, points)) for point, res in entries]
    return entries
