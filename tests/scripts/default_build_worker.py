"""jit vs eager in the *default* XLA build, run as a child by tests/test_default_build.py.

The test process compiles without FMA (tests/conftest.py); this worker is started
with ``--xla_cpu_max_isa`` removed from ``XLA_FLAGS``, so XLA may contract ``a * b + c``
into fused multiply-adds under ``jit`` while eager (``jax.disable_jit()``) execution,
one primitive at a time, never does.

Usage: default_build_worker.py OUT.npz NUM_EAGER_KEYS NUM_BATCH_KEYS

Writes, for each policy ``p`` of :data:`EAGER`: ``p/jit_arms`` and ``p/eager_arms``
``[E, budget]`` and the final arm statistics ``p/jit_stats`` and ``p/eager_stats``
``[E, S, 3, K]`` (counts, sums, M2 of each of the S ``ArmStats`` in the state) for
``E`` keys; for each policy of :data:`BATCH_ONLY`: ``p/batch_arms`` and
``p/batch_stats`` of ``jit(vmap)`` over ``NUM_BATCH_KEYS`` keys (compared with the test
build by the parent). ``fma_probe`` counts the elements where a jitted ``a * b + c``
differs from the eager one (0 on a CPU without FMA).
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))  # tests/ (cases, harness, reference)

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from cases import CASES  # noqa: E402

import jbandits  # noqa: E402
from jbandits.policies.blocks import arms  # noqa: E402

# eager and jit compared; the last ones only jit(vmap), default vs test build
EAGER = ("apt", "augucb", "successive_rejects", "shvar", "ucbv", "eucbv")
BATCH_ONLY = ("bayes_ucb",)


def _first_cases():
    first = {}
    for case in CASES:
        first.setdefault(case.registry_name, case)
    return first


def setup(name, seed=3):
    """(instance, play) exactly as tests/test_contract.py builds them."""
    case = _first_cases()[name]
    rng = np.random.default_rng(seed)
    inst = case.sample(rng, case.k_max, case.horizon)
    means = rng.uniform(0.05, 0.95, case.k_max) * inst.arm_mask
    bandit, params = jbandits.envs.bernoulli(means, arm_mask=jnp.asarray(inst.arm_mask))
    policy = case.make_policy(**inst.hp)

    def play(key, budget, horizon=case.horizon):
        res = jbandits.run(
            policy,
            bandit,
            params,
            key,
            budget=budget,
            horizon=horizon,
            record_arms=True,
            return_state=True,
        )
        return res.arms, stats_of(res.state)

    return inst, play


def stats_of(state):
    """``[S, 3, K]``: (counts, sums, M2) of every ArmStats in a policy state (sums
    twice for statistics that keep no second moment)."""
    found = []

    def visit(x):
        if isinstance(x, arms.ArmStats):
            m2 = x.sums if x.m2 is None else x.m2
            found.append(jnp.stack([x.counts, x.sums, m2]))
        elif isinstance(x, (tuple, list)):
            for y in x:
                visit(y)

    visit(state)
    assert found, f"no ArmStats in {type(state).__name__}"
    return jnp.stack(found)


def fma_probe():
    rng = np.random.default_rng(0)
    a, b, c = (jnp.asarray(rng.standard_normal(4096), jnp.float32) for _ in range(3))

    def f(a, b, c):
        return a * b + c

    jitted = np.asarray(jax.jit(f)(a, b, c))
    with jax.disable_jit():
        eager = np.asarray(f(a, b, c))
    return int((jitted != eager).sum())


def keys_of(num):
    return jax.random.split(jax.random.key(1), num)


def batched(play):
    """``jit(vmap(play))`` over keys, the budget shared (and traced, as in
    tests/test_contract.py, so the run's host checks do not see a concrete budget
    inside the trace)."""
    return jax.jit(jax.vmap(play, in_axes=(0, None)))


def main(out, num_eager, num_batch):
    result = {"fma_probe": np.int64(fma_probe())}
    for name in BATCH_ONLY:
        inst, play = setup(name)
        batch_arms, batch_stats = batched(play)(keys_of(num_batch), inst.budget)
        result[f"{name}/batch_arms"] = np.asarray(batch_arms)
        result[f"{name}/batch_stats"] = np.asarray(batch_stats)
    for name in EAGER:
        inst, play = setup(name)
        keys = keys_of(num_eager)
        jit_arms, jit_stats = batched(play)(keys, inst.budget)
        eager_arms, eager_stats = [], []
        for key in keys:
            with jax.disable_jit():  # the same run, its scan cut to the budget
                arms_, stats_ = play(key, inst.budget, horizon=inst.budget)
            eager_arms.append(np.asarray(arms_))
            eager_stats.append(np.asarray(stats_))
        result[f"{name}/jit_arms"] = np.asarray(jit_arms)[:, : inst.budget]
        result[f"{name}/jit_tail"] = np.asarray(jit_arms)[:, inst.budget :]
        result[f"{name}/eager_arms"] = np.stack(eager_arms)
        result[f"{name}/jit_stats"] = np.asarray(jit_stats)
        result[f"{name}/eager_stats"] = np.stack(eager_stats)
    np.savez(out, **result)


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]))
