"""Every number a lesson states comes from a computation these tests repeat.

One test per lesson.  Each recomputes the lesson's figures through the public API
(:func:`dashboard.simulation.runner.simulate` / :class:`~dashboard.simulation.runner.Simulation`
with :func:`~dashboard.simulation.specs.make_spec`, or the algorithms' own functions), formats
them as the lesson writes them and asserts that the formatted text occurs in the lesson file.
So a quoted figure must both *be in the lesson* and *equal the recomputation* (to the digits
shown): when code and lesson drift apart, this file fails and names the sentence.

Runs use the lesson's preset (seed, horizon, runs) except ``oracle_delay``, which only adds
sleeping time (queries, adaptivity and regret do not depend on it), so it is set to 0.
The whole file takes well under a minute.
"""

from __future__ import annotations

import itertools
import math
from pathlib import Path

import numpy as np
import pytest

from dashboard.algorithms.cmab.policies.aroq import AROQ, AlphaAROQ
from dashboard.algorithms.cmab.policies.sroq import default_num_epochs, sroq_time_grid
from dashboard.algorithms.semiparametric.design import (
    deo_design,
    design_report,
    g_optimal_design,
)
from dashboard.algorithms.semiparametric.policies.sbe import phase_length
from dashboard.algorithms.semiparametric.shifts import ShiftContext, make_shift
from dashboard.simulation.runner import Simulation
from dashboard.simulation.specs import make_spec
from dashboard.ui.lessons import load_lesson

ROOT = Path(__file__).resolve().parents[2]


def lesson_text(number: int) -> str:
    (path,) = (ROOT / "lessons").glob(f"{number:02d}-*.md")
    return path.read_text(encoding="utf-8")


def assert_quoted(text: str, *quotes: str) -> None:
    """Each ``quote`` (built from recomputed numbers) occurs verbatim in the lesson."""
    missing = [q for q in quotes if q not in text]
    assert not missing, "lesson text does not match the recomputation:\n" + "\n".join(missing)


def tex_int(n: int) -> str:
    """An integer as the lessons write it in math: thin space every three digits from 10^4."""
    s = f"{int(n):d}"
    if len(s) <= 4:
        return s
    parts = []
    while s:
        parts.insert(0, s[-3:])
        s = s[:-3]
    return "\\,".join(parts)


def run_preset(number: int, *, algorithms=None, horizon=None, checkpoints=(), name="", **overrides):
    """Run lesson ``number``'s preset (``name``: one of its named presets; optionally other
    algorithms / horizon / settings).

    Returns ``(result, at)`` where ``at[c][name]`` is the cumulative regret of every run of
    algorithm ``name`` at round ``c`` for each checkpoint ``c``.
    """
    preset = dict(load_lesson(number).presets[name])
    problem = preset.pop("problem")
    algs = algorithms or preset.pop("algorithms")
    preset.pop("algorithms", None)
    T = horizon or preset.pop("horizon")
    preset.pop("horizon", None)
    runs, seed = preset.pop("runs"), preset.pop("seed")
    preset.update(overrides)
    if problem == "cmab":
        preset["oracle_delay"] = 0.0
    spec = make_spec(problem, **preset)
    at: dict[int, dict[str, np.ndarray]] = {}
    with Simulation(spec, algs, T, runs, seed) as sim:
        for c in checkpoints:
            sim.advance_to(c)
            at[c] = {g.info.name: g.cum_regret() for g in sim.groups}
        sim.advance_to(T)
        return sim.result(), at


def by_name(result):
    return {r.algorithm: r for r in result.results}


def fmt(x: float, digits: int = 1) -> str:
    return f"{x:.{digits}f}"


