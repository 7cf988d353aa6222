"""Semiparametric instances, shifts and environment: validation, reproducibility, chunking."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dashboard.algorithms.semiparametric.environment import SemiparametricEnvironment
from dashboard.algorithms.semiparametric.instances import (
    SemiparametricInstance,
    gap_instance,
    load_features_csv,
    make_instance,
    multi_armed_instance,
    random_instance,
)
from dashboard.algorithms.semiparametric.shifts import (
    SHIFT_KEYS,
    ShiftContext,
    make_shift,
)

# --------------------------------------------------------------------------- instances


@pytest.mark.parametrize(
    ("X", "theta", "match"),
    [
        (np.zeros((1, 3)), np.zeros(3), "K >= 2"),
        (np.zeros((3, 0)), np.zeros(0), "d >= 1"),
        (np.array([[0.1, np.nan], [0.0, 0.1]]), np.zeros(2), "NaN or infinite"),
        (np.array([[0.1, np.inf], [0.0, 0.1]]), np.zeros(2), "NaN or infinite"),
        (np.eye(2) * 0.5, np.array([np.nan, 0.0]), "theta contains NaN"),
        (np.eye(2) * 0.5, np.zeros(3), "shape"),
        (np.array([[2.0, 0.0], [0.0, 1.0]]), np.zeros(2), "rescale=True"),
        (np.eye(2), np.array([1.0, 1.0]), "rescale=True"),
        (np.zeros(4), np.zeros(1), "2-D"),
    ],
)
def test_instance_validation_errors(X, theta, match):
    with pytest.raises(ValueError, match=match):
        SemiparametricInstance(X, theta)


def test_rescale_brings_norms_to_one_and_keeps_the_best_arm():
    X = np.array([[3.0, 0.0], [0.0, 2.0], [1.0, 1.0]])
    theta = np.array([2.0, 1.0])
    inst = SemiparametricInstance(X, theta, rescale=True)
    assert inst.rescaled
    assert np.linalg.norm(inst.X, axis=1).max() == pytest.approx(1.0)
    assert np.linalg.norm(inst.theta) == pytest.approx(1.0)
    assert inst.best_arm == int(np.argmax(X @ theta))


def test_instance_quantities_are_consistent():
    inst = random_instance(4, 7, seed=3)
    assert inst.mean_rewards == pytest.approx(inst.X @ inst.theta)
    assert inst.gaps[inst.best_arm] == 0.0
    assert np.all(inst.gaps >= 0)
    assert inst.min_gap == pytest.approx(np.sort(inst.gaps)[1])
    assert np.linalg.norm(inst.X, axis=1) == pytest.approx(np.ones(7))


@pytest.mark.parametrize(("d", "K", "gap"), [(5, 10, 0.5), (20, 30, 0.5), (3, 2, 1.5), (1, 4, 0.3)])
def test_gap_instance_has_the_prescribed_minimum_gap(d, K, gap):
    inst = gap_instance(d, K, gap=gap, seed=11)
    assert inst.min_gap == pytest.approx(gap, abs=1e-9)
    assert np.linalg.norm(inst.X, axis=1).max() <= 1 + 1e-9
    assert np.linalg.norm(inst.theta) <= 1 + 1e-9
    # the best arm moves with the seed (arms are shuffled)
    bests = {gap_instance(d, K, gap=gap, seed=s).best_arm for s in range(8)}
    assert len(bests) > 1


def test_gap_instance_rejects_bad_gap():
    for bad in (0.0, -0.1, 2.5, float("nan"), "x"):
        with pytest.raises(ValueError, match="gap"):
            gap_instance(5, 10, gap=bad)


def test_generators_reject_bad_sizes():
    with pytest.raises(ValueError, match="K must be"):
        random_instance(3, 1)
    with pytest.raises(ValueError, match="d must be"):
        random_instance(0, 5)
    with pytest.raises(ValueError, match="K must be"):
        multi_armed_instance(1)


def test_multi_armed_instance_is_the_standard_basis():
    inst = multi_armed_instance(6, seed=2)
    assert inst.d == 6
    assert np.array_equal(inst.X, np.eye(6))
    assert np.linalg.norm(inst.theta) <= 1 + 1e-12
    assert inst.mean_rewards == pytest.approx(inst.theta)


def test_same_seed_same_instance_and_different_seed_differs():
    a, b = gap_instance(5, 10, seed=4), gap_instance(5, 10, seed=4)
    assert np.array_equal(a.X, b.X) and np.array_equal(a.theta, b.theta)
    c = gap_instance(5, 10, seed=5)
    assert not np.array_equal(a.X, c.X)
    assert np.array_equal(random_instance(3, 4, 9).X, random_instance(3, 4, 9).X)


def test_make_instance_kinds_and_unknown_kind(tmp_path):
    assert make_instance("gap", d=5, K=10, gap=0.5, seed=1).min_gap == pytest.approx(0.5)
    assert make_instance("random", d=3, K=4).K == 4
    assert make_instance("multi-armed", d=99, K=5).d == 5
    f = tmp_path / "x.csv"
    f.write_text("0.1,0.2\n0.3,0.1\n-0.2,0.5\n")
    assert make_instance("csv", features=str(f)).X.shape == (3, 2)
    with pytest.raises(ValueError, match="features="):
        make_instance("csv")
    with pytest.raises(ValueError, match="choose from: random, gap, multi-armed, csv"):
        make_instance("bogus")


# --------------------------------------------------------------------------- CSV


def _csv(tmp_path, text, name="f.csv"):
    p = tmp_path / name
    p.write_text(text)
    return p


def test_csv_loads_with_header_and_comments(tmp_path):
    p = _csv(tmp_path, "# arms\nx1,x2,x3\n0.1,0.2,0.3\n\n0.0,0.5,0.1\n0.3,0.3,0.3\n")
    inst = load_features_csv(p, seed=2)
    assert inst.X.shape == (3, 3)
    assert inst.X[1] == pytest.approx([0.0, 0.5, 0.1])
    assert np.linalg.norm(inst.theta) == pytest.approx(1.0)
    # theta from the seed is reproducible; an explicit theta is used as given
    assert np.array_equal(load_features_csv(p, seed=2).theta, inst.theta)
    th = np.array([0.0, 1.0, 0.0])
    assert np.array_equal(load_features_csv(p, theta=th).theta, th)


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("", "no feature rows"),
        ("# only a comment\n\n", "no feature rows"),
        ("a,b\n", "no feature rows"),
        ("0.1,0.2\n", "K >= 2"),
        ("0.1,0.2\n0.1,0.2,0.3\n", "line 2: 3 columns but expected 2"),
        ("0.1,0.2\n0.1,abc\n", "line 2: non-numeric value 'abc'"),
        ("0.1,0.2\n0.3,0.1\n0.1,nan\n", "line 3: NaN or infinite"),
        ("0.1,inf\n0.3,0.1\n", "line 1: NaN or infinite"),
        ("1.5,0.0\n0.0,0.5\n", "rescale=True"),
    ],
)
def test_csv_errors_name_the_problem(tmp_path, text, match):
    with pytest.raises(ValueError, match=match):
        load_features_csv(_csv(tmp_path, text))


def test_csv_rescale_and_missing_file(tmp_path):
    inst = load_features_csv(_csv(tmp_path, "2.0,0.0\n0.0,1.0\n"), rescale=True)
    assert np.linalg.norm(inst.X, axis=1).max() == pytest.approx(1.0)
    with pytest.raises(ValueError, match="cannot read"):
        load_features_csv(tmp_path / "missing.csv")


# --------------------------------------------------------------------------- shifts


def test_unknown_shift_lists_the_keys():
    with pytest.raises(ValueError, match="choose from: none, sine, log, random, adversarial"):
        make_shift("cosine")
    with pytest.raises(ValueError, match="magnitude"):
        make_shift("sine", magnitude=-1)
    assert set(SHIFT_KEYS) == {"none", "sine", "log", "random", "adversarial"}


def test_shift_formulas_as_printed_in_appendix_i():
    t = np.arange(1, 30001)
    assert make_shift("none").values(t) == pytest.approx(np.zeros(t.size))
    assert make_shift("sine", 0.5).values(t) == pytest.approx(0.5 * (1 + np.sin(2 * t)))
    log = make_shift("log").values(t)
    expected = np.maximum(np.log(t + 1) / 5, 2) * (-1.0) ** (t % 3)
    assert log == pytest.approx(expected)
    # both paper shifts exceed Assumption 1's |nu_t| <= 1
    assert np.abs(make_shift("sine").values(t)).max() > 1.9
    assert np.abs(log).min() >= 2.0
    assert math.isinf(make_shift("log").bound())


def test_random_shift_is_bounded_reproducible_and_depends_on_rep():
    s = make_shift("random", magnitude=0.7, seed=3)
    t = np.arange(1, 5001)
    a = s.values(t, ShiftContext(rep=0))
    assert np.abs(a).max() <= 0.7
    assert np.array_equal(a, make_shift("random", 0.7, seed=3).values(t, ShiftContext(rep=0)))
    assert not np.array_equal(a, s.values(t, ShiftContext(rep=1)))
    assert abs(a.mean()) < 0.05  # mean zero


def test_adversarial_shift_reads_the_learner():
    s = make_shift("adversarial", magnitude=0.8)
    assert s.adaptive
    t = np.arange(1, 5)
    p_best = np.array([0.1, 0.6, 0.3])
    p_other = np.array([0.5, 0.2, 0.3])
    assert s.values(t, ShiftContext(best_arm=1, probs=p_best)) == pytest.approx([-0.8] * 4)
    assert s.values(t, ShiftContext(best_arm=1, probs=p_other)) == pytest.approx([0.8] * 4)
    arms = np.array([1, 0, 1, 2])
    got = s.values(t, ShiftContext(best_arm=1, arms=arms))
    assert got == pytest.approx([-0.8, 0.8, -0.8, 0.8])
    with pytest.raises(ValueError, match="ShiftContext"):
        s.values(t)


# --------------------------------------------------------------------------- environment


def test_environment_validation():
    inst = gap_instance(3, 4, seed=0)
    with pytest.raises(ValueError, match="noise_sigma"):
        SemiparametricEnvironment(inst, noise_sigma=-1)
    with pytest.raises(ValueError, match="SemiparametricInstance"):
        SemiparametricEnvironment(np.eye(3))
    env = SemiparametricEnvironment(inst)
    with pytest.raises(ValueError, match="in order"):
        env.play(np.array([0]), 5)
    with pytest.raises(ValueError, match=r"arms must be in 0\.\.3"):
        env.play(np.array([4]), 1)


@pytest.mark.parametrize("shift", SHIFT_KEYS)
def test_play_chunked_equals_unchunked(shift):
    inst = gap_instance(4, 6, seed=1)
    arms = (np.arange(500) * 7) % 6
    probs = np.full(6, 1 / 6)
    whole = SemiparametricEnvironment(inst, make_shift(shift, seed=2), seed=5, rep=1)
    r_whole = whole.play(arms, 1, probs)
    chunked = SemiparametricEnvironment(inst, make_shift(shift, seed=2), seed=5, rep=1)
    parts, t = [], 1
    for size in (1, 1, 3, 50, 1, 200, 244):
        parts.append(chunked.play(arms[t - 1 : t - 1 + size], t, probs))
        t += size
    assert np.array_equal(np.concatenate(parts), r_whole)
    assert np.array_equal(chunked.shift_history()[1], whole.shift_history()[1])


def test_rewards_follow_the_model_and_noise_is_common_across_policies():
    inst = gap_instance(5, 10, seed=2)
    shift = make_shift("sine")
    env_a = SemiparametricEnvironment(inst, shift, noise_sigma=1.0, seed=9, rep=3)
    env_b = SemiparametricEnvironment(inst, shift, noise_sigma=1.0, seed=9, rep=3)
    L = 20000
    arms_a = np.zeros(L, dtype=int)
    arms_b = np.full(L, 7)
    ra, rb = env_a.play(arms_a, 1), env_b.play(arms_b, 1)
    t = np.arange(1, L + 1)
    # same noise and shift at round t: the reward difference is exactly the mean difference
    assert ra - rb == pytest.approx(np.full(L, inst.mean_rewards[0] - inst.mean_rewards[7]))
    eta = ra - inst.mean_rewards[0] - shift.values(t)
    assert abs(eta.mean()) < 0.03 and eta.std() == pytest.approx(1.0, abs=0.03)
    assert env_a.shift_values(t[:5]) == pytest.approx(shift.values(t[:5]))
    # a different repetition has different noise
    env_c = SemiparametricEnvironment(inst, shift, seed=9, rep=4)
    assert not np.allclose(env_c.play(arms_a[:10], 1), ra[:10])


def test_regret_is_the_pseudo_regret_and_ignores_the_shift():
    inst = gap_instance(5, 10, seed=2)
    env = SemiparametricEnvironment(inst, make_shift("log"))
    assert env.regret(inst.best_arm) == 0.0
    arms = np.arange(10)
    expected = inst.X[inst.best_arm] @ inst.theta - inst.X @ inst.theta
    assert env.regret(arms) == pytest.approx(expected)


def test_adaptive_shift_values_are_recorded():
    inst = gap_instance(3, 4, seed=0)
    env = SemiparametricEnvironment(inst, make_shift("adversarial"), seed=1)
    best = inst.best_arm
    other = (best + 1) % 4
    env.play(np.array([best, other, best]), 1, None)
    p = np.zeros(4)
    p[best] = 1.0
    env.play(np.array([other] * 3000), 4, p)
    t, nu = env.shift_history()
    assert t.size == 3003
    assert nu[:3] == pytest.approx([-1.0, 1.0, -1.0])
    assert np.all(nu[3:] == -1.0)
    with pytest.raises(ValueError, match="rounds must be in"):
        env.shift_values(np.array([4000]))
