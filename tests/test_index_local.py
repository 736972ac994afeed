"""The index skeleton's cached per-arm index (``local=True``): after every pull the
cache equals the index recomputed over all arms, and the arms pulled are those of
the uncached policy fed the same rewards."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jbandits.policies.blocks import arms
from jbandits.policies.blocks.index import index_policy
from jbandits.policies.identification.ucb_e import ucb_e_index
from jbandits.policies.thresholding.apt import apt_index
from jbandits.policies.thresholding.lsa import lsa_index


def _ucbev_like(stats, mask):
    """Reads the variance (statistics with a second moment)."""
    n = jnp.maximum(stats.counts, 1.0)
    return jnp.abs(arms.mean(stats) - 0.4) - jnp.sqrt(
        0.5 * arms.var_unbiased(stats) / n
    )


INDICES = {
    "apt": (lambda s, m: apt_index(s, 0.5, 0.05), "min", False, 1),
    "lsa": (lambda s, m: lsa_index(s, 0.5, 2.0), "min", False, 1),
    "ucb_e": (lambda s, m: ucb_e_index(s, 3.0), "max", False, 1),
    "variance": (_ucbev_like, "min", True, 2),
}


def _play(policy, mask, rewards, key):
    state = policy.init(key, mask)

    def step(state, r):
        new = policy.step(state, key, r[jnp.maximum(state.arm, 0)])
        return new, (state.arm, new)

    return jax.lax.scan(step, state, rewards)[1]


@pytest.mark.parametrize("num_arms", [10, 23])  # one-pass and two-pass selections
@pytest.mark.parametrize("name", sorted(INDICES))
def test_cached_index_is_the_recomputed_index(name, num_arms):
    index, select, variance, passes = INDICES[name]
    build = lambda local: index_policy(  # noqa: E731
        num_arms,
        index,
        select=select,
        output=lambda s, m: s.counts,
        setting="thresholding",
        passes=passes,
        variance=variance,
        local=local,
    )
    rng = np.random.default_rng(num_arms)
    mask = jnp.asarray(rng.random(num_arms) < 0.8).at[0].set(True)
    # few distinct rewards: ties between indices are frequent
    rewards = jnp.asarray(rng.integers(0, 3, (300, num_arms)) / 2.0, jnp.float32)
    key = jax.random.key(0)
    arms_cached, states = jax.jit(lambda r: _play(build(True), mask, r, key))(rewards)
    arms_plain, _ = jax.jit(lambda r: _play(build(False), mask, r, key))(rewards)
    np.testing.assert_array_equal(np.asarray(arms_cached), np.asarray(arms_plain))
    full = jax.vmap(lambda s: index(s, mask))(states.stats)
    real = np.asarray(mask)
    np.testing.assert_array_equal(
        np.asarray(states.index)[:, real], np.asarray(full)[:, real]
    )
    assert len(set(np.asarray(arms_cached).tolist())) == real.sum()


def test_local_index_cannot_read_the_pulls():
    with pytest.raises(ValueError, match="number of pulls"):
        index_policy(
            3,
            lambda s, m, n: s.counts,
            select="max",
            output=lambda s, m: s.counts,
            setting="regret",
            with_pulls=True,
            local=True,
        )
