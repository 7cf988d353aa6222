"""Batched engines give exactly the numbers of separate single-repetition runs (issue 9).

For several seeds, repetition counts and chunkings, one ``Batched<Policy>`` run must equal
``R`` separate runs of the single policy: the same cumulative regrets at every checkpoint,
the same oracle query counts and the same pull counters.
"""

from __future__ import annotations

import numpy as np
import pytest
from batched_checks import same_as_single_runs
from hypothesis import given, settings
from hypothesis import strategies as st

from dashboard.algorithms.cmab.actions import MSets, Paths
from dashboard.algorithms.cmab.policies.general import SDCB, BatchedSDCB
from dashboard.algorithms.cmab.rewards import ContinuousRewards, GeneralRewards


@pytest.mark.parametrize("seed", [0, 3])
@pytest.mark.parametrize("R", [1, 3])
@pytest.mark.parametrize("initial_pass", [True, False])
def test_batched_sdcb_equals_single_runs(seed, R, initial_pass):
    model = GeneralRewards(6, seed=seed)
    kw = {"initial_pass": initial_pass}
    b = same_as_single_runs(SDCB, BatchedSDCB, model, MSets(6, 3), 400, R, [1, 4, 7, 150, 400], kw)
    singles = [SDCB(**kw).run(model.environment(MSets(6, 3), r), 400) for r in range(R)]

    def strip(log):  # query ranges and purposes, without wall times
        return [(a, b, p) for a, b, p, _ in log.ranges]

    assert [strip(log) for log in b.logs] == [strip(p.log) for p in singles]
    assert b._lockstep is None  # the vectorised path ran


@pytest.mark.parametrize("reward", ["sqrt-sum", "max"])
def test_batched_sdcb_other_rewards_and_windows(reward):
    model = GeneralRewards(5, seed=1, reward=reward, peak_mass=0.6)
    family = MSets(5, 2)
    same_as_single_runs(SDCB, BatchedSDCB, model, family, 300, 2, [300])
    b = BatchedSDCB(window=4)  # tiny window: many refills, same numbers
    b.run([model.environment(family, r) for r in range(2)], 300)
    ref = [SDCB().run(model.environment(family, r), 300).cum_regret for r in range(2)]
    assert np.array_equal(b.cum_regret, ref)


def test_batched_sdcb_falls_back_to_lockstep_with_identical_numbers():
    model = ContinuousRewards(4, seed=2)
    b = same_as_single_runs(SDCB, BatchedSDCB, model, Paths(4, 2), 120, 2, [50, 120])
    assert b._lockstep is not None
    same_as_single_runs(
        SDCB,
        BatchedSDCB,
        GeneralRewards(5, seed=0),
        MSets(5, 2),
        60,
        2,
        [60],
        {"initial_pass": True},
    )


@pytest.mark.parametrize(("seed", "R", "chunks"), [(0, 2, [1, 40, 41, 300]), (5, 4, [300])])
def test_batched_olsucbc_equals_single_runs(seed, R, chunks):
    from dashboard.algorithms.cmab.policies.covariance import OLSUCBC, BatchedOLSUCBC
    from dashboard.algorithms.cmab.rewards import CovarianceRewards

    kw = {"warmup_fraction": 0.15}
    b = same_as_single_runs(
        OLSUCBC, BatchedOLSUCBC, CovarianceRewards(6, seed=seed), MSets(6, 3), 300, R, chunks, kw
    )
    assert b._main  # the vectorised rounds ran


def test_batched_olsucbc_normals_windows_and_chunks(monkeypatch):
    """The Gaussian outcomes come from windows of pre-drawn normals (16 rounds here: many
    refills, chunks ending inside a window): the same numbers and pulls as single runs."""
    from dashboard.algorithms.cmab.policies import batched
    from dashboard.algorithms.cmab.policies.covariance import OLSUCBC, BatchedOLSUCBC
    from dashboard.algorithms.cmab.rewards import CovarianceRewards

    monkeypatch.setattr(batched, "NORMALS_WINDOW", 1)
    kw = {"warmup_fraction": 0.1}
    b = same_as_single_runs(
        OLSUCBC,
        BatchedOLSUCBC,
        CovarianceRewards(5, seed=4),
        MSets(5, 2),
        200,
        3,
        [33, 34, 50, 97, 200],
        kw,
    )
    assert b._z_w == 16 and b._main


