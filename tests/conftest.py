"""Run-wide test settings."""

from __future__ import annotations

import pytest


@pytest.hookimpl(tryfirst=True)  # before xdist reads the groups
def pytest_collection_modifyitems(config, items):
    """Under pytest-xdist (``make test`` runs ``-n auto --dist loadgroup``), every real-browser
    test goes to one worker, one after the other, as without xdist."""
    for item in items:
        if item.get_closest_marker("browser") is not None:
            item.add_marker(pytest.mark.xdist_group("browser"))
