"""jbandits.policies.blocks.arms: masked selection helpers and the compensated Welford statistics."""

import itertools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jbandits.policies.blocks import arms

NAN, INF = float("nan"), float("inf")
SPECIAL = [NAN, INF, -INF, 0.0, 1.0, 3e38, -3e38]


def _f32(x):
    return jnp.asarray(x, jnp.float32)


# ------------------------------------------------------------------ arg-max / arg-min
@pytest.mark.parametrize("select", [arms.argmax_masked, arms.argmin_masked])
def test_all_nan_selects_first_eligible_not_arm_zero(select):
    score = _f32([NAN] * 5)
    mask = jnp.asarray([False, False, True, True, False])
    assert int(select(score, mask)) == 2
    key = jax.random.key(0)
    picks = {
        int(select(score, mask, key=k, tie_break="random"))
        for k in jax.random.split(key, 40)
    }
    assert picks == {2, 3}  # all-NaN eligible arms are tied


@pytest.mark.parametrize("select", [arms.argmax_masked, arms.argmin_masked])
def test_nan_ranks_worst_and_never_beats_a_finite_score(select):
    # one finite eligible arm among NaNs is always chosen
    score = _f32([NAN, NAN, 0.3, NAN])
    assert int(select(score, jnp.ones(4, bool))) == 2
    assert int(select(score)) == 2


def test_nan_ties_with_the_legitimate_worst_value():
    score = _f32([NAN, -INF, 5.0])
    assert int(arms.argmax_masked(score)) == 2
    assert int(arms.argmax_masked(_f32([NAN, -INF]))) == 0  # tied at -inf: first
    assert int(arms.argmin_masked(_f32([NAN, INF]))) == 0
    assert int(arms.argmin_masked(_f32([2.0, NAN, -INF]))) == 2


def test_infinities_are_legitimate_priorities():
    score = _f32([1.0, INF, 2.0, INF])
    assert int(arms.argmax_masked(score)) == 1
    assert int(arms.argmin_masked(-score)) == 1
    mask = jnp.asarray([True, False, True, True])
    assert int(arms.argmax_masked(score, mask)) == 3


@pytest.mark.parametrize("select", [arms.argmax_masked, arms.argmin_masked])
def test_empty_eligible_set_is_idle(select):
    assert int(select(_f32([1.0, NAN, 2.0]), jnp.zeros(3, bool))) == -1


@pytest.mark.parametrize("tie_break", ["first", "random"])
@pytest.mark.parametrize("select", [arms.argmax_masked, arms.argmin_masked])
def test_masked_arm_never_selected_exhaustive(select, tie_break):
    """Every 4-vector over {NaN, +-inf, 0, 1, +-3e38} and every non-empty mask."""
    values = np.array(list(itertools.product(SPECIAL, repeat=4)), np.float32)
    masks = np.array(
        [m for m in itertools.product([False, True], repeat=4) if any(m)], bool
    )
    score = np.repeat(values, len(masks), axis=0)
    mask = np.tile(masks, (len(values), 1))
    keys = jax.random.split(jax.random.key(1), len(score))
    pick = jax.jit(jax.vmap(lambda s, m, k: select(s, m, key=k, tie_break=tie_break)))(
        score, mask, keys
    )
    pick = np.asarray(pick)
    assert pick.min() >= 0
    assert mask[np.arange(len(pick)), pick].all()
    # the pick is optimal among the eligible arms once NaN counts as the worst value
    worst = -np.inf if select is arms.argmax_masked else np.inf
    clean = np.where(mask & ~np.isnan(score), score, worst)
    best = clean.max(1) if select is arms.argmax_masked else clean.min(1)
    assert (clean[np.arange(len(pick)), pick] == best).all()


def test_first_tie_break_is_lowest_index():
    score = _f32([0.1, 0.7, 0.7, 0.2, 0.7])
    assert int(arms.argmax_masked(score)) == 1
    assert int(arms.argmax_masked(score, jnp.asarray([1, 0, 1, 1, 1], bool))) == 2
    assert int(arms.argmin_masked(score, jnp.asarray([0, 1, 1, 1, 1], bool))) == 3


