"""CUCB, AROQ-CMAB (Alg. 1), alpha-AROQ-CMAB (Alg. 5) and SROQ-CMAB (Alg. 2) on m-sets with
linear rewards: oracle accounting, the epoch rules replayed independently, regret, chunking
invariance, reproducibility and parameter validation."""

from __future__ import annotations

import itertools
import math
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from dashboard.algorithms import registry
from dashboard.algorithms.cmab.actions import MSets
from dashboard.algorithms.cmab.policies.aroq import AROQ, AlphaAROQ
from dashboard.algorithms.cmab.policies.cucb import CUCB, BatchedCUCB
from dashboard.algorithms.cmab.policies.sroq import SROQ, default_num_epochs, sroq_time_grid
from dashboard.algorithms.cmab.rewards import LinearRewards
from dashboard.algorithms.cmab.textbook.cucb import CUCB as TextbookCUCB

D, M = 20, 3


def local_greedy(family, request):
    """Tiny greedy oracle for m-sets (exact there): add arms by decreasing score."""
    local_greedy.calls += 1
    s = np.asarray(request.scores, dtype=float)
    a = np.zeros(family.d, dtype=bool)
    a[list(request.include)] = True
    banned = np.zeros(family.d, dtype=bool) if request.exclude is None else request.exclude
    for i in np.argsort(-s, kind="stable"):
        if a.sum() >= family.m:
            break
        if not banned[i]:
            a[i] = True
    return a


local_greedy.calls = 0

POLICIES = {
    "CUCB": lambda: CUCB(),
    "AROQ": lambda: AROQ(),
    "alpha-AROQ": lambda: AlphaAROQ(alpha=0.9, approximate=local_greedy),
    "SROQ": lambda: SROQ(),
}


def setting(d: int = D, m: int = M, seed: int = 0, **kw):
    return MSets(d, m), LinearRewards(d, seed=seed, **kw)


def run(policy, family, model, T, rep=0):
    return policy.run(model.environment(family, rep), T)


def log_columns(log):
    a = log.arrays()
    return {k: a[k].copy() for k in ("t", "round_id", "purpose_code", "arm")}, [
        r[:3] for r in log.ranges
    ]


# ----------------------------------------------------------------------------- registry


@pytest.mark.parametrize(
    ("name", "cls"),
    [("CUCB", CUCB), ("AROQ-CMAB", AROQ), ("alpha-AROQ-CMAB", AlphaAROQ), ("SROQ-CMAB", SROQ)],
)
def test_registry_resolves_to_these_classes(name, cls):
    """The registry holds the textbook class; a fast engine's one-repetition policy is a
    subclass of it (the same declaration)."""
    info = registry.algorithm_info(name)
    assert info.load() is cls or getattr(info.fast, "one_repetition", None) is cls
    assert issubclass(cls, info.load()) and cls.declaration is info.declaration
    assert cls.name == name and cls.problem == "cmab"


# ----------------------------------------------------------------------------- CUCB


def test_cucb_queries_and_adaptivity_equal_T():
    family, model = setting()
    p = run(CUCB(), family, model, 700)
    assert p.log.queries == p.log.adaptivity == 700
    assert [r[:3] for r in p.log.ranges] == [(1, 700, "UCB argmax")]
    q, a = p.log.cumulative(np.array([1, 350, 700]))
    assert list(q) == list(a) == [1, 350, 700]
    # the environment's pull counters are kept in sync with the table-based feedback
    assert p._engine.envs[0].pulls.sum() == 700 * M


