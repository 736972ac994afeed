"""The index skeleton's forced round robin without a pull counter: policies whose
index does not read the number of pulls decide whether a pull is forced from the
pulled arm's count (``jbandits.policies.blocks.index``). The arms pulled must be those of
the counter-based definition, :func:`jbandits.policies.blocks.arms.forced_arm`, for every number of
passes and with padded arms anywhere, and the index must take over right after."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jbandits.policies.blocks import arms
from jbandits.policies.blocks.index import index_policy
from jbandits.policies.thresholding.apt import apt_index


def _arms_pulled(policy, mask, rewards):
    state = policy.init(jax.random.key(0), mask)

    def step(state, r):
        return policy.step(state, jax.random.key(1), r[state.arm]), state.arm

    return np.asarray(jax.lax.scan(step, state, rewards)[1])


@pytest.mark.parametrize("num_arms", [10, 23])  # one-pass and two-pass selections
@pytest.mark.parametrize("passes", [1, 2, 3])
@pytest.mark.parametrize("local", [False, True])
@pytest.mark.parametrize("last_padded", [False, True])
def test_forced_pulls_follow_the_round_robin(num_arms, passes, local, last_padded):
    rng = np.random.default_rng(num_arms * 10 + passes)
    mask = rng.random(num_arms) < 0.7
    mask[0] = True
    mask[-1] = not last_padded
    mask = jnp.asarray(mask)
    policy = index_policy(
        num_arms,
        lambda s, m: apt_index(s, 0.5, 0.05),
        select="min",
        output=lambda s, m: s.counts,
        setting="thresholding",
        passes=passes,
        variance=False,
        local=local,
    )
    real = int(mask.sum())
    steps = passes * real + 3 * real
    rewards = jnp.asarray(rng.uniform(0.0, 1.0, (steps, num_arms)), jnp.float32)
    pulled = _arms_pulled(policy, mask, rewards)
    forced = [arms.forced_arm(t, mask, passes) for t in range(steps)]
    expect = [int(a) for f, a in forced if bool(f)]
    assert len(expect) == passes * real
    np.testing.assert_array_equal(pulled[: passes * real], expect)
    # after the forced pulls every real arm has been pulled `passes` times and the
    # index decides: the next arm is the index minimiser, not the round robin's
    counts = np.bincount(pulled[: passes * real], minlength=num_arms)
    np.testing.assert_array_equal(counts, np.where(np.asarray(mask), passes, 0))
    assert np.all(np.asarray(mask)[pulled])
    sums = np.zeros(num_arms)
    for t in range(passes * real):
        sums[pulled[t]] += float(rewards[t, pulled[t]])
    n = np.maximum(counts, 1)
    index = np.sqrt(n) * (np.abs(sums / n - 0.5) + 0.05)
    assert pulled[passes * real] == np.argmin(np.where(mask, index, np.inf))