# ---------------------------------------------------------------------------------- lesson 1
def test_lesson_01_oracle_calls():
    text = lesson_text(1)
    # log2 log2 (Tm/d) at T = 10^6, m = 3, d = 20, and the natural-log value it replaces
    M = 1e6 * 3 / 20
    assert_quoted(
        text,
        f"\\log_2\\log_2(1.5 \\times 10^{{5}}) \\approx {math.log2(math.log2(M)):.1f}",
        f"\\ln\\ln(1.5 \\times 10^5) \\approx {math.log(math.log(M)):.1f}",
        f"$\\log_2\\log_2 10^4 \\approx {math.log2(math.log2(1e4)):.1f}$",
        f"$M = \\lceil \\log_2\\log_2 T \\rceil = {default_num_epochs(10**4)}$ epochs",
    )
    res = by_name(run_preset(1)[0])
    cucb, aroq, sroq = res["CUCB"], res["AROQ-CMAB"], res["SROQ-CMAB"]
    assert list(cucb.queries[:, -1]) == [10_000, 10_000]
    assert list(cucb.adaptivity[:, -1]) == [10_000, 10_000]
    # Answer 3: SROQ-CMAB, 4 epochs of 21 queries, one adaptivity round each
    assert list(sroq.queries[:, -1]) == [84, 84] and list(sroq.adaptivity[:, -1]) == [4, 4]
    assert_quoted(text, "both runs make exactly 84 queries in 4 adaptivity rounds")
    # Answer 2: final regrets (means over the two runs) and their ratio
    c, a, s = (float(np.mean(r.final_regret)) for r in (cucb, aroq, sroq))
    assert_quoted(
        text,
        f"CUCB ends near ${c:.0f}$ (mean of the two runs) and AROQ-CMAB near ${a:.0f}$, "
        f"a factor of about ${a / c:.1f}$",
        f"SROQ-CMAB's regret is higher still, about ${s:.0f}$",
    )
    # Answer 4: AROQ-CMAB's calls and its simulated solver time at 0.2 ms per call
    q = [int(x) for x in aroq.queries[:, -1]]
    assert_quoted(
        text,
        f"AROQ-CMAB makes {q[0]} and {q[1]} calls in the two runs here",
        f"${q[0]} \\times 0.2\\text{{ ms}} \\approx {q[0] * 0.2:.0f}$ ms",
    )
    assert q[0] * 0.2 < 10  # "under 10 ms"


# ---------------------------------------------------------------------------------- lesson 2
def minimal_epochs(T: int, m: int = 3, d: int = 20) -> list[int]:
    """Minimal epoch lengths ``x_tau = ceil(1 + sqrt((Tm/d) x_{tau-1}))``, ``x_0 = 0``, of an
    arm played in every round, until they fill the horizon (the last one may be unfinished)."""
    M, x, lengths = T * m / d, 0, []
    while sum(lengths) < T:
        x = math.ceil(1 + math.sqrt(M * x))
        lengths.append(x)
    return lengths


def test_lesson_02_aroq_epochs():
    text = lesson_text(2)
    lengths = minimal_epochs(50_000)
    assert_quoted(text, ",\\; ".join(str(x) for x in lengths[:8]) + ",\\; \\dots \\;\\to\\; 7500")
    shortfall = [7500 / x for x in lengths[:8]]
    shown = [f"{v:.0f}" if v >= 1000 else f"{v:.1f}" if v >= 10 else f"{v:.2f}" for v in shortfall]
    shown[2] = f"{shortfall[2]:.2f}"  # 9.21
    assert_quoted(text, "goes $" + ",\\; ".join(shown) + "$")
    # each shortfall is about the square root of the previous one (doubly exponential decay)
    for prev, cur in itertools.pairwise(shortfall[1:]):
        assert cur == pytest.approx(math.sqrt(prev), rel=0.05)
    # Answer 2: Lemma 1's tau_i(T) (unfinished last epoch included) and log2 log2 (Tm/d)
    counts = {T: len(minimal_epochs(T)) for T in (10**4, 5 * 10**4, 10**6)}
    assert_quoted(
        text,
        f"reaches epoch $\\tau_i(T) = {counts[10**4]}$ at $T = 10^4$, ${counts[5 * 10**4]}$ at "
        f"$T = 5 \\times 10^4$ and still ${counts[10**6]}$ at $T = 10^6$",
        f"goes from about ${math.log2(math.log2(1500)):.1f}$ to "
        f"${math.log2(math.log2(150_000)):.1f}$ over this range",
    )
    # Answer 1: AROQ-CMAB's oracle calls in the preset (AROQ only; CUCB makes T calls)
    res = by_name(run_preset(2, algorithms=["AROQ-CMAB"])[0])
    q = sorted({int(x) for x in res["AROQ-CMAB"].queries[:, -1]})
    assert_quoted(text, f"AROQ-CMAB makes {q[0]} or {q[-1]} oracle calls per run")
    assert len(q) == 2