def test_batched_cucb_equals_separate_textbook_runs_exactly():
    family, model = setting(d=10, m=3, seed=3)
    R, T = 5, 1500
    seq = [run(TextbookCUCB(), family, model, T, rep=r) for r in range(R)]
    b = BatchedCUCB()
    b.reset([model.environment(family, r) for r in range(R)], T)
    for until in (1, 7, 300, 301, 1499, T):  # chunked, too
        assert b.advance(until) == until
    assert np.array_equal(b.cum_regret, [p.cum_regret for p in seq])
    assert np.array_equal(b.n, np.vstack([p.n for p in seq]))
    assert np.array_equal(b.sums, np.vstack([p.sums for p in seq]))
    assert all(lg.queries == T for lg in b.logs)
    assert all(p.log.queries == p.log.adaptivity == T for p in seq)
    # repetitions really differ (no accidental sharing of noise)
    assert len(set(b.cum_regret.tolist())) == R


def test_cucb_table_feedback_equals_environment_feedback():
    """The pre-drawn outcome table returns exactly what env.play_fixed returns."""
    family, model = setting(d=8, m=2, seed=5)
    fast = run(CUCB(), family, model, 1200)
    slow_model = LinearRewards(8, seed=5)
    slow_model.pull_indexed = False  # forces round-by-round env.play_fixed
    slow = run(CUCB(), family, slow_model, 1200)
    assert fast.cum_regret == slow.cum_regret
    assert np.array_equal(fast._engine.sums, slow._engine.sums)


def test_batched_cucb_rejects_mixed_models():
    family, model = setting(d=6, m=2)
    other = LinearRewards(6, seed=9)
    with pytest.raises(ValueError, match="share one family and one model"):
        BatchedCUCB().reset([model.environment(family, 0), other.environment(family, 1)], 10)
    with pytest.raises(ValueError, match="at least one environment"):
        BatchedCUCB().reset([], 10)


# ----------------------------------------------------------------------------- AROQ


def threshold(prev, T, m, d):
    return 1.0 + math.sqrt(T * m * prev / d)


def test_aroq_queries_exactly_when_an_arm_crosses_the_threshold():
    """Replay Algorithm 1 round by round from the recorded actions and check that an oracle
    call happens at round t iff t = 1 or some arm satisfies line 5 at the start of round t."""
    family, model = setting(d=8, m=2, seed=1)
    T = 20_000
    p = run(AROQ(), family, model, T)
    events = {e.t: e for e in p.events}
    assert len(events) == len(p.events) == p.log.queries == p.log.adaptivity
    assert list(p.log.arrays()["t"]) == sorted(events)
    count, prev = np.zeros(8, dtype=int), np.zeros(8, dtype=int)
    action = None
    for t in range(1, T + 1):
        fired = [i for i in range(8) if count[i] >= threshold(prev[i], T, 2, 8)]
        if t == 1 or fired:
            assert t in events, f"an arm crossed its threshold at t={t} but no oracle call"
            e = events.pop(t)
            assert list(e.data["advanced"]) == fired
            assert np.array_equal(e.data["counts"], count)
            for i in fired:
                # the condition holds now and did not hold one round earlier
                assert count[i] >= e.data["threshold"][i]
                assert count[i] - 1 < threshold(prev[i], T, 2, 8)
                prev[i], count[i] = count[i], 0
            action = e.data["action"]
        else:
            assert t not in events, f"oracle call at t={t} without a threshold crossing"
        count[action] += 1
    assert not events


def test_aroq_first_call_is_at_t1_and_counted():
    family, model = setting()
    p = run(AROQ(), family, model, 50)
    a = p.log.arrays()
    assert a["t"][0] == 1 and p.log.purposes[a["purpose_code"][0]] == "initial UCB argmax"
    assert p.events[0].t == 1 and p.events[0].data["advanced"].size == 0


