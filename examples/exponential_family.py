"""A user's own reward family in one file: exponential rewards with means
``params.means``, drawn from jbandits' reward stack (the j-th reward of arm i is a
fixed function of the replication key, i and j: common random numbers and exact
replay across policies), registered by name so that ``jbandits sweep`` reads
``bandit = "exponential"`` (examples/sweep_exponential.toml imports this file).

    python examples/exponential_family.py      # simulate, sweep_grid, jbandits sweep

    bandit, params = exponential([0.5, 1.0, 2.0])
    jbandits.simulate(policy, bandit, params, key, budget=..., num_reps=...)

The guide *Your own reward family* (docs/guides/own_family.md) walks through it.
"""

from __future__ import annotations

import os
import tempfile
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

import jbandits
from jbandits.cli.main import main as jbandits_cli
from jbandits.envs import family, register_family, reward_uniform


class ExponentialParams(NamedTuple):
    means: jax.Array  # [K] > 0
    arm_mask: jax.Array  # [K] bool: the real arms


def sample(params, key, arm, pull_index):
    """The ``pull_index``-th reward of ``arm``: inversion of a uniform of the stack,
    ``-mean log(1 - u)`` (an exponential variable of that mean)."""
    u = reward_uniform(key, arm, pull_index, params.means.dtype)
    return -params.means[arm] * jnp.log1p(-u)


# an exponential of mean m has standard deviation m
EXPONENTIAL = family("exponential", ExponentialParams, sample, stds=lambda p: p.means)


@register_family("exponential")
def exponential(means):
    """An instance: exponential arms of ``means`` (> 0; ``[K]``)."""
    means = np.asarray(means, jnp.result_type(float))
    if means.ndim != 1 or means.size < 2 or not np.all(means > 0):
        raise ValueError(f"exponential means must be [K] > 0 with K >= 2, got {means}")
    return EXPONENTIAL, ExponentialParams(
        jnp.asarray(means), jnp.ones(means.shape, bool)
    )


def main():
    key = jax.random.key(0)
    bandit, params = jbandits.envs.make_family("exponential", [0.5, 1.0, 2.0])
    policy = jbandits.make("ucb1", num_arms=3)
    res = jbandits.simulate(policy, bandit, params, key, budget=300, num_reps=200)
    per_pull = float(res.reward[:, -1].sum() / res.num_pulls.sum())
    print(f"simulate: mean reward per pull {per_pull:.3f}, pulls {res.pulls.mean(0)}")

    instances = [exponential(m)[1] for m in ([0.5, 1.0, 2.0], [0.2, 0.4, 0.6, 0.8])]
    grid = jbandits.sweep_grid(
        [("ucb1", {"alpha": [0.5, 2.0]})], EXPONENTIAL, instances, key,
        budgets=[100, 300], num_reps=100,
    )  # fmt: skip
    print(grid.summary()[["alpha", "K", "budget", "regret"]].to_string(index=False))

    config = os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "sweep_exponential.toml"
    )
    with tempfile.TemporaryDirectory() as out:
        status = jbandits_cli(["sweep", config, "--out", out, "--quiet"])
        assert status == 0, f"jbandits sweep exited with {status}"
        print(
            f"jbandits sweep: wrote {sorted(os.listdir(os.path.join(out, 'exponential-ucb')))}"
        )


if __name__ == "__main__":
    main()
