"""A user's own policy in one file, from public names only: epsilon-greedy (Sutton &
Barto, *Reinforcement Learning: An Introduction*, 2nd ed., MIT Press 2018, Sec. 2.2),
registered so that jbandits batches it, sweeps its epsilon with one compilation and
stores its runs; checked arm for arm against a plain-Python version of it; and made
fixed-confidence with the GLR stopping rule (Garivier & Kaufmann, "Optimal Best Arm
Identification with Fixed Confidence", COLT 2016, Sec. 3.2, eq. (8)).

    python examples/epsilon_greedy.py      # the tour below, about a minute on CPU

    import jbandits, examples.epsilon_greedy
    policy = jbandits.make("epsilon_greedy", num_arms=4, epsilon=0.1)

The guide *Write your own policy* (docs/guides/own_policy.md) walks through it.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

import jbandits
from jbandits.analysis import fixed_confidence
from jbandits.policies.blocks import arms, glr
from jbandits.sim import trace


class State(NamedTuple):
    stats: arms.ArmStats
    arm_mask: jax.Array  # [K] bool: the real arms
    t: jax.Array  # [] int32: pulls made
    arm: jax.Array  # [] int32: the arm to pull next (the contract); -1: stopped


def choose(stats, t, key, arm_mask, epsilon):
    """The arm of pull ``t``: every real arm once (round robin), then with
    probability ``epsilon`` a uniformly random real arm, else the empirical best
    (ties: lowest index)."""
    explore_key, arm_key = jax.random.split(key)
    random_arm = arms.argmax_masked(
        jax.random.uniform(arm_key, arm_mask.shape), arm_mask
    )
    explore = jax.random.uniform(explore_key) < epsilon
    greedy = jnp.where(explore, random_arm, arms.best_empirical(stats, arm_mask))
    warm_up = t < jnp.sum(arm_mask)
    return jnp.where(warm_up, arms.round_robin(t, arm_mask), greedy).astype(jnp.int32)


def start(num_arms, arm_mask):
    stats = arms.init_stats(num_arms, variance=False)
    return State(
        stats, arm_mask, jnp.zeros((), jnp.int32), arms.round_robin(0, arm_mask)
    )


@jbandits.registry.policy("epsilon_greedy")
def epsilon_greedy(num_arms: int, *, epsilon=0.1) -> jbandits.Policy:
    """Epsilon-greedy; ``epsilon`` in [0, 1] is traced. Output: the empirical best."""

    def init(key, arm_mask):
        del key  # a deterministic start
        return start(num_arms, arm_mask)

    def step(state, key, reward):  # reward: that of state.arm
        stats = arms.update(state.stats, state.arm, reward)
        t = state.t + 1
        return State(
            stats, state.arm_mask, t, choose(stats, t, key, state.arm_mask, epsilon)
        )

    def output(state):  # the recommended arm
        return arms.best_empirical(state.stats, state.arm_mask)

    return jbandits.Policy(init, step, output, "regret")


@jbandits.registry.policy("epsilon_greedy_glr")
def epsilon_greedy_glr(num_arms: int, *, epsilon=0.5, delta=0.1) -> jbandits.Policy:
    """Epsilon-greedy sampling, stopped by the Bernoulli GLR (Chernoff) rule at
    confidence ``delta`` (the "gk16" threshold, log(2t(K-1)/delta)): ``state.arm =
    -1`` once ``Z(t) > beta(t, delta)``. Output: the empirical best arm. ``epsilon``
    and ``delta`` are traced; the run's budget is a cap."""

    def init(key, arm_mask):
        del key
        return start(num_arms, arm_mask)

    def step(state, key, reward):
        mask = state.arm_mask
        stats = arms.update(state.stats, state.arm, reward)
        t = state.t + 1
        means = arms.mean(stats)
        stop, _ = glr.stops(
            "bernoulli", stats.counts, means, mask, t, delta, threshold_name="gk16"
        )
        arm = jnp.where(stop, -1, choose(stats, t, key, mask, epsilon))
        return State(stats, mask, t, arm.astype(jnp.int32))

    def output(state):
        return arms.best_empirical(state.stats, state.arm_mask)

    return jbandits.Policy(init, step, output, "identification")


