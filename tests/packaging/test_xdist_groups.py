"""`make test`'s worker split holds: the real-browser tests run on one xdist worker, and a
split that would spread them stops with a clear message (tests/conftest.py).

Each case runs pytest with `-n 2 --dist loadgroup`, as `make test` does, on a small copy of
the layout (the repository's own `tests/conftest.py`, a `tests/browser` module of marked tests
and a module of other tests) in a temporary folder.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
#: ``make test``'s worker split, on two workers
LOADGROUP = ("-n", "2", "--dist", "loadgroup")

_OTHER = """
import time
import pytest

@pytest.mark.parametrize("i", range(8))
def test_other(i):
    time.sleep(0.05)
"""

_BROWSER = """
import time
import pytest

{mark}

@pytest.mark.parametrize("i", range(6))
def test_in_browser(i):
    time.sleep(0.05)
"""


def _run(tmp_path: Path, mark: str, *args: str) -> subprocess.CompletedProcess:
    tests = tmp_path / "tests"
    (tests / "browser").mkdir(parents=True)
    shutil.copy(ROOT / "tests" / "conftest.py", tests / "conftest.py")
    (tests / "test_other.py").write_text(_OTHER)
    (tests / "browser" / "test_page.py").write_text(_BROWSER.format(mark=mark))
    (tmp_path / "pytest.ini").write_text("[pytest]\nmarkers =\n    browser: real browser\n")
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-v", "-p", "no:cacheprovider", *args],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=240,
    )


def test_the_browser_tests_run_on_one_worker_and_the_others_on_both(tmp_path):
    done = _run(tmp_path, "pytestmark = pytest.mark.browser", *LOADGROUP)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    ran = re.findall(r"\[(gw\d)\] \[\s*\d+%\] PASSED (\S+)", done.stdout)
    browser = {worker for worker, test in ran if test.startswith("tests/browser/")}
    other = {worker for worker, test in ran if not test.startswith("tests/browser/")}
    assert len(ran) == 14
    assert len(browser) == 1, ran  # one worker, one test after the other
    assert all(test.endswith("@browser") for _, test in ran if test.startswith("tests/browser/"))
    assert other == {"gw0", "gw1"}, ran  # the rest is dealt out over both workers


@pytest.mark.parametrize("mark", ["", "pytestmark = pytest.mark.slow"])
def test_browser_tests_that_would_be_spread_stop_the_run_with_a_clear_message(tmp_path, mark):
    # tests/browser tests without the `browser` mark get no group: what a pytest whose node
    # ids ignore xdist's group suffix does to the marked ones (pytest-xdist issue 1386)
    done = _run(tmp_path, mark, *LOADGROUP)
    out = done.stdout + done.stderr
    assert done.returncode == 4, out[-3000:]
    assert "does not group tests" in out and "pytest<9.2" in out
    assert "tests/browser/test_page.py::test_in_browser" in out
    assert "Traceback" not in out and "PASSED" not in out  # nothing ran


def test_the_tests_run_without_xdist_too(tmp_path):
    # the conftest's xdist hook is optional: one process, no plugin, no error
    done = _run(tmp_path, "pytestmark = pytest.mark.browser", "-p", "no:xdist")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "14 passed" in done.stdout and "[gw" not in done.stdout  # no xdist worker ran
