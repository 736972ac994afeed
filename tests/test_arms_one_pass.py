"""jbandits.policies.blocks.arms "first" selection over few arms: the one-pass (value, index)
reduction and the knock-out tree return the arm of the two-pass form (reduction,
comparison, first index), and the forced round robin's next real arm is
round_robin's next arm."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jbandits.policies.blocks import arms

SPECIAL = np.asarray([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0], np.float32)


def _cases(num_arms, n=3000, seed=0):
    rng = np.random.default_rng(seed + num_arms)
    # few distinct values (many ties), with NaN, +-inf and both zeros
    score = rng.choice(SPECIAL, (n, num_arms)).astype(np.float32)
    plain = rng.random((n, num_arms)) < 0.3
    score[plain] = rng.integers(-2, 3, plain.sum())
    mask = rng.random((n, num_arms)) < 0.7
    mask[:20] = False  # no eligible arm: -1
    mask[20:40] = True
    return jnp.asarray(score), jnp.asarray(mask)


def _reference(score, mask, largest):
    """Lowest-index best eligible arm; NaN ranks as the worst value."""
    if not mask.any():
        return -1
    worst = -np.inf if largest else np.inf
    s = np.where(np.isnan(score) | ~mask, worst, score)
    best = s[mask].max() if largest else s[mask].min()
    tied = np.flatnonzero(mask & (s == best))
    return int(tied[0]) if tied.size else -1


def _check_reference(got, score, mask, largest):
    want = [
        _reference(s, m, largest)
        for s, m in zip(np.asarray(score), np.asarray(mask), strict=True)
    ]
    assert np.asarray(got).tolist() == want
    assert (np.asarray(got) == -1).sum() >= 20  # the rows without an eligible arm


@pytest.mark.parametrize("largest", [False, True])
@pytest.mark.parametrize("num_arms", [3, arms.ONE_PASS_MAX_ARMS])
def test_one_pass_matches_two_passes(num_arms, largest, monkeypatch):
    assert arms.uses_one_pass(num_arms, "first")
    score, mask = _cases(num_arms)
    fn = arms.argmax_masked if largest else arms.argmin_masked
    one = jax.jit(jax.vmap(lambda s, m: fn(s, m)))(score, mask)
    monkeypatch.setattr(arms.selection, "ONE_PASS_MAX_ARMS", 0)  # the two-pass form
    assert not arms.uses_one_pass(num_arms, "first")
    two = jax.jit(jax.vmap(lambda s, m: fn(s, m)))(score, mask)
    np.testing.assert_array_equal(np.asarray(one), np.asarray(two))
    _check_reference(one, score, mask, largest)


@pytest.mark.parametrize("largest", [False, True])
@pytest.mark.parametrize(
    "num_arms", [arms.ONE_PASS_MAX_ARMS + 1, 33, arms.TREE_MAX_ARMS]
)
def test_tree_matches_two_passes(num_arms, largest, monkeypatch):
    """The knock-out tree (asked for) gives the arm of the two-pass form."""
    assert arms.uses_tree(num_arms, "first")
    score, mask = _cases(num_arms)
    fn = arms.argmax_masked if largest else arms.argmin_masked
    tree = jax.jit(jax.vmap(lambda s, m: fn(s, m, tree=True)))(score, mask)
    two = jax.jit(jax.vmap(lambda s, m: fn(s, m)))(score, mask)  # not asked for
    monkeypatch.setattr(arms.selection, "TREE_MAX_ARMS", 0)
    assert not arms.uses_tree(num_arms, "first")
    also_two = jax.jit(jax.vmap(lambda s, m: fn(s, m, tree=True)))(score, mask)
    np.testing.assert_array_equal(np.asarray(two), np.asarray(also_two))
    np.testing.assert_array_equal(np.asarray(tree), np.asarray(two))
    _check_reference(tree, score, mask, largest)


def test_one_pass_is_only_for_first_ties_and_few_arms():
    assert not arms.uses_one_pass(arms.ONE_PASS_MAX_ARMS + 1, "first")
    assert not arms.uses_one_pass(4, "random")
    assert not arms.uses_tree(arms.ONE_PASS_MAX_ARMS, "first")
    assert not arms.uses_tree(arms.TREE_MAX_ARMS + 1, "first")
    assert not arms.uses_tree(20, "random")


def test_one_pass_under_grad_has_no_gradient_issue():
    """The selection sits in differentiated code (tuning); its reduction must trace."""

    def f(x):
        arm = arms.argmax_masked(x * jnp.arange(4.0), jnp.ones(4, bool))
        return jnp.sum(x * jnp.arange(4.0)) + arm.astype(jnp.float32)

    assert float(jax.grad(f)(1.0)) == 6.0


@pytest.mark.parametrize("num_arms", [2, 5, 10, 33])
def test_next_real_is_the_next_round_robin_arm(num_arms):
    rng = np.random.default_rng(num_arms)
    masks = jnp.asarray(rng.random((40, num_arms)) < 0.6)
    ts = jnp.arange(1, 2 * num_arms + 1)

    def one(mask, t):
        got = arms.next_real(arms.round_robin(t - 1, mask), mask)
        return got, jnp.where(jnp.any(mask), arms.round_robin(t, mask), -1)

    grid = jax.vmap(lambda m: jax.vmap(lambda t: one(m, t))(ts))
    got, want = jax.jit(grid)(masks)
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


def test_eager_one_pass_selection_compiles_once():
    """Eager calls (notebooks) reuse one compiled reduction: its comparator is a
    module-level function (a fresh closure per call recompiled every selection)."""
    compiles = []

    def listen(event, duration, **kw):
        del duration, kw
        if event.endswith("backend_compile_duration"):
            compiles.append(event)

    rng = np.random.default_rng(0)
    mask = jnp.ones(6, bool)
    arms.argmax_masked(jnp.asarray(rng.random(6), jnp.float32), mask)  # warm
    jax.monitoring.register_event_duration_secs_listener(listen)
    try:
        for _ in range(5):
            arms.argmax_masked(jnp.asarray(rng.random(6), jnp.float32), mask)
            arms.argmin_masked(jnp.asarray(rng.random(6), jnp.float32), mask)
    finally:
        jax.monitoring.unregister_event_duration_listener(listen)
    assert len(compiles) <= 2  # argmin_masked's first call
