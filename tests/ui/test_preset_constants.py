"""Lesson presets may carry algorithm constants; they are checked by the declarations."""

from __future__ import annotations

from dashboard.ui.lessons import validate_preset_basic

BASE = {"problem": "semiparametric", "algorithms": ["SBE", "LinUCB"], "horizon": 5000}


def test_valid_constants_pass():
    preset = {**BASE, "constants": {"SBE": {"c": 2.0, "n_rule": "appendix-i"}}}
    assert validate_preset_basic(preset) == []


def test_bad_constants_are_named_with_what_is_allowed():
    preset = {
        **BASE,
        "constants": {
            "SBE": {"C": 1.0},
            "LinUCB": {"lam": 1e-300},
            "BOSE": {"c": 1.0},
        },
    }
    assert validate_preset_basic(preset) == [
        "SBE has no constant 'C'; allowed: c, delta, n_rule, elimination_factor, design_tol",
        "LinUCB: lam must be in [1e-06, 1000000] (got 1e-300)",
        "'constants' names 'BOSE', which is not among the algorithms",
    ]
    assert validate_preset_basic({**BASE, "constants": [1, 2]}) == [
        "'constants' must be a mapping {algorithm: {constant: value}}"
    ]
    assert validate_preset_basic({**BASE, "constants": {"SBE": 3}}) == [
        "constants of SBE must be a mapping name -> value, got int"
    ]
