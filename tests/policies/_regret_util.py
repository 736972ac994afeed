"""Helpers for the regret unit tests: replay roll-outs that keep the policy states."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from harness import Compact, Draws


def rollout(policy, table, budget, arm_mask=None, key=None):
    """Play ``budget`` pulls on a replay ``table`` [K, J] (j-th reward of arm i).

    Returns ``(arms [T], states, final)``: the pulled arms, the stacked states after
    every pull (leading axis T) and the final state. Uses the engine's key schedule.
    """
    table = jnp.asarray(table)
    num_arms = table.shape[0]
    mask = jnp.ones(num_arms, bool) if arm_mask is None else jnp.asarray(arm_mask)
    key = jax.random.key(0) if key is None else key
    from jbandits.sim.replication import split_key, step_key

    key_init, key_steps, _, _ = split_key(key)

    def body(carry, t):
        state, counts = carry
        reward = table[state.arm, counts[state.arm]]
        counts = counts.at[state.arm].add(1)
        state = policy.step(state, step_key(key_steps, t), reward)
        return (state, counts), (state.arm, state)

    init = policy.init(key_init, mask)
    zero = jnp.zeros(num_arms, jnp.int32)
    (final, _), (nxt, states) = jax.jit(
        lambda s: jax.lax.scan(body, (s, zero), jnp.arange(budget))
    )(init)
    arms = np.concatenate([[int(init.arm)], np.asarray(nxt)[:-1]])
    return arms, states, final


def reference_traces(case, num_instances=200, seed=0):
    """Run ``case``'s reference with ``trace=`` on the harness's instances of ``seed``.

    Returns a list of ``(instance, trace)`` (the instances ``check_case`` draws).
    """
    rng = np.random.default_rng(seed)
    instances = [
        case.sample(rng, case.k_max, case.horizon) for _ in range(num_instances)
    ]
    key = jax.random.key(seed)
    out = []
    with jax.enable_x64(True):
        for idx, inst in enumerate(instances):
            real = np.flatnonzero(inst.arm_mask)
            compact = Compact(
                inst.num_arms, inst.table[real], inst.budget, inst.hp, inst.extra
            )
            trace = []
            case.reference(
                compact,
                Draws(jax.random.fold_in(key, idx), real, case.k_max),
                trace=trace,
            )
            out.append((inst, trace))
    return out


def find_case(name):
    from cases.regret_index import CASES

    return next(c for c in CASES if c.name == name)
