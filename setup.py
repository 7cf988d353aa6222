"""Build hook: the top-level ``lessons/`` folder ships inside the package.

The design card keeps the lessons at the top of the repository, but an installed wheel must
list and render them too, so the build copies ``lessons/*.md`` into ``dashboard/lessons/`` of
the built package (``dashboard.ui.lessons.lessons_dir`` looks there first).  Everything else
is declared in ``pyproject.toml``.
"""

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent


class BuildWithLessons(build_py):
    """``build_py`` that also copies the lessons into the built package."""

    def run(self) -> None:
        super().run()
        target = Path(self.build_lib) / "dashboard" / "lessons"
        target.mkdir(parents=True, exist_ok=True)
        for md in sorted((HERE / "lessons").glob("*.md")):
            shutil.copyfile(md, target / md.name)


setup(cmdclass={"build_py": BuildWithLessons})
