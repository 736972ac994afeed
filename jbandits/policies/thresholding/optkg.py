"""Opt-KG: optimistic knowledge gradient (Chen, Lin, Zhou, JMLR 2015).

Bernoulli rewards, Beta(a0, b0) priors. With ``I(a, b) = P(theta_i >= tau)`` under
Beta(a, b) and ``h(x) = max(x, 1 - x)``, pull ``argmax_i R+(a_i, b_i)`` where
``R+ = max(h(I(a+1, b)) - h(I), h(I(a, b+1)) - h(I))``. R+ is evaluated in log space
(``I(a+1, b) = I + g/a``, ``I(a, b+1) = I - g/b``, ``ln g = a ln x + b ln(1-x) -
ln B(a, b)``) so arms with thousands of pulls do not underflow to spurious ties; only
the pulled arm's value changes each step, so it is cached per arm.

Ties: R+ takes equal values on distinct posterior states (e.g. R+(5, 1) = R+(7, 2) =
1/64 at tau = 1/2), and float evaluation separates them by a few ulps in an
implementation-dependent way. Values within ``TIE_TOL`` (log space, i.e. relative) of
the maximum are therefore treated as tied and the first such arm is pulled.
``ln B(a, b)`` is ``gammaln(a) + gammaln(b) - gammaln(a + b)``:
``jax.scipy.special.betaln`` is off by 6e-8 (relative) at B(11, 4).

Cost per step: ``I`` is cached per arm and a 0/1 reward moves it by the exact
recurrences ``I(a+1, b) = I(a, b) + g/a`` and ``I(a, b+1) = I(a, b) - g/b`` (DLMF
8.17.20-21), so a Bernoulli step has a fixed cost and runs no loop. ``betainc`` (a
continued fraction iterated to convergence, up to 600 terms in float64) is called at
``init`` and, in a branch taken only when a lane of the batch has one, for a fractional
reward. In float64 the recurrence errs by at most ~6e-16 per pull (1.3e-11 after
20 000 pulls near the threshold, where jax's ``betainc`` itself is off by up to
1.9e-11; ``tests/policies/test_thresholding_optkg.py``).

Rewards must lie in [0, 1]. Opt-KG is defined for Bernoulli (0/1) rewards; a
fractional reward ``y`` in [0, 1] adds the pseudo-counts ``y`` and ``1 - y`` (an
extension), which keeps both posterior parameters positive. A reward outside [0, 1]
(Gaussian rewards, NaN) would drive ``b`` (or ``a``) to zero or below and fill the
state with NaN, so it is not used: the policy sets ``state.bad_reward`` and goes idle
(``state.arm = -1``; the engine reports ``stopped``). Nothing is clipped.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
from jax.scipy.special import betainc, gammaln

from jbandits.core import lanes as _lanes
from jbandits.core import registry
from jbandits.core import validate as _validate
from jbandits.core.execution import Execution
from jbandits.core.types import Array, ArrayLike, Policy
from jbandits.policies.blocks import arms

TIE_TOL = 1e-9  # log R+ within this of the maximum counts as a tie


def prob_above(a: ArrayLike, b: ArrayLike, threshold: ArrayLike) -> Array:
    """I(a, b) = P(theta >= tau) for theta ~ Beta(a, b) (1 - regularised inc. beta)."""
    return 1.0 - betainc(a, b, threshold)


def _log_g(a: Array, b: Array, threshold: ArrayLike) -> Array:
    """``ln g = a ln x + b ln(1 - x) - ln B(a, b)`` at ``x = threshold``."""
    return (
        a * jnp.log(threshold)
        + b * jnp.log1p(-threshold)
        - (gammaln(a) + gammaln(b) - gammaln(a + b))
    )


def _log_gain_given(a: Array, b: Array, i: Array, threshold: ArrayLike) -> Array:
    """ln R+(a, b) given ``i = I(a, b)`` (see :func:`log_gain`)."""
    sym = jnp.asarray(threshold) == 0.5  # R+ symmetric: evaluate (max, min)
    swap = sym & (a < b)
    a, b = jnp.where(swap, b, a), jnp.where(swap, a, b)
    i = jnp.where(swap, 1.0 - i, i)  # I(b, a) = 1 - I(a, b) at tau = 1/2
    log_g = _log_g(a, b, threshold)
    g = jnp.exp(log_g)
    r1 = jnp.abs(i + g / a - 0.5) - jnp.abs(i - 0.5)
    r2 = jnp.abs(i - g / b - 0.5) - jnp.abs(i - 0.5)
    far_up = (i >= 0.5) & (i - g / b >= 0.5)
    far_down = (i < 0.5) & (i + g / a < 0.5)
    mid = jnp.log(jnp.maximum(jnp.maximum(r1, r2), 0.0))
    return jnp.where(
        far_up, log_g - jnp.log(a), jnp.where(far_down, log_g - jnp.log(b), mid)
    )


def log_gain(a: ArrayLike, b: ArrayLike, threshold: ArrayLike) -> Array:
    """ln R+(a, b), stable for large a, b (Chen, Lin, Zhou, JMLR 2015)."""
    a, b = jnp.asarray(a), jnp.asarray(b)
    a, b = jnp.broadcast_arrays(a, b)
    return _log_gain_given(a, b, prob_above(a, b, threshold), threshold)


def _prob_after(a, b, i, y, threshold, lanes=None):
    """``I(a + y, b + 1 - y)`` from ``i = I(a, b)``: exact recurrence for ``y`` in {0, 1}.

    A fractional ``y`` calls ``betainc``, in a branch taken only when some lane of
    the batch (the ``lanes`` axis) has one (:func:`jbandits.core.lanes.any_lane`); lanes
    without one pass
    ``x = 0``, so the convergence loop (which runs until every lane has converged)
    stops after one term.
    """
    g = jnp.exp(_log_g(a, b, threshold))
    unit = jnp.where(y == 1.0, i + g / a, i - g / b)
    frac = (y != 0.0) & (y != 1.0)

    def fresh(_):
        x = jnp.where(frac, jnp.asarray(threshold, a.dtype), 0.0)
        return 1.0 - betainc(a + y, b + (1.0 - y), x)

    fresh = jax.lax.cond(_lanes.any_lane(frac, lanes), fresh, lambda _: unit, None)
    return jnp.where(frac, fresh, unit)


def _select(gain: Array, arm_mask: Array) -> Array:
    """First real arm whose ln R+ is within ``TIE_TOL`` of the maximum.

    NaN gains (invalid priors or threshold) rank as ``-inf``, so the result is a real
    arm whatever the gains hold (``-1`` only without real arms).
    """
    gain = jnp.where(arm_mask & ~jnp.isnan(gain), gain, -jnp.inf)
    near = gain >= jnp.max(gain) - TIE_TOL
    return arms.argmax_masked(near.astype(gain.dtype), arm_mask)


class OptKGState(NamedTuple):
    post_a: Array  # [K] float: a0 + successes
    post_b: Array  # [K] float: b0 + failures
    prob: Array  # [K] float: I(a, b) = P(theta >= tau) per arm (cached)
    log_gain: Array  # [K] float: ln R+ per arm (cached)
    arm_mask: Array  # [K] bool
    arm: Array  # [] int32: next arm (-1: idle)
    bad_reward: Array  # [] bool: a reward outside [0, 1] was seen (then idle)


@registry.policy("optkg")
def optkg(
    num_arms: int,
    *,
    threshold: ArrayLike,
    prior_a: ArrayLike = 1.0,
    prior_b: ArrayLike = 1.0,
    execution: Execution | None = None,
) -> Policy:
    """Optimistic knowledge gradient for Bernoulli thresholding bandits.

    Args:
      num_arms: static K.
      threshold: tau in (0, 1) (traced); Chen et al. use 1/2; other values generalise
        I(a, b) to P(theta >= tau).
      prior_a, prior_b: Beta prior (traced, > 0); Tao et al. (NeurIPS 2019) use
        (1, 1) and (0.5, 0.5).
      execution: how the step compiles (static); see :mod:`jbandits.policies`.

    Output: labels ``1{I(a_i, b_i) >= 1/2}`` (Chen et al.'s posterior rule; at tau = 1/2
    evaluated exactly as ``a_i >= b_i``); padded arms get 0. Use float64
    (``jax.enable_x64``) for long runs.

    Rewards must be in [0, 1] (Bernoulli in the paper). The first reward outside
    [0, 1] or NaN is not used: ``state.bad_reward`` becomes True and the policy goes
    idle (``state.arm = -1``), so the run stops early and the state stays NaN-free.

    References:
      Chen, Lin, Zhou. Statistical decision making for optimal budget allocation in
      crowd labeling. JMLR 2015.
    """
    num_arms = _validate.static_int("num_arms", num_arms, minimum=2)
    execution = Execution.resolve(execution)
    _validate.in_range("threshold", threshold, 0.0, 1.0, low_open=True, high_open=True)
    _validate.in_range("prior_a", prior_a, 0.0, low_open=True)
    _validate.in_range("prior_b", prior_b, 0.0, low_open=True)

    def init_fn(key, arm_mask):
        del key
        ftype = jnp.result_type(float)
        post_a = jnp.full((num_arms,), prior_a, ftype)
        post_b = jnp.full((num_arms,), prior_b, ftype)
        prob = prob_above(post_a, post_b, threshold)
        gain = _log_gain_given(post_a, post_b, prob, threshold)
        arm = _select(gain, arm_mask)
        return OptKGState(
            post_a, post_b, prob, gain, arm_mask, arm, jnp.zeros((), bool)
        )

    def step_fn(state, key, reward):
        del key
        j = jnp.maximum(state.arm, 0)
        y = jnp.asarray(reward, state.post_a.dtype)
        ok = (state.arm >= 0) & (y >= 0.0) & (y <= 1.0)  # False for NaN
        y = jnp.where(ok, y, 0.0)
        a_old, b_old, i_old = state.post_a[j], state.post_b[j], state.prob[j]
        a_j, b_j = a_old + y, b_old + (1.0 - y)
        i_j = _prob_after(a_old, b_old, i_old, y, threshold, execution.lanes)
        gain_j = _log_gain_given(a_j, b_j, i_j, threshold)
        post_a = state.post_a.at[j].set(jnp.where(ok, a_j, a_old))
        post_b = state.post_b.at[j].set(jnp.where(ok, b_j, b_old))
        prob = state.prob.at[j].set(jnp.where(ok, i_j, i_old))
        gain = state.log_gain.at[j].set(jnp.where(ok, gain_j, state.log_gain[j]))
        bad = state.bad_reward | ((state.arm >= 0) & ~ok)
        arm = jnp.where(bad, -1, _select(gain, state.arm_mask)).astype(jnp.int32)
        return OptKGState(post_a, post_b, prob, gain, state.arm_mask, arm, bad)

    def output_fn(state):
        above = prob_above(state.post_a, state.post_b, threshold) >= 0.5
        # at tau = 1/2, I >= 1/2 <=> a >= b exactly (Beta(a, a) has median 1/2)
        above = jnp.where(
            jnp.asarray(threshold) == 0.5, state.post_a >= state.post_b, above
        )
        return state.arm_mask & above

    return Policy(init_fn, step_fn, output_fn, "thresholding")


__all__ = ["TIE_TOL", "OptKGState", "log_gain", "optkg", "prob_above"]