# ----------------------------------------------------- the plain-Python version
def reference(inst: trace.Compact, draws: trace.Draws):
    """Epsilon-greedy again, one pull at a time over the real arms ``0..K-1``, with the
    keys the engine gives the policy (``draws``). Returns (arms pulled, output)."""
    k, eps = inst.num_arms, float(inst.hp["epsilon"])
    counts, sums, pulled = np.zeros(k), np.zeros(k), []
    for t in range(inst.budget):
        if t < k:
            arm = t
        else:
            explore_key, arm_key = jax.random.split(draws.key_for_pull(t))
            uniform = draws.per_arm(jax.random.uniform(arm_key, (draws.k_max,)))
            explore = float(jax.random.uniform(explore_key)) < eps
            arm = int(np.argmax(uniform)) if explore else int(np.argmax(sums / counts))
        pulled.append(arm)
        sums[arm] += inst.table[arm, int(counts[arm])]  # its next reward
        counts[arm] += 1
    return pulled, int(np.argmax(sums / counts))


def sample(rng, k_max, horizon):
    """A random instance: K in 2..k_max real arms at random positions, Bernoulli
    rewards (their sums are exact, so a plain-Python mean is the same number),
    a budget in K..horizon and epsilon in [0, 1]."""
    hp = {"epsilon": float(rng.choice([0.0, 1.0, rng.uniform()]))}
    return trace.basic_instance(rng, k_max, horizon, hp, kind="bernoulli")


CASE = trace.TraceCase(
    "epsilon_greedy",
    "epsilon_greedy",
    lambda **hp: jbandits.make("epsilon_greedy", num_arms=8, **hp),
    sample,
    reference,
    k_max=8,
    horizon=60,
    num_instances=100,
)


def main():
    bandit, params = jbandits.envs.bernoulli([0.2, 0.4, 0.6, 0.8])
    key = jax.random.key(0)
    with trace.count_compiles() as compiles:
        for eps in (0.0, 0.1, 0.5, 1.0):
            policy = jbandits.make("epsilon_greedy", num_arms=4, epsilon=eps)
            res = jbandits.simulate(
                policy, bandit, params, key, budget=500, num_reps=200
            )
            print(f"epsilon={eps}: regret {float(res.regret[:, -1].mean()):.1f}")
    print(f"{compiles.count} compiled program for the 4 values of epsilon")
    print(f"trace check: {trace.check_case(CASE)} instances, arm for arm")

    # instances of 2, 3 and 4 arms, padded to 4: one program for the whole grid
    instances = [
        jbandits.envs.bernoulli(np.linspace(0.1, 0.9, k))[1] for k in (2, 3, 4)
    ]
    with trace.count_compiles() as compiles:
        grid = jbandits.sweep_grid(
            [("epsilon_greedy", {"epsilon": [0.05, 0.2]})],
            jbandits.envs.BERNOULLI, instances, key, budgets=[100, 400], num_reps=100,
        )  # fmt: skip
    print(f"sweep_grid: {len(grid.cells)} cells, {compiles.count} compiled program")
    print(grid.summary()[["epsilon", "K", "budget", "regret"]].to_string(index=False))

    policy = jbandits.make("epsilon_greedy", num_arms=4, epsilon=0.1)
    fused = jbandits.Execution(backend="fused")  # Pallas; interpret mode on CPU
    a = jbandits.simulate(
        policy, bandit, params, key, budget=200, num_reps=8, execution=fused
    )
    b = jbandits.simulate(policy, bandit, params, key, budget=200, num_reps=8)
    assert np.array_equal(a.pulls, b.pulls), "fused and XLA runs differ"
    print("fused backend: the same pulls as the XLA engine")

    stopping = jbandits.make("epsilon_greedy_glr", num_arms=4, epsilon=0.5, delta=0.05)
    res = jbandits.simulate(stopping, bandit, params, key, budget=20_000, num_reps=200)
    summary = fixed_confidence.summarize_stopping(
        res.num_pulls, res.output, 3, res.stopped, delta=0.05
    )
    print(f"stopping time {summary.mean:.0f} +- {summary.se:.0f}, error rate "
          f"{summary.error_rate:.3f}, {summary.capped} runs capped")  # fmt: skip


if __name__ == "__main__":
    main()
