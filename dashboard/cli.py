"""Command-line interface: ``bandit-dashboard`` (or ``python -m dashboard``) ``simulate |
algorithms | design | reproduce | bench | sweep | load | serve``, and ``--version``.

Errors never show a traceback: a one-line ``error: ...`` on stderr and exit code 2 (130 for
Ctrl-C).  Usage lines name the command as it was typed.
"""

from __future__ import annotations

import argparse
import errno
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

from .cli_args import (
    CLIError,
    add_plugin_flag,
    check_format,
    cli_type,
    input_file,
    load_plugins,
    output_file,
    parse_params,
    parse_value,
)

__all__ = ["main"]

# the shared argument helpers live in cli_args.py; these names stay importable from here
_parse_value, _parse_params, _check_format = parse_value, parse_params, check_format

EXIT_USAGE = 2
EXIT_INTERRUPTED = 130
#: The installed command (``[project.scripts]``); otherwise the CLI is ``python -m dashboard``.
COMMAND = "bandit-dashboard"


def prog_name(argv0: str | None = None) -> str:
    """The command as the user typed it: ``bandit-dashboard`` when run through the installed
    script (``sys.argv[0]``), else ``python -m dashboard``."""
    name = os.path.basename(sys.argv[0] if argv0 is None else argv0).lower()
    for suffix in (".exe", "-script.py"):  # the Windows launchers
        name = name.removesuffix(suffix)
    return COMMAND if name == COMMAND else "python -m dashboard"


def version_text() -> str:
    """``bandit-dashboard X.Y.Z``: the installed distribution's version, else the package's."""
    try:
        from importlib.metadata import PackageNotFoundError, version

        number = version("bandit-teaching-dashboard")
    except (ImportError, PackageNotFoundError, ValueError):
        from . import __version__ as number
    return f"{COMMAND} {number}"


class _Parser(argparse.ArgumentParser):
    """ArgumentParser whose errors are one line on stderr with exit code 2."""

    def error(self, message: str) -> NoReturn:
        raise CLIError(f"{self.prog}: {message} (see --help)")


def _seconds(text: str) -> float:
    from .simulation.budget import check_limit

    try:
        value = float(text) if len(text) <= 64 and text.isascii() and "_" not in text else None
        value = float("nan") if value is None else value
    except ValueError:
        value = float("nan")
    try:
        out = check_limit("--max-work", value)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"--max-work must be a number of seconds > 0 (digits 0-9), got {text[:40]!r}"
        ) from None
    assert out is not None
    return out


def _add_limits(p: argparse.ArgumentParser, what: str) -> None:
    from .simulation.budget import DEFAULT_MAX_MEMORY, DEFAULT_MAX_WORK

    p.add_argument(
        "--max-work",
        type=_seconds,
        default=DEFAULT_MAX_WORK,
        metavar="SECONDS",
        help=f"refuse {what} estimated to take longer (default {DEFAULT_MAX_WORK:g} s; the "
        f"memory limit is {DEFAULT_MAX_MEMORY / 1024**3:g} GB)",
    )
    p.add_argument("--force", action="store_true", help="no time or memory limit")


def _param_help() -> str:
    """``--param`` help listing every built-in algorithm's declared constants."""
    from .simulation import catalogue

    per_alg = "; ".join(
        f"{d.name}: {', '.join(c.name for c in d.constants) or '-'}"
        for d in catalogue.declarations()
    )
    return (
        "algorithm constant, e.g. AROQ-CMAB:C=1.5 (repeatable; VALUE is JSON, quote strings "
        f"as '\"paper\"'). Constants: {per_alg}. Bounds and docs: {prog_name()} algorithms"
    )