def test_random_tie_break_is_uniform_over_tied_eligible_arms():
    score = _f32([0.7, 0.7, 0.1, 0.7, 0.7])
    mask = jnp.asarray([True, False, True, True, True])
    keys = jax.random.split(jax.random.key(2), 3000)
    picks = jax.vmap(
        lambda k: arms.argmax_masked(score, mask, key=k, tie_break="random")
    )(keys)
    counts = np.bincount(np.asarray(picks), minlength=5)
    assert counts[1] == counts[2] == 0
    assert np.all(np.abs(counts[[0, 3, 4]] - 1000) < 5 * np.sqrt(1000 * 2 / 3))


def test_tie_break_validation():
    with pytest.raises(ValueError, match="tie_break"):
        arms.argmax_masked(_f32([1.0, 2.0]), tie_break="last")
    with pytest.raises(ValueError, match="key"):
        arms.argmax_masked(_f32([1.0, 2.0]), tie_break="random")


# ------------------------------------------------------------- other selection helpers
def test_nth_active_and_round_robin():
    active = jnp.asarray([False, True, False, True, True])
    assert [int(arms.nth_active(active, j)) for j in range(4)] == [1, 3, 4, -1]
    assert int(arms.nth_active(jnp.zeros(5, bool), 0)) == -1
    assert [int(arms.round_robin(t, active)) for t in range(7)] == [1, 3, 4, 1, 3, 4, 1]
    assert int(arms.round_robin(3, jnp.zeros(5, bool))) == -1


def test_forced_arm_and_least_pulled():
    mask = jnp.asarray([True, False, True, True])
    out = [tuple(map(int, arms.forced_arm(t, mask, passes=2))) for t in range(8)]
    assert out == [(1, 0), (1, 2), (1, 3), (1, 0), (1, 2), (1, 3), (0, 0), (0, 2)]
    counts = _f32([0.0, 5.0, 3.0, 3.0])
    assert int(arms.least_pulled(counts, jnp.asarray([False, True, True, True]))) == 2
    assert int(arms.least_pulled(counts, jnp.zeros(4, bool))) == -1


@pytest.mark.parametrize(
    ("score", "active", "k", "want"),
    [
        ([0.1, 0.9, 0.5, 0.7], [1, 1, 1, 1], 2, [0, 1, 0, 1]),
        ([0.1, 0.9, 0.5, 0.5], [1, 0, 1, 1], 2, [0, 0, 1, 1]),  # tie -> first
        # NaN / -inf rank last among the active arms but before the inactive ones
        ([NAN, 0.9, 0.5, -INF], [1, 0, 1, 1], 3, [1, 0, 1, 1]),
        ([NAN, 0.9, -INF, NAN], [1, 0, 1, 1], 2, [1, 0, 1, 0]),
        ([NAN, NAN, NAN, NAN], [0, 1, 1, 1], 3, [0, 1, 1, 1]),
        ([0.1, 0.9, 0.5, 0.7], [1, 1, 0, 0], 3, [1, 1, 0, 0]),  # k > #active
    ],
)
def test_keep_top(score, active, k, want):
    got = arms.keep_top(_f32(score), jnp.asarray(active, bool), k)
    assert np.asarray(got).astype(int).tolist() == want


def test_keep_top_keeps_exactly_k_active_arms_for_any_scores():
    rng = np.random.default_rng(0)
    score = rng.choice(np.array(SPECIAL, np.float32), size=(500, 7))
    active = rng.random((500, 7)) < 0.6
    k = rng.integers(0, 8, 500)
    got = np.asarray(jax.jit(jax.vmap(arms.keep_top))(score, active, k))
    assert not (got & ~active).any()
    assert (got.sum(1) == np.minimum(k, active.sum(1))).all()


def _selection_order(select, score, eligible):
    """Arms in the order of repeated ``select`` calls without replacement."""
    order, left = [], np.asarray(eligible).copy()
    while left.any():
        pick = int(select(score, jnp.asarray(left)))
        order.append(pick)
        left[pick] = False
    return order