def test_aroq_query_count_grows_like_d_loglog():
    family, model = setting()
    queries = {}
    for T in (10**3, 10**4, 10**5, 10**6):
        p = run(AROQ(), family, model, T)
        queries[T] = p.log.queries
        # Lemma 1 (A.2): sum_i tau_i(T) <= d tau_0 + 3d with tau_0 = log2 log2(Tm/d) (Lemma 2)
        bound = D * math.log2(math.log2(T * M / D)) + 3 * D
        assert p.tau.sum() <= bound, (T, p.tau.sum(), bound)
        # every call but the initial one ends at least one epoch
        assert p.log.queries - 1 <= (p.tau - 1).sum()
        assert p.log.queries == p.log.adaptivity
        assert p.log.queries < T / 20
    # 1000x more rounds, fewer than twice the queries
    assert queries[10**6] < 2 * queries[10**3]
    assert queries[10**6] >= queries[10**3]


def test_aroq_threshold_scale_makes_queries_more_frequent():
    family, model = setting()
    q = [run(AROQ(threshold_scale=s), family, model, 20_000).log.queries for s in (1.0, 0.1)]
    assert q[1] > q[0]


# ----------------------------------------------------------------------------- alpha-AROQ


def test_alpha_aroq_uses_the_approximate_oracle_and_reports_alpha_regret():
    family, model = setting(d=10, m=3, seed=2)
    local_greedy.calls = 0
    T, alpha = 5000, 0.8
    p = run(AlphaAROQ(alpha=alpha, approximate=local_greedy), family, model, T)
    assert local_greedy.calls == p.log.queries > 0
    opt = p.env.optimal_reward
    # sum_t (alpha r* - r(a_t)) = sum_t (r* - r(a_t)) - (1 - alpha) r* T
    assert p.alpha_regret == pytest.approx(p.cum_regret - (1 - alpha) * opt * T, rel=1e-9)
    # greedy is exact on m-sets: same decisions as AROQ
    assert p.cum_regret == run(AROQ(), family, model, T).cum_regret


def test_alpha_aroq_default_oracle_is_the_greedy_module():
    approx = pytest.importorskip("dashboard.algorithms.cmab.approx")
    family, model = setting(d=6, m=2)
    p = AlphaAROQ(alpha=0.5)
    p.reset(model.environment(family, 0), 100)
    assert p.oracle.approximate is approx.greedy_oracle


# ----------------------------------------------------------------------------- SROQ


@pytest.mark.parametrize("kind", ["gao", "paper"])
@pytest.mark.parametrize(("T", "M"), [(10**6, 5), (10**4, 4), (1000, 2), (50, 6), (7, 7), (3, 1)])
def test_sroq_time_grid_is_increasing_from_1_to_T(kind, T, M):
    g = sroq_time_grid(T, M, kind)
    assert g.shape == (M + 1,) and g[0] == 1 and g[-1] == T
    assert np.all(np.diff(g[:-1]) > 0) and g[-2] <= g[-1]


def test_sroq_time_grid_follows_the_recursion():
    T, M = 10**6, 5
    eta = T ** (1 / (2 - 2 ** (1 - M)))
    gao, paper = sroq_time_grid(T, M, "gao"), sroq_time_grid(T, M, "paper")
    ends = gao[1:-1] - 1  # Gao et al.: epoch ends t_1 = eta, t_tau = eta sqrt(t_{tau-1})
    assert abs(ends[0] - eta) <= 1
    for a, b in itertools.pairwise(ends):
        assert abs(b - eta * math.sqrt(a)) <= eta / math.sqrt(a) + 1
    # the paper's reading puts the same boundaries one round earlier (starts t_1 = 1, t_2 = eta)
    assert np.array_equal(paper[1:-1], gao[1:-1] - 1)
    # and its recursion continued one more step lands on T (why "t_M = T" does not close)
    assert eta * math.sqrt(paper[-2]) == pytest.approx(T, rel=1e-4)


def test_sroq_default_number_of_epochs():
    assert default_num_epochs(10**6) == 5 and default_num_epochs(1000) == 4
    assert default_num_epochs(1) == 1 and default_num_epochs(2) == 2


