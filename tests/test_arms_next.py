"""arms.next_active steps the round robin of arms.round_robin by one pull."""

import jax
import jax.numpy as jnp
import numpy as np

from jbandits import arms


def test_next_active_is_round_robin_one_pull_later():
    rng = np.random.default_rng(0)
    masks = rng.random((200, 9)) < 0.5
    masks[np.arange(200), rng.integers(0, 9, 200)] = True  # >= 1 real arm
    masks[0] = False  # none real: -1
    ts = rng.integers(0, 40, 200)

    def one(mask, t):
        now = arms.round_robin(t, mask)
        return arms.next_active(now, mask), arms.round_robin(t + 1, mask)

    got, want = jax.jit(jax.vmap(one))(jnp.asarray(masks), jnp.asarray(ts))
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
    assert int(got[0]) == -1
