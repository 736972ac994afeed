"""Top-Two Transportation Cost (T3C; Shang, de Heide, Kaufmann, Ménard, Valko,
"Fixed-Confidence Guarantees for Bayesian Best-Arm Identification", AISTATS 2020,
Algorithm 1 and Sec. 2.2) with Chernoff's GLR stopping rule (their Sec. 6; the
authors' ``ChernoffT3C`` in Kaufmann's BAI code) or their Bayesian stopping rule (eq.
(4)).

Every real arm is pulled once (round robin); then at every time ``t`` the policy stops
(:mod:`jbandits.policies.fixed_confidence._top_two`: ``"glr"`` or ``"posterior"``),
else:

1. ``theta ~ Pi_n`` (:func:`jbandits.policies.blocks.posterior.sample_posterior`:
   ``Beta(1 + S, 1 + N - S)`` or ``N(mu_hat, sigma^2 / N)``; the step's ``leader``
   key), ``I = argmax_i theta_i``;
2. with probability ``beta`` (``u < beta``, ``u`` from the ``coin`` key) pull ``I``;
3. else pull ``argmin_{j != I} W_n(I, j)``, the transportation cost of eq. (1)
   computed from the empirical means (:func:`jbandits.policies.blocks.glr.
   transport_costs`: ``W_n(I, j) = 0`` if ``mu_j >= mu_I``, else ``N_I d(mu_I, m) +
   N_j d(mu_j, m)``, ``m`` the count-weighted mean), "with ties broken uniformly at
   random" (Sec. 2.1): among the tied real arms, the ``floor(b n / 2^32)``-th in index
   order with ``b`` the 32 bits of the ``second`` key (Lemire's multiply-shift,
   :func:`jbandits.policies.blocks.arms.argmin_masked`). Ties are frequent: whenever
   the sampled leader is not the empirical best, every arm with a mean at least
   ``mu_I`` costs 0.

Paper vs authors' code: Kaufmann's ``ChernoffT3C`` is the paper's rule (empirical
means, ``randmax`` ties). BestArm.jl's ``t3c`` (X. Shang) computes ``W`` from the
posterior sample ``theta`` instead of the empirical means and pulls the leader when
``rand() > frac``; that variant is not implemented. ``argmax theta`` ties (probability
0) go to the lowest index. The Gaussian model uses the flat prior and needs the
initial pulls (Sec. 2.1); they are also made for Bernoulli arms, as in both codes.
"""

from __future__ import annotations

import jax.numpy as jnp

from jbandits.core import registry
from jbandits.core.types import ArrayLike, Policy
from jbandits.policies.blocks import fixed_confidence as fc
from jbandits.policies.fixed_confidence import _top_two


@registry.policy("t3c", shared=fc.CHERNOFF, optional=("confidence",))
def t3c(
    num_arms: int,
    *,
    beta: ArrayLike = 0.5,
    stopping: str = "glr",
    confidence: ArrayLike | None = None,
    chernoff: fc.Chernoff,
) -> Policy:
    """T3C (Shang et al. 2020, Algorithm 1): Thompson-sampling leader, transportation
    cost challenger, GLR or posterior stopping.

    Priors: Beta(1, 1) for Bernoulli arms (rewards in [0, 1]); flat for Gaussian arms
    (known ``sigma``).

    Args:
      num_arms: static K (including padded arms).
      beta: probability of pulling the leader, 0 < beta < 1 (traced; the paper's
        experiments use 1/2).
      stopping: static, "glr" (Chernoff, eq. (5), recommend the empirical best) or
        "posterior" (eq. (4), ``max_i alpha_i >= confidence``, recommend ``argmax
        alpha``).
      confidence: the posterior rule's ``c`` in (0, 1) (traced); default ``1 -
        delta``. Only with ``stopping="posterior"``.

    Output: the recommended arm (``[] int32``); the engine's ``num_pulls`` is the
    stopping time and the run's budget its cap.
    """
    delta, family, sigma, _ = chernoff
    _top_two.check_beta(beta)
    level = _top_two.check_stopping(stopping, confidence, delta)

    def choose(state, obs, key):
        mask = state.arm_mask
        stop, _ = _top_two.stopping_rule(obs, stopping, family, mask, sigma, level)
        keys = _top_two.split_keys(key)
        stats = obs.stats
        _, leader, play = _top_two.thompson_leader(
            family, stats, mask, sigma, keys, beta
        )
        challenger = _top_two.tc_challenger(
            family, stats, leader, mask, sigma, keys.second
        )
        return fc.Decision(jnp.where(play, leader, challenger), stop=stop)

    def output(state):
        return _top_two.recommend(state.stats, state.arm_mask, stopping, family, sigma)

    return fc.glr_policy(num_arms, choose, chernoff, output=output)