@pytest.mark.parametrize("largest", [True, False])
def test_rank_is_the_order_of_repeated_masked_selections(largest):
    # special values (NaN, +-inf, -0.0 vs 0.0, ties) and random masks
    values = np.array([*SPECIAL, -0.0, 1.0, 1.0], np.float32)
    rng = np.random.default_rng(1)
    score = rng.choice(values, size=(60, 6))
    eligible = rng.random((60, 6)) < 0.7
    got = np.asarray(
        jax.jit(jax.vmap(lambda s, e: arms.rank(s, e, largest=largest)))(
            score, eligible
        )
    )
    select = arms.argmax_masked if largest else arms.argmin_masked
    for s, e, r in zip(score, eligible, got, strict=True):
        order = _selection_order(select, _f32(s), e)
        assert r[order].tolist() == list(range(len(order)))
        assert (r[~e] >= e.sum()).all()  # ineligible arms rank after every eligible
        assert sorted(r.tolist()) == list(range(6))  # a permutation


def test_rank_hand_checked():
    score = _f32([0.5, 0.9, 0.5, NAN, -0.0, 0.0])
    assert arms.rank(score).tolist() == [1, 0, 2, 5, 3, 4]  # ties by index, NaN last
    assert arms.rank(score, largest=False).tolist() == [2, 4, 3, 5, 0, 1]
    mask = jnp.asarray([True, False, True, True, False, True])
    assert arms.rank(score, mask).tolist()[:4] == [0, 4, 1, 3]


def test_read_outs_never_pick_padded_or_unpulled_arms():
    mask = jnp.asarray([False, True, True, True])
    stats = _feed(arms.init_stats(4), jnp.asarray([1, 2, 2]), _f32([0.2, 0.9, 0.7]))
    assert int(arms.best_empirical(stats, mask)) == 2
    assert np.asarray(arms.labels_above(stats, mask, 0.5)).tolist() == [
        False,
        False,
        True,
        False,
    ]
    nan_stats = arms.update(stats, 1, NAN)  # arm 1's mean becomes NaN
    assert int(arms.best_empirical(nan_stats, mask)) == 2
    assert int(arms.best_empirical(arms.init_stats(4), mask)) == 1


# --------------------------------------------------------------------------- Welford
@jax.jit
def _feed(stats, pulls, rewards):
    """Apply ``update`` for each (arm, reward) pair in order, under one scan."""

    def body(st, pr):
        return arms.update(st, pr[0], pr[1]), None

    return jax.lax.scan(body, stats, (pulls, rewards))[0]


def test_update_matches_numpy_and_ignores_idle():
    rng = np.random.default_rng(3)
    rewards = rng.normal(0.5, 2.0, size=(3, 40))
    pulls = np.tile(np.array([0, 1, 2, -1]), 40)  # -1: idle, a no-op
    seq = np.concatenate([rewards.T, np.full((40, 1), 123.0)], 1).ravel()
    stats = _feed(arms.init_stats(4), jnp.asarray(pulls), _f32(seq))
    stats = arms.update(stats, 3, 7.0, weight=False)  # weight False: no-op
    counts = np.asarray(stats.counts)
    assert counts.tolist() == [40, 40, 40, 0]
    np.testing.assert_allclose(arms.mean(stats)[:3], rewards.mean(1), rtol=1e-5)
    np.testing.assert_allclose(arms.var_biased(stats)[:3], rewards.var(1), rtol=1e-4)
    np.testing.assert_allclose(
        arms.var_unbiased(stats)[:3], rewards.var(1, ddof=1), rtol=1e-4
    )
    assert float(arms.mean(stats)[3]) == 0.0 and float(arms.var_biased(stats)[3]) == 0


