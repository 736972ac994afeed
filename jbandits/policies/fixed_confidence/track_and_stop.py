"""Track-and-Stop (Garivier & Kaufmann, "Optimal Best Arm Identification with Fixed
Confidence", COLT 2016, GK16): a tracking sampling rule (Sec. 3.1) of the plug-in
optimal proportions ``w*(mu_hat(t))`` (Theorem 5) with Chernoff's GLR stopping rule
(Sec. 3.2, eqs. (7)-(8)) and the empirical best as the recommendation.

Every real arm is pulled once (round robin); then at every time ``t`` (samples
observed) the policy stops if ``Z(t) > beta(t, delta)``
(:mod:`jbandits.policies.blocks.glr`), else pulls ``A_{t+1}``:

* ``tracking="d"`` (D-Tracking, the default): with ``U_t = {a : N_a(t) < sqrt(t) -
  K/2}``, the least pulled arm of ``U_t`` if ``U_t`` is not empty (forced
  exploration), else ``argmax_a t w*_a(mu_hat(t)) - N_a(t)``.
* ``tracking="c"`` (C-Tracking): ``argmax_a sum_{s <= t} w^{eps_s}_a(mu_hat(s)) -
  N_a(t)``, ``w^eps`` the L-infinity projection of ``w*`` onto ``Sigma^eps = {w in
  [eps, 1]^K : sum w = 1}``, ``eps_s = (K^2 + s)^{-1/2} / 2``. The projection used is
  ``max(w - lam, eps)`` with ``lam >= 0`` making the sum 1: the Euclidean projection,
  which is also an L-infinity one (the paper does not say which L-infinity projection;
  the deficit ``sum (eps - w_a)_+`` has to come off the other arms, none below eps, and
  this takes it evenly, at the smallest possible largest change). The sum runs over the
  decision times ``s >= K`` (the round robin's ``s < K`` would add the uniform weights,
  one per arm, which moves every arm's score by the same constant); it is kept as the
  deficit ``sum_s w^{eps_s} - N`` (bounded by Lemma 15, so float32 keeps its digits
  over long runs). ``projection=False`` is the authors' Julia code (``TrackAndStopC``
  in Kaufmann's ``BAIalgos.jl``; BestArm.jl's ``c_tracking``): no projection, the raw
  ``w*`` summed, and D-Tracking's forced exploration test instead.

Ties and departures (decided here; the paper leaves them open):

* ``argmax`` / ``argmin``: lowest index (the batched entry points permute the arms).
* A non-unique empirical best (``w*`` undefined, ``T* = inf``): ``Z(t) = 0`` then, so
  the stopping test cannot pass (the authors' code skips it; the same outcome).
  D-Tracking pulls the first tied best arm, as the authors' ``TrackAndStop`` does
  (there a uniformly random tied arm); forced exploration still comes first (the
  paper's rule, on which Lemma 8 rests; the code tests the tie first). C-Tracking
  adds the uniform weights over the tied best arms (the authors' ``OptimalWeights``
  for a non-unique maximum), projected as usual.
* ``w*`` is rounded to a multiple of ``2^-20`` before tracking
  (:func:`jbandits.policies.blocks.tracking.weights_of`): weights equal in
  exact arithmetic tie exactly.
* C-Tracking's deficit: two arms whose deficits are equal in exact arithmetic but
  were pulled at different times can differ in the last bit, so such a tie goes to
  the larger rounded value, not always to the lowest index (the running sums ``sum_s
  w^eps_s`` and ``N`` kept apart would tie exactly, at the cost of float32 digits
  over long runs).
* D-Tracking's test is the paper's strict ``N_a < sqrt(t) - K/2``; the authors' code
  uses ``min N <= max(sqrt(t) - K/2, 0)`` (they differ only when ``sqrt(t) - K/2`` is a
  whole number).

Lazy updates (``lazy=True``; Jedra & Proutière, "Optimal Best-arm Identification in
Linear Bandits", NeurIPS 2020, Sec. 3, the "lazy" sampling rule of their Lazy
Track-and-Stop): the tracked weights are recomputed only at the times of a sparse set
``T`` and kept in between, ``w(t) = w*(mu_hat(t))`` for ``t`` in ``T``, ``w(t) = w(t -
1)`` otherwise; both tracking rules then track ``w(t)`` as above (D-Tracking: ``argmax_a
t w_a(t) - N_a(t)`` after the forced exploration, the tied-best case included: ``w``
uniform on the arms tied at the last update; C-Tracking: the sum of the projected
``w(s)``). ``T`` is geometric, as in the authors' code (``LAZY_TS``, ``laziness_factor =
2``): the first decision time ``t_0 = K``, then ``t_{k+1} = max(ceil(lambda t_k), t_k +
1)``, ``lambda = laziness`` > 1, computed in float32 (``ceil(fl(lambda) fl(t))``).
Their analysis keeps asymptotic optimality for update sets as sparse as this (the
estimate at the last update still converges to ``mu``), and delta-correctness is the
stopping rule's (unchanged). Under ``vmap`` the solve runs only at the steps where some
lane updates (:func:`jbandits.policies.blocks.tracking.when_any`): lanes that
started together update together, ``O(log_lambda t)`` solves in ``t`` steps.

Cost per step: one :func:`jbandits.policies.blocks.tstar.optimal_weights` (Bernoulli
about ``1500 K`` flops in float32, Gaussian ``~100 K``: its docstring; lazy: at the
update times only), the GLR (``O(K)``) and, for C-Tracking, a sort of the K weights.
"""

