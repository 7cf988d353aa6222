"""CLI commands ``sweep`` and ``load``, and ``simulate --save`` (added to :mod:`dashboard.cli`).

``python -m dashboard sweep --problem cmab --algorithm AROQ-CMAB --algorithm SROQ-CMAB --d 10
--m 2 --grid horizon=1000,10000 --grid d=10,20 --grid AROQ-CMAB:C=0.5,1,2 --runs 4 --seed 0
[--scheduler tcp://host:8786] [--workers N] [--out FILE] --format json|table``

Every JSON row is what ``simulate`` prints for that point alone plus ``point``.  With ``--out``
finished pieces are saved as they complete; the same command resumes an interrupted sweep.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

from .cli_args import (
    CLIError,
    check_format,
    cli_type,
    int_type,
    output_file,
    parse_params,
    parse_value,
)

__all__ = ["add_parsers", "add_save_argument", "save_simulation"]

EXIT_INTERRUPTED = 130


#: Problem flags: (flag, type, help).  Defaults are the spec's own (as ``simulate``'s are).
def _problem_flags() -> tuple[tuple[str, Any, str], ...]:
    """``(flag, argparse type, help)`` of the problem fields, generated from the one problem
    schema (:data:`dashboard.simulation.specs.FIELDS`): numbers are checked against the
    schema's bounds before conversion; choices are checked by ``make_spec``."""
    from .simulation.specs import FIELDS, RUN_FIELDS

    return tuple(
        (f.flag, str if f.kind == "choice" else cli_type(f), f"({'/'.join(f.problems)}) {f.help()}")
        for f in FIELDS.values()
        if f.flag
        and f.name not in RUN_FIELDS
        and f.kind in ("int", "float", "choice")
        and f.name != "executor"
    )


_PROBLEM_FLAGS = _problem_flags()


def _parse_grid(items: list[str]) -> list[tuple[str, list[Any]]]:
    """``KEY=v1,v2`` items -> ``[(KEY, [v1, v2])]`` (values parsed as JSON where they are)."""
    out = []
    for item in items:
        key, eq, values = item.partition("=")
        if not eq or not key.strip():
            raise CLIError(f"--grid must look like FIELD=v1,v2,... got {item!r}")
        vals = [parse_value(v.strip()) for v in values.split(",") if v.strip()]
        if not vals:
            raise CLIError(f"--grid {key.strip()} has an empty list of values")
        out.append((key.strip(), vals))
    return out


def _add_sweep(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "sweep",
        help="run a grid of settings x constants x algorithms on Dask",
        description=(
            "Sweep problem fields (--grid d=10,20), the horizon (--grid horizon=1000,10000) and "
            "algorithm constants (--grid AROQ-CMAB:C=0.5,1,2); R repetitions per point, the same "
            "seed rules as simulate. Runs on a local Dask cluster (or in-process when tiny), or "
            "on a running cluster with --scheduler / $BANDIT_DASHBOARD_SCHEDULER."
        ),
    )
    p.add_argument("--problem", required=True, help="cmab or semiparametric")
    p.add_argument("--algorithm", action="append", required=True, help="repeat to compare")
    for flag, typ, text in _PROBLEM_FLAGS:
        p.add_argument(flag, type=typ, default=None, help=text)
    from .simulation.specs import FIELDS

    p.add_argument(
        "--horizon", type=cli_type(FIELDS["horizon"]), help="T of every point (unless swept)"
    )
    p.add_argument(
        "--grid", action="append", default=[], metavar="FIELD=V1,V2", help="swept values"
    )
    p.add_argument(
        "--param", action="append", default=[], metavar="ALG:NAME=VALUE", help="fixed constant"
    )
    p.add_argument(
        "--runs", type=cli_type(FIELDS["runs"]), default=1, help="repetitions R per point"
    )
    p.add_argument("--seed", type=cli_type(FIELDS["seed"]), default=0, help="seed of every point")
    p.add_argument("--scheduler", help="tcp://host:port of a running Dask scheduler, or inprocess")
    p.add_argument(
        "--workers",
        type=int_type(1, 256, "--workers"),
        help="worker processes of the local cluster",
    )
    p.add_argument(
        "--block",
        type=int_type(1, FIELDS["runs"].high, "--block"),
        help="repetitions per task (default: automatic)",
    )
    p.add_argument("--out", help="save to this file as pieces finish; rerun to resume")
    p.add_argument(
        "--drop-corrupt-lines",
        action="store_true",
        help="if --out has damaged lines (a disk fault), set them aside and resume from the "
        "intact pieces (the file as it was is kept as FILE.corrupt)",
    )
    p.add_argument("--format", default="table", help="json | table")
    p.set_defaults(func=_cmd_sweep)  # (--max-work and --force: dashboard.cli, as simulate's)


def _sweep_from_args(args: argparse.Namespace) -> Any:
    from .simulation.sweep import make_sweep

    base = {}
    for flag, _, _ in _PROBLEM_FLAGS:
        name = flag[2:].replace("-", "_")
        value = getattr(args, name)
        if value is not None:
            base[name] = value
    return make_sweep(
        args.problem,
        args.algorithm,
        horizon=args.horizon,
        runs=args.runs,
        seed=args.seed,
        grid=_parse_grid(args.grid),
        params=parse_params(args.param),
        **base,
    )


