"""Tuning hyper-parameters (rho, alpha, eps, ...) with optax.

``jax.grad`` through a bandit trajectory is exactly zero (arg-max and sampling are
piecewise constant), so tuning needs a gradient *estimator* of a smoothed objective.
:func:`es_value_and_grad` is an antithetic evolution-strategies estimator of
``grad E_u[loss(theta + sigma u)]`` with common random numbers: both members of a
pair, and every pair, are evaluated on the same replication keys, which removes most
of the bandit noise from the difference. Its output feeds any optax optimizer
(:func:`tune` runs the loop).

Example::

    def loss(log_alpha, key):   # mean aggregate regret of LSA over 256 replications
        policy = jbandits.lsa(K, threshold=0.5, alpha=jnp.exp(log_alpha))
        res = jax.vmap(lambda k: jbandits.run(policy, bandit, params, k, budget=T,
                       horizon=T, metric=metric))(jax.random.split(key, 256))
        return res.metrics["misclassified"][:, -1].mean()

    log_alpha, history = jbandits.tune.tune(loss, jnp.log(1.0), optax.adam(0.05),
                                            num_steps=20, key=jax.random.key(0))
"""

from __future__ import annotations

from collections.abc import Callable

import jax
import jax.numpy as jnp
import optax

from jbandits import _validate
from jbandits.types import Array, Key


def es_value_and_grad(
    loss: Callable[[Array, Key], Array],
    theta: Array,
    key: Key,
    *,
    sigma: float = 0.1,
    num_pairs: int = 8,
) -> tuple[Array, Array]:
    """Antithetic ES estimate of the smoothed loss and its gradient at ``theta``.

    With ``u_1..u_P ~ N(0, I)`` (``P = num_pairs``) the estimate is
    ``sum_p (loss(theta + sigma u_p) - loss(theta - sigma u_p)) u_p / (2 sigma P)``,
    an unbiased estimate of the gradient of the Gaussian smoothing
    ``E_u[loss(theta + sigma u)]`` (Nesterov and Spokoiny, "Random gradient-free
    minimization of convex functions", Foundations of Computational Mathematics
    2017; antithetic pairs as in Salimans, Ho, Chen, Sidor and Sutskever, "Evolution
    strategies as a scalable alternative to reinforcement learning", arXiv:1703.03864,
    2017). Every evaluation uses the same replication key (common random numbers), so
    the bandit noise largely cancels in each difference. ``2 P + 1`` calls of ``loss``
    are vmapped; the function is jittable.

    Args:
      loss: ``(theta, key) -> scalar``; ``key`` fixes the replications (CRN).
      theta: parameter array (any shape).
      key: splits into the perturbation key and the common replication key.
      sigma: smoothing scale (in the units of ``theta``; tune in log space), ``> 0``.
      num_pairs: static number of antithetic pairs, ``>= 1``.

    Returns:
      ``(loss at theta, gradient estimate)``; the gradient has the shape of
      ``theta``.

    Raises:
      ValueError: if ``num_pairs`` is not an integer ``>= 1`` or ``sigma`` is not
        ``> 0``.

    Example::

        def loss(theta, key):   # a noisy quadratic
            return jnp.sum((theta - 1.0) ** 2) + 0.1 * jax.random.normal(key)

        value, grad = jbandits.tune.es_value_and_grad(
            loss, jnp.zeros(2), jax.random.key(0), sigma=0.1, num_pairs=64)
        # grad ~ [-2, -2]: the noise term is common to every evaluation
    """
    num_pairs = _validate.static_int("num_pairs", num_pairs, minimum=1)
    _validate.in_range("sigma", sigma, 0.0, low_open=True)
    key_u, key_crn = jax.random.split(key)
    theta = jnp.asarray(theta, jnp.result_type(float))
    u = jax.random.normal(key_u, (num_pairs, *theta.shape), theta.dtype)
    plus = jax.vmap(lambda e: loss(theta + sigma * e, key_crn))(u)
    minus = jax.vmap(lambda e: loss(theta - sigma * e, key_crn))(u)
    weights = (plus - minus) / (2.0 * sigma)
    grad = jnp.tensordot(weights, u, axes=1) / num_pairs
    return loss(theta, key_crn), grad


def tune(
    loss: Callable[[Array, Key], Array],
    theta0,
    optimizer: optax.GradientTransformation,
    *,
    num_steps: int,
    key: Key,
    sigma: float = 0.1,
    num_pairs: int = 8,
    verbose: bool = False,
):
    """Minimise ``loss`` with an optax optimizer on :func:`es_value_and_grad` gradients.

    Step ``i`` uses the ``i``-th of ``num_steps`` keys split from ``key`` (new
    perturbations and new replications every step); the update is jitted once.

    Args:
      loss: ``(theta, key) -> scalar`` (see :func:`es_value_and_grad`).
      theta0: the initial parameters (any shape; cast to the default float dtype).
      optimizer: an ``optax.GradientTransformation``, e.g. ``optax.adam(0.05)``.
      num_steps: number of updates, ``>= 1``.
      key: the experiment key.
      sigma: ES smoothing scale, ``> 0``.
      num_pairs: antithetic pairs per step, ``>= 1``.
      verbose: print the loss and ``theta`` after each step.

    Returns:
      ``(theta, history)``: the final parameters and the list of the ``num_steps``
      losses, each evaluated at the step's starting ``theta``.

    Raises:
      ValueError: if ``num_steps`` or ``num_pairs`` is not an integer ``>= 1`` or
        ``sigma`` is not ``> 0``.

    Example::

        theta, history = jbandits.tune.tune(loss, jnp.log(1.0), optax.adam(0.05),
                                            num_steps=20, key=jax.random.key(0))
    """
    num_steps = _validate.static_int("num_steps", num_steps, minimum=1)
    theta = jnp.asarray(theta0, jnp.result_type(float))
    state = optimizer.init(theta)

    @jax.jit
    def step(theta, state, key):
        value, grad = es_value_and_grad(loss, theta, key, sigma=sigma, num_pairs=num_pairs)
        updates, state = optimizer.update(grad, state, theta)
        return optax.apply_updates(theta, updates), state, value

    history = []
    for i, k in enumerate(jax.random.split(key, num_steps)):
        theta, state, value = step(theta, state, k)
        history.append(float(value))
        if verbose:
            print(f"step {i:3d}  loss {history[-1]:.5f}  theta {theta}")
    return theta, history
