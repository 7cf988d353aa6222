"""A built wheel, installed outside the checkout, lists and renders all the lessons.

The lessons live at the top of the repository (the design card), so the build copies them into
the package (setup.py); this builds the real wheel, installs it into a fresh target folder and
imports it from a directory far from the checkout.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

_PROBE = """
import json, dashboard
from dashboard.ui.lessons import lessons_dir, load_lessons
lessons = load_lessons()
print(json.dumps({
    "module": dashboard.__file__,
    "dir": str(lessons_dir()),
    "numbers": [le.number for le in lessons],
    "titles": [le.title for le in lessons],
    "preset_keys": [sorted(le.preset) for le in lessons],
}))
"""


@pytest.mark.timeout(600)
def test_installed_wheel_lists_all_lessons(tmp_path, wheel):
    expected = sorted(p.name for p in (ROOT / "lessons").glob("[0-9][0-9]-*.md"))
    assert len(expected) >= 7
    names = zipfile.ZipFile(wheel).namelist()
    assert sorted(n.split("/")[-1] for n in names if n.startswith("dashboard/lessons/")) == expected
    site = tmp_path / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(site), wheel],
        check=True,
        timeout=300,
    )
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "DASHBOARD_LESSONS_DIR")}
    env["PYTHONPATH"] = str(site)
    out = subprocess.run(
        [sys.executable, "-c", _PROBE], cwd=elsewhere, env=env, capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr[-3000:]
    info = json.loads(out.stdout.strip().splitlines()[-1])
    assert info["module"].startswith(str(site)), "imported the checkout, not the wheel"
    assert info["dir"].startswith(str(site))
    assert info["numbers"] == list(range(1, len(expected) + 1))
    assert all(info["titles"]) and all(info["preset_keys"])
