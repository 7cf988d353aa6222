"""Run-wide test settings."""

from __future__ import annotations

import pytest

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
