"""Lanes of the best-arm-identification grids (Lalitha et al. UAI 2023; Gabillon et al.
NIPS 2012) for the one runner.

Lalitha et al. draw a new instance per run, and their budget-dependent algorithms
need one run per budget; the oracle-tuned ones (GapE, GapE-V, UGapEb) also need
per-instance parameters. A grid is ``P`` points (budgets, or K values) x ``N`` instances, one
replication each, with per-point-and-instance hyper-parameters ``hp[P, N, ...]``:
:func:`grid_lanes` makes it ``P * N`` cells of :class:`jbandits.sim.runner.Lanes`, and
:func:`jbandits.sim.runner.execute` batches, compiles (once per policy), chunks and shards
them. Instance ``n`` uses the key ``fold_in(key, n)`` at every grid point and for
every algorithm (common random numbers: paired comparisons).
"""

from __future__ import annotations

import jax
import numpy as np

from jbandits.sim import runner


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


def grid_lanes(params, key, *, hp: dict, budgets, shared: tuple = ()) -> runner.Lanes:
    """Cell ``p * N + n`` runs ``hp[p, n]`` on ``params[p, n]`` with ``budgets[p]``.

    Args:
      params: instance pytree (NamedTuple) with leaves ``[P, N, ...]``, except the
        fields named in ``shared`` (one array for every cell, e.g. a completed
        ratings matrix).
      key: experiment key; instance ``n`` uses ``fold_in(key, n)`` (lane key = cell
        key: one replication per cell).
      hp: dict of pytrees with leaves ``[P, N, ...]`` (use :func:`broadcast_pn`).
      budgets: ``[P]`` int budgets.
    """
    num_points, num_inst = np.asarray(params.arm_mask).shape[:2]

    def flat(x):
        x = np.asarray(x)
        return x.reshape(num_points * num_inst, *x.shape[2:])

    fields = {f: flat(getattr(params, f)) for f in params._fields if f not in shared}
    return runner.Lanes(
        hp=jax.tree_util.tree_map(flat, hp),
        params=params._replace(**fields),
        instance=np.arange(num_points * num_inst),
        budget=np.repeat(np.asarray(budgets, np.int64), num_inst),
        keys=np.tile(runner.instance_keys(key, num_inst), (num_points, 1)),
        num_reps=1,
        shared=tuple(shared),
        fold_reps=False,
    )


def per_point(values, num_points: int) -> np.ndarray:
    """``[P * N, 1, ...]`` runner values of :func:`grid_lanes` cells -> ``[P, N, ...]``."""
    values = np.asarray(values)
    return values.reshape(num_points, -1, *values.shape[2:])


def run_grid(algos, bandit, params, key, budgets, opts, shared=(), **fixed) -> dict:
    """label -> runner results of each :class:`experiments._core.Algo` on the grid.

    ``algos[i].hp`` holds ``[P, N, ...]`` leaves (see :func:`grid_lanes`); ``fixed``
    are arguments common to every algorithm (e.g. ``num_arms``). One compilation per
    algorithm.
    """
    out = {}
    for algo in algos:
        lanes = grid_lanes(params, key, hp=algo.hp, budgets=budgets, shared=shared)
        out[algo.label] = runner.execute(algo.source(**fixed), bandit, lanes, opts)
    return out
