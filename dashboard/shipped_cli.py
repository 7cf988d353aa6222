"""``notebooks DIR`` and ``docs NAME``: the CLI's way to the files shipped with the package
(:mod:`dashboard.shipped`), for a student who has the wheel and no checkout."""

from __future__ import annotations

import argparse
import sys

__all__ = ["add_parsers"]


def add_parsers(sub: argparse._SubParsersAction) -> None:
    """Add the ``notebooks`` and ``docs`` subcommands."""
    _add_notebooks(sub)
    _add_docs(sub)


def _add_notebooks(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "notebooks",
        help="copy the classroom notebooks into a folder of your own",
        description="Copy the classroom notebooks (and the plug-in examples the last one builds "
        "on) into DIR, created if missing; then open them with `jupyter lab DIR`.  Nothing is "
        "overwritten without --force.",
    )
    p.add_argument("dir", metavar="DIR", help="the folder to copy them into")
    p.add_argument("--force", action="store_true", help="overwrite files already there")
    p.set_defaults(func=_cmd_notebooks)


def _cmd_notebooks(args: argparse.Namespace) -> int:
    from .shipped import copy_notebooks

    written = copy_notebooks(args.dir, force=args.force)
    notebooks = [p for p in written if p.suffix == ".ipynb"]
    print(
        f"copied {len(notebooks)} notebooks and {len(written) - len(notebooks)} examples "
        f"into {args.dir}; open them with: jupyter lab {args.dir}"
    )
    return 0


def _add_docs(sub: argparse._SubParsersAction) -> None:
    from .shipped import doc_names

    p = sub.add_parser(
        "docs",
        help="print a shipped document (LIMITS, PLUGINS, DIFFERENCES, ...)",
        description="Print one of the documents that ship with the package; without NAME, "
        f"list them ({', '.join(doc_names())}).",
    )
    p.add_argument("name", metavar="NAME", nargs="?", help="the document, e.g. PLUGINS")
    p.set_defaults(func=_cmd_docs)


def _cmd_docs(args: argparse.Namespace) -> int:
    from .shipped import doc_names, doc_text, docs_dir

    if not args.name:
        print(f"documents in {docs_dir()}:")
        for name in doc_names():
            print(f"  {name}")
        return 0
    sys.stdout.write(doc_text(args.name))
    return 0
