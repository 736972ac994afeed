"""One start of the tuner: optax steps on gradient estimates in normalised
coordinates, non-finite estimates rejected, and the iterates averaged (the second
half; Polyak and Juditsky, SIAM J. Control Optim. 1992)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import jax
import jax.numpy as jnp
import numpy as np
import optax

from jbandits.tuning import estimators
from jbandits.tuning.options import MAX_STEPS
from jbandits.tuning.results import Step, _fmt
from jbandits.tuning.space import Space


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
