"""The game-based sampling rule of Degenne, Koolen & Ménard, "Non-Asymptotic Pure
Exploration by Solving Games", NeurIPS 2019 (Sec. 3.1: an AdaHedge learner for the
allocation against the best response of nature, optimistic gains, C-Tracking), for
best-arm identification with Chernoff's GLR stopping rule. The details are those of
the authors' experiment code (``DaBomb`` with ``CTracking``, W. Koolen, as copied in
``rctzeng/NeurIPS2021-FWS``); ``benchmarks/notes_fc_baselines.md`` (DKM) records them
and what was decided.

Initialisation: pull the first real arm that is unpulled or, for Bernoulli arms, whose
empirical mean is 0 or 1, until there is none (the authors' code: it keeps the
Bernoulli divergences finite). Then at every time ``t`` (samples observed) the policy
stops if ``Z(t) > beta(t, delta)`` (recommend ``i* = argmax mu``, lowest index), else:

1. the learner of answer ``i*`` (one AdaHedge learner per answer, losses ``L`` and
   scale ``Delta``, started at 0 and 0.01) plays ``w_a ∝ exp(-eta (L_a - min L))``,
   ``eta = log K / Delta``;
2. nature best-responds: ``k = argmin_{k != i*} w_{i*} d(mu_{i*}, th_k) + w_k d(mu_k,
   th_k)``, ``th_k = (w_{i*} mu_{i*} + w_k mu_k)/(w_{i*} + w_k)`` (lowest index on
   ties), ``lambda = mu`` with ``lambda_{i*} = lambda_k = th_k``;
3. optimistic gains ``g_a = max(d(U_a, lambda_a), d(D_a, lambda_a), log(t)/N_a)``,
   ``U_a``/``D_a`` the KL upper/lower confidence bounds at level ``log(t)/N_a``
   (:mod:`jbandits.policies.blocks.kl_bounds`); the learner incurs the loss ``-g``
   (AdaHedge: ``Delta += w.l - (M(L + l) - M(L))``, ``M(L) = min L - log(mean
   exp(-eta (L - min L)))/eta``);
4. C-Tracking of ``w``: ``S <- S + w`` (``S`` starts at the counts when the
   initialisation ends); pull ``argmin_a N_a - S_a`` (lowest index). ``w`` enters
   ``S`` rounded to a multiple of ``2^-20`` (as ``tracking.weights_of``): arms whose
   gains are equal in exact arithmetic (every arm outside the best response gains
   ``log(t)/N_a``, up to rounding) must keep equal weights, so that the tracking's
   ties go to the lowest index and not to rounding noise.

K is the number of real arms (padded arms get no weight).
"""

from __future__ import annotations

from typing import NamedTuple

import jax.numpy as jnp

from jbandits.core import registry
from jbandits.core.types import Array, Policy
from jbandits.policies.blocks import arms, glr, kl_bounds, tracking
from jbandits.policies.blocks import fixed_confidence as fc

DELTA0 = 0.01  # AdaHedge's initial scale (the authors' code)


class Game(NamedTuple):
    """DKM's part of the state (``StoppingState.extra``)."""

    losses: Array  # [K, K] float: row i, the cumulative losses of answer i's learner
    scales: Array  # [K] float: AdaHedge's Delta per answer
    tracked: Array  # [K] float: C-Tracking's S (counts at the start + sum of w)
    started: Array  # [] bool: the initialisation is over


def unready(family: str, stats: arms.ArmStats, arm_mask: Array) -> Array:
    """``[K] bool``: real arms still in the initialisation (unpulled; Bernoulli: mean
    0 or 1)."""
    out = stats.counts == 0
    if family == "bernoulli":
        out = out | (stats.sums == 0) | (stats.sums == stats.counts)
    return arm_mask & out


def hedge_weights(losses: Array, eta: Array, arm_mask: Array) -> Array:
    """AdaHedge's play ``exp(-eta (L - min L))`` normalised over the real arms."""
    low = jnp.min(jnp.where(arm_mask, losses, jnp.inf))
    u = jnp.where(arm_mask, jnp.exp(-eta * (losses - low)), 0.0)
    return u / jnp.sum(u)


