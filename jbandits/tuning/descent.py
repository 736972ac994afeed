"""One start of the tuner: optax steps on gradient estimates in normalised
coordinates, with non-finite estimates rejected, gradient-SNR stopping and iterate
averaging."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import jax
import jax.numpy as jnp
import numpy as np
import optax

from jbandits.tuning import estimators
from jbandits.tuning.options import Search
from jbandits.tuning.results import Step, _fmt
from jbandits.tuning.space import Space


@dataclass
class Descent:
    """What one start produced."""

    candidate: np.ndarray  # [d] averaged (or last) iterate, normalised coordinates
    path: list  # its Steps
    rejected: int  # steps with a non-finite estimate (theta kept)
    stopped: str  # "budget", "max_steps" or "snr"
    spent: int  # simulations


def descend(
    estimate: Callable,
    space: Space,
    search: Search,
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
    ``allowance``, at most ``search.max_steps``; step ``i`` estimates with
    ``estimate(z, fold_in(key, i), i) -> (value, value_se, grad, grad_se, used)``."""
    z = np.asarray(z0, np.float64)
    state = opt.init(jnp.asarray(z))
    iterates, recent, path, rejected, spent = [z.copy()], [], [], 0, 0
    stopped = "max_steps"
    for i in range(search.max_steps):
        if spent + cost > allowance:
            stopped = "budget"
            break
        value, value_se, grad, grad_se, used = estimate(
            z, jax.random.fold_in(key, i), i
        )
        spent += used
        ok = estimators.finite(value, grad)
        snr = (
            float(np.sqrt(np.sum(grad**2) / max(np.sum(grad_se**2), 1e-300)))
            if ok
            else float("nan")
        )
        if ok:
            updates, state = opt.update(jnp.asarray(grad), state, jnp.asarray(z))
            z = space.clip(z + np.asarray(updates, np.float64))
            iterates.append(z.copy())
            recent.append((grad, grad_se))
        else:
            rejected += 1
        path.append(Step(space.from_z(z), value, value_se, grad, grad_se, snr, ok))
        if verbose:
            print(
                f"start {label} step {i:3d} loss {value:.4g} +- {value_se:.2g} "
                f"snr {snr:.2f} -> {_fmt(space.from_z(z))}"
            )
        if _flat(recent, search.snr_stop, search.patience):
            stopped = "snr"
            break
    tail = iterates[len(iterates) // 2 :] if search.average else iterates[-1:]
    return Descent(space.clip(np.mean(tail, axis=0)), path, rejected, stopped, spent)


def _flat(recent: list, snr_stop: float | None, patience: int) -> bool:
    """The mean gradient of the last ``patience`` accepted steps is within
    ``snr_stop`` standard errors of 0."""
    if snr_stop is None or len(recent) < patience:
        return False
    g_win = np.mean([g for g, _ in recent[-patience:]], axis=0)
    se_win = np.sqrt(np.sum([e**2 for _, e in recent[-patience:]], 0))
    se_win /= patience
    return bool(np.sum(g_win**2) <= snr_stop**2 * np.sum(se_win**2))
