"""Command-line interface: ``python -m dashboard simulate | algorithms | design | reproduce |
bench | sweep | load | serve``.

Errors never show a traceback: a one-line ``error: ...`` on stderr and exit code 2.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

__all__ = ["main"]

EXIT_USAGE = 2


class CLIError(Exception):
    """A user error to report in one line."""


class _Parser(argparse.ArgumentParser):
    """ArgumentParser whose errors are one line on stderr with exit code 2."""

    def error(self, message: str) -> NoReturn:
        raise CLIError(f"{self.prog}: {message} (see --help)")


def _parse_value(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def _parse_params(items: Sequence[str]) -> dict[str, dict[str, Any]]:
    """``ALG:key=value`` items -> ``{ALG: {key: value}}``."""
    out: dict[str, dict[str, Any]] = {}
    for item in items:
        alg, sep, rest = item.partition(":")
        key, eq, value = rest.partition("=")
        if not sep or not eq or not alg or not key:
            raise CLIError(f"--param must look like ALGORITHM:name=value, got {item!r}")
        out.setdefault(alg, {})[key] = _parse_value(value)
    return out


def add_plugin_flag(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--plugin",
        action="append",
        default=[],
        metavar="PATH_OR_MODULE",
        help="load your own policy/shift first: a .py file or an importable module "
        "(repeatable; see docs/PLUGINS.md)",
    )


def load_plugins(specs: Sequence[str]) -> None:
    """Register the ``--plugin`` files/modules (one-line error for a bad plug-in)."""
    if not specs:
        return
    from .plugins import load_plugin

    for spec in specs:
        try:
            load_plugin(spec)
        except ValueError as exc:
            raise CLIError(str(exc).splitlines()[0]) from None


def _param_help() -> str:
    """``--param`` help listing every built-in algorithm's declared constants."""
    from .simulation import catalogue

    per_alg = "; ".join(
        f"{d.name}: {', '.join(c.name for c in d.constants) or '-'}"
        for d in catalogue.declarations()
    )
    return (
        "algorithm constant, e.g. AROQ-CMAB:C=1.5 (repeatable; VALUE is JSON, quote strings "
        f"as '\"paper\"'). Constants: {per_alg}. Bounds and docs: python -m dashboard algorithms"
    )


def _add_simulate(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "simulate",
        help="simulate algorithms and print a summary",
        description="Simulate R repetitions of one or more algorithms on one instance.",
    )
    p.add_argument("--problem", required=True, help="cmab or semiparametric")
    add_plugin_flag(p)
    p.add_argument(
        "--algorithm",
        action="append",
        required=True,
        help="algorithm name as in the papers (repeat to compare), case-insensitive",
    )
    p.add_argument("--d", type=int, help="base arms (cmab, default 20) / dimension (default 5)")
    p.add_argument("--m", type=int, default=3, help="maximum action size (cmab, default 3)")
    p.add_argument("--actions", default="m-sets", help="m-sets | paths | matchings (cmab)")
    p.add_argument(
        "--reward", default="linear", help="linear | covariance | general | continuous (cmab)"
    )
    p.add_argument("--oracle-delay", type=float, default=0.0, help="seconds per oracle call")
    p.add_argument("--executor", default="none", help="none | threads (parallel oracle batches)")
    p.add_argument("--K", type=int, default=10, help="number of arms (semiparametric)")
    p.add_argument(
        "--instance", default="gap", help="gap | random | multi-armed | csv (semiparametric)"
    )
    p.add_argument("--features", help="CSV of arm features, K rows x d columns")
    p.add_argument("--rescale", action="store_true", help="rescale features to norm <= 1")
    p.add_argument(
        "--shift", default="none", help="none | sine | log | random | adversarial (semiparam.)"
    )
    p.add_argument("--magnitude", type=float, default=1.0, help="shift magnitude")
    p.add_argument("--gap", type=float, default=0.5, help="suboptimality gap Delta*")
    p.add_argument("--noise", type=float, default=1.0, help="noise standard deviation sigma")
    p.add_argument("--horizon", type=int, required=True, help="number of rounds T")
    p.add_argument("--runs", type=int, default=1, help="repetitions R")
    p.add_argument("--seed", type=int, default=0, help="seed (same seed, same numbers)")
    p.add_argument("--format", default="table", help="json | table")
    p.add_argument("--csv", help="also write the regret curves as CSV to this file")
    p.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="ALG:NAME=VALUE",
        help=_param_help(),
    )
    from .sweep_cli import add_save_argument

    add_save_argument(p)
    p.set_defaults(func=_cmd_simulate)


