"""A user's own policy in one file, from the public author tier only: epsilon-greedy
(Sutton & Barto, Reinforcement Learning, 2nd ed., 2018, §2.2), registered so that
jbandits batches it, sweeps its epsilon with one compilation and stores its runs.

    import jbandits, examples.epsilon_greedy
    policy = jbandits.make("epsilon_greedy", num_arms=4, epsilon=0.1)
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp

import jbandits
from jbandits.policies.blocks import arms


class State(NamedTuple):
    stats: arms.ArmStats
    arm_mask: jax.Array  # [K] bool: the real arms
    t: jax.Array  # [] int32: pulls made
    arm: jax.Array  # [] int32: the arm to pull next (the contract)


@jbandits.registry.policy("epsilon_greedy")
def epsilon_greedy(num_arms: int, *, epsilon=0.1) -> jbandits.Policy:
    """Pull every arm once, then with probability ``epsilon`` a uniformly random real
    arm, else the empirical best (ties: lowest index). ``epsilon`` is traced."""

    def init(key, arm_mask):
        del key
        zero = jnp.zeros((), jnp.int32)
        return State(
            arms.init_stats(num_arms), arm_mask, zero, arms.round_robin(0, arm_mask)
        )

    def step(state, key, reward):  # reward: that of state.arm
        stats = arms.update(state.stats, state.arm, reward)
        t = state.t + 1
        explore_key, arm_key = jax.random.split(key)
        uniform = jax.random.uniform(arm_key, (num_arms,))
        random_arm = arms.argmax_masked(uniform, state.arm_mask)
        greedy = arms.best_empirical(stats, state.arm_mask)
        explore = jax.random.uniform(explore_key) < epsilon
        warm_up = t < jnp.sum(state.arm_mask)
        arm = jnp.where(
            warm_up,
            arms.round_robin(t, state.arm_mask),
            jnp.where(explore, random_arm, greedy),
        )
        return State(stats, state.arm_mask, t, arm.astype(jnp.int32))

    def output(state):  # the recommended arm
        return arms.best_empirical(state.stats, state.arm_mask)

    return jbandits.Policy(init, step, output, "regret")
