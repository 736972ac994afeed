"""A registered policy's numbers are data: in ``policy.params`` and in its state."""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jbandits
from jbandits.core.numbers import WithParams
from jbandits.core.types import Policy


def test_make_fills_in_the_numeric_defaults_and_keeps_structure_apart():
    policy = jbandits.make("ucbv", num_arms=3)
    assert dict(policy.spec.static) == {"num_arms": 3}
    factory = jbandits.core.registry.raw_factory("ucbv")
    import inspect

    numeric = {
        k: p.default
        for k, p in inspect.signature(factory).parameters.items()
        if isinstance(p.default, (int, float)) and not isinstance(p.default, bool)
    }
    assert numeric and policy.params == numeric
    assert jbandits.make("ucb1", num_arms=3, alpha=3.0).params == {"alpha": 3.0}


def test_init_puts_the_numbers_into_the_state_and_step_reads_them_there():
    key = jax.random.key(0)
    policy = jbandits.make("apt", num_arms=3, threshold=0.5, epsilon=0.1)
    state = policy.init(key, jnp.ones(3, bool))
    assert isinstance(state, WithParams)
    assert set(state.params) == {"threshold", "epsilon"}
    assert state.stats is state.inner.stats  # the algorithm's fields read through
    # the same state with other numbers is the policy with those numbers
    other = jbandits.make("apt", num_arms=3, threshold=0.9, epsilon=0.1)
    rewards = [1.0, 0.0, 1.0, 1.0, 0.0, 1.0, 1.0, 1.0]

    def arms(policy, state):
        out = []
        for t, r in enumerate(rewards):
            out.append(int(state.arm))
            state = policy.step(state, jax.random.key(t), r)
        return out

    swapped = state._replace(params={**state.params, "threshold": jnp.float32(0.9)})
    assert arms(policy, swapped) == arms(other, other.init(key, jnp.ones(3, bool)))
    assert arms(policy, state) != arms(policy, swapped)


def test_a_jitted_loop_and_an_eager_loop_agree():
    policy = jbandits.make("ucb1", num_arms=4, alpha=1.5)
    key = jax.random.key(3)
    rewards = jnp.asarray([0.2, 0.9, 0.1, 0.5, 0.7, 0.3, 0.8, 0.6, 0.4, 1.0])

    def body(state, xs):
        t, r = xs
        return policy.step(state, jax.random.fold_in(key, t), r), state.arm

    state0 = policy.init(key, jnp.ones(4, bool))
    _, jitted = jax.jit(lambda s: jax.lax.scan(body, s, (jnp.arange(10), rewards)))(
        state0
    )
    state, eager = state0, []
    for t in range(10):
        eager.append(int(state.arm))
        state = policy.step(state, jax.random.fold_in(key, t), rewards[t])
    assert np.asarray(jitted).tolist() == eager


def test_bind_refuses_a_number_as_structure():
    with pytest.raises(ValueError, match="epsilon=0.1 is a number"):
        jbandits.core.registry.bind("apt", num_arms=3, epsilon=0.1)
    structure = jbandits.core.registry.bind("apt", num_arms=3)
    assert structure.policy({"threshold": 0.5}).params == {
        "threshold": 0.5,
        **dict(structure.defaults),
    }


class _Outside(NamedTuple):
    arm: jax.Array
    total: jax.Array


def test_a_state_class_made_inside_the_factory_sweeps(tmp_path):
    """A factory that defines its state class inside makes a new class per build;
    the state keeps the class it was made with, and the numbers sweep in one program."""

    @jbandits.core.registry.policy("tmp_local_state")
    def tmp_local_state(num_arms: int, *, weight: float = 1.0) -> Policy:
        class Local(NamedTuple):
            arm: jax.Array
            total: jax.Array

        def init(key, mask):
            return Local(jnp.int32(0), jnp.zeros(num_arms))

        def step(state, key, reward):
            total = state.total.at[state.arm].add(weight * reward)
            return Local((state.arm + 1) % num_arms, total)

        return Policy(init, step, lambda s: jnp.argmax(s.total), "regret")

    try:
        bandit, params = jbandits.envs.bernoulli([0.2, 0.8])
        results = [
            jbandits.simulate(
                jbandits.make("tmp_local_state", num_arms=2, weight=w),
                bandit,
                params,
                jax.random.key(0),
                budget=10,
                num_reps=4,
                progress=False,
                return_state=True,
            )
            for w in (1.0, 2.0)
        ]
        a, b = (np.asarray(r.state.inner.total) for r in results)
        np.testing.assert_allclose(b, 2 * a)
        assert np.asarray(results[1].state.params["weight"]).max() == 2.0
    finally:
        jbandits.core.registry.unregister("tmp_local_state")
