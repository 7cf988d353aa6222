"""Argument helpers every command of the CLI shares (``simulate``, ``sweep``, ``reproduce``,
``serve`` ...): the one-line user error, value and ``--param`` parsing, argparse types from
the problem schema, ``--format`` and ``--plugin``.  The command modules import this, never
:mod:`dashboard.cli` (which imports them to build the parser): dependencies point one way.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from typing import Any

__all__ = [
    "CLIError",
    "add_plugin_flag",
    "check_format",
    "cli_type",
    "load_plugins",
    "parse_params",
    "parse_value",
]


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


def cli_type(field: Any, problem: str | None = None) -> Any:
    """An argparse ``type=`` from a schema field: the text is checked against the field's
    bounds or choices before any conversion (a 400-digit ``--seed`` is an error, not a crash)."""

    def parse(text: str) -> Any:
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
