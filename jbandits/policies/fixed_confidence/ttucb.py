"""TTUCB: the UCB-leader top-two algorithm of Jourdan & Degenne, "Non-Asymptotic Analysis
of a UCB-based Top Two Algorithm", NeurIPS 2023 (arXiv:2210.05431), with Chernoff's GLR
stopping rule, as M. Jourdan's PhD thesis ("Solving Pure Exploration Problems with the
Top Two Approach", the Top Two template, Algorithm 2.1, with the UCB leader) restates
it; the paper itself was not available to us.

Every real arm is pulled once (round robin); then at every time ``t`` (samples
observed) the policy stops if ``Z(t) > beta(t, delta)`` (:mod:`jbandits.policies.
blocks.glr`; recommend the empirical best), else, at time ``n = t + 1`` (Jourdan's
numbering: ``N_{n,i}`` counts the pulls before time ``n``):

1. leader ``B_n = argmax_i U_{n,i}``, ``U_{n,i} = max{q : N_{n,i} d(mu_i, q) <=
   g_m(n)}``, ``g_m(n) = Wbar_{-1}(2 s alpha log n + 2 log(2 + alpha log n) + 2)``,
   ``Wbar_{-1}(x) = -W_{-1}(-e^{-x})`` (:func:`wbar_minus1`), ``s = alpha = 1.2``;
   for Gaussian arms ``U = mu + sqrt(2 sigma^2 g_m(n) / N)``, the thesis's
   ``mu + sqrt(2 g(n) / N)`` at ``sigma = 1``;
2. challenger ``C_n = argmin_{j != B_n} W_n(B_n, j)`` (TC, Shang et al. 2020 eq. (1)),
   ties uniformly at random (:func:`jbandits.policies.fixed_confidence._top_two.
   tc_challenger`, the ``second`` key);
3. ``target="tracking"`` (default; TTUCB replaces the top-two coin by K independent
   tracking procedures, one per leader): pull ``B_n`` if ``N^{B_n}_{n,B_n} <= beta
   L_{n+1,B_n}``, else ``C_n``, where ``L_{n+1,i}`` counts the times ``i`` was the
   leader up to time ``n`` (this one included) and ``N^i_{n,i}`` the times it was
   pulled as the leader before ``n``; ``target="random"``: pull ``B_n`` with
   probability ``beta`` (the ``coin`` key), the randomised top-two template.

Bernoulli arms: the paper and the thesis chapter treat Gaussian arms only. Here the
leader is the same rule with the family's divergence (KL-UCB: ``d = kl``, by bisection,
:func:`jbandits.policies.blocks.kl_bounds.kl_upper`), which for Gaussian arms is the
closed form above; the threshold ``g_m`` is kept (its calibration is the Gaussian
one). This is our extension, not a rule from the papers.

The tracking rule and the meaning of ``n`` in ``g_m(n)`` are as we read the thesis's
restatement of Jourdan & Degenne (2023); they are not checked against the paper. Ties
of the leader (identical statistics) go to the lowest index.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp

from jbandits.core import registry
from jbandits.core import validate as _validate
from jbandits.core.types import Array, ArrayLike, Policy
from jbandits.policies.blocks import arms, kl_bounds
from jbandits.policies.blocks import fixed_confidence as fc
from jbandits.policies.fixed_confidence import _top_two

TARGETS = ("tracking", "random")
WBAR_ITERS = 8  # Newton steps of wbar_minus1: quadratic from y0 = x + log x


def wbar_minus1(x: ArrayLike) -> Array:
    """``Wbar_{-1}(x) = -W_{-1}(-e^{-x})`` for ``x >= 1``: the root ``y >= 1`` of ``y -
    log y = x`` (``W_{-1}`` the lower branch of Lambert's W), by :data:`WBAR_ITERS`
    Newton steps from ``y0 = x + log x``; about ``x + log x``."""
    x = jnp.asarray(x, jnp.result_type(float, x))

    def body(_, y):
        return y - (y - jnp.log(y) - x) / (1.0 - 1.0 / y)

    start = x + jnp.log(x)
    return jax.lax.fori_loop(0, WBAR_ITERS, body, jnp.where(x > 1.0, start, 1.0))


def exploration(n: ArrayLike, s: ArrayLike, alpha: ArrayLike) -> Array:
    """``g_m(n) = Wbar_{-1}(2 s alpha log n + 2 log(2 + alpha log n) + 2)``."""
    log_n = jnp.log(jnp.asarray(n, jnp.result_type(float, n, s, alpha)))
    return wbar_minus1(
        2.0 * s * alpha * log_n + 2.0 * jnp.log(2.0 + alpha * log_n) + 2.0
    )


class Leads(NamedTuple):
    """TTUCB's part of the state (``StoppingState.extra``)."""

    leads: Array  # [K] float: L_i, times arm i was the leader
    lead_pulls: Array  # [K] float: N^i_i, times arm i was pulled as the leader


@registry.policy("ttucb", shared=fc.CHERNOFF)
def ttucb(
    num_arms: int,
    *,
    beta: ArrayLike = 0.5,
    target: str = "tracking",
    s: ArrayLike = 1.2,
    alpha: ArrayLike = 1.2,
    chernoff: fc.Chernoff,
) -> Policy:
    """TTUCB (Jourdan & Degenne 2023): UCB leader, TC challenger, tracking of
    ``beta``, GLR stopping.

    Bernoulli arms (the default) get a KL-UCB leader, our extension (module
    docstring); Gaussian arms (known ``sigma``) are the paper's setting.

    Args:
      num_arms: static K (including padded arms).
      beta: the leader's target proportion, 0 < beta < 1 (traced; default 1/2).
      target: static, "tracking" (the paper's) or "random" (the top-two coin).
      s, alpha: the constants of ``g_m(n)``, > 0 (traced; 1.2 each).

    Output: the recommended arm (``[] int32``); the engine's ``num_pulls`` is the
    stopping time and the run's budget its cap.
    """
    _, family, sigma, _ = chernoff
    _top_two.check_beta(beta)
    _validate.choice("target", target, TARGETS)
    _validate.in_range("s", s, 0.0, low_open=True)
    _validate.in_range("alpha", alpha, 0.0, low_open=True)

    def start(stats, arm_mask):
        del arm_mask
        return Leads(jnp.zeros_like(stats.counts), jnp.zeros_like(stats.counts))

    def choose(state, obs, key):
        mask, old = state.arm_mask, state.extra
        keys = _top_two.split_keys(key)
        stats = obs.stats
        counts = jnp.maximum(stats.counts, 1.0)
        g = exploration(obs.t + 1, s, alpha).astype(counts.dtype)
        ucb = kl_bounds.kl_upper(family, arms.mean(stats), g / counts, sigma)
        leader = arms.argmax_masked(ucb, mask)
        challenger = _top_two.tc_challenger(
            family, stats, leader, mask, sigma, keys.second
        )
        if target == "tracking":
            play_leader = old.lead_pulls[leader] <= beta * (old.leads[leader] + 1.0)
        else:
            play_leader = _top_two.coin(keys.coin, beta, counts.dtype)
        decide = ~obs.forced & ~obs.stop
        hit = arms.one_hot(leader, num_arms) & decide
        return fc.Decision(
            jnp.where(play_leader, leader, challenger),
            Leads(old.leads + hit, old.lead_pulls + (hit & play_leader)),
        )

    return fc.glr_policy(num_arms, choose, chernoff, start=start)