def test_batched_olsucbc_singular_covariance_and_other_factor_layouts(monkeypatch):
    """A singular Sigma (eigen-factors) gives the single runs' numbers; so does the
    per-repetition product used when a factor is not C-ordered."""
    from dashboard.algorithms.cmab.policies.covariance import OLSUCBC, BatchedOLSUCBC
    from dashboard.algorithms.cmab.rewards import CovarianceRewards
    from dashboard.algorithms.cmab.rewards import covariance as cov

    v = np.array([1.0, 0.5, -0.5, 0.25, 1.0])
    model = CovarianceRewards(5, seed=1, Sigma=0.1 * np.outer(v, v))  # rank one
    kw = {"warmup_fraction": 0.1}
    b = same_as_single_runs(OLSUCBC, BatchedOLSUCBC, model, MSets(5, 2), 150, 2, [150], kw)
    assert b._factors is not None
    real = cov._sqrt_factor
    monkeypatch.setattr(cov, "_sqrt_factor", lambda S: np.asfortranarray(real(S)))
    model = CovarianceRewards(5, seed=2)
    b = same_as_single_runs(OLSUCBC, BatchedOLSUCBC, model, MSets(5, 2), 150, 2, [60, 150], kw)
    assert b._factors is None  # F-ordered factors: one product per repetition


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), R=st.integers(1, 12), k=st.integers(1, 6))
def test_stacked_outcome_products_equal_each_runs_own(seed, R, k):
    """``mu[arms] + z[:, None] @ F[rows]^T`` (the batched engine) equals, row by row, each
    run's ``mu[a][None] + z[None] @ F.T`` (``CovarianceRewards.sample``) bit for bit."""
    rng = np.random.default_rng(seed)
    G = rng.standard_normal((R, k, k))
    F = np.linalg.cholesky(G @ np.swapaxes(G, 1, 2) + np.eye(k))
    z = rng.standard_normal((R, k)) * 10.0 ** rng.uniform(-3, 3)
    mu = rng.standard_normal(3 * k)
    arms = np.stack([rng.choice(3 * k, size=k, replace=False) for _ in range(R)])
    got = mu[arms] + np.matmul(z[:, None, :], F.transpose(0, 2, 1))[:, 0, :]
    ref = np.stack([(mu[arms[r]][None, :] + z[r][None, :] @ F[r].T)[0] for r in range(R)])
    assert np.array_equal(got, ref)


def test_batched_olsucbc_linear_model_and_no_warmup():
    from dashboard.algorithms.cmab.policies.covariance import OLSUCBC, BatchedOLSUCBC
    from dashboard.algorithms.cmab.rewards import LinearRewards

    same_as_single_runs(
        OLSUCBC,
        BatchedOLSUCBC,
        LinearRewards(5, seed=2),
        MSets(5, 2),
        200,
        3,
        [7, 200],
        {"warmup_fraction": 0.0},
    )


@pytest.mark.parametrize("seed", [0, 2])
@pytest.mark.parametrize("R", [1, 3])
def test_batched_disc_aroq_gr_equals_single_runs(seed, R):
    """Disc-AROQ-GR: one batched run = R single runs (regrets at every chunk, query logs with
    their rounds and purposes, events, pull counters), with the vectorised path."""
    from dashboard.algorithms.cmab.policies.general import (
        BatchedDiscretizedAROQGR,
        DiscretizedAROQGR,
    )

    model, family = ContinuousRewards(5, seed=seed), MSets(5, 2)
    kw = {"s": 12, "C": 1.0}
    b = same_as_single_runs(
        DiscretizedAROQGR, BatchedDiscretizedAROQGR, model, family, 500, R, [1, 3, 90, 500], kw
    )
    assert b._lockstep is None
    singles = [DiscretizedAROQGR(**kw).run(model.environment(family, r), 500) for r in range(R)]

    def strip(log):  # every query: round, adaptivity round, purpose, arm (no wall times)
        arr = log.arrays()
        purposes = [log.purposes[c] for c in arr["purpose_code"]]
        return arr["t"].tolist(), arr["round_id"].tolist(), purposes, arr["arm"].tolist()

    assert [strip(log) for log in b.logs] == [strip(p.log) for p in singles]
    for ev_b, p in zip(b.events, singles):
        assert [(e.t, e.kind) for e in ev_b] == [(e.t, e.kind) for e in p.events]
        assert all(
            np.array_equal(x.data["action"], y.data["action"])
            and np.array_equal(x.data["advanced"], y.data["advanced"])
            for x, y in zip(ev_b, p.events)
        )


def test_batched_disc_aroq_gr_default_s_and_lockstep_fallback():
    from dashboard.algorithms.cmab.policies.general import (
        BatchedDiscretizedAROQGR,
        DiscretizedAROQGR,
    )

    # the paper's s = ceil(sqrt(m T)) (Fourier path of the oracle), d = 6, m = 3
    same_as_single_runs(
        DiscretizedAROQGR,
        BatchedDiscretizedAROQGR,
        ContinuousRewards(6, seed=4),
        MSets(6, 3),
        400,
        2,
        [400],
    )
    # K-MAX reward: the vectorised path scores E[max], not E[sqrt(sum)] (it used to)
    b = same_as_single_runs(
        DiscretizedAROQGR,
        BatchedDiscretizedAROQGR,
        ContinuousRewards(6, seed=1, reward="max"),
        MSets(6, 3),
        400,
        3,
        [400],
        {"s": 12},
    )
    assert b._lockstep is None
    # general (lattice) outcomes are not the Beta model: lockstep, same numbers
    b = same_as_single_runs(
        DiscretizedAROQGR,
        BatchedDiscretizedAROQGR,
        GeneralRewards(4, seed=0),
        MSets(4, 2),
        80,
        2,
        [80],
    )
    assert b._lockstep is not None
    with pytest.raises(ValueError):
        BatchedDiscretizedAROQGR(s=0)


