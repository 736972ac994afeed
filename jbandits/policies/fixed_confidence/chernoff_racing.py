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
from jbandits.core.types import ArrayLike, Policy
from jbandits.policies.blocks import glr
from jbandits.policies.fixed_confidence import _racing


@registry.policy("chernoff_racing")
def chernoff_racing(
    num_arms: int,
    *,
    delta: ArrayLike = 0.1,
    family: str = "bernoulli",
    sigma: ArrayLike = 1.0,
    threshold: str = "practical",
    clock: str = "round",
) -> Policy:
    """Chernoff-Racing (GK16 Sec. 6): eliminate the worst active arm when its GLR
    against the best active arm exceeds ``beta``; stop when one arm remains.

    Args:
      num_arms: static K (including padded arms).
      delta: confidence, 0 < delta < 1 (traced).
      family: static, "bernoulli" or "gaussian" (known ``sigma``).
      sigma: Gaussian standard deviation > 0 (traced; unused for Bernoulli).
      threshold: static name of :data:`jbandits.policies.blocks.glr.THRESHOLDS`
        (default "practical", ``log((log s + 1)/delta)``, GK16 Sec. 6; not covered by
        a theorem).
      clock: static, the time ``s`` of the rate: "round" (the paper, ``s = r``) or
        "pulls" (the authors' code, ``s = t``).

    Output: the recommended arm (``[] int32``); the engine's ``num_pulls`` is the
    stopping time.
    """

    def eliminate(mu_best, mu_worst, r, beta):
        mid = (mu_best + mu_worst) / 2.0
        d_best = glr.divergence(family, mu_best, mid, sigma)
        d_worst = glr.divergence(family, mu_worst, mid, sigma)
        return r * (d_best + d_worst) > beta

    return _racing.racing(
        num_arms, eliminate, delta=delta, family=family, sigma=sigma,
        threshold=threshold, clock=clock,
    )  # fmt: skip