from __future__ import annotations

from typing import NamedTuple

import jax.numpy as jnp

from jbandits.core import registry
from jbandits.core import validate as _validate
from jbandits.core.types import Array, ArrayLike, Policy
from jbandits.policies.blocks import arms
from jbandits.policies.blocks import fixed_confidence as fc
from jbandits.policies.blocks.tracking import undersampled, weights_of, when_any

TRACKINGS = ("d", "c")


class Tracked(NamedTuple):
    """Track-and-Stop's part of the state (``StoppingState.extra``)."""

    deficit: Array  # [K] C-Tracking: sum_s w^eps_s - N (0 for D-Tracking)
    weights: Array  # [K] lazy: w at the last update (0 otherwise)
    next_update: Array  # [] int32 lazy: the next update time (0 otherwise)


def project(w: Array, eps: ArrayLike, arm_mask: Array) -> Array:
    """``max(w - lam, eps)`` over the real arms (0 on padded ones), ``lam`` such that
    the real entries sum to 1: the projection of C-Tracking (module docstring).

    With the real weights sorted in decreasing order ``u_1 >= ... >= u_K``, ``lam =
    lam_j`` for the largest ``j`` with ``u_j - lam_j > eps``, ``lam_j = (u_1 + ... + u_j
    - 1 + (K - j) eps) / j``. Needs ``eps <= 1/K`` (C-Tracking's ``eps_t <= 1/(2K)``).
    """
    dtype = w.dtype
    num_real = jnp.sum(arm_mask).astype(dtype)
    u = -jnp.sort(jnp.where(arm_mask, -w, jnp.inf))  # real arms first, decreasing
    real = jnp.isfinite(u)
    partial = jnp.cumsum(jnp.where(real, u, 0.0))
    j = jnp.arange(1, w.shape[-1] + 1, dtype=dtype)
    lam_j = (partial - 1.0 + (num_real - j) * eps) / j
    valid = real & (u - lam_j > eps)
    last = jnp.max(jnp.where(valid, jnp.arange(w.shape[-1]), 0))
    return jnp.where(arm_mask, jnp.maximum(w - lam_j[last], eps), 0.0).astype(dtype)


def _next_update(t: Array, laziness: ArrayLike) -> Array:
    """``max(ceil(lambda t), t + 1)``, in float32 whatever the dtype (module docstring)."""
    scaled = jnp.ceil(jnp.asarray(laziness, jnp.float32) * t.astype(jnp.float32))
    return jnp.maximum(scaled.astype(jnp.int32), t + 1)


