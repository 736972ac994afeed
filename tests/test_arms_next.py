"""The active arm least arms.steps_ahead of the current one is arms.round_robin one
pull later."""

import jax
import jax.numpy as jnp
import numpy as np

from jbandits.policies.blocks import arms


def test_least_steps_ahead_is_round_robin_one_pull_later():
    rng = np.random.default_rng(0)
    masks = rng.random((200, 9)) < 0.5
    masks[np.arange(200), rng.integers(0, 9, 200)] = True  # >= 1 real arm
    masks[0] = False  # none real: -1
    ts = rng.integers(0, 40, 200)

    def one(mask, t):
        now = arms.round_robin(t, mask)
        ahead = arms.steps_ahead(now, mask.shape[-1])
        return arms.argmin_masked(ahead, mask), arms.round_robin(t + 1, mask)

    got, want = jax.jit(jax.vmap(one))(jnp.asarray(masks), jnp.asarray(ts))
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
    assert int(got[0]) == -1
