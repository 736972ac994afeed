"""Gradient estimators of a bandit policy's expected loss in its hyper-parameters.

``jax.grad`` through a trajectory is exactly zero (arg-maxes and draws are piecewise
constant), so the tuner estimates the gradient of a *smoothed* objective:

* **antithetic ES with common random numbers** (:func:`es_value_and_grad` for a traced
  loss, :func:`es_gradient` on the runner): the gradient of the Gaussian smoothing
  ``E_u[L(theta + sigma u)]`` (Nesterov and Spokoiny, Foundations of Computational
  Mathematics 2017), estimated from pairs ``theta +- sigma u`` (Salimans et al.,
  arXiv:1703.03864, 2017) that share their replication keys, so most of the bandit
  noise cancels in each difference. Works for every policy and loss; its cost grows
  with the dimension (``2 P`` points per step).
* **score function / policy gradient** (:func:`pg_gradient`): the exact gradient of the
  loss of the softmax relaxation of an index policy, ``E[(L - b) grad log pi]``, with a
  leave-one-out baseline ``b`` (Boutilier et al., NeurIPS 2020; see
  :mod:`jbandits.tuning.relaxed`). One point per step and no smoothing scale, but it
  tunes the relaxed policy, and its variance grows with the horizon (the score sums
  ``T`` terms): it wins for short horizons, many parameters, or Bayes objectives
  where ES differences are noisy.
"""

from __future__ import annotations

from collections.abc import Callable

import jax
import jax.numpy as jnp
import numpy as np
import optax
from jax.flatten_util import ravel_pytree

from jbandits.analysis.stats import standard_error
from jbandits.core import validate as _validate
from jbandits.core.types import Key


# ----------------------------------------------------------- functional (traced loss)
def es_value_and_grad(
    loss: Callable,
    theta,
    key: Key,
    *,
    sigma: float = 0.1,
    num_pairs: int = 8,
):
    """Antithetic ES estimate of the smoothed loss and its gradient at ``theta``.

    With ``u_1..u_P ~ N(0, I)`` the estimate is
    ``sum_p (loss(theta + sigma u_p) - loss(theta - sigma u_p)) u_p / (2 sigma P)``,
    unbiased for the gradient of ``E_u[loss(theta + sigma u)]``. Every evaluation uses
    the same replication key (common random numbers). ``theta`` may be any pytree of
    floats; ``2 P + 1`` calls of ``loss`` are vmapped and the function is jittable.

    Args:
      loss: ``(theta, key) -> scalar``; ``key`` fixes the replications.
      theta: parameters (an array or a pytree of arrays).
      key: splits into the perturbation key and the common replication key.
      sigma: smoothing scale in the units of ``theta`` (> 0).
      num_pairs: static number of antithetic pairs (>= 1).

    Returns:
      ``(loss at theta, gradient estimate)``, the gradient shaped like ``theta``.

    Raises:
      ValueError: ``num_pairs`` not an integer >= 1 or ``sigma`` not > 0.

    Example::

        def loss(theta, key):   # a noisy quadratic
            return jnp.sum((theta - 1.0) ** 2) + 0.1 * jax.random.normal(key)

        value, grad = jbandits.tuning.es_value_and_grad(
            loss, jnp.zeros(2), jax.random.key(0), sigma=0.1, num_pairs=64)
    """
    num_pairs = _validate.static_int("num_pairs", num_pairs, minimum=1)
    _validate.in_range("sigma", sigma, 0.0, low_open=True)
    key_u, key_crn = jax.random.split(key)
    theta = jax.tree_util.tree_map(
        lambda x: jnp.asarray(x, jnp.result_type(float)), theta
    )
    flat, unravel = ravel_pytree(theta)
    u = jax.random.normal(key_u, (num_pairs, *flat.shape), flat.dtype)
    f = lambda v: loss(unravel(v), key_crn)  # noqa: E731
    plus = jax.vmap(lambda e: f(flat + sigma * e))(u)
    minus = jax.vmap(lambda e: f(flat - sigma * e))(u)
    weights = (plus - minus) / (2.0 * sigma)
    grad = jnp.tensordot(weights, u, axes=1) / num_pairs
    return f(flat), unravel(grad)


