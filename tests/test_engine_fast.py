"""Engine: the unguarded fast segments give exactly the guarded engine's results.

With ``axis_name`` set, a segment in which every lane stays live runs without the
per-step select over the carry (and is redone guarded if a lane meets an idle state
inside it). Without ``axis_name`` every step is guarded. Both must agree bit for bit,
including lanes whose budgets end inside a segment and policies that go idle by
themselves at a time of their own.
"""

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from harness import slow_where

import jbandits
from jbandits.core.types import Policy
from jbandits.sim import engine

K = 6
BUDGETS = np.array([256, 256, 6, 256, 100, 256, 256, 256], np.int32)


def _runs(policy, bandit, params, axis_name):
    def one(key, budget):
        return engine.run(
            policy,
            bandit,
            params,
            key,
            budget=budget,
            horizon=256,
            num_checkpoints=2,
            permute=True,
            axis_name=axis_name,
        )

    keys = jax.random.split(jax.random.key(3), BUDGETS.size)
    fn = jax.vmap(one, axis_name=axis_name) if axis_name else jax.vmap(one)
    return jax.jit(fn)(keys, jnp.asarray(BUDGETS))


class _State(NamedTuple):
    t: jax.Array
    stop: jax.Array
    arm: jax.Array


def _stops_at_random() -> Policy:
    """Pulls uniformly random arms; goes idle after a random number of pulls."""

    def init(key, mask):
        del mask
        zero = jnp.zeros((), jnp.int32)
        return _State(zero, jax.random.randint(key, (), 1, 250), zero)

    def step(state, key, reward):
        del reward
        t = state.t + 1
        arm = jnp.where(t >= state.stop, -1, jax.random.randint(key, (), 0, K))
        return _State(t, state.stop, arm.astype(jnp.int32))

    return Policy(init, step, lambda s: s.t, "regret")


POLICIES = {
    "ucb1": lambda: jbandits.make("ucb1", num_arms=K),
    # key-free steps: the fast segment advances the step counter once per segment
    "ucb1_first": lambda: jbandits.make("ucb1", num_arms=K, tie_break="first"),
    "apt": lambda: jbandits.make("apt", num_arms=K, threshold=0.5, epsilon=0.05),
    "stops_at_random": lambda: _stops_at_random(),
    "median_elimination": lambda: jbandits.make(
        "median_elimination", num_arms=K, eps=0.5, delta=0.5
    ),
}


# the slowest two (7-8 s each on 2 cores) run in CI's slow step
@pytest.mark.parametrize(
    "name", slow_where(sorted(POLICIES), {"median_elimination", "stops_at_random"})
)
def test_fast_segments_equal_guarded_steps(name):
    bandit, params = jbandits.envs.bernoulli(np.linspace(0.2, 0.8, K))
    policy = POLICIES[name]()
    fast = _runs(policy, bandit, params, "lanes")
    slow = _runs(policy, bandit, params, None)
    for field in ("pulls", "num_pulls", "stopped", "output", "regret", "reward"):
        np.testing.assert_array_equal(
            np.asarray(getattr(fast, field)), np.asarray(getattr(slow, field)), field
        )
    np.testing.assert_array_equal(
        fast.num_pulls[fast.stopped == 0], BUDGETS[np.asarray(fast.stopped) == 0]
    )
    if name == "stops_at_random":  # the idle path is exercised
        assert 0 < np.asarray(fast.stopped).sum() < BUDGETS.size


def test_key_free_steps_are_recognised():
    """APT and first-tie UCB1 never read their step key (the engine then keeps no
    per-step counter inside a fast segment); random-tie UCB1 does."""
    mask = jnp.ones(K, bool)
    reward = jnp.float32(0.5)
    for name, reads in (("apt", False), ("ucb1_first", False), ("ucb1", True)):
        policy = POLICIES[name]()
        state = policy.init(jax.random.key(0), mask)
        assert engine.step_reads_key(policy, state, reward) is reads, name
