"""Argument helpers every command of the CLI shares (``simulate``, ``sweep``, ``reproduce``,
``serve`` ...): the one-line user error, value and ``--param`` parsing, argparse types from
the problem schema (numbers written with the ASCII digits 0-9 only), ``--format``,
``--plugin`` and the checks of file arguments (a regular file, read with a cap).  The
command modules import this, never :mod:`dashboard.cli` (which imports them to build the
parser): dependencies point one way.
"""

from __future__ import annotations

import argparse
import json
import re
from collections.abc import Sequence
from typing import Any

__all__ = [
    "CLIError",
    "add_plugin_flag",
    "ascii_number",
    "check_format",
    "cli_type",
    "input_file",
    "int_type",
    "load_plugins",
    "output_file",
    "parse_params",
    "parse_value",
]

#: What a number on the command line may be written with: ASCII digits, one sign, a decimal
#: point and an exponent (``1e4``).  Python's own ``int`` and ``Decimal`` also read
#: ``1_000``, Arabic-Indic and full-width digits; the CLI does not.
_NUMBER = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?", re.ASCII)


class CLIError(Exception):
    """A user error to report in one line."""


def parse_value(text: str) -> Any:
    """``text`` as a JSON value where it is one (``1.5``, ``true``, ``"x"``), else the text."""
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def parse_params(items: Sequence[str]) -> dict[str, dict[str, Any]]:
    """``ALG:key=value`` items -> ``{ALG: {key: value}}``."""
    out: dict[str, dict[str, Any]] = {}
    for item in items:
        alg, sep, rest = item.partition(":")
        key, eq, value = rest.partition("=")
        if not sep or not eq or not alg or not key:
            raise CLIError(f"--param must look like ALGORITHM:name=value, got {item!r}")
        out.setdefault(alg, {})[key] = parse_value(value)
    return out


def ascii_number(text: str) -> bool:
    """Whether ``text`` is a number written with ASCII digits (``12``, ``-1.5``, ``1e4``;
    spaces around it allowed), not ``1_000``, ``١٠٠٠`` or ``１０００``."""
    return _NUMBER.fullmatch(text.strip(" \t")) is not None


def _foreign_digits(text: str) -> bool:
    """Whether ``text`` has what Python reads as part of a number but the CLI does not: a
    ``_`` separator or a non-ASCII character (other scripts' digits, full-width forms)."""
    return "_" in text or not text.isascii()


def _not_ascii(what: str, text: str) -> argparse.ArgumentTypeError:
    shown = text if len(text) <= 20 else text[:12] + "..."
    return argparse.ArgumentTypeError(
        f"{what} must be written with the digits 0-9 (no '_' or other separators), got {shown!r}"
    )


def int_type(low: int, high: int, what: str = "the value") -> Any:
    """An argparse ``type=`` for a whole number from ``low`` to ``high``, ASCII digits only."""

    def parse(text: str) -> int:
        if _foreign_digits(text):
            raise _not_ascii(what, text)
        value = int(text) if len(text) <= 20 and text.strip().isdigit() else None
        if value is None or not low <= value <= high:
            raise argparse.ArgumentTypeError(
                f"{what} must be a whole number from {low} to {high}, got {text!r}"
            )
        return value

    parse.__name__ = "int"
    return parse


def cli_type(field: Any, problem: str | None = None) -> Any:
    """An argparse ``type=`` from a schema field: the text is checked against the field's
    bounds or choices before any conversion (a 400-digit ``--seed`` is an error, not a crash);
    numbers are written with ASCII digits only."""

    def parse(text: str) -> Any:
        if field.kind in ("int", "float") and _foreign_digits(text):
            raise _not_ascii(field.title, text)
        try:
            return field.parse(text, problem)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    parse.__name__ = field.kind
    return parse


def check_format(fmt: str) -> str:
    f = str(fmt).strip().lower()
    if f not in ("json", "table"):
        raise CLIError(f"unknown format {fmt!r}; choose from: json, table")
    return f


def add_plugin_flag(p: argparse.ArgumentParser) -> None:
    """``--plugin PATH_OR_MODULE`` (repeatable)."""
    p.add_argument(
        "--plugin",
        action="append",
        default=[],
        metavar="PATH_OR_MODULE",
        help="load your own policy/shift first: a .py file or an importable module "
        "(repeatable; the contract: bandit-dashboard docs PLUGINS)",
    )


def input_file(path: str | None, what: str) -> str | None:
    """``path`` (a file argument the command reads, e.g. ``--features``) if it is a regular
    file; a one-line error otherwise (a FIFO or device would block or never end)."""
    if path is None:
        return None
    from .simulation.user_files import check_input

    try:
        check_input(path, what)
    except ValueError as exc:
        raise CLIError(str(exc)) from None
    return path


def output_file(path: str | None, what: str) -> str | None:
    """``path`` (a file argument the command writes, e.g. ``--csv``) if it is a regular file
    or a new name in an existing folder; a one-line error otherwise."""
    if path is None:
        return None
    from .simulation.user_files import check_output

    try:
        check_output(path, what)
    except ValueError as exc:
        raise CLIError(str(exc)) from None
    return path


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
