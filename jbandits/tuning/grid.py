"""The compile-once grid (:func:`grid_tune`) and the parabolic refinement of a grid
point that the tuner starts from."""

from __future__ import annotations

from typing import Any

import numpy as np

from jbandits.analysis.stats import count, standard_error
from jbandits.tuning.confidence import SAME_LOSS, emit, same_everywhere
from jbandits.tuning.objective import Objective, as_key
from jbandits.tuning.results import GridResult
from jbandits.tuning.space import Space


def grid_tune(
    policy,
    bandit,
    instance,
    *,
    space,
    budget: int,
    points: int = 20,
    num_reps: int = 200,
    loss: Any = "regret",
    metric: Any = None,
    fixed: dict | None = None,
    permute: bool = True,
    key: Any = 0,
    chunk: int | None = None,
    keep_per_rep: bool = False,
) -> GridResult:
    """Evaluate an even grid of ``points`` per parameter on common random numbers.

    One compiled program serves every point (the numbers are traced); every point
    sees the same replication keys, so the arg-min is decided on paired noise.

    Args:
      policy, bandit, instance, budget, loss, metric, fixed, permute: as in
        :class:`Objective`.
      space: ``{name: Box | LogSpace | Logit}`` (or a :class:`Space`).
      points: grid points per parameter (cell centres of the normalised range).
      num_reps: replications per point (>= 2).
      key: key or int seed.
      chunk: lanes per compiled call (default ``min(all lanes, 1024)``).
      keep_per_rep: also return the ``[G, R]`` per-replication losses.

    Returns:
      A :class:`GridResult`.

    Raises:
      ValueError: bad space, names, budget, key, ``points`` not an integer >= 1,
        ``num_reps`` < 2.

    Warns:
      TuningWarning: the loss is the same at every point, replication by
        replication (it does not depend on the tuned parameters).

    Example::

        bandit, params = jbandits.envs.bernoulli(means)
        g = jbandits.tuning.grid_tune("lsa", bandit, params, budget=1000,
                                    space={"alpha": LogSpace(0.05, 20.0)},
                                    fixed={"threshold": 0.5}, points=20,
                                    loss="misclassified",
                                    metric=jbandits.analysis.metrics.thresholding(0.5))
        g.theta   # {"alpha": ...}
    """
    space = space if isinstance(space, Space) else Space(space)
    setting = dict(budget=budget, loss=loss, metric=metric, fixed=fixed)
    objective = Objective(policy, bandit, instance, permute=permute, **setting)
    objective.check_names(space.keys())
    num_reps = count("num_reps", num_reps, 2)
    points = count("points", points, 1)
    chunk = count("chunk", chunk, 1, none=True)
    z = space.grid(points)
    chunk = chunk or min(len(z) * num_reps, 1024)
    per_rep = objective.losses(
        space.batch_from_z(z), as_key(key), num_reps, chunk=chunk
    )
    mean = per_rep.mean(1)
    se = standard_error(per_rep, axis=1)
    if same_everywhere(per_rep):
        emit((SAME_LOSS,), stacklevel=3)
    best = int(np.nanargmin(mean))
    return GridResult(
        thetas=space.batch_from_z(z),
        z=z,
        loss=mean,
        loss_se=se,
        theta=space.from_z(z[best]),
        simulations=len(z) * num_reps,
        per_rep=per_rep if keep_per_rep else None,
    )


def _parabolic(z_grid: np.ndarray, means: np.ndarray, best: int, n: int) -> np.ndarray:
    """Grid point ``best`` moved, along each axis, to the vertex of the parabola
    through it and its two neighbours (successive parabolic interpolation; Brent,
    *Algorithms for Minimization without Derivatives*, 1973, ch. 5), by at most half
    a grid spacing; unchanged where the parabola is not convex or a neighbour is
    missing. Costs no simulation."""
    z = z_grid[best].copy()
    h = 1.0 / n
    for axis in range(z_grid.shape[1]):
        f = []
        for sign in (-1, 1):
            target = z_grid[best].copy()
            target[axis] += sign * h
            hit = np.flatnonzero(np.all(np.abs(z_grid - target) < 1e-9, axis=1))
            f.append(means[hit[0]] if hit.size else np.nan)
        lo, hi, mid = f[0], f[1], means[best]
        curv = lo - 2.0 * mid + hi
        if np.isfinite(curv) and curv > 0:
            z[axis] += float(np.clip(0.5 * h * (lo - hi) / curv, -0.5 * h, 0.5 * h))
    return z
