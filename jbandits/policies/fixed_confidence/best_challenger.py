"""Best Challenger (Garivier & Kaufmann, "Optimal Best Arm Identification with Fixed
Confidence", COLT 2016, Sec. 6, p. 13): a heuristic sampling rule "without formal
justification" (T-a-S (BC) in their Table 1) with Chernoff's GLR stopping rule (Sec.
3.2) and the empirical best as the recommendation.

Every real arm is pulled once (round robin); then at every time ``t`` the policy stops
if ``Z(t) > beta(t, delta)`` (:mod:`jbandits.policies.blocks.glr`), else, with ``a_t``
the empirical best and ``c_t = argmin_{c != a_t} Z_{a_t, c}(t)`` its best challenger:

* forced exploration as in D-Tracking: the least pulled arm of ``U_t = {a : N_a(t) <
  sqrt(t) - K/2}`` if it is not empty;
* ``rule="weights"`` (the paper, default): ``a_t`` if ``N_{a_t} / (N_{a_t} + N_{c_t})
  < w*_{a_t} / (w*_{a_t} + w*_{c_t})`` with ``w* = w*(mu_hat(t))`` (GK16 Theorem 5),
  else ``c_t``;
* ``rule="divergences"`` (the authors' Julia code, ``ChernoffBC`` in Kaufmann's
  ``BAIalgos.jl``, commented there as "different tie breaking rule compared to the one
  described"): ``a_t`` if ``d(mu_{a_t}, m) > d(mu_{c_t}, m)``, ``m = (S_{a_t} +
  S_{c_t}) / (N_{a_t} + N_{c_t})`` the pooled mean, else ``c_t``. It needs no ``w*``.

Ties and departures: ``a_t`` and ``c_t`` are the lowest-index maximiser / minimiser
(the authors' code draws the empirical best at random among ties; the batched entry
points permute the arms). ``w*`` is that of
:func:`jbandits.policies.blocks.tracking.weights_of` (rounded to ``2^-20``); with a non-unique empirical best it is uniform over the tied arms, so the
rule then pulls the less pulled of the leader and its (tied) challenger, the
challenger on equal counts; ``Z(t) = 0`` then and no stop is possible.

Cost per step: ``rule="weights"`` one :func:`jbandits.policies.blocks.tstar.
optimal_weights` solve plus ``O(K)``; ``rule="divergences"`` ``O(K)``.
"""

from __future__ import annotations

import jax.numpy as jnp

from jbandits.core import registry
from jbandits.core import validate as _validate
from jbandits.core.types import Policy
from jbandits.policies.blocks import arms, glr, tracking
from jbandits.policies.blocks import fixed_confidence as fc

RULES = ("weights", "divergences")


@registry.policy("best_challenger", shared=fc.CHERNOFF)
def best_challenger(
    num_arms: int,
    *,
    rule: str = "weights",
    chernoff: fc.Chernoff,
) -> Policy:
    """Best Challenger (GK16 Sec. 6) with Chernoff's stopping rule; recommends the
    empirical best.

    Args:
      num_arms: static K (including padded arms).
      rule: static, "weights" (the paper's comparison of proportions with ``w*``) or
        "divergences" (the authors' code).

    Output: the recommended arm (``[] int32``); the engine's ``num_pulls`` is the
    stopping time and the run's budget its cap.
    """
    _, family, sigma, _ = chernoff
    _validate.choice("rule", rule, RULES)

    def choose(state, obs, key):
        del key
        mask = state.arm_mask
        counts, sums = obs.stats.counts, obs.stats.sums
        means = arms.mean(obs.stats)
        lead = obs.stat.leader
        chal = jnp.maximum(obs.stat.challenger, 0)  # -1 only with one real arm
        n_lead, n_chal = counts[lead], counts[chal]
        if rule == "weights":
            _, w = tracking.weights_of(family, means, mask, sigma)
            share = n_lead / (n_lead + n_chal)
            play_lead = share < w[lead] / (w[lead] + w[chal])
        else:
            mid = (sums[lead] + sums[chal]) / (n_lead + n_chal)
            d_lead = glr.divergence(family, means[lead], mid, sigma)
            play_lead = d_lead > glr.divergence(family, means[chal], mid, sigma)
        under, least = tracking.undersampled(counts, obs.t, mask)
        return fc.Decision(jnp.where(under, least, jnp.where(play_lead, lead, chal)))

    return fc.glr_policy(num_arms, choose, chernoff)
