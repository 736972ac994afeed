"""The best-arm-identification grids (Lalitha et al. UAI 2023; Gabillon et al. NIPS
2012), run through :func:`jbandits.simulate`.

Lalitha et al. draw a new instance per run, and their budget-dependent algorithms
need one run per budget; the oracle-tuned ones (GapE, GapE-V, UGapEb) also need
per-instance parameters. A grid is ``P`` points (budgets, or K values) x ``N`` instances, one
replication each, with per-point-and-instance hyper-parameters ``hp[P, N, ...]``:
:func:`run_grid` runs it as a stack of ``P * N`` instances in one
:func:`jbandits.simulate` call per algorithm (per-instance budgets and numbers), which
batches, compiles (once per policy), chunks and shards them. Instance ``n`` uses the
key ``fold_in(key, n)`` at every grid point and for every algorithm (common random
numbers: paired comparisons).
"""

from __future__ import annotations

import warnings

import jax
import jax.numpy as jnp
import numpy as np

import jbandits
from jbandits.sim.runner.results import CappedRunsWarning


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


def run_grid(
    algos,
    bandit,
    params,
    key,
    budgets,
    *,
    horizon: int,
    metric,
    shared=(),
    **fixed,
) -> dict:
    """label -> the results of each :class:`experiments._core.Algo` on the grid, a
    :class:`jbandits.RunResult` with leaves ``[P, N, ...]`` (one replication per cell).

    Cell ``(p, n)`` runs ``algo.hp[p, n]`` (per-cell numbers, see
    :func:`broadcast_pn`) on ``params[p, n]`` with ``budgets[p]``, keyed
    ``fold_in(key, n)`` at every point; ``params`` has leaves ``[P, N, ...]`` but for
    the fields named in ``shared`` (one array for every cell, e.g. a completed ratings
    matrix); ``fixed`` are arguments common to every algorithm (e.g. ``num_arms``).
    One :func:`jbandits.simulate` call, so one compilation, per algorithm; arms are
    played as numbered.
    """
    num_points, num_inst = np.asarray(params.arm_mask).shape[:2]
    cells = num_points * num_inst

    def flat(x):
        x = np.asarray(x)
        return x.reshape(cells, *x.shape[2:])

    stack = params._replace(
        **{f: flat(getattr(params, f)) for f in params._fields if f not in shared}
    )
    inst = jax.vmap(lambda n: jax.random.fold_in(key, n))(jnp.arange(num_inst))
    keys = jnp.tile(inst, num_points)[:, None]  # [P * N, 1]: each cell's own key
    budget = np.repeat(np.asarray(budgets, np.int64), num_inst)
    out = {}
    for algo in algos:
        numbers = jax.tree_util.tree_map(flat, dict(algo.hp))
        first = jax.tree_util.tree_map(lambda x: x[0], numbers)  # make checks it
        policy = jbandits.make(algo.name, **fixed, **algo.static, **first)
        with warnings.catch_warnings():  # capped runs are the experiments' to count
            warnings.simplefilter("ignore", CappedRunsWarning)
            res = jbandits.simulate(
                policy, bandit, stack, keys, budget=budget, num_reps=1,
                horizon=horizon, metric=metric, permute=False, numbers=numbers,
                shared=shared,
            )  # fmt: skip
        out[algo.label] = jax.tree_util.tree_map(
            lambda x: x.reshape(num_points, num_inst, *x.shape[2:]), res
        )
    return out