def mix_loss(losses: Array, eta: Array, arm_mask: Array, num_real) -> Array:
    """``M(L) = min L - log(sum exp(-eta (L - min L)) / K) / eta`` (real arms)."""
    low = jnp.min(jnp.where(arm_mask, losses, jnp.inf))
    total = jnp.sum(jnp.where(arm_mask, jnp.exp(-eta * (losses - low)), 0.0))
    return low - jnp.log(total / num_real) / eta


def best_response(family, means, w, best, arm_mask, sigma) -> tuple[Array, Array]:
    """``(k, lambda)``: nature's closest alternative to ``best`` under ``w``."""
    others = arm_mask & (jnp.arange(means.shape[-1]) != best)
    wb, mb = w[best], means[best]
    theta = (wb * mb + w * means) / jnp.where(others, wb + w, 1.0)
    value = wb * glr.divergence(family, mb, theta, sigma) + w * glr.divergence(
        family, means, theta, sigma
    )
    k = arms.argmin_masked(jnp.where(others, value, jnp.inf), others)
    moved = (jnp.arange(means.shape[-1]) == k) | (jnp.arange(means.shape[-1]) == best)
    return k, jnp.where(moved, theta[k], means)


def optimistic_gains(family, means, counts, lam, t, sigma) -> Array:
    """``max(d(U, lambda), d(D, lambda), log(t)/N)`` per arm."""
    level = jnp.log(jnp.asarray(t, means.dtype)) / counts
    up = kl_bounds.kl_upper(family, means, level, sigma)
    down = kl_bounds.kl_lower(family, means, level, sigma)
    return jnp.maximum(
        jnp.maximum(
            glr.divergence(family, up, lam, sigma),
            glr.divergence(family, down, lam, sigma),
        ),
        level,
    )


@registry.policy("dkm", shared=fc.CHERNOFF)
def dkm(
    num_arms: int,
    *,
    chernoff: fc.Chernoff,
) -> Policy:
    """The Degenne-Koolen-Ménard game rule (NeurIPS 2019): AdaHedge against the best
    response, optimistic gains, C-Tracking, GLR stopping.

    Args:
      num_arms: static K (including padded arms).

    Output: the recommended arm (``[] int32``); the engine's ``num_pulls`` is the
    stopping time and the run's budget its cap. Cost per step ``O(K)`` plus the KL
    bounds' bisections.
    """
    _, family, sigma, _ = chernoff

    def start(stats, arm_mask):
        del arm_mask
        dtype = stats.counts.dtype
        return Game(
            jnp.zeros((num_arms, num_arms), dtype), jnp.full((num_arms,), DELTA0, dtype),
            jnp.zeros_like(stats.counts), jnp.zeros((), bool),
        )  # fmt: skip

    def choose(state, obs, key):
        del key
        mask, game = state.arm_mask, state.extra
        stats = obs.stats
        pending = unready(family, stats, mask)
        init = jnp.any(pending)
        first = jnp.argmax(pending).astype(jnp.int32)
        stop = ~init & obs.stop
        decide = ~init & ~stop
        counts = jnp.maximum(stats.counts, 1.0)
        means = arms.mean(stats)
        dtype = counts.dtype
        num_real = jnp.sum(mask).astype(dtype)
        best = arms.argmax_masked(means, mask)
        losses, scale = game.losses[best], game.scales[best]
        eta = jnp.log(num_real) / scale
        w = hedge_weights(losses, eta, mask)
        _, lam = best_response(family, means, w, best, mask, sigma)
        gains = optimistic_gains(family, means, counts, lam, obs.t, sigma)
        loss = jnp.where(mask, -gains, 0.0)
        new = losses + loss
        mixed = mix_loss(new, eta, mask, num_real) - mix_loss(
            losses, eta, mask, num_real
        )
        new_scale = scale + (jnp.sum(w * loss) - mixed)
        row = arms.one_hot(best, num_arms) & decide
        all_losses = jnp.where(row[:, None], new[None, :], game.losses)
        scales = jnp.where(row, new_scale, game.scales)
        base = jnp.where(game.started, game.tracked, stats.counts)
        # weights equal in exact arithmetic stay equal
        tracked = jnp.where(decide, base + tracking.on_grid(w), game.tracked)
        pick = arms.argmin_masked(stats.counts - tracked, mask)
        return fc.Decision(
            jnp.where(init, first, pick),
            Game(all_losses, scales, tracked, game.started | decide),
            stop,
        )

    # the initialisation (module docstring) replaces the round robin
    return fc.glr_policy(num_arms, choose, chernoff, start=start, round_robin=False)
