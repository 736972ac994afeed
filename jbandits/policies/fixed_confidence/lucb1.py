"""LUCB1 (Kalyanakrishnan, Tewari, Auer & Stone, ICML 2012) for best-arm identification
with fixed confidence, as restated by Kaufmann & Kalyanakrishnan (COLT 2013,
Algorithm 2 with m = 1, Hoeffding bounds eq. (3)).

After one pull per arm, each stage t draws the empirical best ``h_t`` and the
challenger ``u_t = argmax_{j != h_t} U_j(t)`` (two consecutive engine steps, leader
first) and stops at the first stage boundary with ``B(t) = U_{u_t}(t) - L_{h_t}(t) <=
eps``, recommending ``h_t``. Bounds (KK13 eq. (3)): ``p_a +- sqrt(beta(t, delta) / (2
N_a))`` for rewards in [0, 1] (``family="bernoulli"``); ``p_a +- sqrt(2 sigma^2 beta /
N_a)`` for Gaussian rewards of known std sigma (the same sub-Gaussian bound, sigma =
1/2 above). The stage machinery, the rates and the GLR stopping option are those of
:mod:`jbandits.policies.fixed_confidence._lucb`.

Exploration rate (LUCB1's own rate could not be read: the ICML 2012 text was not
available to us). Checked against the two texts that are: KK13 Theorem 1 proves
(KL-)LUCB delta-correct with ``beta(t, delta) = log(k1 K t^alpha / delta) + log
log(k1 K t^alpha / delta)`` (alpha > 1, k1 > 2e + 1 + e/(alpha - 1) + (e + 1)/(alpha
- 1)^2, which is 405.4 at alpha = 1.1) and states that these choices give "the same
guarantees as for their Hoeffding counterpart"; its experiments (Sec. 5) run LUCB with
alpha = 1.1, k1 = 405.5; Jamieson et al. (COLT 2014, Sec. 5) ran LUCB1 "with the upper
confidence bound of the form prescribed in the simulations section of" KK13. That rate
(``rate="kk13"``, t = the stage) with those constants is the default. The ICML
paper's own rate, recalled (not read) as ``ln(5 K t^4 / (4 delta))``, could not be
checked against any text and is not offered.
"""

from __future__ import annotations

import jax.numpy as jnp

from jbandits.core import registry
from jbandits.core.types import ArrayLike, Policy
from jbandits.policies.fixed_confidence import _lucb


def hoeffding_bounds(family: str, sigma: ArrayLike):
    """``(means, counts, beta) -> (lower, upper)``: KK13 eq. (3) (module docstring)."""

    def bounds(means, counts, beta):
        n = jnp.maximum(counts, 1.0)
        if family == "bernoulli":
            width = jnp.sqrt(beta / (2.0 * n))
        else:
            s = jnp.asarray(sigma, means.dtype)
            width = jnp.sqrt(2.0 * (s * s) * beta / n)
        return means - width, means + width

    return bounds


@registry.policy("lucb1", shared=_lucb.ARGUMENTS)
def lucb1(num_arms: int, *, lucb: _lucb.Arguments) -> Policy:
    """LUCB1: Hoeffding LUCB for best-arm identification with fixed confidence.

    Pulls each real arm once, then stages of two pulls (the empirical best, then the
    arm of largest UCB among the others); at each stage boundary after the first it
    stops (``state.arm = -1``) if ``B(t) = U_{u_t} - L_{h_t} <= epsilon`` and
    recommends the empirical best. The engine's ``num_pulls`` is then the stopping
    time; a run that reaches its budget first is not stopped and recommends the
    current empirical best. Ties go to the lowest index.

    Bounds (KK13 eq. (3)): Hoeffding's, ``p_a +- sqrt(beta / (2 N_a))`` for rewards in
    [0, 1] (``family="bernoulli"``), ``p_a +- sqrt(2 sigma^2 beta / N_a)`` for Gaussian
    rewards of known std ``sigma``.

    Args:
      num_arms: static K (including padded arms); at least 2 real arms.

    References:
      Kalyanakrishnan, Tewari, Auer, Stone. PAC subset selection in stochastic
      multi-armed bandits. ICML 2012. Kaufmann, Kalyanakrishnan. Information
      complexity in bandit subset selection. COLT 2013, Algorithm 2, eq. (3),
      Theorem 1, Sec. 5.
    """
    return _lucb.build(num_arms, hoeffding_bounds(lucb.family, lucb.sigma), lucb)
