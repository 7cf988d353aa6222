"""Run-wide test settings."""

from __future__ import annotations

import importlib.util
import os
import platform
import sys
from pathlib import Path
from types import ModuleType

import pytest


def load_benchmark(stem: str, name: str | None = None) -> ModuleType:
    """``benchmarks/<stem>.py`` as a module, loaded once per process and registered as
    ``name`` (default ``stem``; dataclasses and pickling look their module up by name): the
    benchmarks' smoke tests and the former-engine comparisons import them this way."""
    name = name or stem
    if name not in sys.modules:
        path = Path(__file__).resolve().parents[1] / "benchmarks" / f"{stem}.py"
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


def cpu_flags() -> set[str]:
    """The CPU's feature flags (``avx2``, ``avx512f``, ...) from ``/proc/cpuinfo``; empty
    where there is none (not Linux)."""
    try:
        text = Path("/proc/cpuinfo").read_text(errors="replace")
    except OSError:
        return set()
    return {
        flag
        for line in text.splitlines()
        if line.startswith("flags")
        for flag in line.split(":", 1)[-1].split()
    }


def _pin_openblas_kernel() -> str | None:
    """Run numpy's OpenBLAS with its AVX2 ("Haswell") kernels on any x86-64 CPU that has AVX2.

    OpenBLAS picks its kernels by CPU at load time (``DYNAMIC_ARCH``), and an AVX-512 kernel
    rounds a matrix product differently in the last bit: the golden SBE and design cases then
    differ in their last one or two digits (a design weight, a mean regret).  It once changed
    more: the G-optimal design's start broke an exact tie by rounding, so G-elimination took
    another design (now ties go by index: ``goptimal._initial_design``).  The golden numbers
    are bit-exact records made with the AVX2 kernels, so the tests pin them
    (``OPENBLAS_CORETYPE``, read when numpy loads OpenBLAS: this module is imported before
    numpy, by pytest and by each xdist worker; subprocesses inherit it).  A value set by the
    caller is kept.  Returns the value set, or None (not x86-64, no AVX2, or no
    ``/proc/cpuinfo``)."""
    if platform.machine().lower() not in ("x86_64", "amd64") or "avx2" not in cpu_flags():
        return None
    return os.environ.setdefault("OPENBLAS_CORETYPE", "Haswell")


OPENBLAS_CORETYPE = _pin_openblas_kernel()

#: The xdist group of the real-browser tests (``make test``: ``-n auto --dist loadgroup``).
BROWSER_GROUP = "browser"
#: Where the real-browser tests live (each of their modules is marked ``browser``).
BROWSER_TESTS = "tests/browser/"


@pytest.hookimpl(tryfirst=True)  # before xdist reads the groups
def pytest_collection_modifyitems(config, items):
    """Under pytest-xdist (``make test`` runs ``-n auto --dist loadgroup``), every real-browser
    test goes to one worker, one after the other, as without xdist."""
    for item in items:
        if item.get_closest_marker("browser") is not None:
            item.add_marker(pytest.mark.xdist_group(BROWSER_GROUP))


@pytest.hookimpl(optionalhook=True)  # an xdist hook: pytest runs without xdist too
def pytest_xdist_node_collection_finished(node, ids):
    """Stop, with a clear message, when xdist would spread the browser tests over workers.

    ``loadgroup`` sends a group to one worker by a suffix it appends to the tests' ids; pytest
    9.2 ignores that change (pytest-xdist issue 1386) and the group is then silently dealt out
    like other tests: two served dashboards of one module wrote one log file and a CI run
    failed on the garbled log.  Hence the pin ``pytest<9.2`` in pyproject.toml, and this check
    (on xdist's controller), which makes the failure a clear one if the pin is lifted before
    xdist is fixed."""
    if node.config.getvalue("dist") != "loadgroup":
        return
    suffix = "@" + BROWSER_GROUP
    lost = [i for i in ids if i.startswith(BROWSER_TESTS) and not i.endswith(suffix)]
    if lost:
        pytest.exit(
            f"pytest-xdist's --dist loadgroup does not group tests with pytest "
            f"{pytest.__version__} (pytest-xdist issue 1386): {len(lost)} browser tests, e.g. "
            f"{lost[0]}, would be spread over workers. Install pytest<9.2 (as pyproject.toml's "
            f"test extras pin it) or run the browser tests without -n.",
            returncode=4,
        )