def test_sroq_adaptivity_is_the_number_of_epochs_and_queries_bounded():
    family, model = setting()
    for T, Mep in ((2000, None), (10**5, 3), (10**5, 6)):
        p = run(SROQ(M=Mep), family, model, T)
        n_epochs = default_num_epochs(T) if Mep is None else Mep
        assert p.log.adaptivity == n_epochs == len(p.events)
        assert p.log.queries <= (D + 1) * n_epochs
        a = p.log.arrays()
        prev = D
        for e in p.events:
            in_epoch = a["t"] == e.data["start"]
            assert np.unique(a["round_id"][in_epoch]).size == 1  # one parallel round
            assert in_epoch.sum() == prev + 1  # |N_{tau-1}| representatives + the LCB query
            prev = e.data["surviving"].size


def test_sroq_never_eliminates_an_optimal_arm_on_a_separated_instance():
    mu = np.array([0.9, 0.85, 0.8, 0.3, 0.25, 0.2, 0.15, 0.1, 0.6, 0.5])
    family, model = MSets(10, 3), LinearRewards(10, seed=4, mu=mu)
    p = run(SROQ(), family, model, 10**5)
    optimal = set(np.flatnonzero(p.env.optimal_action))
    eliminated = set()
    for e in p.events:
        eliminated |= set(e.data["eliminated"].tolist())
        assert optimal <= set(e.data["surviving"].tolist())
        assert set(e.data["representatives"]) == set(e.data["surviving"].tolist())
        for i, a in e.data["representatives"].items():
            assert a[i] and a.sum() == 3
    assert eliminated and not eliminated & optimal
    # survivors end as exactly the optimal arms, so the last epoch plays a* only
    assert set(p.events[-1].data["surviving"].tolist()) == optimal


def test_sroq_first_epoch_explores_every_arm():
    family, model = setting()
    p = run(SROQ(), family, model, 2000)
    first = p.events[0].data
    assert first["eliminated"].size == 0 and first["surviving"].size == D


def test_sroq_parallel_executor_gives_the_same_run():
    family, model = setting(d=10, m=3)
    a = run(SROQ(), family, model, 5000)
    with ThreadPoolExecutor(2) as ex:
        b = run(SROQ(executor=ex), family, model, 5000)
    assert a.cum_regret == b.cum_regret and a.log.adaptivity == b.log.adaptivity


@pytest.mark.parametrize("cls", [SROQ, AROQ])
def test_grouped_block_play_equals_interleaved_play(cls):
    """For pull-indexed models the schedule is played grouped by action; a model that
    refuses the shortcut goes through env.play round by round: same sums, same run."""
    family, model = setting(d=10, m=3, seed=6)
    slow = LinearRewards(10, seed=6)
    slow.pull_indexed = False
    a, b = run(cls(), family, model, 20_000), run(cls(), family, slow, 20_000)
    assert a.cum_regret == b.cum_regret
    assert np.array_equal(a.stats.sums, b.stats.sums)


# ----------------------------------------------------------------------------- all policies


@pytest.mark.parametrize("key", list(POLICIES))
def test_regret_is_sublinear(key):
    family, model = setting()
    per_round = [run(POLICIES[key](), family, model, T).cum_regret / T for T in (10**3, 10**5)]
    assert per_round[1] < 0.5 * per_round[0]


@pytest.mark.parametrize("key", list(POLICIES))
def test_advance_never_passes_until_and_chunking_changes_nothing(key):
    family, model = setting(d=10, m=3, seed=7)
    T = 6000
    checkpoints = [1, 2, 50, 999, 1000, 2500, 4000, T]
    rng = np.random.default_rng(0)
    random_stops = np.unique(np.concatenate([checkpoints, rng.integers(1, T, 60)]))
    results = []
    for stops in (checkpoints, random_stops):
        p = POLICIES[key]()
        p.reset(model.environment(family, 0), T)
        seen = {}
        for until in stops:
            while p.t < until:
                before = p.t
                t = p.advance(until)
                assert t == p.t and before < t <= until
            seen[int(until)] = p.cum_regret
            assert p.advance(until) == until  # no-op when already there
        results.append((p, {c: seen[c] for c in checkpoints}))
    (p1, r1), (p2, r2) = results
    assert r1 == r2
    c1, c2 = log_columns(p1.log), log_columns(p2.log)
    assert all(np.array_equal(c1[0][k], c2[0][k]) for k in c1[0]) and c1[1] == c2[1]
    assert [(e.t, e.kind) for e in p1.events] == [(e.t, e.kind) for e in p2.events]


