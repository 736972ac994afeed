"""EB-TC and EB-TCε: the Empirical-Best leader, Transportation-Cost challenger top-two
rule of Jourdan, Degenne & Kaufmann, "An ε-Best-Arm Identification Algorithm for
Fixed-Confidence and Beyond", NeurIPS 2023 (arXiv:2305.16041), with the GLR (ε = 0) or
GLRε stopping rule. ``benchmarks/notes_fc_baselines.md`` (EB-TC) records what the
paper says and what was decided where our sources are silent.

Every real arm is pulled once (round robin); then at every time ``t`` (samples
observed; the paper's ``n = t + 1``) the policy stops, else:

1. leader ``B = argmax_i mu_i`` (empirical best, lowest index on ties);
2. challenger ``C = argmin_{j != B} W_{eps0}(B, j)``, ties uniformly at random among
   the real arms within :data:`jbandits.policies.fixed_confidence._top_two.TIE_ULPS`
   ulps of the minimum (the ``second`` key, as T3C). Gaussian: ``W_{eps0}(B, j) = (mu_B
   - mu_j + eps0)^2 / (2 sigma^2 (1/N_B + 1/N_j))``, the square of the paper's
   ``(mu_B - mu_j + eps0) / sqrt(1/N_B + 1/N_j)`` (same arg-min: the base is >= 0 since
   ``B`` is the empirical best); Bernoulli (``eps0 = 0`` only): Shang et al.'s ``W_n``
   (:func:`jbandits.policies.fixed_confidence._top_two.tc_challenger`);
3. target: K tracking procedures, one per leader (the paper's): pull ``B`` if
   ``N^B_B <= sum_{s <= n, B_s = B} beta_s``, else ``C``; ``N^i_i`` counts the pulls
   of ``i`` as the leader and the sum runs over the times ``i`` was the leader, this
   one included. ``target="fixed"``: ``beta_s = beta``, evaluated as ``beta L_B``
   (``L_B`` the leader count); ``target="ids"`` (information-directed selection, You,
   Qin, Wang & Yang, ICML 2023): ``beta_s = N_B d(mu_B, u) / (N_B d(mu_B, u) + N_C
   d(mu_C, u))`` with ``u`` the count-weighted mean of the pair, which for Gaussian arms
   is ``N_C / (N_B + N_C)`` (evaluated in that closed form); for Bernoulli arms the
   same ratio is taken where both divergences are 0 (equal means; its limit), and the
   share is rounded to a multiple of ``2^-20`` (as ``tracking.weights_of``: shares
   equal in exact arithmetic, e.g. 1/2 for a pair symmetric about 1/2, must not be
   split by the rounding of two logarithms when the tracking compares their sum with
   an integer).

Stopping: ``Z(t) > beta(t, delta)`` (:mod:`jbandits.policies.blocks.glr`'s thresholds,
``t`` samples observed), ``Z`` Chernoff's GLR for Bernoulli arms and, for Gaussian
arms, the GLRε statistic ``min_{j != B} (mu_B - mu_j + eps)^2 / (2 sigma^2 (1/N_B +
1/N_j))`` (``eps = 0``: the GLR). Recommendation: the empirical best.

Families: the paper treats Gaussian arms (known variance). ``family="bernoulli"``
takes ``epsilon = epsilon0 = 0`` only (the ε-transportation cost has no closed form
there): EB-TC with the Bernoulli KL transportation cost of Jourdan et al., "Top Two
Algorithms Revisited", NeurIPS 2022 (their EB-TC, randomised there, tracked here).
"""

from __future__ import annotations

from typing import NamedTuple

import jax.numpy as jnp
import numpy as np

from jbandits.core import numbers, registry
from jbandits.core import validate as _validate
from jbandits.core.types import Array, ArrayLike, Policy
from jbandits.policies.blocks import arms, glr, tracking
from jbandits.policies.blocks import fixed_confidence as fc
from jbandits.policies.fixed_confidence import _top_two

TARGETS = ("fixed", "ids")


class Targets(NamedTuple):
    """EB-TC's part of the state (``StoppingState.extra``)."""

    leads: Array  # [K] float: L_i, times arm i was the leader
    lead_pulls: Array  # [K] float: N^i_i, times arm i was pulled as the leader
    target_sum: Array  # [K] float: sum of beta_s over the times i was the leader (IDS)


def gaussian_costs(
    counts: Array, means: Array, leader: Array, arm_mask: Array, sigma, slack
) -> Array:
    """``[K]``: ``(mu_B - mu_j + slack)^2 / (2 sigma^2 (1/N_B + 1/N_j))`` for the real
    arms ``j != B`` (``B = leader``), ``+inf`` elsewhere. Counts must be positive."""
    gap = (means[leader] - means) + slack
    inv = 1.0 / counts[leader] + 1.0 / counts
    cost = gap * gap / (2.0 * sigma * sigma * inv)
    others = arm_mask & (jnp.arange(counts.shape[-1]) != leader)
    return jnp.where(others, cost, jnp.inf)


def random_argmin(costs: Array, others: Array, key) -> Array:
    """The arg-min of ``costs`` over ``others``, ties (within ``TIE_ULPS`` ulps of the
    minimum) uniformly at random with ``key`` (as ``_top_two.tc_challenger``)."""
    low = jnp.min(jnp.where(others, costs, jnp.inf))
    eps = jnp.finfo(costs.dtype).eps
    tied = costs <= low * (1.0 + _top_two.TIE_ULPS * eps)
    score = jnp.where(tied, 0.0, 1.0)
    return arms.argmin_masked(score, others, key=key, tie_break="random")


