"""The engine's overhead: APT through :func:`jbandits.simulate` against a plain form.

``python -m benchmarks.plain [--arms 100] [--steps 1000] [--arm-lanes 1e4 1e5 1e6]``

The *plain form* is the least a JAX program of APT (Locatelli et al., 2016) can do:
``vmap`` over lanes, ``lax.fori_loop`` over the budget, the state two ``[K]`` arrays
(pulls, reward sums), the reward of each pull read from the library's reward stack
(``bandit.sample``: a counter-based hash of the lane's key, the arm and its pull
number), as the engine reads it. It has no checkpoints, budgets per lane, idle policies,
metrics, reward totals or regret: what the engine adds for those is the overhead this
script measures (issue 37, item 5), on whatever device JAX has. Both forms draw from
their own streams, so the check is on the pulls made (every lane pulls ``steps``
times), not on identical arms.

Per size: pulls/s of each form (median of 3 warm calls, interleaved), the ratio
engine / plain and the machine load. The measurement on one H200 that motivated
the issue: 941 vs 587 M pulls/s at 1e8 arm-lanes, 671 vs 330-375 M at 1e6.
"""

from __future__ import annotations

import argparse
import functools

import jax
import jax.numpy as jnp
import numpy as np

import jbandits
from benchmarks._timing import load, median_times_interleaved, simulate_call

TAU, EPS = 0.5, 0.05


def plain_apt(bandit, params, keys, steps: int):
    """Pull counts ``[L, K]`` of APT after ``steps`` pulls on each lane."""
    num_arms = params.means.shape[-1]
    ids = jnp.arange(num_arms)

    def lane(key):
        def step(t, carry):
            n, s = carry
            idx = jnp.sqrt(n) * (jnp.abs(s / jnp.maximum(n, 1.0) - TAU) + EPS)
            arm = jnp.where(t < num_arms, t, jnp.argmin(idx))
            hot = ids == arm
            count = jnp.sum(jnp.where(hot, n, 0.0)).astype(jnp.int32)
            r = bandit.sample(params, key, arm, count).astype(n.dtype)
            return n + hot, s + jnp.where(hot, r, 0.0)

        zero = jnp.zeros(num_arms, jnp.float32)
        return jax.lax.fori_loop(0, steps, step, (zero, zero))[0]

    return jax.vmap(lane)(keys)


def measure(num_arms: int, steps: int, lanes: int) -> dict:
    means = np.linspace(0.1, 0.9, num_arms)
    bandit, params = jbandits.envs.bernoulli(means)
    policy = jbandits.make("apt", num_arms=num_arms, threshold=TAU, epsilon=EPS)
    engine = simulate_call(policy, bandit, params, steps, lanes)
    keys = jax.random.split(jax.random.key(0), lanes)
    compiled = jax.jit(functools.partial(plain_apt, bandit, steps=steps))

    def plain():
        return jax.block_until_ready(compiled(params, keys))

    counts = np.asarray(plain())
    if not np.all(counts.sum(-1) == steps):
        raise AssertionError("the plain form did not pull `steps` times per lane")
    result = engine()
    if not np.all(np.asarray(result.pulls).sum(-1) == steps):
        raise AssertionError("jbandits did not pull `steps` times per lane")
    times = median_times_interleaved(
        {"engine": lambda: jax.block_until_ready(engine()), "plain": plain}, 3
    )
    pulls = steps * lanes
    return {"engine": pulls / times["engine"], "plain": pulls / times["plain"]}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.plain")
    ap.add_argument("--arms", type=int, default=100)
    ap.add_argument("--steps", type=int, default=1000)
    ap.add_argument("--arm-lanes", type=float, nargs="*", default=[1e4, 1e5, 1e6])
    args = ap.parse_args(argv)
    print(f"APT K={args.arms} T={args.steps}; {jax.devices()[0].device_kind}; "
          f"jax {jax.__version__}; load {load()}")  # fmt: skip
    for arm_lanes in args.arm_lanes:
        lanes = max(1, int(arm_lanes) // args.arms)
        r = measure(args.arms, args.steps, lanes)
        print(
            f"  arm-lanes {arm_lanes:8.0e} ({lanes:6d} lanes): engine "
            f"{r['engine'] / 1e6:8.2f} M pulls/s, plain {r['plain'] / 1e6:8.2f} M, "
            f"engine / plain {r['engine'] / r['plain']:5.2f}  load {load()}"
        )


if __name__ == "__main__":
    main()