# ---------------------------------------------------------------------------------- lesson 3
def test_lesson_03_sroq_parallel():
    text = lesson_text(3)
    T, M = 50_000, default_num_epochs(50_000)
    grid = sroq_time_grid(T, M)
    eta = T ** (1 / (2 - 2 ** (1 - M)))
    starts = [int(x) for x in grid[:M]]
    assert_quoted(
        text,
        f"$\\eta \\approx {eta:.1f}$, the grid is $t_\\tau \\approx {starts[1]}$, "
        f"${tex_int(starts[2])}$, ${tex_int(starts[3])}$, ${tex_int(T)}$",
        f"the epochs are rounds ${starts[0]}$–${starts[1] - 1}$, ${starts[1]}$–"
        f"${starts[2] - 1}$, ${starts[2]}$–${tex_int(starts[3] - 1)}$ and "
        f"${tex_int(starts[3])}$–${tex_int(T)}$",
        f"the epochs start in rounds ${starts[0]}$, ${starts[1]}$, ${starts[2]}$ and "
        f"${tex_int(starts[3])}$",
    )
    res = by_name(run_preset(3)[0])
    sroq, aroq = res["SROQ-CMAB"], res["AROQ-CMAB"]
    # per-epoch queries and survivors of SROQ-CMAB (both runs alike)
    per_epoch = [np.unique(log.arrays()["round_id"], return_counts=True)[1] for log in sroq.logs]
    assert all(np.array_equal(per_epoch[0], e) for e in per_epoch)
    counts = [int(c) for c in per_epoch[0]]
    surv = [len(e.data["surviving"]) for e in sroq.events[0]]
    total = sum(counts)
    assert_quoted(
        text,
        f"it asks ${counts[0]}$, ${counts[1]}$, ${counts[2]}$ and ${counts[3]}$, i.e. ${total}$ "
        f"queries ({surv[1]} arms survive epoch 2, {surv[2]} epoch 3, {surv[3]} the last one)",
        f"${total} \\times 5\\text{{ ms}} = {total * 5}$ ms",
    )
    assert list(sroq.adaptivity[:, -1]) == [M, M]
    q = [int(x) for x in aroq.queries[:, -1]]
    assert_quoted(
        text,
        f"{q[0]} and {q[1]} in the two runs",
        f"${q[0]} \\times 5\\text{{ ms}} = {q[0] * 5}$ ms",
    )
    # threads: ceil(n / 4) * 5 ms per round
    parts = [math.ceil(c / 4) * 5 for c in counts]
    assert_quoted(
        text,
        "the four rounds $" + " + ".join(str(x) for x in parts) + f" = {sum(parts)}$ ms",
    )