def _add_simulate(sub: argparse._SubParsersAction) -> None:
    from .simulation.specs import FIELDS, PROBLEMS, RUN_FIELDS

    p = sub.add_parser(
        "simulate",
        help="simulate algorithms and print a summary",
        description="Simulate R repetitions of one or more algorithms on one instance. "
        "Problem flags, their defaults and bounds come from the problem schema "
        "(dashboard/simulation/specs.py).",
    )
    p.add_argument("--problem", required=True, help=" | ".join(PROBLEMS))
    add_plugin_flag(p)
    p.add_argument(
        "--algorithm",
        action="append",
        required=True,
        help="algorithm name as in the papers (repeat to compare), case-insensitive",
    )
    for f in FIELDS.values():
        if f.flag is None or f.name in RUN_FIELDS:
            continue
        if f.kind == "bool":
            p.add_argument(f.flag, action="store_true", default=None, help=f.help())
        elif f.kind == "path":
            p.add_argument(f.flag, dest=f.name, default=None, help=f.help())
        else:
            problems = "/".join(f.problems)
            p.add_argument(
                f.flag,
                dest=f.name,
                # choices are checked by make_spec, after --plugin registered its components
                type=str if f.kind == "choice" else cli_type(f),
                default=None,
                metavar=f.name.upper() if f.kind != "choice" else None,
                help=f"({problems}) {f.help()}",
            )
    p.add_argument(
        "--horizon", type=cli_type(FIELDS["horizon"]), required=True, help=FIELDS["horizon"].help()
    )
    p.add_argument(
        "--runs",
        type=cli_type(FIELDS["runs"]),
        default=FIELDS["runs"].default,
        help=FIELDS["runs"].help(),
    )
    p.add_argument(
        "--seed",
        type=cli_type(FIELDS["seed"]),
        default=FIELDS["seed"].default,
        help=FIELDS["seed"].help(),
    )
    p.add_argument(
        "--engine",
        default="fast",
        help="fast (default: each algorithm's fast engine where it has one) | textbook (the "
        "paper's algorithm round by round, the file `algorithms --format json` names; the "
        "same numbers, more slowly)",
    )
    p.add_argument("--format", default="table", help="json | table")
    p.add_argument("--csv", help="also write the regret curves as CSV to this file")
    p.add_argument(
        "--report",
        metavar="FILE.html",
        help="also write a self-contained HTML report (plots, settings, seed, versions, the "
        "dashboard link that reproduces the run, final numbers; opens offline)",
    )
    p.add_argument(
        "--band",
        help="with --csv: one row per algorithm and round with mean, lo, hi over the runs: "
        "sd (ddof=1) | se | ci95 (Student t) | q10-90 | runs (default: every run, one row each)",
    )
    p.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="ALG:NAME=VALUE",
        help=_param_help(),
    )
    _add_limits(p, "a run")
    from .sweep_cli import add_save_argument

    add_save_argument(p)
    p.set_defaults(func=_cmd_simulate)


def _spec_from_args(args: argparse.Namespace) -> Any:
    from .simulation.specs import FIELDS, PROBLEMS, RUN_FIELDS, make_spec

    problem = str(args.problem).strip().lower()
    if problem not in PROBLEMS:
        raise CLIError(f"unknown problem {args.problem!r}; choose from: {', '.join(PROBLEMS)}")
    given = {
        f.name: getattr(args, f.name)
        for f in FIELDS.values()
        if f.flag and f.name not in RUN_FIELDS and getattr(args, f.name, None) is not None
    }
    other = sorted(FIELDS[k].flag for k in given if problem not in FIELDS[k].problems)
    if other:
        raise CLIError(f"{', '.join(other)} do(es) not apply to the {problem} problem")
    if problem == "semiparametric" and given.get("features_path"):
        given["instance"] = "csv"
    return make_spec(problem, **given)


def _cmd_simulate(args: argparse.Namespace) -> int:
    from .simulation.runner import Simulation

    fmt = check_format(args.format)
    if args.band is not None:
        from .simulation.bands import check_band

        if not args.csv:
            raise CLIError("--band applies to the CSV export: give --csv FILE too")
        check_band(args.band)
    input_file(getattr(args, "features_path", None), "--features")
    output_file(args.csv, "--csv")
    output_file(args.report, "--report")
    from .sweep_cli import check_save

    check_save(args)
    load_plugins(args.plugin)
    spec = _spec_from_args(args)
    with Simulation(
        spec,
        args.algorithm,
        horizon=args.horizon,
        runs=args.runs,
        seed=args.seed,
        params=parse_params(args.param),
        max_work=None if args.force else args.max_work,
        engine=args.engine,
    ) as sim:
        result = _run_with_progress(sim)
    if args.csv:
        _write_text(args.csv, result.to_csv(band=args.band), "--csv")
    if args.report:
        from .ui.report import report_html, reproduce_query

        query = reproduce_query(result, parse_params(args.param))
        _write_text(args.report, report_html(result, query), "--report")
    from .sweep_cli import save_simulation

    save_simulation(args, result)
    if fmt == "json":
        print(json.dumps(result.to_dict(), indent=2))
    else:
        print(result.to_table())
    return 0


