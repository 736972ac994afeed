"""A registered policy is its structure plus its numbers: ``make`` returns the factory's
own policy (its own state type) with the numbers in ``policy.params``; the explicit
form ``structure.init/step/output(params, ...)`` takes them as data."""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jbandits
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


def test_make_returns_the_factorys_own_policy_and_state():
    key = jax.random.key(0)
    policy = jbandits.make("apt", num_arms=3, threshold=0.5, epsilon=0.1)
    raw = jbandits.core.registry.raw_factory("apt")(3, threshold=0.5, epsilon=0.1)
    state = policy.init(key, jnp.ones(3, bool))
    assert type(state) is type(raw.init(key, jnp.ones(3, bool)))
    assert state._replace(arm=jnp.int32(2)).arm == 2  # the user's own fields
    # one build: step and output are the factory's own functions, not wrappers
    assert policy.step.__qualname__ == raw.step.__qualname__
    assert policy.output.__qualname__ == raw.output.__qualname__
    assert policy.spec.name == "apt" and set(policy.params) == {"threshold", "epsilon"}


def test_the_explicit_form_takes_the_numbers_as_data():
    """``structure.step(params, ...)`` with other numbers is the policy built with
    them, and under jit one program serves every value."""
    key = jax.random.key(0)
    structure = jbandits.core.registry.bind("apt", num_arms=3)
    rewards = [1.0, 0.0, 1.0, 1.0, 0.0, 1.0, 1.0, 1.0]
    mask = jnp.ones(3, bool)

    def arms_of(policy):
        out, state = [], policy.init(key, mask)
        for t, r in enumerate(rewards):
            out.append(int(state.arm))
            state = policy.step(state, jax.random.key(t), r)
        return out

    traces = []

    @jax.jit
    def run(params):
        traces.append(1)
        state = structure.init(params, key, mask)

        def body(state, xs):
            t, r = xs
            return structure.step(params, state, jax.random.key(t), r), state.arm

        xs = (jnp.arange(len(rewards)), jnp.asarray(rewards))
        return jax.lax.scan(body, state, xs)[1]

    for threshold in (0.5, 0.9):
        params = {"threshold": jnp.float32(threshold), "epsilon": jnp.float32(0.1)}
        made = jbandits.make("apt", num_arms=3, threshold=threshold, epsilon=0.1)
        assert np.asarray(run(params)).tolist() == arms_of(made)
    assert len(traces) == 1
    assert arms_of(jbandits.make("apt", num_arms=3, threshold=0.5, epsilon=0.1)) != (
        arms_of(jbandits.make("apt", num_arms=3, threshold=0.9, epsilon=0.1))
    )


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
        a, b = (np.asarray(r.state.total) for r in results)
        np.testing.assert_allclose(b, 2 * a)
        assert type(results[0].state).__name__ == "Local"  # the factory's own class
    finally:
        jbandits.core.registry.unregister("tmp_local_state")


@pytest.mark.parametrize(("backend", "most"), [("xla", 6), ("fused", 10)])
def test_few_library_frames_lie_between_simulate_and_a_users_step(backend, most):
    """Each trace of a user's ``step`` under ``simulate`` is at most 6 jbandits frames
    below ``simulate`` on XLA, 10 on the fused kernel (interpret mode here: the
    runner, the kernel's loops, its kernel-safe rewrite, the guarded pull), and none
    of them is a wrapper of the policy."""
    import traceback

    stacks = []

    class _S(NamedTuple):
        arm: jax.Array

    @jbandits.core.registry.policy("tmp_frames")
    def tmp_frames(num_arms: int, *, alpha: float = 1.0) -> Policy:
        def step(state, key, reward):
            stacks.append(traceback.extract_stack())
            return _S((state.arm + 1) % num_arms)

        return Policy(lambda k, m: _S(jnp.int32(0)), step, lambda s: s.arm, "regret")

    try:
        bandit, params = jbandits.envs.bernoulli([0.2, 0.8])
        jbandits.simulate(
            jbandits.make("tmp_frames", num_arms=2), bandit, params,
            jax.random.key(0), budget=10, num_reps=2, progress=False,
            execution=jbandits.Execution(backend=backend),
        )  # fmt: skip
    finally:
        jbandits.core.registry.unregister("tmp_frames")
    assert stacks
    for stack in stacks:
        top = max(i for i, f in enumerate(stack) if f.name == "simulate")
        ours = [f for f in stack[top:-1] if "/jbandits/" in f.filename]
        names = [f"{f.filename.rsplit('/', 1)[-1]}:{f.name}" for f in ours]
        assert len(ours) <= most, names
        assert not any("numbers.py" in n for n in names), names
        assert (backend == "fused") == any("/fused/" in n.filename for n in ours), names