# ---------------------------------------------------------------------------------- lesson 4
def test_lesson_04_beyond_worst_case():
    text = lesson_text(4)
    d, m, T = 10, 3, 2000
    # Answer 1: prescribed warm-up and its clamp
    prescribed = math.ceil(d * (d + 1) * math.log(T) ** 3 / 2)
    W = min(prescribed, int(0.1 * T))
    assert_quoted(
        text,
        f"\\lceil 55 \\times {math.log(T):.2f}^3 \\rceil = {tex_int(prescribed)}$ rounds",
        f"about {round(prescribed / T)} times the horizon",
    )
    assert W == 200
    res, at = run_preset(4, checkpoints=(W,))
    r = by_name(res)
    aroq_c, aroq, ols, sroq_c = (
        r["AROQ-C-CMAB"],
        r["AROQ-CMAB"],
        r["OLS-UCB-C"],
        r["SROQ-C-CMAB"],
    )
    warm = at[W]["AROQ-C-CMAB"]
    assert np.all(warm == warm[0]) and np.all(at[W]["OLS-UCB-C"] == warm)  # same round robin
    f = [fmt(x) for x in aroq_c.final_regret]
    a0 = [fmt(x) for x in at[W]["AROQ-CMAB"]]
    af = [fmt(x) for x in aroq.final_regret]
    after_c = [fmt(x - y) for x, y in zip(aroq_c.final_regret, warm)]
    after_a = [fmt(x - y) for x, y in zip(aroq.final_regret, at[W]["AROQ-CMAB"])]
    assert_quoted(
        text,
        f"it costs ${fmt(warm[0])}$ in each run",
        f"AROQ-C-CMAB adds ${after_c[0]}$ and ${after_c[1]}$ in the two runs",
        f"starts lower (${a0[0]}$ and ${a0[1]}$ at round 200) but keeps climbing to "
        f"${af[0]}$ and ${af[1]}$, far above AROQ-C-CMAB's ${f[0]}$ and ${f[1]}$",
        f"The 200 rounds cost ${fmt(warm[0])}$ regret",
        f"AROQ-C-CMAB adds ${after_c[0]}$ and ${after_c[1]}$ after round 200 while AROQ-CMAB "
        f"adds ${after_a[0]}$ and ${after_a[1]}$",
    )
    # Answer 3: queries and adaptivity
    qc = [int(x) for x in aroq_c.queries[:, -1]]
    qa = [int(x) for x in aroq.queries[:, -1]]
    ac = [int(x) for x in aroq_c.adaptivity[:, -1]]
    qs = [int(x) for x in sroq_c.queries[:, -1]]
    qo = int(ols.queries[0, -1])
    assert qo == 55 + (T - W)
    assert list(sroq_c.adaptivity[:, -1]) == [9, 9]  # 1 + 2 per epoch, 4 epochs
    so = [fmt(x) for x in ols.final_regret]
    ss = [fmt(x) for x in sroq_c.final_regret]
    assert_quoted(
        text,
        f"$55 + {T - W} = {qo}$ calls",
        f"AROQ-C-CMAB with {qc[0]} and {qc[1]}, then AROQ-CMAB with {qa[0]} and {qa[1]}",
        f"adaptivity ({ac[0]} and {ac[1]})",
        f"SROQ-C-CMAB asks {qs[0]} and {qs[1]} queries in 9 adaptivity rounds",
        f"ends with ${ss[0]}$ and ${ss[1]}$",
        f"it ends at ${so[0]}$ and ${so[1]}$",
        f"its {qo} oracle calls buy",
        f"AROQ-C-CMAB with {qc[0]} and {qc[1]} calls",
    )
    # Answer 2: SROQ-C-CMAB's second epoch and its prescribed / clamped pair sub-phase
    ep = [e for e in sroq_c.events[0] if e.kind == "epoch"][1].data
    Tt = ep["end"] - ep["start"] + 1
    pair = (d**2 * m**2 * Tt * math.log(T)) ** (2 / 3)
    assert_quoted(
        text,
        f"rounds ${ep['start']}$–${ep['end']}$ ($T_\\tau = {Tt}$)",
        f"(100 \\cdot 9 \\cdot {Tt} \\cdot {math.log(T):.2f})^{{2/3}} \\approx "
        f"{tex_int(round(pair, -2))}$ rounds, about {round(pair / Tt, -1):.0f} times",
        f"$30\\%$ of the epoch, {ep['pair_phase']} rounds",
        f"\\approx {(d**2 * m**2 * math.log(T)) ** 2 / 1e7:.1f} \\times 10^7$ here",
    )
    # the warm-up at T = 10^4 alone costs more than AROQ-CMAB's whole regret
    _, at10 = run_preset(4, algorithms=["AROQ-C-CMAB"], horizon=10_000, checkpoints=(1000,))
    res10 = by_name(run_preset(4, algorithms=["AROQ-CMAB"], horizon=10_000)[0])
    w10 = at10[1000]["AROQ-C-CMAB"]
    a10 = [fmt(x) for x in res10["AROQ-CMAB"].final_regret]
    assert np.all(w10 == w10[0]) and w10[0] > max(res10["AROQ-CMAB"].final_regret)
    assert_quoted(
        text,
        f"whose regret alone is ${fmt(w10[0])}$, more than AROQ-CMAB's whole regret "
        f"(${a10[0]}$ and ${a10[1]}$)",
        f"the warm-up alone (${fmt(w10[0])}$)",
    )
    # approximate oracles: exact on m-sets (alpha-AROQ == AROQ), inexact on paths
    spec = make_spec("cmab", d=20, m=3, actions="m-sets")
    built = spec.build(1)
    p = AlphaAROQ(alpha=0.5).run(spec.environment(built, 1, 0), 10_000)
    q = AROQ().run(spec.environment(built, 1, 0), 10_000)
    assert p.cum_regret == q.cum_regret and p.log.queries == q.log.queries
    assert_quoted(text, f"same {q.log.queries} queries, same regret")
    # the named preset "inexact-alpha": paths, where greedy is inexact, run as the dashboard
    # runs it (Simulation with the preset's seed, horizon and runs)
    assert list(load_lesson(4).named_presets) == ["inexact-alpha"]
    res, _ = run_preset(4, name="inexact-alpha")
    r = by_name(res)
    pa, pq = r["alpha-AROQ-CMAB"], r["AROQ-CMAB"]
    assert res.spec["actions"] == "paths" and res.spec["alpha"] == 0.9 and res.horizon == 10_000
    alpha_reg = [fmt(x) for x in pa.alpha_regret[:, -1]]
    reg_a = [fmt(x) for x in pa.final_regret]
    reg = [fmt(x) for x in pq.final_regret]
    qa_ = [int(x) for x in pa.queries[:, -1]]
    qq_ = [int(x) for x in pq.queries[:, -1]]
    r_star = res.instance["optimal_reward"]
    gap = pa.regret[:, -1] - pa.alpha_regret[:, -1]
    # alpha changes only the benchmark: alpha-regret = regret - (1 - alpha) T r(a*)
    np.testing.assert_allclose(gap, 0.1 * 10_000 * r_star, atol=1e-6)
    # the two curves differ visibly: the gap is as large as the regret itself
    assert gap[0] > 0.5 * max(pa.final_regret)
    # the same numbers as the policy run alone (the figures were first computed that way)
    spec = make_spec("cmab", d=20, m=3, actions="paths")
    built = spec.build(1)
    alone = AlphaAROQ(alpha=0.9).run(spec.environment(built, 1, 1), 10_000)
    assert alone.cum_regret == pytest.approx(pa.final_regret[1])
    assert_quoted(
        text,
        f"alpha-AROQ-CMAB's regret is ${reg_a[0]}$ and ${reg_a[1]}$ against AROQ-CMAB's "
        f"${reg[0]}$ and ${reg[1]}$",
        f"(${qa_[0]}$ and ${qa_[1]}$ against ${qq_[0]}$ and ${qq_[1]}$)",
        f"$\\alpha = 0.9$ is ${alpha_reg[0]}$ and ${alpha_reg[1]}$",
        f"to ${fmt(gap[0])}$ at $T = 10^4$ ($\\bar{{r}}(a^{{\\ast}}) = {r_star:.3f}$)",
    )