def _lazy_weights(due, family, stats, mask, sigma, weights) -> Array:
    """``w*(mu_hat)`` (uniform on tied best arms) where ``due``, else ``weights``."""

    def solve(stats, mask, sigma, weights):
        del weights
        return weights_of(family, arms.mean(stats), mask, sigma)[1]

    def keep(stats, mask, sigma, weights):
        del stats, mask, sigma
        return weights

    sigma = jnp.asarray(sigma, weights.dtype)
    return when_any(due, solve, keep, stats, mask, sigma, weights)


@registry.policy("track_and_stop", shared=fc.CHERNOFF)
def track_and_stop(
    num_arms: int,
    *,
    tracking: str = "d",
    projection: bool = True,
    lazy: bool = False,
    laziness: ArrayLike = 2.0,
    chernoff: fc.Chernoff,
) -> Policy:
    """Track-and-Stop (GK16 Sec. 3): D- or C-Tracking of ``w*(mu_hat)`` with Chernoff's
    stopping rule; recommends the empirical best. ``sigma`` enters the GLR only
    (``w*`` does not depend on it).

    Args:
      num_arms: static K (including padded arms).
      tracking: static, "d" (D-Tracking) or "c" (C-Tracking).
      projection: static, C-Tracking only: True (the paper's ``Sigma^eps`` projection)
        or False (the authors' code: raw weights and D-Tracking's forced exploration).
      lazy: static; True: ``w*`` recomputed only at geometric update times (Jedra &
        Proutière 2020's lazy updates, module docstring), False (default): every step.
      laziness: the update times' ratio ``lambda > 1`` (traced; lazy only; default 2,
        the authors' ``laziness_factor``).

    Output: the recommended arm (``[] int32``); the engine's ``num_pulls`` is the
    stopping time and the run's budget its cap.
    """
    _, family, sigma, _ = chernoff
    _validate.choice("tracking", tracking, TRACKINGS)
    if not isinstance(projection, bool):
        raise ValueError(f"projection must be a bool, got {projection!r}")
    if not isinstance(lazy, bool):
        raise ValueError(f"lazy must be a bool, got {lazy!r}")
    _validate.in_range("laziness", laziness, 1.0, low_open=True)

    def start(stats, arm_mask):
        del arm_mask
        zeros = jnp.zeros((num_arms,), stats.counts.dtype)
        return Tracked(zeros, zeros, jnp.zeros((), jnp.int32))

    def choose(state, obs, key):
        del key
        mask = state.arm_mask
        # the pull just made was a decision of the tracking rule when t >= K
        decided = state.t >= jnp.sum(mask)
        deficit = state.extra.deficit - jnp.where(
            decided, arms.one_hot(state.arm, num_arms), 0.0
        )
        counts = obs.stats.counts
        weights, next_update = state.extra.weights, state.extra.next_update
        if lazy:
            due = ~obs.forced & ~obs.stop & (obs.t >= next_update) & (state.arm >= 0)
            w = weights = _lazy_weights(due, family, obs.stats, mask, sigma, weights)
            next_update = jnp.where(due, _next_update(obs.t, laziness), next_update)
            unique = jnp.ones((), bool)
        else:
            unique, w = weights_of(family, arms.mean(obs.stats), mask, sigma)
        under, least = undersampled(counts, obs.t, mask)
        tf = obs.t.astype(counts.dtype)
        if tracking == "d":
            tracked = arms.argmax_masked(tf * w - counts, mask)
            rule = jnp.where(unique, tracked, obs.stat.leader)
        else:
            if projection:
                eps = 0.5 / jnp.sqrt(jnp.sum(mask).astype(tf.dtype) ** 2 + tf)
                w = project(w, eps, mask)
            live = ~obs.forced & ~obs.stop
            deficit = jnp.where(live, deficit + w, deficit)
            rule = arms.argmax_masked(deficit, mask)
        if tracking == "d" or not projection:
            rule = jnp.where(under, least, rule)
        return fc.Decision(rule, Tracked(deficit, weights, next_update))

    return fc.glr_policy(num_arms, choose, chernoff, start=start)
