"""Where :func:`jbandits.tuning.tune` starts, how it steps and how it chooses: the
starting points (``search.start``, the grid refined by a parabola, or the survivors
of the halved grid), the descent from each (optax steps on gradient estimates,
non-finite estimates rejected, the second half of the iterates averaged; Polyak and
Juditsky, SIAM J. Control Optim. 1992) and the final comparison (equal shares, or a
race) between the averages, the start, the halving's survivors and the best
evaluated point.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import jax
import jax.numpy as jnp
import numpy as np
import optax

from jbandits.tuning import allocation, estimators
from jbandits.tuning.grid import _parabolic
from jbandits.tuning.options import MAX_STEPS
from jbandits.tuning.results import Step, _fmt
from jbandits.tuning.space import Space

if TYPE_CHECKING:
    from jbandits.tuning.options import Plan


@dataclass
class Starts:
    z: np.ndarray  # [S, d] starting points, normalised coordinates
    step0: float  # the default optimiser's first step
    init: Any = None  # (thetas [n, d] natural units, mean losses [n]) of the grid
    grid_best: dict | None = None
    seen: list = dataclasses.field(default_factory=list)  # (points, means), CRN keys
    sims: int = 0
    grid_per: np.ndarray | None = None  # [G, R] losses of the coarse grid
    finalists: list = dataclasses.field(default_factory=list)  # halving survivors
    extra: dict = dataclasses.field(default_factory=dict)  # for TuneResult.extra


def starting_points(plan: Plan, k_init, available: int) -> Starts:
    """``search.start``, the survivors of the halved grid, or the best coarse-grid
    points refined by a parabola (``available``: simulations after the reserve)."""
    space, search = plan.space, plan.search
    if search.start is not None:
        start = search.start
        listed = start if isinstance(start, (list, tuple)) else [start]
        return Starts(np.stack([space.to_z(s) for s in listed]), 0.1)
    n0 = plan.init_points
    z_grid = space.grid(n0)
    if search.halving_for(space.dim):
        return _halving_starts(plan, z_grid, n0, k_init, available)
    per = plan.objective.losses(
        space.batch_from_z(z_grid), k_init, search.num_reps, chunk=plan.chunk
    )
    means = per.mean(1)
    order = np.argsort(np.where(np.isfinite(means), means, np.inf))
    z_starts = np.stack([_parabolic(z_grid, means, order[0], n0)])
    return Starts(
        z=z_starts,
        step0=0.25 / n0,  # a quarter of the grid spacing
        init=(np.stack([space.to_natural(z) for z in z_grid]), means),
        grid_best=space.from_z(z_grid[order[0]]),
        seen=[(z_grid, means)],
        sims=per.size,
        grid_per=per,
    )


def _halving_starts(plan: Plan, z_grid, n0: int, k_init, available: int) -> Starts:
    """Successive halving of the grid (:func:`allocation.halve`) on a share of the
    simulations: its survivors, best first, start the descent and enter the race."""
    space = plan.space
    budget = int(allocation.halving_share(space.dim) * available)
    h = allocation.halve(
        plan.objective,
        space,
        z_grid,
        k_init,
        budget,
        keep=allocation.HALVING_KEEP,
        chunk=plan.chunk,
    )
    finalists = [z_grid[i] for i in h.order]
    return Starts(
        z=np.stack(finalists[:1]),
        step0=0.25 / n0,
        init=(np.stack([space.to_natural(z) for z in z_grid]), h.means),
        grid_best=space.from_z(finalists[0]),
        sims=h.simulations,
        grid_per=h.first,
        finalists=finalists,
        extra={
            "halving": {
                "rounds": h.rounds,
                "simulations": h.simulations,
                "reps": h.reps.tolist(),
            },
            "z_start": finalists[0],
        },
    )


@dataclass
class Descent:
    """What one start produced."""

    candidate: np.ndarray  # [d] averaged iterate, normalised coordinates
    path: list  # its Steps
    rejected: int  # steps with a non-finite estimate (theta kept)
    stopped: str  # "budget" or "max_steps"
    spent: int  # simulations


def descend(
    estimate: Callable,
    space: Space,
    opt: optax.GradientTransformation,
    z0: np.ndarray,
    key,
    *,
    allowance: int,
    cost: int,
    verbose: bool = False,
    label: int = 0,
) -> Descent:
    """Steps from ``z0`` while the next estimate (``cost`` simulations) fits in
    ``allowance``, at most :data:`~jbandits.tuning.options.MAX_STEPS`; step ``i``
    estimates with ``estimate(z, fold_in(key, i), i) -> (value, value_se, grad,
    grad_se, used)``."""
    z = np.asarray(z0, np.float64)
    state = opt.init(jnp.asarray(z))
    iterates, path, rejected, spent = [z.copy()], [], 0, 0
    stopped = "max_steps"
    for i in range(MAX_STEPS):
        if spent + cost > allowance:
            stopped = "budget"
            break
        value, value_se, grad, grad_se, used = estimate(
            z, jax.random.fold_in(key, i), i
        )
        spent += used
        ok = estimators.finite(value, grad)
        snr = float("nan")
        if ok:
            snr = float(np.sqrt(np.sum(grad**2) / max(np.sum(grad_se**2), 1e-300)))
            updates, state = opt.update(jnp.asarray(grad), state, jnp.asarray(z))
            z = space.clip(z + np.asarray(updates, np.float64))
            iterates.append(z.copy())
        else:
            rejected += 1
        path.append(Step(space.from_z(z), value, value_se, grad, grad_se, snr, ok))
        if verbose:
            print(
                f"start {label} step {i:3d} loss {value:.4g} +- {value_se:.2g} "
                f"snr {snr:.2f} -> {_fmt(space.from_z(z))}"
            )
    tail = iterates[len(iterates) // 2 :]
    return Descent(space.clip(np.mean(tail, axis=0)), path, rejected, stopped, spent)


def pick(plan: Plan, candidates: list, starts: Starts, reserve: int, k_pick):
    """``(z, race, simulations)``: the final comparison on fresh common replications
    of the averages, the start and the best evaluated point (with a reserve), else
    the best of several starts' averages, else the one average."""
    space, objective, chunk = plan.space, plan.objective, plan.chunk
    if reserve and plan.search.halving_for(space.dim):
        return _race(plan, candidates, starts, reserve, k_pick)
    if reserve:
        named = _named(space, candidates, starts, finalists=False)
        race_reps = reserve // len(named)
        if len(named) > 1 and race_reps >= 2:
            z_c = np.stack(list(named.values()))
            per = objective.losses(
                space.batch_from_z(z_c), k_pick, race_reps, chunk=chunk
            )
            means = per.mean(1)
            race = {
                n: (space.from_z(z), float(m))
                for (n, z), m in zip(named.items(), means, strict=True)
            }
            best = int(np.nanargmin(np.where(np.isfinite(means), means, np.inf)))
            return z_c[best], race, per.size
    if len(candidates) > 1:  # pick among the starts
        z_c = np.stack(candidates)
        per = objective.losses(
            space.batch_from_z(z_c), k_pick, plan.search.num_reps, chunk=chunk
        )
        return z_c[int(np.nanargmin(per.mean(1)))], None, per.size
    return candidates[0], None, 0


