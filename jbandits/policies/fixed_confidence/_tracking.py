"""What the GLR-stopped policies of this package share (Track-and-Stop, Best Challenger,
uniform sampling, racing): argument checks, the step's bookkeeping (statistics, the
initial round robin, Chernoff's stopping rule of Garivier & Kaufmann, COLT 2016, Sec.
3.2, via :mod:`jbandits.policies.blocks.glr`), D-Tracking's forced exploration (ibid.
Sec. 3.1) and the recommendation.

Time ``t`` is the number of samples observed. After each pull the statistics are
updated; while ``t < K`` (real arms) the next pull is the round robin's; from ``t = K``
on, the policy stops (``arm = -1``, absorbing) when ``Z(t) > beta(t, delta)``, else its
sampling rule picks ``A_{t+1}``.

:func:`when_any` is a ``lax.cond`` for work that a step needs rarely (TTTS's
fallback, lazy Track-and-Stop's ``w*``): under ``vmap`` (the runner's lanes) a plain
``cond`` becomes a ``select`` that computes both branches on every lane and step; this
one computes the rare branch, for every lane, only at the steps where some lane needs it.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
from jax import custom_batching

from jbandits.core import validate as _validate
from jbandits.core.types import Array, ArrayLike
from jbandits.policies.blocks import arms, glr, tstar

FAMILIES = glr.FAMILIES
# w*(mu) enters the tracking rules rounded to a multiple of WEIGHT_GRID (weights_of)
WEIGHT_GRID = 2.0**-20


def check_args(num_arms, delta, family: str, sigma, threshold: str) -> int:
    """Validate the arguments every GLR-stopped policy takes; the static K."""
    num_arms = _validate.static_int("num_arms", num_arms, minimum=2)
    _validate.in_range("delta", delta, 0.0, 1.0, low_open=True, high_open=True)
    _validate.choice("family", family, FAMILIES)
    _validate.in_range("sigma", sigma, 0.0, low_open=True)
    # a threshold name the family has no calibration for raises here (glr's message)
    glr.threshold_constant(threshold, 0.5, 2, family)
    return num_arms


def threshold_constant(threshold: str, delta, arm_mask: Array, family: str) -> Array:
    """The time-free part of ``beta(t, delta)`` for the real arms of ``arm_mask``."""
    return glr.threshold_constant(threshold, delta, jnp.sum(arm_mask), family)


class Observed(NamedTuple):
    """A step's bookkeeping before the sampling rule."""

    stats: arms.ArmStats  # with the new reward
    t: Array  # [] int32: samples observed
    forced: Array  # [] bool: the initial round robin is not over
    rr: Array  # [] int32: its next arm
    stop: Array  # [] bool: Z(t) > beta(t, delta) (never during the round robin)
    stat: glr.GLR  # Z(t), leader, challenger


def observe(
    stats: arms.ArmStats,
    arm: Array,
    reward: ArrayLike,
    t: Array,
    arm_mask: Array,
    constant: Array,
    *,
    family: str,
    sigma: ArrayLike,
    delta: ArrayLike,
    threshold: str,
) -> Observed:
    """Update ``stats`` with ``reward`` of ``arm``, then Chernoff's stopping test."""
    stats = arms.update(stats, arm, reward)
    t = t + 1
    forced, rr = arms.forced_arm(t, arm_mask)
    means = arms.mean(stats)
    stop, stat = glr.stops(
        family, stats.counts, means, arm_mask, t, delta, sigma, threshold,
        constant=constant,
    )  # fmt: skip
    return Observed(stats, t, forced, rr, ~forced & stop, stat)


def when_any(pred: Array, fn, otherwise, *operands):
    """``lax.cond(pred, fn, otherwise, *operands)``, batched economically.

    Unbatched, a ``lax.cond``. Under ``vmap`` with a batched ``pred`` (one per lane),
    ``fn`` runs (on every lane, a ``select`` keeping ``otherwise``'s result where
    ``pred`` is False) only when ``pred`` holds on some lane, and is skipped entirely
    otherwise; nested ``vmap`` levels apply the same rule (the any-lane predicate of
    one level is batched at the next). Every lane gets exactly the values of the
    unbatched call. ``fn`` and ``otherwise`` must not close over traced values
    (``custom_vmap`` refuses batched ones): pass them as ``operands``.
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
    """``(unique, w)``: ``w*(mu)`` of GK16 Theorem 5 (:func:`jbandits.policies.blocks.
    tstar.optimal_weights`) rounded to the nearest multiple of :data:`WEIGHT_GRID`
    (``2^-20``, about 1e-6) where the empirical best is unique; the uniform weights
    over the tied best arms (:func:`tied_best`) where it is not.

    The rounding makes weights that are equal in exact arithmetic equal in floating
    point (a symmetric Bernoulli pair, ``mu_2 = 1 - mu_1``, has ``w* = (1/2, 1/2)``,
    which the solver returns a few ulps apart), so that the tracking rules' exact ties
    go to the lowest index instead of to rounding noise. It is below the solver's
    float32 accuracy (1e-5) and far below what tracking resolves (GK16 Lemmas 7-8:
    counts follow the weights to within O(K) samples).
    """
    _, w = tstar.optimal_weights(family, means, arm_mask, sigma)
    w = jnp.round(w / WEIGHT_GRID) * WEIGHT_GRID
    unique, tied = tied_best(means, arm_mask)
    return unique, jnp.where(unique, w, tied)


def recommend(stats: arms.ArmStats, arm_mask: Array) -> Array:
    """``argmax_a mu_a`` over the pulled real arms, lowest index on ties (GK16 Sec. 3)."""
    return arms.best_empirical(stats, arm_mask)