def minimize(
    loss: Callable,
    theta0,
    optimizer: optax.GradientTransformation,
    *,
    num_steps: int,
    key: Key,
    sigma: float = 0.1,
    num_pairs: int = 8,
    verbose: bool = False,
):
    """Minimise a traced ``loss(theta, key)`` with optax on ES gradients.

    The low-level loop for losses written by hand (e.g. over
    :func:`jbandits.run`); :func:`jbandits.tuning.tune` is the one-call tuner on the
    batched runner. The step is jitted once per call. A step whose loss or update is
    not finite is rejected (``theta`` is kept) and counted.

    Args:
      loss: ``(theta, key) -> scalar``.
      theta0: initial parameters (array or pytree; must be finite).
      optimizer: an ``optax.GradientTransformation``.
      num_steps: number of updates (>= 1).
      key: the experiment key (step ``i`` uses the ``i``-th split).
      sigma, num_pairs: as in :func:`es_value_and_grad`.
      verbose: print the loss and ``theta`` after each step.

    Returns:
      ``(theta, history)``: the final parameters and the ``num_steps`` losses, each
      at the step's starting ``theta``.

    Raises:
      ValueError: ``theta0`` not finite, ``num_steps`` / ``num_pairs`` < 1,
        ``sigma`` <= 0.
    """
    num_steps = _validate.static_int("num_steps", num_steps, minimum=1)
    theta = jax.tree_util.tree_map(
        lambda x: jnp.asarray(x, jnp.result_type(float)), theta0
    )
    if not all(
        bool(jnp.all(jnp.isfinite(x))) for x in jax.tree_util.tree_leaves(theta)
    ):
        raise ValueError(f"theta0 must be finite, got {theta0!r}")
    state = optimizer.init(theta)

    @jax.jit
    def step(theta, state, key):
        value, grad = es_value_and_grad(
            loss, theta, key, sigma=sigma, num_pairs=num_pairs
        )
        updates, new_state = optimizer.update(grad, state, theta)
        new = optax.apply_updates(theta, updates)
        ok = jnp.isfinite(value) & jnp.all(
            jnp.stack(
                [jnp.all(jnp.isfinite(x)) for x in jax.tree_util.tree_leaves(new)]
            )
        )
        keep = lambda a, b: jax.tree_util.tree_map(  # noqa: E731
            lambda x, y: jnp.where(ok, x, y), a, b
        )
        return keep(new, theta), keep(new_state, state), value, ok

    history = []
    for i, k in enumerate(jax.random.split(key, num_steps)):
        theta, state, value, ok = step(theta, state, k)
        history.append(float(value))
        if verbose:
            flag = "" if bool(ok) else "  (non-finite: step rejected)"
            print(f"step {i:3d}  loss {history[-1]:.5f}  theta {theta}{flag}")
    return theta, history


# --------------------------------------------------------------- on the runner (host)
def _antithetic_directions(key, num_pairs: int, dim: int) -> np.ndarray:
    u = np.asarray(jax.random.normal(key, (num_pairs, dim)), np.float64)
    if dim == 1:  # one direction: +-1 (a random scale only adds variance)
        u = np.sign(u) + (u == 0)
    return u


def es_gradient(
    objective,
    space,
    z,
    key,
    *,
    sigma,
    num_pairs,
    num_reps,
    chunk,
    run_key=None,
    record: list | None = None,
):
    """ES gradient in the normalised coordinates ``z`` of ``space`` (host side).

    Evaluates ``z +- sigma u_p`` (``p < num_pairs``) on ``num_reps`` common
    replications each. Returns ``(value, value_se, grad [d], grad_se [d], sims)``:
    the mean loss over all evaluations and its standard error over replications,
    the gradient and its standard error (replications are i.i.d., so the spread of
    the per-replication estimates gives it), and the simulations used.

    ``run_key`` (optional) fixes the replication keys (``key`` then only draws the
    directions), so that successive steps share their replications; ``record``
    (optional list) receives ``(points [2P, d], mean losses [2P])``.
    """
    key_u, key_run = jax.random.split(key)
    key_run = key_run if run_key is None else run_key
    u = _antithetic_directions(key_u, num_pairs, space.dim)
    points = space.clip(np.concatenate([z + sigma * u, z - sigma * u]))
    step = points[:num_pairs] - points[num_pairs:]  # actual (clipped) differences
    losses = objective.losses(
        space.batch_from_z(points), key_run, num_reps, chunk=chunk
    )  # [2P, R]
    if record is not None:
        record.append((points, losses.mean(1)))
    diff = losses[:num_pairs] - losses[num_pairs:]  # [P, R]
    if space.dim == 1:  # central differences over the actual (clipped) step
        per_rep = (diff / step[:, :1]).mean(0)[:, None]  # [R, 1]
    else:  # effective directions: clipping at a bound shortens the step
        u_eff = step / (2.0 * sigma)
        per_rep = np.einsum("pr,pd->rd", diff, u_eff) / (2.0 * sigma * num_pairs)
    grad = per_rep.mean(0)
    grad_se = standard_error(per_rep)
    value_rep = losses.mean(0)
    return (
        float(value_rep.mean()),
        standard_error(value_rep),
        grad,
        grad_se,
        2 * num_pairs * num_reps,
    )


def pg_gradient(objective, space, z, key, *, num_reps, chunk):
    """Score-function gradient of the relaxed policy's loss in coordinates ``z``.

    ``objective`` must be built with a relaxed source (:mod:`jbandits.tuning.relaxed`).
    Uses ``L_r - mean_{s != r} L_s`` (leave-one-out baseline) times the score of
    replication ``r``. Returns ``(value, value_se, grad [d], grad_se [d], sims)``.
    """
    theta = space.batch_from_z(z[None])
    res = objective.run(theta, key, num_reps, chunk=chunk, return_state=True)
    loss = objective.per_rep(res)[0]  # [R]
    names = space.keys()
    score = np.stack(
        [np.asarray(res.state.score[n], np.float64)[0] for n in names], -1
    )  # [R, d] in theta units
    baseline = (loss.sum() - loss) / (num_reps - 1)
    per_rep = (loss - baseline)[:, None] * score * space.jacobian(z)[None]
    grad = per_rep.mean(0)
    grad_se = standard_error(per_rep)
    return (
        float(loss.mean()),
        standard_error(loss),
        grad,
        grad_se,
        num_reps,
    )


def finite(*xs) -> bool:
    return all(np.all(np.isfinite(np.asarray(x))) for x in xs)
