"""The files that ship with the package besides its code: classroom notebooks, the plug-in
examples and the documents that ``--help`` and error messages name.

In a checkout they live at the top of the repository (``notebooks/``, ``docs/``); the build
(``setup.py``) copies them into the package (``dashboard/notebooks/``, ``dashboard/docs/``), so
an installed wheel has them too.  Each reader asks here for the folder: the packaged copy when
it is there, else the checkout's.  ``bandit-dashboard notebooks DIR`` and ``bandit-dashboard
docs NAME`` (:mod:`dashboard.cli`) are how a student reaches them without a checkout.
"""

from __future__ import annotations

import shutil
from pathlib import Path

__all__ = ["NOTEBOOK_GLOB", "copy_notebooks", "doc_names", "doc_text", "docs_dir", "notebooks_dir"]

_PACKAGE = Path(__file__).resolve().parent
_CHECKOUT = _PACKAGE.parent

#: The classroom notebooks: ``NN-slug.ipynb``.
NOTEBOOK_GLOB = "[0-9][0-9]-*.ipynb"


def _folder(name: str, pattern: str) -> Path:
    packaged = _PACKAGE / name
    if packaged.is_dir() and any(packaged.glob(pattern)):
        return packaged
    return _CHECKOUT / name


def notebooks_dir() -> Path:
    """The classroom notebooks' folder (the packaged copy, else the checkout's)."""
    return _folder("notebooks", NOTEBOOK_GLOB)


def docs_dir() -> Path:
    """The documents' folder (``LIMITS.md``, ``PLUGINS.md``, ... and ``examples/``)."""
    return _folder("docs", "*.md")


def doc_names() -> list[str]:
    """The shipped documents' names without ``.md`` (``LIMITS``, ``PLUGINS``, ...)."""
    return sorted(p.stem for p in docs_dir().glob("*.md"))


def doc_text(name: str) -> str:
    """The text of the document ``name`` (any case, ``.md`` optional); ValueError naming the
    documents there are when there is none by that name."""
    wanted = name.strip().removesuffix(".md").removesuffix(".MD").upper()
    for stem in doc_names():
        if stem.upper() == wanted:
            return (docs_dir() / f"{stem}.md").read_text(encoding="utf-8")
    raise ValueError(f"no document {name!r}; the documents are: {', '.join(doc_names())}")


def copy_notebooks(target: str | Path, force: bool = False) -> list[Path]:
    """Copy the classroom notebooks, and the plug-in examples the last one builds on, into
    ``target`` (created if missing); returns the files written.

    Nothing is written if a file would be overwritten and ``force`` is false: ValueError
    naming the first such file and ``--force``.  The notebooks read everything else (lessons,
    algorithms) from the installed package, so the folder can live anywhere.
    """
    target = Path(target).expanduser()
    if target.exists() and not target.is_dir():
        raise ValueError(f"{str(target)!r} exists and is not a folder")
    sources = sorted(notebooks_dir().glob(NOTEBOOK_GLOB))
    if not sources:
        raise ValueError("this installation has no classroom notebooks (reinstall the package)")
    examples = sorted((docs_dir() / "examples").glob("*.py"))
    plan = [(s, target / s.name) for s in sources]
    plan += [(s, target / "examples" / s.name) for s in examples]
    if not force:
        for _, dest in plan:
            if dest.exists():
                raise ValueError(
                    f"{str(dest)!r} exists; nothing was copied (add --force to overwrite)"
                )
    written = []
    for src, dest in plan:
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, dest)
        written.append(dest)
    return written
