"""Plot builders: element types, labelled axes, consistent colours, bounded data, robustness to
empty and partial results, and the quantities drawn (rate shape, surviving arms, DEO weights,
PAC values)."""

from __future__ import annotations

import holoviews as hv
import numpy as np
import pytest

from dashboard.algorithms.base import ExpensiveLog
from dashboard.simulation import Simulation, simulate
from dashboard.simulation.specs import make_spec
from dashboard.ui import plots

RENDERER = hv.renderer("bokeh")


@pytest.fixture(scope="module")
def cmab_result():
    spec = make_spec("cmab", d=8, m=2)
    return simulate(spec, ["CUCB", "AROQ-CMAB", "SROQ-CMAB"], 4000, runs=3, seed=2)


@pytest.fixture(scope="module")
def sp_sim():
    spec = make_spec("semiparametric", d=3, K=6, shift="sine")
    sim = Simulation(spec, ["SBE", "LinUCB"], 4000, runs=2, seed=5)
    sim.advance_to(4000)
    return sim


def style(element, key):
    return hv.Store.lookup_options("bokeh", element, "style").kwargs.get(key)


def legend_text(item) -> str:
    """A Bokeh LegendItem's text, which must be a ``value(...)`` spec: Bokeh reads a plain
    string as a column name ("Bad column name on label" in the browser console)."""
    label = item.label
    assert not isinstance(label, str), f"legend label {label!r} is a column name"
    return label["value"] if isinstance(label, dict) else label.value


def figure(element):
    return RENDERER.get_plot(element).state


def test_regret_plot_types_labels_colours_and_rate(cmab_result):
    names = [r.algorithm for r in cmab_result.results]
    el = plots.regret_plot(cmab_result)
    assert isinstance(el, hv.Overlay)
    layers = list(el)
    # per algorithm: band area, mean curve, run traces (empty unless band="runs"); then rate
    assert [type(x) for x in layers] == [hv.Area, hv.Curve, hv.Curve] * 3 + [hv.Curve]
    colors = plots.algorithm_colors(names)
    assert len(set(colors.values())) == 3
    for k, name in enumerate(names):
        band, curve, traces = layers[3 * k : 3 * k + 3]
        assert len(traces) == 0
        assert curve.label == name and style(curve, "color") == colors[name]
        np.testing.assert_allclose(
            curve.dimension_values("regret"), cmab_result[name].regret.mean(axis=0)
        )
        assert len(band) <= plots.BAND_POINTS + 1  # band data kept short
    rate = layers[-1]
    assert rate.label.startswith("rate shape")
    finals = [cmab_result[n].regret.mean(axis=0)[-1] for n in names]
    assert rate.dimension_values("regret")[-1] == pytest.approx(np.median(finals))
    fig = figure(el)
    assert fig.xaxis[0].axis_label == "round t"
    assert fig.yaxis[0].axis_label == "cumulative regret"
    log = plots.regret_plot(cmab_result, log_axes=True)
    assert log.get(1).kdims[0].name == "t_log"
    assert figure(log).x_scale.__class__.__name__ == "LogScale"


def test_colours_are_consistent_across_plots(cmab_result):
    regret = plots.regret_plot(cmab_result)
    timeline = plots.oracle_timeline(cmab_result)
    complexity = plots.complexity_plot(cmab_result)
    for name in ("CUCB", "AROQ-CMAB", "SROQ-CMAB"):
        c = [style(x, "color") for x in regret if x.label == name]
        c += [style(x, "color") for x in timeline if x.label == name]
        c += [style(x, "color") for x in complexity if x.label.startswith(name + " ")]
        assert len(set(c)) == 1, (name, c)
    # the same name gets the same colour in any comparison
    assert plots.algorithm_colors(["SROQ-CMAB"]) == {
        "SROQ-CMAB": plots.algorithm_colors(["CUCB", "SROQ-CMAB"])["SROQ-CMAB"]
    }