def ids_share(family: str, counts: Array, means: Array, leader, challenger) -> Array:
    """IDS's ``beta_n(B, C)`` (module docstring)."""
    n_b, n_c = counts[leader], counts[challenger]
    ratio = n_c / (n_b + n_c)
    if family == "gaussian":
        return ratio
    mu_b, mu_c = means[leader], means[challenger]
    gap = mu_b - mu_c  # >= 0: the leader is the empirical best
    # kl(mu_B, u) and kl(mu_C, u) in glr's cancellation-free form: the textbook one
    # loses them in float32 for close means (0.5 vs 0.4999 gives a = 0)
    kl_b, kl_c = glr._bernoulli_pair(mu_b, mu_c, gap, n_b / (n_b + n_c), ratio)
    a = jnp.where(gap > 0, n_b * kl_b, 0.0)
    b = jnp.where(gap > 0, n_c * kl_c, 0.0)
    total = a + b
    share = jnp.where(total > 0, a / jnp.where(total > 0, total, 1.0), ratio)
    return tracking.on_grid(share)


@registry.policy("eb_tc", shared=fc.CHERNOFF, optional=("epsilon0",))
def eb_tc(
    num_arms: int,
    *,
    beta: ArrayLike = 0.5,
    target: str = "fixed",
    epsilon: ArrayLike = 0.0,
    epsilon0: ArrayLike | None = None,
    chernoff: fc.Chernoff,
) -> Policy:
    """EB-TC / EB-TCε (Jourdan, Degenne & Kaufmann 2023): empirical-best leader,
    transportation-cost challenger with slack ``epsilon0``, tracked ``beta`` or IDS
    target, GLR / GLRε stopping.

    Gaussian arms (known ``sigma``) are the paper's setting; Bernoulli arms take
    ``epsilon = epsilon0 = 0``.

    Args:
      num_arms: static K (including padded arms).
      beta: the leader's target proportion with ``target="fixed"``, 0 < beta < 1
        (traced; default 1/2, the paper's).
      target: static, "fixed" (tracking ``beta``) or "ids" (tracking IDS's share).
      epsilon: the stopping rule's slack ``eps >= 0`` (traced; Gaussian only if > 0:
        a concrete non-zero value with "bernoulli" raises, a traced one makes the
        output -1): with ``eps > 0`` the run returns an ``eps``-good arm (EB-TCε).
      epsilon0: the challenger's slack ``eps0 >= 0`` (traced); default ``epsilon``.

    Output: the recommended arm (``[] int32``); the engine's ``num_pulls`` is the
    stopping time and the run's budget its cap.
    """
    delta, family, sigma, threshold = chernoff
    _top_two.check_beta(beta)
    _validate.choice("target", target, TARGETS)
    slack = numbers.given(epsilon0, epsilon)
    for name, value in (("epsilon", epsilon), ("epsilon0", slack)):
        _validate.in_range(name, value, 0.0)
        concrete = _validate.is_concrete(value)
        if family == "bernoulli" and concrete and np.any(np.asarray(value) != 0):
            raise ValueError(
                f"{name} > 0 needs family='gaussian' (the paper's setting); Bernoulli "
                f"EB-TC takes {name}=0, got {value!r}"
            )

    def start(stats, arm_mask):
        del arm_mask
        zeros = jnp.zeros_like(stats.counts)
        return Targets(zeros, zeros, zeros)

    def choose(state, obs, key):
        mask, old = state.arm_mask, state.extra
        stats = obs.stats
        counts = jnp.maximum(stats.counts, 1.0)  # every real arm is pulled once here
        means = arms.mean(stats)
        leader = arms.argmax_masked(means, mask)
        second = _top_two.split_keys(key).second
        if family == "gaussian":
            dtype = counts.dtype
            sig = jnp.asarray(sigma, dtype)
            others = mask & (jnp.arange(num_arms) != leader)
            costs = gaussian_costs(counts, means, leader, mask, sig, slack)
            pick = random_argmin(costs, others, second)
            challenger = jnp.where(pick < 0, leader, pick)
            stat = gaussian_costs(counts, means, leader, mask, sig, epsilon)
            beta_t = glr.threshold(
                threshold, obs.t, delta, jnp.sum(mask), family, constant=state.constant
            )
            stop = ~obs.forced & (jnp.min(stat) > beta_t)
        else:
            challenger = _top_two.tc_challenger(
                family, stats, leader, mask, sigma, second
            )
            stop = obs.stop
        if target == "fixed":
            share = jnp.asarray(beta, counts.dtype)
            play_leader = old.lead_pulls[leader] <= beta * (old.leads[leader] + 1.0)
        else:
            share = ids_share(family, counts, means, leader, challenger)
            play_leader = old.lead_pulls[leader] <= old.target_sum[leader] + share
        decide = ~obs.forced & ~stop
        hit = arms.one_hot(leader, num_arms) & decide
        return fc.Decision(
            jnp.where(play_leader, leader, challenger),
            Targets(
                old.leads + hit,
                old.lead_pulls + (hit & play_leader),
                old.target_sum + jnp.where(hit, share, 0.0),
            ),
            stop,
        )

    def output(state):
        best = fc.recommend(state.stats, state.arm_mask)
        if family == "gaussian":
            return best
        # a traced (swept) slack reaches no check: a non-zero one answers -1
        return jnp.where((epsilon == 0) & (slack == 0), best, -1).astype(jnp.int32)

    return fc.glr_policy(num_arms, choose, chernoff, start=start, output=output)
