"""KL-Racing (Kaufmann & Kalyanakrishnan, "Information Complexity in Bandit Subset
Selection", COLT 2013, Algorithm 1 with KL confidence bounds, eqs. (4)-(5), m = 1 and
eps = 0), as run by Garivier & Kaufmann, COLT 2016, Sec. 6, p. 13.

Rounds as in :mod:`jbandits.policies.fixed_confidence._racing`. At the end of round
``r`` the empirical worst active arm ``b`` is eliminated if its upper confidence bound
is below the lower bound of the empirical best ``a_r`` (GK16 p. 13)::

    max{q : r d(mu_b, q) <= beta(s, delta)} < min{q : r d(mu_{a_r}, q) <= beta(s, delta)}

(Bernoulli: bisections of :mod:`jbandits.policies.blocks.kl_bounds`; Gaussian: ``mu +-
sqrt(2 sigma^2 beta / r)``). ``s = r`` by default (the paper's ``beta(r, delta)``);
``clock="pulls"`` uses the global sample count ``t`` (the authors' Julia code calls
``rate(t, round, delta) / round``, whose rates ignore the second argument).

KK13's Algorithm 1 would also accept the empirical best as soon as its lower bound
exceeds every other active arm's upper bound (for m = 1 that ends the race at once);
GK16's description and code only eliminate the worst arm, which is what this does.

KK13's own rate for KL-Racing, ``log(k1 K t^alpha / delta)`` (Theorem 1), is not one
of :data:`jbandits.policies.blocks.glr.THRESHOLDS`; GK16's Table 1 used the same rate
for all its policies, most likely ``log((log t + 1)/delta)`` ("practical"): the rate
GK16 Sec. 6 reports using, "though not (yet) allowed by theory", and the one the
authors' Julia code (Kaufmann's ``BAI_epsBAI_code``, ``mainBAI.jl``) gives every policy;
the paper does not state it for Table 1.
"""

from __future__ import annotations

from jbandits.core import registry
from jbandits.core.types import Array, ArrayLike, Policy
from jbandits.policies.blocks import fixed_confidence as fc
from jbandits.policies.blocks import kl_bounds
from jbandits.policies.fixed_confidence import _racing


def eliminate(family: str, sigma: ArrayLike, mu_best, mu_worst, r, beta) -> Array:
    """KL-Racing's test: the worst arm's KL upper bound at level ``beta / r`` is below
    the best arm's KL lower bound."""
    level = beta / r
    lower = kl_bounds.kl_lower(family, mu_best, level, sigma)
    upper = kl_bounds.kl_upper(family, mu_worst, level, sigma)
    return upper < lower


@registry.policy("kl_racing", shared=_racing.ARGUMENTS)
def kl_racing(num_arms: int, *, chernoff: fc.Chernoff, clock: str) -> Policy:
    """KL-Racing (KK13 Algorithm 1; GK16 Sec. 6): eliminate the worst active arm when
    its KL upper bound falls below the best active arm's KL lower bound; stop when one
    arm remains.

    Args:
      num_arms: static K (including padded arms).

    Output: the recommended arm (``[] int32``); the engine's ``num_pulls`` is the
    stopping time.
    """
    return _racing.racing(num_arms, eliminate, chernoff, clock=clock)