# ---------------------------------------------------------------------------------- lesson 5
def test_lesson_05_semiparametric_shifts():
    text = lesson_text(5)
    shift = make_shift("log", magnitude=1.0)
    t = np.array([1, 2, 3, 10_000])
    nu = shift.values(t, ShiftContext(rep=0, best_arm=0))
    assert_quoted(
        text,
        f"$\\nu_1 = {nu[0]:.0f}$, $\\nu_2 = {nu[1]:.0f}$, $\\nu_3 = {nu[2]:.0f}$",
        f"$\\nu_{{10^4}} = 2 \\cdot (-1)^{{1}} = {nu[3]:.0f}$",
        f"$t \\gt e^{{10}} - 1 \\approx {tex_int(round(math.e**10 - 1))}$",
    )
    # the printed shift stays at +-2 until log(t+1)/5 exceeds 2, and is never inside [-1, 1]
    tt = np.arange(1, 30_000)
    v = shift.values(tt, ShiftContext(rep=0, best_arm=0))
    assert np.all(np.abs(v) >= 2) and np.all(np.abs(v[tt < 22_025]) == 2)
    assert np.abs(v[tt > 22_026]).min() > 2


# ---------------------------------------------------------------------------------- lesson 6
def test_lesson_06_experimental_design():
    text = lesson_text(6)
    preset = dict(load_lesson(6).preset)
    spec = make_spec(
        "semiparametric", **{k: preset[k] for k in ("d", "K", "shift", "magnitude", "gap", "noise")}
    )
    inst, _ = spec.build(preset["seed"])
    X = inst.X
    deo = deo_design(X, anchor=0)
    r = deo.span_dimension
    # exact optimum of Definition 2: G-optimal design of the lifted features (1, x_i)
    lifted = g_optimal_design(np.hstack([np.ones((len(X), 1)), X]), tol=1e-6)
    assert lifted.max_leverage == pytest.approx(r + 1, rel=1e-5)
    exact = design_report(X, lifted.weights, anchor=0)
    assert exact.max_norm_to_mean == pytest.approx(math.sqrt(r), rel=1e-5)
    # the lower bound: no design beats sqrt(r) (checked on DEO and on random designs)
    rng = np.random.default_rng(0)
    for w in [deo.weights, *rng.dirichlet(np.ones(len(X)), size=20)]:
        assert design_report(X, w, anchor=0).max_norm_to_mean >= math.sqrt(r) * (1 - 1e-9)
    # the identity sum_i p_i ||b_i||^2 = r holds for every inner design (no certificate)
    for w in rng.dirichlet(np.ones(len(X) - 1), size=5):
        b = X[1:] - X[0]
        V = (b * w[:, None]).T @ b
        assert float(np.sum(w * np.einsum("ij,jk,ik->i", b, np.linalg.pinv(V), b))) == (
            pytest.approx(r)
        )
    # SBE's phase designs in the preset run (phase 1 = DEO over all arms, anchor 0)
    res = by_name(run_preset(6)[0])["SBE"]
    phases = [e.data for e in res.events[0] if e.kind == "phase"]
    assert phases[0]["max_norm_to_anchor"] == pytest.approx(deo.max_norm_to_anchor, rel=1e-9)
    n1, n2 = phases[0]["max_norm_to_anchor"], phases[1]["max_norm_to_anchor"]
    bound = 2 * math.sqrt(r)
    assert_quoted(
        text,
        f"is ${n1:.2f}$ in phase 1 and ${n2:.2f}$ in phase 2 (new anchor, "
        f"{len(phases[1]['surviving'])} arms), that is ${100 * n1 / bound:.0f}\\%$ and "
        f"${100 * n2 / bound:.0f}\\%$ of ${bound:.2f}$",
        f"is $\\sqrt{{5}} \\approx {math.sqrt(r):.2f}$ with $\\mu = \\bar{{x}}_{{\\mathbf{{p}}}}$, "
        f"where DEO reaches ${deo.max_norm_to_mean:.2f}$ (bound $4\\sqrt{{5}} \\approx "
        f"{4 * math.sqrt(r):.2f}$)",
        f"that exact design gives ${exact.max_norm_to_anchor:.2f}$, worse than DEO's "
        f"${deo.max_norm_to_anchor:.2f}$",
        f"The implementation reports that maximum: ${deo.kw_max_leverage:.3f}$ here",
        f"$\\sqrt{{d/0.21}} \\approx {math.sqrt(1 / 0.21):.2f}\\sqrt{{d}}$",
    )
    assert exact.max_norm_to_anchor > deo.max_norm_to_anchor and n1 < bound and n2 < bound


