"""A sweep's rows: finished pieces (one unit, some repetition ids) merged into grid points as
soon as all their units are complete (:class:`SweepRow`, :class:`SweepResult`), progress
reports, and the rows of a saved sweep (:func:`load_sweep`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .records import result_from_record
from .results import SimulationResult, merge_results
from .sweep_grid import Sweep, make_sweep

__all__ = ["RowCollector", "SweepProgress", "SweepResult", "SweepRow", "load_sweep"]


@dataclass
class SweepProgress:
    """Progress reported after each finished task."""

    tasks_done: int
    tasks_total: int
    rows_done: int
    rows_total: int
    #: rows this task completed (several when a shared unit finishes; on the first report of
    #: a resumed sweep, the rows already complete in the file)
    new_rows: list[SweepRow] = field(default_factory=list)


@dataclass
class SweepRow:
    """One grid point and its result (all algorithms, all repetitions)."""

    index: int
    point: dict[str, Any]
    result: SimulationResult

    def to_dict(self) -> dict[str, Any]:
        """simulate's JSON fields plus ``point``."""
        return {"point": self.point, **self.result.to_dict()}


@dataclass
class SweepResult:
    """The rows of a sweep, in grid order (only finished rows if cancelled)."""

    sweep: Sweep
    rows: list[SweepRow]
    cancelled: bool = False
    tasks_run: int = 0
    tasks_skipped: int = 0

    @property
    def complete(self) -> bool:
        return len(self.rows) == len(self.sweep.rows)

    def to_json(self) -> list[dict[str, Any]]:
        return [r.to_dict() for r in self.rows]

    def to_table(self) -> str:
        """One line per (point, algorithm)."""
        pkeys = [k for k, _ in self.sweep.grid]
        head = [*pkeys, "algorithm", "regret (mean)", "regret (std)", "queries", "adaptivity"]
        table = [head]
        for row in self.rows:
            for s in row.result.to_dict()["results"]:
                table.append(
                    [
                        *(str(row.point[k]) for k in pkeys),
                        s["algorithm"],
                        f"{s['final_regret_mean']:.1f}",
                        f"{s['final_regret_std']:.1f}",
                        f"{s['oracle_queries_mean']:.0f}",
                        f"{s['oracle_adaptivity_mean']:.0f}",
                    ]
                )
        widths = [max(len(r[i]) for r in table) for i in range(len(head))]
        lines = ["  ".join(c.rjust(w) for c, w in zip(r, widths)) for r in table]
        lines.insert(1, "  ".join("-" * w for w in widths))
        s = self.sweep
        status = "" if self.complete else f" ({len(self.rows)} of {len(s.rows)} points done)"
        title = (
            f"{s.problem} sweep, {len(s.rows)} point(s) x {len(s.algorithms)} algorithm(s), "
            f"{s.runs} run(s), seed {s.seed}{status}"
        )
        return title + "\n" + "\n".join(lines)


class RowCollector:
    """Collects pieces per unit and assembles rows as soon as all their units are complete."""

    def __init__(self, sweep: Sweep) -> None:
        self.sweep = sweep
        self.pieces: dict[str, list[SimulationResult]] = {k: [] for k in sweep.units}
        self.have: dict[str, set[int]] = {k: set() for k in sweep.units}
        self.rows: dict[int, SweepRow] = {}
        self.waiting: dict[str, list[int]] = {}
        for i, (_, ukeys) in enumerate(sweep.rows):
            for u in ukeys:
                self.waiting.setdefault(u, []).append(i)

    def add(self, ukey: str, res: SimulationResult) -> list[SweepRow]:
        """Add a piece (a duplicate repetition is ignored); return rows it completed."""
        reps = set(res.reps or [])
        if ukey not in self.pieces or reps & self.have[ukey]:
            return []
        self.pieces[ukey].append(res)
        self.have[ukey] |= reps
        if not self.complete(ukey):
            return []
        done = []
        for i in self.waiting.get(ukey, []):
            point, ukeys = self.sweep.rows[i]
            if i not in self.rows and all(self.complete(u) for u in ukeys):
                parts = [p for u in ukeys for p in self.pieces[u]]
                merged = merge_results(parts, algorithms=self.sweep.algorithms)
                self.rows[i] = SweepRow(i, point, merged)
                done.append(self.rows[i])
        return done

    def complete(self, ukey: str) -> bool:
        return len(self.have[ukey]) == self.sweep.runs

    def missing(self, ukey: str) -> list[int]:
        return [r for r in range(self.sweep.runs) if r not in self.have[ukey]]


def load_sweep(header: dict[str, Any], pieces: list[dict[str, Any]]) -> SweepResult:
    """Rows of a saved sweep (only the finished ones if it was interrupted)."""
    d = header["definition"]
    sweep = make_sweep(
        d["problem"],
        d["algorithms"],
        horizon=d["horizon"],
        runs=d["runs"],
        seed=d["seed"],
        grid=[(k, v) for k, v in d["grid"]],
        params=d["params"],
        grid_points=d["grid_points"],
        **d["base"],
    )
    rows = RowCollector(sweep)
    for p in pieces:
        rows.add(p["piece"]["unit"], result_from_record(p["result"]))
    return SweepResult(sweep, [rows.rows[i] for i in sorted(rows.rows)])
