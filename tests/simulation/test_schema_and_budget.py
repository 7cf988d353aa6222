"""The one problem schema and the work estimates: every surface reads the same bounds and
defaults, estimates grow with the work, and the progress bar changes no number."""

from __future__ import annotations

import io

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dashboard import cli
from dashboard.algorithms.registry import algorithm_info
from dashboard.simulation import Simulation, make_spec, simulate
from dashboard.simulation.budget import estimate_design, estimate_run
from dashboard.simulation.specs import FIELDS, CMABSpec, SemiparametricSpec, fields_for
from dashboard.ui import lessons
from dashboard.ui.model import PRESET_KEYS, Config


def test_defaults_are_the_schema_defaults_everywhere():
    assert CMABSpec().d == FIELDS["d"].default_for("cmab") == 20
    assert SemiparametricSpec().d == FIELDS["d"].default_for("semiparametric") == 5
    assert Config().d == 20 and Config(problem="semiparametric").d == 5
    parser = cli.build_parser()
    args = parser.parse_args(
        ["simulate", "--problem", "cmab", "--algorithm", "x", "--horizon", "5"]
    )
    spec = cli._spec_from_args(args)
    assert spec == CMABSpec()
    for f in fields_for(None, dashboard=True):
        assert f.name in PRESET_KEYS
        p = Config.param[f.name]
        if f.kind in ("int", "float"):
            assert tuple(p.bounds) == tuple(f.bounds_for(None)), f.name
        if f.kind == "choice":
            assert list(p.objects) == list(f.offered_choices()), f.name


def test_choices_come_from_the_algorithm_registries():
    from dashboard.algorithms.cmab.actions import FAMILIES
    from dashboard.algorithms.cmab.rewards import REWARDS
    from dashboard.algorithms.semiparametric.shifts import SHIFT_KEYS

    assert FIELDS["shift"].all_choices() == tuple(SHIFT_KEYS)
    assert FIELDS["reward"].all_choices() == tuple(REWARDS)
    assert FIELDS["actions"].all_choices() == tuple(FAMILIES)
    assert "explicit" not in Config.param["actions"].objects  # needs rows only the API passes


def test_one_set_of_bounds_for_d():
    for problem, high in (("cmab", 500), ("semiparametric", 200)):
        make_spec(problem, d=high)
        with pytest.raises(ValueError, match=f"from 1 to {high} for the {problem} problem"):
            make_spec(problem, d=high + 1)
        config = Config(problem=problem)
        config.d = high + 1 if high < 500 else high
        assert (config.errors != []) == (high < 500)
        preset = {"problem": problem, "algorithms": [Config.default_algorithms(problem)[0]]}
        assert any(
            f"from 1 to {high}" in p for p in lessons.validate_preset_basic({**preset, "d": 501})
        )


WORK = st.tuples(
    st.integers(1, 10_000_000), st.integers(1, 256), st.sampled_from(["CUCB", "AROQ-CMAB"])
)


@settings(max_examples=60, deadline=None)
@given(WORK, st.integers(1, 10), st.integers(1, 8))
def test_estimates_grow_with_horizon_runs_and_size(work, t_factor, r_factor):
    T, R, name = work
    info = [algorithm_info(name)]
    small = estimate_run(CMABSpec(d=10, m=2), info, T, R)
    more = estimate_run(CMABSpec(d=40, m=2), info, T * t_factor, min(256, R * r_factor))
    assert more.seconds >= small.seconds and more.memory >= small.memory
    assert estimate_design(2000, 200).seconds > estimate_design(10, 5).seconds


def test_per_round_algorithms_cost_more_and_oracle_delay_counts():
    spec = CMABSpec(d=20, m=3)
    cucb, aroq = algorithm_info("CUCB"), algorithm_info("AROQ-CMAB")
    assert (
        estimate_run(spec, [cucb], 10_000, 1).seconds
        > estimate_run(spec, [aroq], 10_000, 1).seconds
    )
    slow = CMABSpec(d=20, m=3, oracle_delay=0.01)
    assert estimate_run(slow, [cucb], 10_000, 1).seconds >= 100  # one call per round