def _strip_log(log):  # every query: round, adaptivity round, purpose, arm (no wall times)
    arr = log.arrays()
    purposes = [log.purposes[c] for c in arr["purpose_code"]]
    return arr["t"].tolist(), arr["round_id"].tolist(), purposes, arr["arm"].tolist()


def _same_epoch_events(events_b, events_s):
    assert [(e.t, e.kind) for e in events_b] == [(e.t, e.kind) for e in events_s]
    for x, y in zip(events_b, events_s):
        assert set(x.data) == set(y.data)
        for key, v in x.data.items():
            assert np.array_equal(v, y.data[key]), key  # max_lcb: the reference float


@pytest.mark.parametrize(
    ("seed", "R", "d", "m", "kw", "model_kw"),
    [
        (0, 1, 5, 2, {"s": 12, "C": 1.0}, {}),
        (2, 3, 6, 3, {"s": 12, "M": 4}, {}),
        (1, 3, 6, 3, {}, {}),  # the paper's s = ceil(sqrt(m T)): Fourier scoring
        # small radii and concentrated outcomes: arms are eliminated
        (0, 3, 6, 3, {"s": 9, "C": 0.05}, {"kappa": 20.0}),
        (2, 2, 8, 2, {"s": 9, "C": 0.01}, {"kappa": 20.0, "reward": "max"}),
    ],
)
def test_batched_disc_sroq_gr_equals_single_runs(seed, R, d, m, kw, model_kw):
    """Disc-SROQ-GR: one batched run = R single runs (regrets at every chunk, also inside
    epochs, query logs, epoch events with their survivors and max-LCB values, pulls)."""
    from dashboard.algorithms.cmab.policies.general import (
        BatchedDiscretizedSROQGR,
        DiscretizedSROQGR,
    )

    model, family = ContinuousRewards(d, seed=seed, **model_kw), MSets(d, m)
    T = 600
    b = same_as_single_runs(
        DiscretizedSROQGR, BatchedDiscretizedSROQGR, model, family, T, R, [1, 2, 37, 250, T], kw
    )
    assert b._lockstep is None
    singles = [DiscretizedSROQGR(**kw).run(model.environment(family, r), T) for r in range(R)]
    assert [_strip_log(log) for log in b.logs] == [_strip_log(p.log) for p in singles]
    for ev_b, p in zip(b.events, singles):
        _same_epoch_events(ev_b, p.events)
    if "kappa" in model_kw:  # the test exercises the elimination path
        assert any(e.data["eliminated"].size for ev in b.events for e in ev)


def test_batched_disc_sroq_gr_is_the_declared_engine_and_falls_back_to_lockstep():
    from dashboard.algorithms import registry
    from dashboard.algorithms.cmab.policies.general import (
        BatchedDiscretizedSROQGR,
        DiscretizedSROQGR,
    )

    # the registry links the fast engine to the textbook class and this one-repetition policy
    assert registry.algorithm_info("Disc-SROQ-GR-CMAB").fast is BatchedDiscretizedSROQGR
    assert BatchedDiscretizedSROQGR.one_repetition is DiscretizedSROQGR
    assert DiscretizedSROQGR.declaration.batched is BatchedDiscretizedSROQGR
    b = same_as_single_runs(
        DiscretizedSROQGR,
        BatchedDiscretizedSROQGR,
        GeneralRewards(4, seed=0),
        MSets(4, 2),
        80,
        2,
        [5, 80],
    )
    assert b._lockstep is not None
    with pytest.raises(ValueError):
        BatchedDiscretizedSROQGR(s=0)


def test_batched_disc_sroq_gr_undecided_eliminations_use_the_reference(monkeypatch):
    """With error bounds too wide to decide ``r^UCB(a^(i)) >= max r^LCB`` from the
    approximations, every test goes through the reference values: still the same numbers."""
    import dashboard.algorithms.cmab.policies.disc_sroq_batched as mod
    from dashboard.algorithms.cmab.policies.general import (
        BatchedDiscretizedSROQGR,
        DiscretizedSROQGR,
    )

    real = mod.refined_queries

    def wide(*args, **kwargs):
        rows, n_re, approx, bounds = real(*args, **kwargs)
        return rows, n_re, approx, bounds + 10.0

    monkeypatch.setattr(mod, "refined_queries", wide)
    model = ContinuousRewards(6, seed=0, kappa=20.0)
    b = same_as_single_runs(
        DiscretizedSROQGR,
        BatchedDiscretizedSROQGR,
        model,
        MSets(6, 3),
        600,
        3,
        [600],
        {"s": 9, "C": 0.05},
    )
    assert any(e.data["eliminated"].size for ev in b.events for e in ev)
