"""Installed plug-ins: the ``bandit_dashboard.algorithms`` entry-point group is read by the
catalogue on first use; a broken entry point is skipped with one warning."""

from __future__ import annotations

import importlib.metadata as metadata

import pytest

from dashboard import plugins
from dashboard.algorithms import registry
from dashboard.algorithms.semiparametric.shifts import SHIFTS
from dashboard.simulation import catalogue

MODULE = """
import numpy as np
from dashboard.algorithms.semiparametric.shifts import Shift
from dashboard.plugins import AlgorithmDeclaration, ComponentDeclaration, Policy


class Installed(Policy):
    declaration = AlgorithmDeclaration("Installed-toy", "semiparametric", "entry point toy")

    def reset(self, env, horizon):
        Policy.__init__(self)

    def advance(self, until):
        self.t = until
        return until


class InstalledShift(Shift):
    declaration = ComponentDeclaration(
        "shift", "installed", "nu_t = 0", problem="semiparametric"
    )

    def values(self, t, context=None):
        return np.zeros(np.shape(t))
"""


@pytest.fixture
def installed(tmp_path, monkeypatch):
    (tmp_path / "installed_toy_pkg.py").write_text(MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    group = plugins.ENTRY_POINT_GROUP
    points = [
        metadata.EntryPoint("toy", "installed_toy_pkg:Installed", group),
        metadata.EntryPoint("toy-module", "installed_toy_pkg", group),  # a whole module
        metadata.EntryPoint("broken", "no_such_installed_pkg:Thing", group),
    ]
    seen = []

    def entry_points(group: str):
        seen.append(group)
        return [p for p in points if p.group == group]

    monkeypatch.setattr(metadata, "entry_points", entry_points)
    monkeypatch.setattr(plugins, "_loaded_entry_points", False)
    yield seen
    registry.unregister_algorithm("Installed-toy")
    SHIFTS.unregister("installed")


def test_entry_points_are_read_once_on_first_use(installed):
    with pytest.warns(UserWarning, match="skipped plug-in entry point 'broken'"):
        names = catalogue.algorithm_names("semiparametric")
    assert "Installed-toy" in names and "installed" in catalogue.component_names("shift")
    assert installed == [plugins.ENTRY_POINT_GROUP]
    catalogue.algorithm_names()
    assert installed == [plugins.ENTRY_POINT_GROUP]  # once per process
