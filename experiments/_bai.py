"""Grid runner for the best-arm-identification experiments (S004, S003).

S004 draws a new instance per run, and its budget-dependent algorithms need one run
per budget; the oracle-tuned ones (GapE, GapE-V, UGapEb) also need per-instance
parameters. :func:`run_grid` runs ``P`` grid points (budgets, or K values) x ``N``
instances, one replication each, with per-point-and-instance hyper-parameters
``hp[P, N, ...]``, as ONE compiled function called on chunks of instances (bounded
memory, progress lines). Instance ``n`` uses the key ``fold_in(key, n)`` at every grid
point and for every algorithm (common random numbers: paired comparisons).
"""

from __future__ import annotations

import sys
import time

import jax
import jax.numpy as jnp
import numpy as np

from jbandits.engine import run


def instance_keys(key, num_instances: int):
    return jax.vmap(lambda n: jax.random.fold_in(key, n))(jnp.arange(num_instances))


def broadcast_pn(tree, num_points: int, num_instances: int):
    """Broadcast every ``[P, ...]`` leaf of ``tree`` to ``[P, N, ...]`` (host, NumPy).

    Every leaf must have the grid-point axis first (e.g. stacked schedules, budgets).
    """

    def one(x):
        x = np.asarray(x)
        if x.ndim < 1 or x.shape[0] != num_points:
            raise ValueError(
                f"expected a leading axis of {num_points} points, got {x.shape}"
            )
        return np.broadcast_to(x[:, None], (num_points, num_instances, *x.shape[1:]))

    return jax.tree_util.tree_map(one, tree)


def _shard_instances(tree, axis: int):
    """Split the instance axis over the JAX devices (every core when the experiments
    runner exposes them); a no-op on one device or when the chunk does not divide."""
    devices = jax.devices()
    leaves = jax.tree_util.tree_leaves(tree)
    if len(devices) < 2 or any(x.shape[axis] % len(devices) for x in leaves):
        return tree
    mesh = jax.sharding.Mesh(np.array(devices), ("i",))
    spec = jax.sharding.PartitionSpec(*([None] * axis), "i")
    sharding = jax.sharding.NamedSharding(mesh, spec)
    return jax.tree_util.tree_map(lambda x: jax.device_put(x, sharding), tree)


def run_grid(
    make_policy,
    bandit,
    params,
    key,
    *,
    hp: dict,
    budgets,
    horizon: int,
    metric,
    chunk: int = 1000,
    shared: tuple = (),
    label: str = "",
    progress: bool = True,
) -> dict:
    """Run ``make_policy(**hp[p, n])`` on instance ``params[p, n]`` with ``budgets[p]``.

    Args:
      make_policy: ``(**hp) -> Policy``, called inside the vmapped function (traced).
      bandit: the reward family.
      params: instance pytree (NamedTuple) with leaves ``[P, N, ...]``, except the
        fields named in ``shared`` (one array for every point and instance, e.g. a
        completed ratings matrix).
      key: experiment key; instance ``n`` uses ``fold_in(key, n)``.
      hp: dict of pytrees with leaves ``[P, N, ...]`` (use :func:`broadcast_pn`).
      budgets: ``[P]`` int budgets (traced inside: one compilation).
      horizon: static scan length (>= max budget).
      metric: a :mod:`jbandits.metrics` metric.
      chunk: instances per call of the compiled function.

    Returns:
      ``{metric name: [P, N], "num_pulls": [P, N], "output": [P, N, ...]}`` (NumPy).
    """
    fields = params._fields
    axes = type(params)(*[None if f in shared else 0 for f in fields])
    num_points, num_inst = np.asarray(params.arm_mask).shape[:2]
    budgets = jnp.asarray(budgets, jnp.int32)

    def one(h, p, k, b):
        res = run(
            make_policy(**h), bandit, p, k, budget=b, horizon=horizon, metric=metric
        )
        out = {name: v[-1] for name, v in res.metrics.items()}
        out["num_pulls"] = res.num_pulls
        out["output"] = res.output
        return out

    over_n = jax.vmap(one, in_axes=(0, axes, 0, None))
    fn = jax.jit(jax.vmap(over_n, in_axes=(0, axes, None, 0)))
    keys = instance_keys(key, num_inst)
    size = min(chunk, num_inst)
    parts, t0 = [], time.perf_counter()

    def take(tree, start, stop, batched_axes=None):
        def cut(x, ax=1):
            if ax is None:
                return x
            idx = (
                np.arange(start, stop) % num_inst
            )  # wraps around to pad the last chunk
            return jnp.asarray(np.take(np.asarray(x), idx, axis=ax))

        if batched_axes is None:
            return jax.tree_util.tree_map(cut, tree)
        leaves = [
            cut(x, None if ax is None else 1)
            for x, ax in zip(tree, batched_axes, strict=True)
        ]
        return type(tree)(*leaves)

    for start in range(0, num_inst, size):
        stop = min(start + size, num_inst)
        h = _shard_instances(take(hp, start, start + size), 1)
        p = take(params, start, start + size, axes)
        p = type(p)(
            *[
                x if ax is None else _shard_instances(x, 1)
                for x, ax in zip(p, axes, strict=True)
            ]
        )
        k = _shard_instances(keys[np.arange(start, start + size) % num_inst], 0)
        out = jax.device_get(fn(h, p, k, budgets))
        parts.append(jax.tree_util.tree_map(lambda x: x[:, : stop - start], out))
        if progress:
            rate = stop / (time.perf_counter() - t0)
            print(
                f"  {label}: {stop}/{num_inst} instances x {num_points} points "
                f"({rate:.0f} inst/s)",
                file=sys.stderr,
            )
    return jax.tree_util.tree_map(lambda *xs: np.concatenate(xs, axis=1), *parts)
