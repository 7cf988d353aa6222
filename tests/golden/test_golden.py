"""Numbers are pinned: every algorithm's CLI output for a fixed seed equals the recording made
before the redesign and the speed work (wall times, every field ending in "seconds", excluded),
regret curves included.  The echoed ``spec`` may gain new fields, never change recorded ones."""

from __future__ import annotations

import json

import pytest

from .cases import CASES, DESIGN_CASES
from .record import STORE, run_case


@pytest.mark.parametrize("name", [*CASES, *DESIGN_CASES])
def test_cli_output_is_pinned(name):
    expected = json.loads((STORE / f"{name}.json").read_text())
    got = json.loads(json.dumps(run_case(name), sort_keys=True))
    exp_json, got_json = dict(expected["json"]), dict(got["json"])
    exp_spec, got_spec = exp_json.pop("spec", {}), got_json.pop("spec", {})
    assert got_json == exp_json
    assert {k: got_spec.get(k) for k in exp_spec} == exp_spec
    if "csv" in expected:
        assert got["csv"] == expected["csv"], f"{name}: regret curves changed"