def test_timeline_complexity_and_wall_time(cmab_result):
    timeline = plots.oracle_timeline(cmab_result)
    kinds = [type(x) for x in timeline]
    assert kinds == [hv.Rectangles, hv.Segments] * 3
    # CUCB calls the oracle every round: drawn as one band over its range, no ticks
    cucb_band, cucb_ticks = timeline.get(0), timeline.get(1)
    assert len(cucb_band) == 1 and len(cucb_ticks) == 0
    assert cucb_band.dimension_values("calls")[0] == 4000
    # AROQ ticks: one per adaptivity round, carrying the number of calls
    aroq = timeline.get(3)
    log = cmab_result["AROQ-CMAB"].logs[0]
    assert aroq.dimension_values("calls").sum() == log.queries
    assert len(aroq) == log.adaptivity
    assert figure(timeline).xaxis[0].axis_label == "round t"

    complexity = plots.complexity_plot(cmab_result)
    labels = [x.label for x in complexity]
    assert labels[-2:] == ["T (one call per round)", "d log log T"]
    # compact legend: the algorithms (in their colours), the line-style key, the references
    legend = figure(complexity).legend[0].items
    names = ["CUCB", "AROQ-CMAB", "SROQ-CMAB"]
    texts = [legend_text(i) for i in legend]
    assert texts == [*names, "solid: queries", "dashed: adaptivity", *labels[-2:]]
    colors = plots.algorithm_colors(names)
    for item, name in zip(legend, names):
        glyph = item.renderers[0].glyph
        assert glyph.line_color == colors[name] and glyph.line_dash == []  # solid = queries
    dashes = [complexity.get(2 * k + 1) for k in range(3)]
    assert all(style(x, "line_dash") == "dashed" for x in dashes)
    queries = complexity.get(0).dimension_values("calls")
    np.testing.assert_allclose(queries, cmab_result["CUCB"].queries.mean(axis=0))
    assert "cumulative oracle calls" in figure(complexity).yaxis[0].axis_label

    wall = plots.wall_time_plot(cmab_result)
    assert [type(x) for x in wall] == [hv.Rectangles, hv.Rectangles]
    assert [x.label for x in wall] == ["oracle calls", "rest of the simulation"]
    assert wall.get(0).vdims[0].label == "wall time (s)"
    assert wall.get(0).kdims[0].label.startswith("wall time (s)")
    inside, rest = plots.wall_time_frames(cmab_result)
    for k, name in enumerate(["CUCB", "AROQ-CMAB", "SROQ-CMAB"]):
        assert inside["row"][k] + 0.35 == pytest.approx(2 - k)  # first algorithm on top
        r = cmab_result[name]
        # the two stacked parts add up to the algorithm's wall time, the first is the oracle's
        assert rest["s1"][k] == pytest.approx(r.wall_seconds.sum())
        assert inside["s1"][k] == pytest.approx(min(r.oracle_seconds.sum(), r.wall_seconds.sum()))
        assert rest["s0"][k] == inside["s1"][k]
    wall_fig = figure(wall)
    assert dict(wall_fig.yaxis[0].major_label_overrides) == {
        2: "CUCB",
        1: "AROQ-CMAB",
        0: "SROQ-CMAB",
    }


def test_timeline_is_downsampled_for_a_long_cucb_run():
    res = simulate(make_spec("cmab", d=5, m=2), ["CUCB"], 100_000, runs=1, seed=0)
    frames = plots.timeline_frames(res, max_ticks=1500)
    assert sum(len(next(iter(f.values()))) for f in frames) <= 10
    # a log of 10^5 individually recorded calls is binned to at most max_ticks ticks
    log = ExpensiveLog()
    t = np.arange(1, 100_001)
    log.record_many(t, t, "argmax")
    fake = type(res)(
        spec=res.spec, horizon=100_000, runs=1, seed=0, t=100_000, results=[res["CUCB"]]
    )
    fake.results[0] = type(res["CUCB"])(**{**res["CUCB"].__dict__, "logs": [log]})
    ticks = plots.timeline_frames(fake, max_ticks=1500)[1]
    assert 0 < len(ticks["t"]) <= 1500
    assert ticks["calls"].sum() == 100_000


def test_surviving_arms_raster_marks_optimal_action(cmab_result):
    raster = plots.surviving_plot(cmab_result)
    assert [x.label for x in raster] == list(plots._STATES)  # one layer (legend entry) per state
    assert raster.get(0).kdims[1].label == "arm"
    events = [e for e in cmab_result["SROQ-CMAB"].events[0] if e.kind == "epoch"]
    assert events, "SROQ records epoch events"
    optimal = set(cmab_result.instance["optimal_action"])  # arm indices of the best action
    assert len(optimal) == 2
    last = events[-1]
    label = int(last.data["epoch"])
    frames = plots.surviving_frames(cmab_result)
    state = {}
    for s, frame in enumerate(frames):
        for x, arm in zip(frame["epoch"] + 0.5, frame["arm"] + 0.5):
            if x == label:
                state[int(arm)] = s
    assert sorted(state) == list(range(8))  # every arm has exactly one cell per epoch
    alive = set(np.asarray(last.data["surviving"]).tolist())
    for arm, s in state.items():
        assert (s in (1, 2)) == (arm in alive)
        assert (s in (2, 3)) == (arm in optimal)
    assert plots.surviving_title(cmab_result).endswith(f": {len(alive)} left")
    # the legend is a key of every state, even those without cells (no arm eliminated yet)
    empty = plots.surviving_frames(None)
    assert all(np.isnan(f["arm"]).all() and len(f["arm"]) == 1 for f in empty)
    legend = figure(plots.surviving_plot(None)).legend[0].items
    assert [legend_text(i) for i in legend] == list(plots._STATES)
    figure(raster)


