"""A new elimination algorithm from the shared building blocks, in about 60 lines.

Successive Elimination (Even-Dar, Mannor, Mansour, "Action elimination and stopping
conditions for the multi-armed bandit and reinforcement learning problems", JMLR 7,
2006, Section 3, the algorithm for unknown biases): sample every remaining arm once
per round; after round r drop every arm a with max_b mean_b - mean_a >= 2 alpha_r,
alpha_r = sqrt(ln(c n r^2 / delta) / r) (n arms); stop when one arm is left. It is
written below from ``jbandits.policies.blocks.arms`` (statistics, least-pulled choice) and
``jbandits.policies.blocks.phases`` (the read-out) only, is not registered as a library
algorithm, and is checked like one: against a plain-Python reference on replay tables
with padded arms at random positions (one jit(vmap) program, tests/harness.py) and on
an instance whose padded arms would pay the most.
"""

from typing import NamedTuple

import jax.numpy as jnp
import numpy as np
from harness import TraceCase, basic_instance, check_case, play_table
from reference.stats import arms as ref_arms

from jbandits.core.types import Array, ArrayLike, Policy
from jbandits.policies.blocks import arms
from jbandits.policies.blocks import phases as _phases


# ------------------------------------------------------------------ the new policy
class SEState(NamedTuple):
    stats: arms.ArmStats
    arm_mask: Array  # [K] bool: real arms
    active: Array  # [K] bool: arms not eliminated
    arm: Array  # [] int32: next arm (-1: one arm left, idle)


def successive_elimination(
    num_arms: int, *, delta: ArrayLike = 0.1, c: ArrayLike = 4.0
) -> Policy:
    """Successive Elimination (Even-Dar et al., JMLR 2006, Section 3); output: the
    active arm with the best mean (the survivor once the run has stopped)."""

    def choose(stats, active):  # round robin over the active arms: least pulled first
        arm = arms.least_pulled(stats.counts, active)
        return jnp.where(jnp.sum(active) > 1, arm, -1).astype(jnp.int32)

    def init_fn(key, arm_mask):
        del key
        stats = arms.init_stats(num_arms)
        return SEState(stats, arm_mask, arm_mask, choose(stats, arm_mask))

    def step_fn(state, key, reward):
        del key
        stats = arms.update(state.stats, state.arm, reward)
        counts = jnp.where(state.active, stats.counts, jnp.inf)
        r = jnp.min(counts)  # pulls of every active arm once the round is complete
        done = r == jnp.max(jnp.where(state.active, stats.counts, -jnp.inf))
        n = jnp.sum(state.arm_mask)
        alpha = jnp.sqrt(jnp.log(c * n * r**2 / delta) / r)
        mean = arms.mean(stats)
        best = jnp.max(jnp.where(state.active, mean, -jnp.inf))
        active = state.active & ~(done & (best - mean >= 2.0 * alpha))
        return SEState(stats, state.arm_mask, active, choose(stats, active))

    def output_fn(state):
        return _phases.current_best(state.stats, state.active)

    return Policy(init_fn, step_fn, output_fn, "identification")


# ------------------------------------------------------------- plain-Python reference
def reference(inst, draws):
    """The algorithm as written in the paper, on the real arms only."""
    del draws
    k, (delta, c) = inst.num_arms, (inst.hp["delta"], inst.hp["c"])
    stats, active, pulled, r = ref_arms(k), list(range(k)), [], 0
    while len(active) > 1 and len(pulled) < inst.budget:
        r += 1
        for a in active:
            if len(pulled) == inst.budget:
                break
            stats[a].add(float(inst.table[a, stats[a].n]))
            pulled.append(a)
        else:  # a complete round: eliminate
            alpha = np.sqrt(np.log(c * k * r**2 / delta) / r)
            best = max(stats[a].mean for a in active)
            active = [a for a in active if not best - stats[a].mean >= 2.0 * alpha]
    seen = [a for a in active if stats[a].n > 0] or active[:1]
    best = max(seen, key=lambda a: (stats[a].mean, -a))
    return pulled, best


def _sample(rng, k_max, horizon):
    hp = {
        "delta": float(rng.choice([0.05, 0.3, 0.9])),
        "c": float(rng.choice([0.5, 4.0])),  # c n / delta > 1: alpha_r > 0
    }
    return basic_instance(rng, k_max, horizon, hp)


CASE = TraceCase(
    "successive_elimination",
    "successive_elimination",
    lambda delta, c: successive_elimination(8, delta=delta, c=c),
    _sample,
    reference,
    k_max=8,
    horizon=40,
    num_instances=150,
)


def test_matches_the_reference_on_padded_replay_tables():
    assert check_case(CASE, seed=0) == CASE.num_instances


def test_padded_arms_are_never_pulled_nor_output():
    """Padded arms pay 100 (they would win if pulled); the real arms are far apart."""
    mask = np.array([False, True, False, True, True, False])
    table = np.full((6, 60), 100.0)
    table[mask] = np.array([[1.0], [9.0], [5.0]]) + 0.01 * (np.arange(60) % 3)
    res = play_table(successive_elimination(6, delta=0.9, c=0.5), table, 60, mask)
    arms_pulled = np.asarray(res.arms)
    assert mask[arms_pulled[arms_pulled >= 0]].all()
    assert int(res.output) == 3  # the best real arm
    assert bool(res.stopped) and int(res.num_pulls) < 60  # one arm left: idle
