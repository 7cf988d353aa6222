"""Build hook: the files kept at the top of the repository ship inside the package.

The design card keeps the lessons, the classroom notebooks and the documents at the top of the
repository, but an installed wheel must have them too, so the build copies ``lessons/*.md``
into ``dashboard/lessons/``, ``notebooks/NN-*.ipynb`` into ``dashboard/notebooks/`` and
``docs/*.md`` with the plug-in examples ``docs/examples/*.py`` into ``dashboard/docs/`` of the
built package (``dashboard.ui.lessons.lessons_dir`` and :mod:`dashboard.shipped` look there
first).  Everything else is declared in ``pyproject.toml``.
"""

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent

#: (source folder, glob, folder inside the package)
SHIPPED = (
    ("lessons", "*.md", "lessons"),
    ("notebooks", "[0-9][0-9]-*.ipynb", "notebooks"),
    ("docs", "*.md", "docs"),
    ("docs/examples", "*.py", "docs/examples"),
)


class BuildWithShippedFiles(build_py):
    """``build_py`` that also copies the lessons, notebooks and documents into the package."""

    def run(self) -> None:
        super().run()
        for source, pattern, inside in SHIPPED:
            target = Path(self.build_lib) / "dashboard" / inside
            target.mkdir(parents=True, exist_ok=True)
            for path in sorted((HERE / source).glob(pattern)):
                shutil.copyfile(path, target / path.name)


setup(cmdclass={"build_py": BuildWithShippedFiles})
