"""A toy policy and a toy shift, defined here, are seen by the CLI, the API and the headless
dashboard model once registered (issue 8: "your own policy in one file")."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest

from dashboard import plugins
from dashboard.algorithms import registry
from dashboard.algorithms.semiparametric.shifts import SHIFTS, Shift
from dashboard.cli import main
from dashboard.plugins import AlgorithmDeclaration, ComponentDeclaration, Constant, Policy
from dashboard.simulation import catalogue
from dashboard.simulation.runner import Simulation, simulate
from dashboard.simulation.specs import make_spec
from dashboard.ui.model import CONSTANTS, Config, RunModel


class ToyFirstArm(Policy):
    """Always plays arm ``arm`` (semiparametric): regret = its gap per round."""

    declaration = AlgorithmDeclaration(
        name="Toy-first-arm",
        problem="semiparametric",
        reference="test toy",
        constants=(Constant("arm", 0, "int", low=0, high=1000, doc="the arm played", label="arm"),),
    )

    def __init__(self, arm: int = 0) -> None:
        super().__init__()
        self.arm = int(arm)

    def reset(self, env: Any, horizon: int) -> None:
        Policy.__init__(self)
        self.env = env
        if self.arm >= env.K:
            raise ValueError(f"arm must be below K = {env.K}")

    def advance(self, until: int) -> int:
        L = until - self.t
        self.env.play(np.full(L, self.arm), self.t + 1, None)
        self.cum_regret += L * self.env.regret(self.arm)
        self.t = until
        return self.t


class ToyStepShift(Shift):
    """nu_t = magnitude after round 100, 0 before."""

    declaration = ComponentDeclaration(
        "shift",
        "toy-step",
        doc="nu_t = magnitude for t > 100",
        reference="test toy",
        fields=("magnitude",),
        problem="semiparametric",
    )

    def values(self, t: np.ndarray, context: Any = None) -> np.ndarray:
        return np.where(np.asarray(t) > 100, self.magnitude, 0.0)


@pytest.fixture
def toys():
    plugins.register_algorithm(ToyFirstArm)
    plugins.register_shift(ToyStepShift)
    yield
    registry.unregister_algorithm("Toy-first-arm")
    SHIFTS.unregister("toy-step")


def _spec(shift: str = "toy-step") -> Any:
    return make_spec("semiparametric", d=3, K=5, shift=shift)


def test_the_api_runs_the_toys_with_declared_constants(toys):
    res = simulate(_spec(), ["toy-first-arm", "SBE"], horizon=500, runs=2, seed=1)
    toy = res.results[0]
    assert toy.algorithm == "Toy-first-arm" and toy.paper == "test toy"
    gaps = Simulation(_spec(), ["Toy-first-arm"], 10, seed=1).groups[0].envs[0].gaps
    assert np.allclose(toy.final_regret, 500 * gaps[0])  # the toy's regret, exactly
    res3 = simulate(_spec(), ["Toy-first-arm"], 500, seed=1, params={"Toy-first-arm": {"arm": 3}})
    assert gaps[3] > 0 and np.allclose(res3.results[0].final_regret, 500 * gaps[3])
    with pytest.raises(ValueError, match=r"arm must be in \[0, 1000\]"):
        simulate(_spec(), ["Toy-first-arm"], 50, params={"Toy-first-arm": {"arm": -1}})
    with pytest.raises(ValueError, match="has no constant 'speed'; allowed: arm"):
        simulate(_spec(), ["Toy-first-arm"], 50, params={"Toy-first-arm": {"speed": 1}})
    # the toy shift really shifts: nu_t reaches the environment
    sim = Simulation(_spec(), ["Toy-first-arm"], 200)
    sim.advance_to(200)
    t, nu = sim.groups[0].envs[0].shift_history()
    assert np.all(nu[t <= 100] == 0) and np.all(nu[t > 100] == 1.0)


def test_the_catalogue_and_the_cli_list_the_toys(toys, capsys):
    assert "Toy-first-arm" in catalogue.algorithm_names("semiparametric")
    assert "toy-step" in catalogue.component_names("shift")
    assert main(["algorithms", "--problem", "semiparametric", "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    toy = next(a for a in doc["algorithms"] if a["name"] == "Toy-first-arm")
    assert toy["reference"] == "test toy" and toy["constants"][0]["name"] == "arm"
    assert toy["constants"][0]["bounds"] == "[0, 1000]"
    assert "toy-step" in [s["name"] for s in doc["shifts"]]
    argv = ["simulate", "--problem", "semiparametric", "--d", "3", "--K", "5"]
    argv += ["--shift", "toy-step", "--horizon", "300", "--format", "json"]
    argv += ["--algorithm", "toy-first-arm", "--param", "Toy-first-arm:arm=2"]
    assert main(argv) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["results"][0]["algorithm"] == "Toy-first-arm"
    assert out["results"][0]["params"] == {"arm": 2}
    assert out["spec"]["shift"] == "toy-step"
    assert main([*argv[:-1], "Toy-first-arm:arm=9999"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: Toy-first-arm: arm must be in")


def test_the_headless_dashboard_model_offers_and_runs_the_toys(toys):
    config = Config(problem="semiparametric", shift="toy-step", algorithms=["Toy-first-arm"])
    assert "Toy-first-arm" in config.algorithm_options
    assert "toy-step" in Config.param.shift.objects
    assert [c.name for c in CONSTANTS["Toy-first-arm"]] == ["arm"]
    config.set_constant("Toy-first-arm", "arm", 4)
    assert config.valid, config.errors
    config.set_constant("Toy-first-arm", "arm", 5000)
    assert config.errors == ["Toy-first-arm: arm must be in [0, 1000] (got 5000)."]
    config.set_constant("Toy-first-arm", "arm", 4)
    config.horizon, config.runs = 300, 1
    model = RunModel(config)
    model.run()
    while model.status == "running":
        model.tick()
    assert model.status == "done", model.error
    assert model.result.results[0].algorithm == "Toy-first-arm"


def test_unregistered_toys_disappear_everywhere():
    assert "Toy-first-arm" not in catalogue.algorithm_names()
    assert "toy-step" not in Config().param.shift.objects
    with pytest.raises(ValueError, match="unknown shift 'toy-step'"):
        _spec()


def test_a_plugin_cannot_take_a_registered_name_or_break_the_contract(toys):
    class Clash(ToyFirstArm):
        declaration = AlgorithmDeclaration("cucb", "cmab", "x", rewards=("linear",))

    with pytest.raises(ValueError, match="an algorithm named 'CUCB' is already registered"):
        plugins.register_algorithm(Clash)

    class Inherits(ToyFirstArm):  # no declaration of its own
        pass

    with pytest.raises(ValueError, match="has no declaration of its own"):
        plugins.register_algorithm(Inherits)

    class NoAdvance(Policy):
        declaration = AlgorithmDeclaration("No-advance", "semiparametric", "x")

        def reset(self, env: Any, horizon: int) -> None:
            pass

    with pytest.raises(ValueError, match="does not implement advance"):
        plugins.register_algorithm(NoAdvance)

    class WrongDefault(ToyFirstArm):
        declaration = AlgorithmDeclaration(
            "Wrong-default", "semiparametric", "x", constants=(Constant("arm", 1, "int"),)
        )

    with pytest.raises(ValueError, match=r"declares arm=1 but __init__ has arm=0"):
        plugins.register_algorithm(WrongDefault)

    with pytest.raises(ValueError, match=r"not a subclass of dashboard\.algorithms\.base\.Policy"):
        plugins.register_algorithm(dict)
    with pytest.raises(ValueError, match="a shift named 'sine' is already registered"):

        class Sine2(ToyStepShift):
            declaration = ComponentDeclaration("shift", "sine", "x", problem="semiparametric")

        plugins.register_shift(Sine2)


def test_no_code_named_by_a_user_is_imported():
    """A served dashboard only looks names up: a path or module name in the algorithm list, a
    preset or a shift is an unknown name, never an import."""
    import sys

    before = set(sys.modules)
    names_before = set(catalogue.algorithm_names())
    with pytest.raises(ValueError, match=r"unknown algorithm 'docs/examples/random_mset\.py'"):
        Config(algorithms=["docs/examples/random_mset.py", "os:system", "json"])
    config = Config()
    with pytest.raises(ValueError):
        config.apply_preset({"problem": "semiparametric", "shift": "docs/examples/x.py"})
    new = {m for m in set(sys.modules) - before if "plugin" in m or "random_mset" in m}
    assert new == set()
    assert set(catalogue.algorithm_names()) == names_before  # nothing was registered


class ToyWithSwitch(ToyFirstArm):
    declaration = AlgorithmDeclaration(
        name="Toy-switch",
        problem="semiparametric",
        reference="test toy",
        constants=(
            Constant("arm", 0, "int", low=0, high=1000, doc="the arm played"),
            Constant("loud", False, "bool", doc="a switch", label="loud: switch"),
        ),
    )

    def __init__(self, arm: int = 0, loud: bool = False) -> None:
        super().__init__(arm)
        self.loud = loud


def test_the_dashboard_card_shows_a_plugin_switch_as_a_checkbox():
    import panel as pn

    from dashboard.ui.app import DashboardApp

    plugins.register_algorithm(ToyWithSwitch)
    try:
        app = DashboardApp(autostart_timer=False, frame_seconds=0.02)
        app.config.param.update(problem="semiparametric", algorithms=["Toy-switch"])
        app.constants.rebuild()
        widget = app.constants.widgets[("Toy-switch", "loud")]
        assert isinstance(widget, pn.widgets.Checkbox) and widget.value is False
        widget.value = True
        assert app.config.constants == {"Toy-switch": {"loud": True}} and app.config.valid
    finally:
        registry.unregister_algorithm("Toy-switch")


def test_a_plugin_registered_while_the_dashboard_is_shown_joins_its_picker():
    """The picker's options are ``Config.algorithms``' objects: registering (or removing) a
    plug-in updates them at once; a removed plug-in that was chosen gives way to the
    problem's default comparison, so Run never starts with an unregistered name."""
    from dashboard.ui.app import DashboardApp

    app = DashboardApp(autostart_timer=False, frame_seconds=0.02)
    app.config.problem = "semiparametric"
    picker = app.algorithm_select
    assert "Toy-first-arm" not in picker.options
    plugins.register_algorithm(ToyFirstArm)
    try:
        assert "Toy-first-arm" in picker.options
        assert list(picker.options) == app.config.algorithm_options
        picker.value = ["Toy-first-arm", "SBE"]
        assert app.config.algorithms == ["Toy-first-arm", "SBE"] and app.config.valid
    finally:
        registry.unregister_algorithm("Toy-first-arm")
    assert "Toy-first-arm" not in picker.options
    assert app.config.algorithms == ["SBE"] == picker.value and app.config.valid
    app.dispose()
