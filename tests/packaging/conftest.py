"""The built wheel, once per test session: packaging tests install it far from the checkout."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def wheel(tmp_path_factory) -> Path:
    """The project's wheel, built from the checkout (``pip wheel --no-deps``)."""
    dist = tmp_path_factory.mktemp("dist")
    build = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(dist), str(ROOT)],
        capture_output=True,
        text=True,
        timeout=500,
    )
    if build.returncode != 0 and "Could not find a version" in build.stderr:
        pytest.skip("no package index reachable to fetch the build backend")
    assert build.returncode == 0, build.stderr[-3000:]
    (found,) = dist.glob("*.whl")
    return found