def test_limit_refuses_before_building_and_can_be_lifted():
    spec = SemiparametricSpec(d=5, K=10)
    with pytest.raises(ValueError, match=r"about .* above the limit of 10 min.*max_work=None"):
        Simulation(spec, ["SP-TS"], 10_000_000, runs=256)
    with pytest.raises(ValueError, match="above the limit of 1 s"):
        Simulation(spec, ["SP-TS"], 100_000, max_work=1)
    sim = Simulation(spec, ["SP-TS"], 10_000_000, runs=256, max_work=None)  # built, not run
    assert sim.estimate.seconds > 600
    sim.close()


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_bar_only_on_a_terminal_and_same_numbers():
    spec = CMABSpec(d=8, m=2)
    expected = simulate(spec, ["AROQ-CMAB"], 4000, runs=2, seed=3).to_dict()
    with Simulation(spec, ["AROQ-CMAB"], 4000, runs=2, seed=3) as sim:
        sim.estimate = type(sim.estimate)(5.0, sim.estimate.memory, sim.estimate.what)
        tty = _Tty()
        got = cli._run_with_progress(sim, tty).to_dict()
    drawn = tty.getvalue()
    assert "100.0%" in drawn and "t = 4,000 / 4,000" in drawn and drawn.endswith("\r")
    for a, b in zip(expected["results"], got["results"], strict=True):
        assert a["final_regret_mean"] == b["final_regret_mean"]
        assert a["oracle_queries_mean"] == b["oracle_queries_mean"]
    with Simulation(spec, ["AROQ-CMAB"], 4000, runs=2, seed=3) as sim:
        plain = io.StringIO()
        cli._run_with_progress(sim, plain)
    assert plain.getvalue() == ""  # not a terminal: nothing drawn


def test_url_values_use_the_same_parsers():
    config = Config(problem="semiparametric")
    assert config.parse_setting("d", "7") == 7
    assert config.parse_setting("seed", "1e3") == 1000
    with pytest.raises(ValueError, match="seed must be an integer from 0 to"):
        config.parse_setting("seed", "9" * 400)
    with pytest.raises(ValueError, match="d must be an integer from 1 to 200 for the semi"):
        config.parse_setting("d", "300")
    with pytest.raises(ValueError, match="unknown shift"):
        config.parse_setting("shift", "tidal")
    assert config.parse_setting("speed", "fast") == "fast"  # not a schema field


def test_the_dashboard_url_reads_numbers_with_the_schema_parser():
    from dashboard.ui.urlstate import parse_query

    values, notices = parse_query("?horizon=1e4&seed=" + "9" * 400 + "&oracle_delay=5")
    assert values.get("horizon") == 10_000 and notices and "seed" in notices[0]
    assert any("oracle_delay" in n for n in notices)  # above the schema's 1 s bound


def test_batched_engines_count_in_the_estimate_conservatively():
    """Repetitions of an algorithm with a batched engine run in one numpy pass: the estimate
    counts at most 4x their sequential throughput (measured 3.6x - 28x at R = 16)."""
    spec = SemiparametricSpec(d=5, K=10)
    batched = [algorithm_info("SP-TS", "semiparametric")]
    assert batched[0].declaration.batched is not None
    one = estimate_run(spec, batched, 10_000, 1).seconds
    assert estimate_run(spec, batched, 10_000, 16).seconds == pytest.approx(16 * one / 4)
    assert estimate_run(spec, batched, 10_000, 64).seconds == pytest.approx(64 * one / 4)
    two = estimate_run(spec, batched, 10_000, 2).seconds
    assert 2 * one / 2 < two < 2 * one  # a little faster, never the full factor
    cmab = CMABSpec(d=10, m=2)
    plain = [algorithm_info("AROQ-CMAB", "cmab")]  # rare queries: no batched engine
    assert plain[0].declaration.batched is None
    single = estimate_run(cmab, plain, 10_000, 1).seconds
    assert estimate_run(cmab, plain, 10_000, 16).seconds == pytest.approx(16 * single)


def test_the_dashboard_accepts_four_batched_algorithms_x_16_runs():
    """The lesson-size run of issue 9 (4 semiparametric algorithms x 16 runs x T = 10^5) is
    within the default limit once the batched engines count (declarations, as the UI passes)."""
    from dashboard.simulation import catalogue
    from dashboard.simulation.budget import DEFAULT_MAX_WORK

    spec = SemiparametricSpec(d=20, K=30)
    names = ["SBE", "BOSE", "SP-TS", "LinUCB"]
    decls = [catalogue.declaration(n, "semiparametric") for n in names]
    infos = [algorithm_info(n, "semiparametric") for n in names]
    a = estimate_run(spec, decls, 100_000, 16).seconds
    assert a == pytest.approx(estimate_run(spec, infos, 100_000, 16).seconds)
    assert a < DEFAULT_MAX_WORK