@pytest.mark.parametrize("key", list(POLICIES))
def test_same_seed_same_run_and_other_seed_differs(key):
    def once(seed):
        family, model = setting(d=10, m=3, seed=seed)
        p = run(POLICIES[key](), family, model, 3000)
        return p.cum_regret, p.log.queries, [e.t for e in p.events]

    assert once(11) == once(11)
    assert once(11)[0] != once(12)[0]


def test_aroq_stops_right_before_each_oracle_round():
    family, model = setting()
    p = AROQ()
    p.reset(model.environment(family, 0), 10**5)
    stops = []
    while p.t < 10**5:
        stops.append(p.advance(10**5))
    calls = [e.t for e in p.events]
    assert stops[:-1] == [t - 1 for t in calls[1:]] and stops[-1] == 10**5


@pytest.mark.parametrize(
    ("factory", "match"),
    [
        (lambda: CUCB(C=0), "C must be"),
        (lambda: CUCB(C="x"), "C must be"),
        (lambda: BatchedCUCB(oracle_delay=-1), "oracle_delay"),
        (lambda: AROQ(C=-1.0), "C must be"),
        (lambda: AROQ(threshold_scale=0), "threshold_scale"),
        (lambda: AROQ(epoch0_size=-1), "epoch0_size"),
        (lambda: AlphaAROQ(alpha=0), "alpha"),
        (lambda: AlphaAROQ(alpha=1.5), "alpha must be a number > 0 and <= 1"),
        (lambda: AlphaAROQ(approximate=3), "approximate"),
        (lambda: SROQ(M=0), "M must be"),
        (lambda: SROQ(M=2.5), "M must be an integer"),
        (lambda: SROQ(grid="doubling"), "grid must be one of"),
        (lambda: sroq_time_grid(10, 11), "at most T"),
        (lambda: sroq_time_grid(10, 2, "x"), "grid must be one of"),
    ],
)
def test_bad_parameters_raise_value_error(factory, match):
    with pytest.raises(ValueError, match=match):
        factory()


@pytest.mark.parametrize("key", list(POLICIES))
def test_bad_reset_raises_value_error(key):
    family, model = setting(d=6, m=2)
    with pytest.raises(ValueError, match="horizon"):
        POLICIES[key]().reset(model.environment(family, 0), 0)

    class NotLinear(LinearRewards):
        linear = False
        key = "general"

    other = NotLinear(6, seed=0)
    with pytest.raises(ValueError, match="linear reward model"):
        POLICIES[key]().reset(other.environment(family, 0), 10)
    with pytest.raises(ValueError, match="M must be at most"):
        SROQ(M=20).reset(model.environment(family, 0), 10)


# ----------------------------------------------------------------------------- statistical


def test_aroq_regret_within_3x_of_cucb_on_section6_setting():
    """Section 6: d = 20, m = 3, mu ~ U[0, 1], uniform noise; 4 repetitions, T = 2 * 10^4."""
    family, model = setting(seed=2024)
    T, R = 20_000, 4
    cucb = BatchedCUCB().run([model.environment(family, r) for r in range(R)], T)
    aroq = [run(AROQ(), family, model, T, rep=r).cum_regret for r in range(R)]
    assert np.mean(aroq) <= 3 * np.mean(cucb.cum_regret)
    assert np.mean(cucb.cum_regret) > 0
