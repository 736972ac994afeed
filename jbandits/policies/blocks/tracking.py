"""Tracking sampling rules' parts (Garivier & Kaufmann, "Optimal Best Arm
Identification with Fixed Confidence", COLT 2016, GK16, Sec. 3.1): D-Tracking's
forced exploration, the plug-in optimal weights ``w*(mu_hat)`` on a grid, the uniform
weights of tied best arms, and :func:`when_any`, a ``lax.cond`` for rare work under
``vmap``.

Weights that are equal in exact arithmetic must tie in floating point, so that a
tracking rule's ties go to the lowest index rather than to rounding noise:
:func:`on_grid` rounds a weight (or a ratio of weights) to a multiple of
:data:`WEIGHT_GRID` (``2^-20``, about 1e-6), far below what tracking resolves (GK16
Lemmas 7-8: counts follow the weights to within ``O(K)`` samples).

Used with :mod:`jbandits.policies.blocks.fixed_confidence` by Track-and-Stop, Best Challenger,
FWS, DKM, EB-TC and TTTS; a user's tracking policy can use them the same way.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jax import custom_batching

from jbandits.core.types import Array, ArrayLike
from jbandits.policies.blocks import arms, tstar

# tracked weights enter the rules rounded to a multiple of WEIGHT_GRID (on_grid)
WEIGHT_GRID = 2.0**-20


def on_grid(x: ArrayLike) -> Array:
    """``x`` rounded to the nearest multiple of :data:`WEIGHT_GRID` (module docstring)."""
    return jnp.round(x / WEIGHT_GRID) * WEIGHT_GRID


def undersampled(counts: Array, t: Array, arm_mask: Array) -> tuple[Array, Array]:
    """D-Tracking's forced exploration (GK16 Sec. 3.1): ``U_t = {a : N_a(t) < sqrt(t) -
    K/2}``; ``(U_t non-empty, argmin_{a in U_t} N_a(t))``, lowest index on ties."""
    num_real = jnp.sum(arm_mask).astype(counts.dtype)
    level = jnp.sqrt(jnp.asarray(t, counts.dtype)) - num_real / 2.0
    under = arm_mask & (counts < level)
    return jnp.any(under), arms.least_pulled(counts, under)


def tied_best(means: Array, arm_mask: Array) -> tuple[Array, Array]:
    """``(unique, weights)``: whether the empirical best is unique, and the uniform
    weights over the tied best real arms (the authors' ``OptimalWeights`` when the
    maximum is not unique; a one-hot of the best when it is)."""
    top = jnp.max(jnp.where(arm_mask, means, -jnp.inf))
    tied = arm_mask & (means == top)
    count = jnp.sum(tied)
    return count == 1, tied / jnp.maximum(count, 1).astype(means.dtype)


def weights_of(
    family: str, means: Array, arm_mask: Array, sigma: ArrayLike
) -> tuple[Array, Array]:
    """``(unique, w)``: ``w*(mu)`` of GK16 Theorem 5
    (:func:`~jbandits.policies.blocks.tstar.optimal_weights`) :func:`on_grid` where
    the empirical best is unique; the uniform weights over the tied best arms
    (:func:`tied_best`) where it is not.

    The rounding makes weights that are equal in exact arithmetic equal in floating
    point (a symmetric Bernoulli pair, ``mu_2 = 1 - mu_1``, has ``w* = (1/2, 1/2)``,
    which the solver returns a few ulps apart); it is below the solver's float32
    accuracy (1e-5).
    """
    _, w = tstar.optimal_weights(family, means, arm_mask, sigma)
    w = on_grid(w)
    unique, tied = tied_best(means, arm_mask)
    return unique, jnp.where(unique, w, tied)


def when_any(pred: Array, fn, otherwise, *operands):
    """``lax.cond(pred, fn, otherwise, *operands)``, batched economically: for work a
    step needs rarely (TTTS's fallback, lazy Track-and-Stop's ``w*``).

    Under ``vmap`` (the runner's lanes) a plain ``cond`` becomes a ``select`` that
    computes both branches on every lane and step. Here, unbatched, it is a
    ``lax.cond``; under ``vmap`` with a batched ``pred`` (one per lane), ``fn`` runs
    (on every lane, a ``select`` keeping ``otherwise``'s result where ``pred`` is
    False) only when ``pred`` holds on some lane, and is skipped entirely otherwise;
    nested ``vmap`` levels apply the same rule (the any-lane predicate of one level is
    batched at the next). Every lane gets exactly the values of the unbatched call.
    ``fn`` and ``otherwise`` must not close over traced values (``custom_vmap``
    refuses batched ones): pass them as ``operands``.
    """

    @custom_batching.custom_vmap
    def call(p, *ops):
        return jax.lax.cond(p, fn, otherwise, *ops)

    @call.def_vmap
    def _batched(axis_size, in_batched, p, *ops):
        p_batched, ops_batched = in_batched[0], in_batched[1:]
        axes = tuple(
            jax.tree_util.tree_map(lambda b: 0 if b else None, flags)
            for flags in ops_batched
        )

        def lanes(f):
            return jax.vmap(f, in_axes=axes, axis_size=axis_size)

        if not p_batched:
            out = when_any(p, lanes(fn), lanes(otherwise), *ops)
        else:

            def both(q, *o):
                yes, no = lanes(fn)(*o), lanes(otherwise)(*o)
                pick = lambda a, b: jnp.where(  # noqa: E731
                    q.reshape(q.shape + (1,) * (a.ndim - 1)), a, b
                )
                return jax.tree_util.tree_map(pick, yes, no)

            def neither(q, *o):
                del q
                return lanes(otherwise)(*o)

            out = when_any(jnp.any(p), both, neither, p, *ops)
        return out, jax.tree_util.tree_map(lambda _: True, out)

    return call(pred, *operands)