def test_semiparametric_plots(sp_sim):
    res = sp_sim.result()
    weights = plots.design_weights_plot(res)
    assert [x.label for x in weights] == ["best arm", "anchor x_1", "other arms"]
    phases = [e for e in res["SBE"].events[0] if e.kind == "phase"]
    frames = plots.design_weights_frames(res)
    arms = np.concatenate([f["arm_id"] for f in frames])
    w = np.concatenate([f["y1"] for f in frames])
    w = w[np.isfinite(arms)][np.argsort(arms[np.isfinite(arms)])]  # NaN: legend stub
    np.testing.assert_allclose(w, phases[-1].data["weights"])
    assert w.sum() == pytest.approx(1.0)
    assert list(frames[0]["arm_id"]) == [res.instance["best_arm"]]
    title = hv.Store.lookup_options("bokeh", weights, "plot").kwargs["title"]
    assert "2√d" in title and f"phase {phases[-1].data['phase']}" in title
    assert title == plots.design_weights_title(res)

    X, theta = (np.asarray(sp_sim.built[0].X), np.asarray(sp_sim.built[0].theta))
    pac = plots.pac_plot(res, X, theta)
    sbe_points = pac.get(0)
    assert isinstance(sbe_points, hv.Scatter) and sbe_points.label == "SBE"
    e = phases[0]
    anchor = int(e.data.get("anchor", 0))
    expected = np.sqrt(e.t) * np.abs((X - X[anchor]) @ (e.data["theta_hat"] - theta)).max()
    assert sbe_points.dimension_values("pac")[0] == pytest.approx(expected)
    # phase-based algorithms and those with estimates are drawn (LinUCB has none)
    assert [x.label for x in pac] == ["SBE", "10 √(d log K)"]
    legend = [legend_text(item) for item in figure(pac).legend[0].items]
    assert legend == ["SBE", "10 √(d log K)"]
    # the same layers before any phase ended: a streaming run patches them, never re-renders
    names = [r.algorithm for r in res.results]
    before = plots.pac_plot(None, X, theta, names)
    assert [x.label for x in before] == ["SBE", "10 √(d log K)"]
    assert len(before.get(0).dimension_values("pac")) == 0

    env = sp_sim.groups[0].envs[0]
    t = np.arange(3981, 4001)
    shift = plots.shift_plot(t, env.shift_values(t))
    assert shift.kdims[0].label.startswith("round t") and shift.vdims[0].label == "shift ν_t"
    np.testing.assert_allclose(shift.dimension_values("nu"), np.sin(2 * t) + 1, atol=1e-9)
    complexity = plots.complexity_plot(res)
    assert "expensive computations" in complexity.get(0).vdims[0].label
    for el in (weights, pac, shift, complexity, plots.surviving_plot(res)):
        figure(el)


@pytest.mark.parametrize("stage", ["none", "empty", "partial"])
def test_builders_cope_with_empty_and_partial_results(stage):
    names = ["SBE", "BOSE"]
    spec = make_spec("semiparametric", d=3, K=5)
    result = None
    if stage != "none":
        with Simulation(spec, names, 2000, runs=2, seed=0) as sim:
            if stage == "partial":
                sim.advance_to(37)
            result = sim.result()
    builders = [
        plots.regret_plot(result, names),
        plots.regret_plot(result, names, log_axes=True),
        plots.oracle_timeline(result, names),
        plots.complexity_plot(result, names),
        plots.surviving_plot(result),
        plots.design_weights_plot(result),
        plots.pac_plot(result, None, None, names),
        plots.wall_time_plot(result, names),
        plots.shift_plot(np.zeros(0), np.zeros(0)),
    ]
    for el in builders:
        figure(el)  # renders without error
    # the layer structure does not depend on how much has been simulated (streaming)
    assert len(plots.regret_frames(result, names)) == 3 * len(names) + 1
    assert len(plots.regret_frames(result, names, band="runs")) == 3 * len(names) + 1
    assert len(plots.timeline_frames(result, names)) == 2 * len(names)
    assert len(plots.complexity_frames(result, names)) == 2 * len(names) + 4
    assert len(plots.complexity_plot(result, names)) == 2 * len(names) + 4
    if stage == "partial":
        frames = plots.regret_frames(result, names)
        recorded = result.results[0].times
        assert 0 < recorded[-1] <= 37 and frames[1]["t"][-1] == recorded[-1]