# ---------------------------------------------------------------------------------- lesson 7
def test_lesson_07_sbe_elimination():
    text = lesson_text(7)
    n = [phase_length(ell, 5, 10, 0.05) for ell in range(1, 6)]
    assert_quoted(
        text,
        f"n_1 = {n[0]},\\quad n_2 = {n[1]},\\quad n_3 = {n[2]},\\quad n_4 = {tex_int(n[3])}, "
        f"\\qquad n_1 + n_2 + n_3 = {sum(n[:3])}",
        f"$n_1 + n_2 + n_3 = {sum(n[:3])}$ rounds",
        f"${n[0]} + {n[1]} + {n[2]} + {tex_int(n[3])} + {tex_int(n[4])} = {tex_int(sum(n))}$",
    )
    res = by_name(run_preset(7, algorithms=["SBE"])[0])["SBE"]
    arms = set(res.declared_arm.tolist())
    times = set(res.declaration_time.tolist())
    assert len(arms) == 1 and len(times) == 1
    (arm,), (when,) = arms, times
    assert when == n[0] + n[1]
    assert_quoted(
        text,
        f"both runs declare arm {arm} after phase 2, at round ${int(when)} = n_1 + n_2$",
    )
    # the CLI comparison of Answer 3 (T = 2000, seed 0): SBE's design count, BOSE's per round
    spec = make_spec("semiparametric", d=5, K=10, shift="sine")
    with Simulation(spec, ["SBE"], 2000, 1, 0) as sim:
        sbe = sim.run().results[0]
    designs = int(sbe.queries[0, -1])
    assert_quoted(text, "every one of BOSE's 2000 rounds", f"against SBE's {designs} designs")