def _write_text(path: str, text: str, what: str) -> None:
    """Write ``text`` to the file ``path`` (an output argument), naming it on failure."""
    from .simulation.user_files import describe_os_error, open_output

    try:
        with open_output(path, "w", what) as fh:
            fh.write(text)
    except OSError as exc:
        raise CLIError(
            f"cannot write {what} {path!r}: {describe_os_error(exc)} (free some space or choose "
            "another file, and rerun the same command)"
        ) from None


def _run_with_progress(sim: Any, stream: Any = None) -> Any:
    """Run ``sim`` to its horizon; when stderr is a terminal and the run is estimated to take
    more than a second, draw a progress bar there (stdout stays clean for JSON).  Chunking
    does not change any number (counter-based randomness)."""
    stream = sys.stderr if stream is None else stream
    tty = getattr(stream, "isatty", lambda: False)()
    if not tty or sim.estimate.seconds < 1.0:
        return sim.run()
    width = 30
    steps = 200
    for k in range(1, steps + 1):
        sim.advance_to(-(-sim.horizon * k // steps))
        done = sim.t / sim.horizon
        bar = "#" * int(width * done)
        stream.write(f"\r[{bar:<{width}}] {100 * done:5.1f}%  t = {sim.t:,} / {sim.horizon:,}")
        stream.flush()
    stream.write("\r" + " " * (width + 40) + "\r")
    stream.flush()
    return sim.result()


def _add_algorithms(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "algorithms",
        help="list algorithms (with their constants), shifts, action families, reward models",
        description="Everything that can be simulated, as the classes declare it.",
    )
    add_plugin_flag(p)
    p.add_argument("--problem", help="only cmab or only semiparametric")
    p.add_argument("--format", default="table", help="json | table")
    p.set_defaults(func=_cmd_algorithms)


def _cmd_algorithms(args: argparse.Namespace) -> int:
    from .catalogue_text import catalogue_table
    from .simulation import catalogue

    fmt = check_format(args.format)
    load_plugins(args.plugin)
    problem = None
    if args.problem is not None:
        problem = str(args.problem).strip().lower()
        if problem not in ("cmab", "semiparametric"):
            raise CLIError(f"unknown problem {args.problem!r}; choose from: cmab, semiparametric")
    described = catalogue.describe(problem)
    print(json.dumps(described, indent=2) if fmt == "json" else catalogue_table(described))
    return 0


def _add_design(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "design",
        help="DEO design (Algorithm 1) of an arm set, with Theorem 1's quantities",
        description="Compute the DEO design of the semiparametric paper for given or random arms.",
    )
    from .simulation.fields import Field
    from .simulation.specs import FIELDS

    sp = "semiparametric"
    p.add_argument("--features", help=FIELDS["features_path"].help())
    p.add_argument("--rescale", action="store_true", help=FIELDS["rescale"].help())
    p.add_argument(
        "--d",
        type=cli_type(FIELDS["d"], sp),
        default=FIELDS["d"].default_for(sp),
        help="dimension of random features; " + FIELDS["d"].allowed(sp),
    )
    p.add_argument(
        "--K",
        type=cli_type(FIELDS["K"], sp),
        default=FIELDS["K"].default_for(sp),
        help="number of random arms; " + FIELDS["K"].allowed(sp),
    )
    p.add_argument("--seed", type=cli_type(FIELDS["seed"]), default=0, help=FIELDS["seed"].help())
    anchor = Field("anchor", "int", "anchor arm", (sp,), 0, 0, FIELDS["K"].high - 1)
    p.add_argument(
        "--anchor", type=cli_type(anchor), default=0, help="anchor arm (x_1 in Algorithm 1), < K"
    )
    p.add_argument("--format", default="json", help="json | table")
    _add_limits(p, "a design")
    p.set_defaults(func=_cmd_design)


def _cmd_design(args: argparse.Namespace) -> int:
    from .algorithms.semiparametric.design import deo_design
    from .algorithms.semiparametric.instances import load_features_csv, random_instance
    from .simulation.budget import enforce, estimate_design

    fmt = check_format(args.format)
    if args.features:
        input_file(args.features, "--features")
        inst = load_features_csv(args.features, rescale=args.rescale, seed=args.seed)
    else:
        inst = random_instance(args.d, args.K, seed=args.seed)
    if args.anchor >= inst.K:
        raise CLIError(f"--anchor must be an arm index from 0 to {inst.K - 1}, got {args.anchor}")
    if not args.force:
        enforce(estimate_design(inst.K, inst.d), args.max_work, override="--max-work or --force")
    report = deo_design(inst.X, anchor=args.anchor)
    out = report.to_dict()
    if fmt == "json":
        print(json.dumps(out, indent=2))
    else:
        for k, v in out.items():
            if isinstance(v, list):
                v = ", ".join(f"{x:.4g}" if isinstance(x, float) else str(x) for x in v)
            print(f"{k:>20}: {v}")
    return 0


def _add_bench(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "bench",
        help="run the benchmarks and print measured ratios",
        description="Benchmarks report ratios measured side by side in one run.",
    )
    p.add_argument("--quick", action="store_true", help="smaller sizes (seconds, not minutes)")
    p.add_argument(
        "--only",
        action="append",
        default=[],
        help="cmab | general | design | sbe | batched | frames | sweep",
    )
    p.set_defaults(func=_cmd_bench)


def _cmd_bench(args: argparse.Namespace) -> int:
    import importlib

    root = Path(__file__).resolve().parent.parent
    sys.path.insert(0, str(root))
    names = args.only or ["cmab", "general", "design", "sbe", "batched", "frames", "sweep"]
    out = {}
    for name in names:
        try:
            mod = importlib.import_module(f"benchmarks.bench_{name}")
        except ModuleNotFoundError as exc:
            if not (root / "benchmarks").is_dir():
                raise CLIError(
                    "bench needs a checkout of the repository (its benchmarks/ folder is not "
                    "installed with the package): run it from the checkout with make bench"
                ) from None
            raise CLIError(f"benchmark {name!r} is not available ({exc.name})") from None
        out[name] = mod.run(quick=args.quick)
    print(json.dumps(out, indent=2, default=float))
    return 0


def build_parser(prog: str | None = None) -> argparse.ArgumentParser:
    """The top-level parser with its subcommands; ``prog`` (default :func:`prog_name`) is the
    command its usage lines name."""
    parser = _Parser(
        prog=prog or prog_name(),
        description="Bandit teaching dashboard: simulations, designs, figures and benchmarks.",
    )
    parser.add_argument(
        "--version", action="version", version=version_text(), help="print the version and exit"
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    _add_simulate(sub)
    _add_algorithms(sub)
    _add_design(sub)
    _add_bench(sub)
    from .shipped_cli import add_parsers as add_shipped_commands

    add_shipped_commands(sub)
    from .sweep_cli import add_parsers as add_sweep_commands

    add_sweep_commands(sub)
    _add_limits(sub.choices["sweep"], "a sweep (all its points)")
    try:
        from .reproduce import add_parser as add_reproduce
    except ImportError:
        pass
    else:
        add_reproduce(sub)
    from .serve import add_parser as add_serve

    add_serve(sub)
    return parser


def _commands(parser: argparse.ArgumentParser) -> list[str]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return list(action.choices)
    return []


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the exit code (0 ok, 2 user error)."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
        if not getattr(args, "command", None):
            commands = ", ".join(sorted(_commands(parser)))
            raise CLIError(
                f"usage: {parser.prog} COMMAND [options]; commands: {commands} "
                f"(see {parser.prog} COMMAND --help)"
            )
        return int(args.func(args))
    except CLIError as exc:
        print(f"error: {_one_line(str(exc))}", file=sys.stderr)
        return EXIT_USAGE
    except OSError as exc:
        print(f"error: {_one_line(_os_error(exc))}", file=sys.stderr)
        return EXIT_USAGE
    except ValueError as exc:
        msg = str(exc).splitlines()[0] if str(exc).strip() else type(exc).__name__
        print(f"error: {_one_line(msg)}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("error: interrupted (Ctrl-C)", file=sys.stderr)
        return EXIT_INTERRUPTED


def _os_error(exc: OSError) -> str:
    """An OS error in one sentence naming the file and the way forward."""
    reason = exc.strerror or (str(exc).splitlines() or [type(exc).__name__])[0]
    where = f"{exc.filename!r}: " if exc.filename else ""
    if exc.errno in (errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC)):
        return f"{where}{reason}; free some space and rerun the same command"
    return f"{where}{reason}"


def _one_line(text: str, limit: int = 500) -> str:
    """``text`` on one line: control characters (a newline typed in an argument) escaped,
    at most ``limit`` characters."""
    out = "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)
    return out if len(out) <= limit else out[: limit - 3] + "..."