class _Bar:
    """A one-line progress bar on stderr (only when stderr is a terminal)."""

    def __init__(self) -> None:
        self.on = sys.stderr.isatty()
        self.start = time.monotonic()

    def __call__(self, p: Any) -> None:
        if not self.on:
            return
        frac = p.tasks_done / p.tasks_total if p.tasks_total else 1.0
        bar = "#" * int(30 * frac)
        sys.stderr.write(
            f"\r[{bar:<30}] {p.tasks_done}/{p.tasks_total} tasks, "
            f"{p.rows_done}/{p.rows_total} points, {time.monotonic() - self.start:.0f} s "
        )
        sys.stderr.flush()

    def close(self) -> None:
        if self.on:
            sys.stderr.write("\n")
            sys.stderr.flush()


def _print_sweep(result: Any, fmt: str) -> None:
    if fmt == "json":
        print(json.dumps(result.to_json(), indent=2))
    else:
        print(result.to_table())


def corrupt_hint(exc: Any, path: str, resume: bool) -> str:
    """The way forward for a damaged line of a saved file: which line, and how to keep the
    rows before it."""
    import shlex

    good = exc.good_lines
    keep = f"head -n {good} {shlex.quote(path)} > FIXED.jsonl"
    if resume:
        return (
            f"{exc}; rerun the same command with --drop-corrupt-lines to set the damaged "
            f"line(s) aside and resume (the file as it was is kept as {path}.corrupt), or keep "
            f"the {good} line(s) before it with `{keep}`"
        )
    return f"{exc}; the {good} line(s) before it are intact: `{keep}` keeps them"


def _check_out(args: argparse.Namespace) -> None:
    """``--out``: a regular file (or a new one); with ``--drop-corrupt-lines`` its damaged
    lines are set aside first."""
    import os

    out = output_file(args.out, "--out")
    if args.drop_corrupt_lines and out is None:
        raise CLIError("--drop-corrupt-lines applies to the file of --out: give --out FILE too")
    if not args.drop_corrupt_lines or not os.path.exists(out) or not os.path.getsize(out):
        return
    from .simulation.store import keep_valid_pieces

    backup, kept, dropped = keep_valid_pieces(out)
    if backup is not None:
        lines = ", ".join(map(str, dropped[:10])) + (" ..." if len(dropped) > 10 else "")
        print(
            f"note: set aside damaged line(s) {lines} of {out} (the file as it was: {backup}); "
            f"resuming from {kept} intact piece(s)",
            file=sys.stderr,
        )


def _cmd_sweep(args: argparse.Namespace) -> int:
    from .simulation.store import CorruptLine
    from .simulation.sweep import close_clients, run_sweep

    fmt = check_format(args.format)
    sweep = _sweep_from_args(args)  # every check before any work
    if not args.force:  # the estimate of simulate, summed over the sweep's points
        from .simulation.sweep import check_sweep_work

        check_sweep_work(sweep, args.max_work, override="--max-work SECONDS or --force")
    _check_out(args)
    scheduler = args.scheduler
    if scheduler is not None and str(scheduler).strip().lower() == "inprocess":
        scheduler = "inprocess"
    bar = _Bar()
    try:
        result = run_sweep(
            sweep,
            scheduler=scheduler,
            workers=args.workers,
            block=args.block,
            out=args.out,
            progress=bar,
        )
    except CorruptLine as exc:
        raise CLIError(corrupt_hint(exc, args.out, resume=True)) from None
    except KeyboardInterrupt:
        bar.close()
        where = (
            f"; finished pieces are in {args.out}: rerun the same command to resume"
            if args.out
            else ""
        )
        print(f"error: sweep interrupted{where}", file=sys.stderr)
        return EXIT_INTERRUPTED
    finally:
        close_clients()
    bar.close()
    _print_sweep(result, fmt)
    return 0


def _add_load(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "load",
        help="print a saved run or sweep (simulate --save / sweep --out)",
        description="Read a saved experiment file back and print it as simulate / sweep do.",
    )
    p.add_argument("file", help="the saved experiment")
    p.add_argument("--format", default="table", help="json | table")
    p.set_defaults(func=_cmd_load)


def load(path: str) -> Any:
    """A saved experiment as result objects: SimulationResult (a run) or SweepResult."""
    from .simulation.store import load_experiment

    return load_experiment(path)


def _cmd_load(args: argparse.Namespace) -> int:
    from .simulation.results import SimulationResult
    from .simulation.store import CorruptLine

    fmt = check_format(args.format)
    try:
        res = load(args.file)
    except CorruptLine as exc:
        raise CLIError(corrupt_hint(exc, args.file, resume=False)) from None
    if isinstance(res, SimulationResult):
        print(json.dumps(res.to_dict(), indent=2) if fmt == "json" else res.to_table())
        return 0
    if not res.complete:
        print(
            f"note: {len(res.rows)} of {len(res.sweep.rows)} points finished "
            "(rerun the sweep with the same --out to complete it)",
            file=sys.stderr,
        )
    _print_sweep(res, fmt)
    return 0


def add_parsers(sub: argparse._SubParsersAction) -> None:
    """Add ``sweep`` and ``load`` to the CLI."""
    _add_sweep(sub)
    _add_load(sub)


def add_save_argument(parser: argparse.ArgumentParser) -> None:
    """``simulate --save FILE``."""
    parser.add_argument("--save", help="also save the run (spec, seed, curves) to this file")


def check_save(args: argparse.Namespace) -> None:
    """``simulate --save FILE``: a regular file or a new name in an existing folder (checked
    before the run)."""
    output_file(getattr(args, "save", None), "--save")


def save_simulation(args: argparse.Namespace, result: Any) -> None:
    """Save ``simulate``'s result if ``--save`` was given."""
    path = getattr(args, "save", None)
    if path:
        from .simulation.store import save_result

        save_result(path, result)
