"""Chernoff-Racing (Garivier & Kaufmann, "Optimal Best Arm Identification with Fixed
Confidence", COLT 2016, Sec. 6, p. 14): racing whose elimination test is Chernoff's
GLR between the leader and the worst arm.

Rounds as in :mod:`jbandits.policies.fixed_confidence._racing`. At the end of round
``r`` the empirical worst active arm ``b`` is eliminated if (every active arm has ``r``
samples, ``a_r`` the empirical best active arm, ``m = (mu_a + mu_b) / 2``)::

    r d(mu_{a_r}, m) + r d(mu_b, m) > beta(s, delta)

(evaluated as ``r (d(mu_a, m) + d(mu_b, m))``), which is ``Z_{a_r, b}`` of GK16 eq. (7)
with equal counts. ``s = r`` by default (the paper's ``beta(r, delta)``); ``clock=
"pulls"`` uses the global sample count ``t``, as the authors' Julia code does.
"""

from __future__ import annotations

from jbandits.core import registry
from jbandits.core.types import Array, ArrayLike, Policy
from jbandits.policies.blocks import fixed_confidence as fc
from jbandits.policies.blocks import glr
from jbandits.policies.fixed_confidence import _racing


def eliminate(family: str, sigma: ArrayLike, mu_best, mu_worst, r, beta) -> Array:
    """Chernoff-Racing's test: ``r (d(mu_a, m) + d(mu_b, m)) > beta``, ``m`` the
    midpoint of the two means."""
    mid = (mu_best + mu_worst) / 2.0
    d_best = glr.divergence(family, mu_best, mid, sigma)
    d_worst = glr.divergence(family, mu_worst, mid, sigma)
    return r * (d_best + d_worst) > beta


@registry.policy("chernoff_racing", shared=_racing.ARGUMENTS)
def chernoff_racing(num_arms: int, *, chernoff: fc.Chernoff, clock: str) -> Policy:
    """Chernoff-Racing (GK16 Sec. 6): eliminate the worst active arm when its GLR
    against the best active arm exceeds ``beta``; stop when one arm remains.

    Args:
      num_arms: static K (including padded arms).

    Output: the recommended arm (``[] int32``); the engine's ``num_pulls`` is the
    stopping time.
    """
    return _racing.racing(num_arms, eliminate, chernoff, clock=clock)