def test_exactly_summable_rewards_keep_sum_over_n_means():
    """Bernoulli / half-integer rewards: no compensation, mean bit-identical to sum/n."""
    rng = np.random.default_rng(4)
    rewards = rng.integers(0, 3, size=(2, 300)) / 2.0
    pulls = np.tile(np.array([0, 1]), 300)
    stats = _feed(arms.init_stats(2), jnp.asarray(pulls), _f32(rewards.T.ravel()))
    np.testing.assert_array_equal(stats.sums, rewards.sum(1).astype(np.float32))
    np.testing.assert_array_equal(stats.sums_err, 0.0)
    want = (rewards.sum(1) / 300).astype(np.float32)
    np.testing.assert_array_equal(arms.mean(stats), want)


def test_hand_built_three_field_stats_still_update():
    stats = arms.ArmStats(_f32([1.0, 0.0]), _f32([0.5, 0.0]), _f32([0.0, 0.0]))
    stats = arms.update(stats, 0, 1.5)
    assert (
        float(arms.mean(stats)[0]) == 1.0 and float(arms.var_biased(stats)[0]) == 0.25
    )


def test_welford_float32_accuracy_at_1e7_pulls_with_large_offsets():
    """1e7 pulls of N(offset, 1) in float32 against float64 NumPy (same rewards).

    Uncompensated float32 sums gave mean 8870.5 for offset 1e4 (rel. error 0.11) and a
    variance 4e5 times too large; even at offset 0 the variance was off by 1.6%.
    """
    n = 10_000_000
    offsets = np.array([0.0, 1e4, -1e4], np.float32)
    noise = np.random.default_rng(5).standard_normal(n).astype(np.float32)

    @jax.jit
    def accumulate(offset, noise):
        def body(stats, r):
            return arms.update(stats, 0, offset + r), None  # float32 add, as below

        stats, _ = jax.lax.scan(body, arms.init_stats(2), noise)
        return arms.mean(stats)[0], arms.var_biased(stats)[0]

    noise_dev = jnp.asarray(noise)
    for offset in offsets:
        mean, var = map(float, accumulate(offset, noise_dev))
        x64 = (offset + noise).astype(np.float64)  # the float32 rewards, exactly
        want_mean, want_var = x64.mean(), x64.var()
        scale = max(abs(want_mean), 1.0)  # offset 0: relative to the std
        assert abs(mean - want_mean) / scale <= 1e-5, (offset, mean, want_mean)
        assert abs(var - want_var) / want_var <= 1e-3, (offset, var, want_var)


def test_statistics_without_second_moment_match_and_refuse_a_variance():
    """init_stats(K, variance=False): the same counts, sums and compensations as the
    full statistics on any reward sequence (idle steps included), no M2 to update,
    and a loud error where a variance is read."""
    rng = np.random.default_rng(7)
    full, lean = arms.init_stats(5), arms.init_stats(5, variance=False)
    assert lean.m2 is None and lean.m2_err is None
    for arm, x in zip(
        rng.integers(-1, 5, 300), rng.normal(100.0, 3.0, 300), strict=True
    ):
        full = arms.update(full, arm, x)
        lean = arms.update(lean, arm, x)
    for name in ("counts", "sums", "sums_err"):
        np.testing.assert_array_equal(getattr(lean, name), getattr(full, name))
    assert lean.m2 is None
    for fn in (arms.var_biased, arms.var_unbiased):
        with pytest.raises(ValueError, match="second moment"):
            fn(lean)


def test_mean_only_policies_keep_no_second_moment():
    """APT, UCB1 and SH read no variance, so their statistics carry no M2; UCB-V's do."""
    import jbandits

    def stats_of(policy):
        state = policy.init(jax.random.key(0), jnp.ones(4, bool))
        return [
            s
            for s in jax.tree_util.tree_leaves(
                state, is_leaf=lambda x: isinstance(x, arms.ArmStats)
            )
            if isinstance(s, arms.ArmStats)
        ]

    for policy in (
        jbandits.apt(4, threshold=0.5),
        jbandits.make("ucb1", num_arms=4),
        jbandits.make("sequential_halving", num_arms=4, budget=100),
    ):
        assert all(s.m2 is None for s in stats_of(policy))
    assert all(s.m2 is not None for s in stats_of(jbandits.make("ucbv", num_arms=4)))