def _race(plan: Plan, candidates: list, starts: Starts, reserve: int, k_pick):
    """The final comparison as a race (:func:`allocation.race`) between the
    averages, the start, the halving's other survivors and the best evaluated
    point."""
    space = plan.space
    named = _named(space, candidates, starts, finalists=True)
    if len(named) < 2:
        return next(iter(named.values())), None, 0
    gaps: dict = {}
    winner, stats, used = allocation.race(
        plan.objective,
        space,
        named,
        k_pick,
        reserve,
        chunk=plan.chunk,
        detail=gaps,
    )
    if not stats:
        return candidates[0], None, used
    race = {n: (space.from_z(named[n]), m) for n, (m, _) in stats.items()}
    starts.extra["race_reps"] = {n: r for n, (_, r) in stats.items()}
    starts.extra["race_gaps"] = gaps  # survivors: (mean - lowest, paired SE)
    return named[winner], race, used


def _named(space: Space, candidates: list, starts: Starts, *, finalists):
    """The final comparison's distinct candidates by name: the averages, the start,
    (with ``finalists``) the halving's other survivors and the best evaluated
    point."""
    named = {f"average {s}": z for s, z in enumerate(candidates)}
    named["start"] = starts.z[0]
    if finalists:
        for i, z in enumerate(starts.finalists[1:], 1):
            named[f"halving {i}"] = z
    best = best_evaluated(space, starts)
    if best is not None:
        named["best evaluated"] = best
    return _distinct(named)


def best_evaluated(space: Space, starts: Starts):
    """``z`` of the lowest mean among the grid (and every CRN step), or None."""
    if not starts.seen:  # the grid, or every CRN step: comparable means
        return None
    pts = np.concatenate([p for p, _ in starts.seen])
    vals = np.concatenate([v for _, v in starts.seen])
    if not np.isfinite(vals).any():
        return None
    return space.clip(pts[int(np.nanargmin(vals))])


def _distinct(named: dict) -> dict:
    """Drop candidates equal (within 1e-9) to an earlier one."""
    out = {}
    for name, z in named.items():
        if all(np.max(np.abs(z - o)) > 1e-9 for o in out.values()):
            out[name] = np.asarray(z, np.float64)
    return out
