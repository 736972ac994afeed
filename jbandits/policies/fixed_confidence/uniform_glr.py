"""Uniform sampling with a fixed-confidence stopping rule: the baseline of Garivier &
Kaufmann (COLT 2016, Sec. 6 discussion), Shang et al. ("Fixed-Confidence Guarantees for
Bayesian Best-Arm Identification", AISTATS 2020, Sec. 6, "Uniform") and Russo ("Simple
Bayesian Algorithms for Best-Arm Identification", Operations Research 68(6), 2020,
Sec. 7, "Unif").

Every real arm is pulled once (round robin); then, at every time ``t`` (samples
observed), the policy stops by one of two rules (static ``stopping``):

* ``"glr"`` (default): Chernoff's ``Z(t) > beta(t, delta)`` (GK16 Sec. 3.2,
  :mod:`jbandits.policies.blocks.glr`); recommend the empirical best. Shang et al.'s
  Uniform uses this rule (their eq. (5)).
* ``"posterior"``: Russo's Bayesian rule ``max_i alpha_i >= c``, ``alpha_i =
  Pi_n(theta_i > max_{j != i} theta_j)`` (:func:`jbandits.policies.blocks.posterior.
  best_arm_probabilities`; Beta(1, 1) priors for Bernoulli, the flat prior and known
  ``sigma`` for Gaussian), ``c = confidence`` (default ``1 - delta``: Russo's Sec. 8
  "stop when max_i alpha_{n,i} > 1 - delta"; the inequality is ``>=`` as in his
  experiments' "first time when max_i alpha_{n,i} >= c", Sec. 4, Fig. 1 and Sec. 7);
  recommend ``argmax_i alpha_i`` (Shang et al. eq. (4)). It is not a frequentist
  delta-correct rule. Russo's Gaussian experiments use N(0, 1) priors, which are not
  provided.

Otherwise pull the next arm (static ``sampling``):

* ``"round_robin"`` (default): the real arms in index order, pull ``t`` going to arm
  ``t mod K`` (equal allocation, every arm within one sample of ``t / K``);
* ``"random"``: a real arm drawn uniformly at random (Russo's uniform allocation,
  ``psi_{n,i} = 1/k``; BestArm.jl's ``uniform_c``) from the step key: the
  ``randint(key, 0, K)``-th real arm.

Ties: lowest index (the batched entry points permute the arms). Cost per step: ``O(K)``
for the GLR; the posterior rule adds the quadrature of
:func:`~jbandits.policies.blocks.posterior.best_arm_probabilities` (``O(K)`` arms on
one grid of a fixed number of nodes).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from jbandits.core import numbers, registry
from jbandits.core import validate as _validate
from jbandits.core.types import ArrayLike, Policy
from jbandits.policies.blocks import arms, posterior
from jbandits.policies.blocks import fixed_confidence as fc

SAMPLINGS = ("round_robin", "random")
STOPPINGS = ("glr", "posterior")


@registry.policy("uniform_glr", shared=fc.CHERNOFF, optional=("confidence",))
def uniform_glr(
    num_arms: int,
    *,
    sampling: str = "round_robin",
    stopping: str = "glr",
    confidence: ArrayLike | None = None,
    chernoff: fc.Chernoff,
) -> Policy:
    """Uniform sampling with Chernoff's (or Russo's posterior) stopping rule.

    Args:
      num_arms: static K (including padded arms).
      sampling: static, "round_robin" or "random" (module docstring).
      stopping: static, "glr" or "posterior" (module docstring).
      confidence: the posterior rule's ``c`` in (0, 1) (traced); default ``1 -
        delta``. Only with ``stopping="posterior"``.

    Output: the recommended arm (``[] int32``); the engine's ``num_pulls`` is the
    stopping time and the run's budget its cap.
    """
    delta, family, sigma, _ = chernoff
    _validate.choice("sampling", sampling, SAMPLINGS)
    _validate.choice("stopping", stopping, STOPPINGS)
    if numbers.given_on_host(confidence) and stopping != "posterior":
        raise ValueError("confidence is the posterior rule's: use stopping='posterior'")
    level = numbers.given(confidence, 1.0 - delta)
    _validate.in_range("confidence", level, 0.0, 1.0, low_open=True, high_open=True)

    def choose(state, obs, key):
        mask = state.arm_mask
        if sampling == "round_robin":
            arm = obs.rr
        else:
            arm = arms.nth_active(mask, jax.random.randint(key, (), 0, jnp.sum(mask)))
        if stopping == "glr":
            return fc.Decision(arm)
        alpha = posterior.best_arm_probabilities(family, obs.stats, mask, sigma)
        top = jnp.max(jnp.where(mask, alpha, -jnp.inf))
        return fc.Decision(arm, stop=~obs.forced & (top >= level))

    def output(state):
        best = fc.recommend(state.stats, state.arm_mask)
        if stopping == "glr":
            return best
        mask = state.arm_mask
        alpha = posterior.best_arm_probabilities(family, state.stats, mask, sigma)
        pulled = jnp.all(~mask | (state.stats.counts > 0))
        return jnp.where(pulled, arms.argmax_masked(alpha, mask), best)

    return fc.glr_policy(num_arms, choose, chernoff, output=output)