def _spec_from_args(args: argparse.Namespace) -> Any:
    from .simulation.specs import make_spec

    problem = str(args.problem).strip().lower()
    if problem == "cmab":
        return make_spec(
            "cmab",
            d=20 if args.d is None else args.d,
            m=args.m,
            actions=args.actions,
            reward=args.reward,
            oracle_delay=args.oracle_delay,
            executor=args.executor,
        )
    if problem == "semiparametric":
        instance = "csv" if args.features else args.instance
        return make_spec(
            "semiparametric",
            d=5 if args.d is None else args.d,
            K=args.K,
            instance=instance,
            shift=args.shift,
            magnitude=args.magnitude,
            gap=args.gap,
            noise=args.noise,
            features_path=args.features,
            rescale=args.rescale,
        )
    raise CLIError(f"unknown problem {args.problem!r}; choose from: cmab, semiparametric")


def _check_format(fmt: str) -> str:
    f = str(fmt).strip().lower()
    if f not in ("json", "table"):
        raise CLIError(f"unknown format {fmt!r}; choose from: json, table")
    return f


def _cmd_simulate(args: argparse.Namespace) -> int:
    from .simulation.runner import simulate

    fmt = _check_format(args.format)
    load_plugins(args.plugin)
    spec = _spec_from_args(args)
    result = simulate(
        spec,
        args.algorithm,
        horizon=args.horizon,
        runs=args.runs,
        seed=args.seed,
        params=_parse_params(args.param),
    )
    if args.csv:
        Path(args.csv).write_text(result.to_csv())
    from .sweep_cli import save_simulation

    save_simulation(args, result)
    if fmt == "json":
        print(json.dumps(result.to_dict(), indent=2))
    else:
        print(result.to_table())
    return 0


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

    fmt = _check_format(args.format)
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
    p.add_argument("--features", help="CSV of arm features, K rows x d columns")
    p.add_argument("--rescale", action="store_true", help="rescale features to norm <= 1")
    p.add_argument("--d", type=int, default=5, help="dimension of random features")
    p.add_argument("--K", type=int, default=10, help="number of random arms")
    p.add_argument("--seed", type=int, default=0, help="seed of the random features")
    p.add_argument("--anchor", type=int, default=0, help="anchor arm (x_1 in Algorithm 1)")
    p.add_argument("--format", default="json", help="json | table")
    p.set_defaults(func=_cmd_design)


def _cmd_design(args: argparse.Namespace) -> int:
    from .algorithms.semiparametric.design import deo_design
    from .algorithms.semiparametric.instances import load_features_csv, random_instance

    fmt = _check_format(args.format)
    if args.features:
        inst = load_features_csv(args.features, rescale=args.rescale, seed=args.seed)
    else:
        inst = random_instance(args.d, args.K, seed=args.seed)
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
        "--only", action="append", default=[], help="cmab | design | sbe | batched | frames | sweep"
    )
    p.set_defaults(func=_cmd_bench)


def _cmd_bench(args: argparse.Namespace) -> int:
    import importlib

    root = Path(__file__).resolve().parent.parent
    sys.path.insert(0, str(root))
    names = args.only or ["cmab", "design", "sbe", "batched", "frames", "sweep"]
    out = {}
    for name in names:
        try:
            mod = importlib.import_module(f"benchmarks.bench_{name}")
        except ModuleNotFoundError as exc:
            raise CLIError(f"benchmark {name!r} is not available ({exc.name})") from None
        out[name] = mod.run(quick=args.quick)
    print(json.dumps(out, indent=2, default=float))
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The top-level parser with its subcommands."""
    parser = _Parser(
        prog="python -m dashboard",
        description="Bandit teaching dashboard: simulations, designs, figures and benchmarks.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    _add_simulate(sub)
    _add_algorithms(sub)
    _add_design(sub)
    _add_bench(sub)
    from .sweep_cli import add_parsers as add_sweep_commands

    add_sweep_commands(sub)
    try:
        from .reproduce import add_parser as add_reproduce
    except ImportError:
        pass
    else:
        add_reproduce(sub)
    from .serve import add_parser as add_serve

    add_serve(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the exit code (0 ok, 2 user error)."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
        if not getattr(args, "command", None):
            parser.print_help()
            return EXIT_USAGE
        return int(args.func(args))
    except CLIError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except (ValueError, FileNotFoundError, OSError) as exc:
        msg = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        print(f"error: {msg}", file=sys.stderr)
        return EXIT_USAGE
