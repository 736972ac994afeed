"""What the top-two policies (TTTS, T3C, TTUCB) share: argument checks, the keys of a
step, Russo's posterior stopping rule, the recommendation and the transportation-cost
(TC) challenger.

The top-two template (Jourdan, Degenne, Baudry, de Heide, Kaufmann, "Top Two Algorithms
Revisited", NeurIPS 2022; M. Jourdan's thesis, Algorithm 2.1): every real arm is pulled
once (round robin); then at every time ``t`` (samples observed) the policy stops, or
picks a leader ``B``, a challenger ``C != B``, and samples ``B`` with probability
``beta`` (or by tracking, TTUCB), else ``C``.

Keys: a step's key is split as ``coin, leader, second, extra = split(key, 4)``
(:func:`jbandits.core.prng.split`, the keys of ``jax.random.split``): ``coin`` draws the
``U[0, 1)`` compared with ``beta``, ``leader`` the leader's posterior sample, ``second``
the challenger's randomness (TTTS's resamples, the TC challenger's tie), ``extra``
TTTS's fallback.

Stopping (static ``stopping``):

* ``"glr"``: Chernoff's ``Z(t) > beta(t, delta)`` (Garivier & Kaufmann, COLT 2016, Sec.
  3.2; :mod:`jbandits.policies.blocks.glr`), recommend the empirical best;
* ``"posterior"``: the Bayesian rule ``max_i alpha_{n,i} >= c`` (Russo, Operations
  Research 2020, §7; Shang et al., AISTATS 2020, eq. (4)) with ``alpha_i`` from
  :func:`jbandits.policies.blocks.posterior.best_arm_probabilities` and ``c =
  confidence`` (default ``1 - delta``), recommend ``argmax_i alpha_i`` (Shang et al.'s
  ``J_n``). Not a frequentist delta-correct rule.
"""

from __future__ import annotations

from typing import NamedTuple

import jax.numpy as jnp

from jbandits.core import numbers
from jbandits.core import prng as _prng
from jbandits.core import validate as _validate
from jbandits.core.types import Array, ArrayLike, Key
from jbandits.policies.blocks import arms, glr, posterior
from jbandits.policies.blocks import fixed_confidence as fc

STOPPINGS = ("glr", "posterior")
# transportation costs within this many ulps of the minimum tie (tc_challenger)
TIE_ULPS = 64


def check_beta(beta: ArrayLike) -> None:
    _validate.in_range("beta", beta, 0.0, 1.0, low_open=True, high_open=True)


def check_stopping(stopping: str, confidence, delta) -> ArrayLike:
    """Validate ``stopping`` and ``confidence``; the posterior rule's level ``c``."""
    _validate.choice("stopping", stopping, STOPPINGS)
    if numbers.given_on_host(confidence) and stopping != "posterior":
        raise ValueError("confidence is the posterior rule's: use stopping='posterior'")
    level = numbers.given(confidence, 1.0 - delta)
    _validate.in_range("confidence", level, 0.0, 1.0, low_open=True, high_open=True)
    return level


class Keys(NamedTuple):
    coin: Key
    leader: Key
    second: Key
    extra: Key


def split_keys(key: Key) -> Keys:
    k = _prng.split(key, 4)
    return Keys(k[0], k[1], k[2], k[3])


def coin(key: Key, beta: ArrayLike, dtype) -> Array:
    """``u < beta`` with ``u ~ U[0, 1)`` from ``key``: sample the leader."""
    return _prng.uniform(key, (), dtype) < beta


def thompson_leader(
    family: str,
    stats: arms.ArmStats,
    arm_mask: Array,
    sigma: ArrayLike,
    keys: Keys,
    beta: ArrayLike,
) -> tuple[Array, Array, Array]:
    """``(theta, I, play_leader)``: the Thompson-sampling leader of TTTS and T3C, ``I =
    argmax_i theta_i`` (lowest index on ties) of ``theta ~ Pi_n``
    (:func:`jbandits.policies.blocks.posterior.sample_posterior`, the ``leader`` key),
    and the :func:`coin` ``u < beta`` (the ``coin`` key)."""
    theta = posterior.sample_posterior(family, keys.leader, stats, arm_mask, sigma)
    leader = arms.argmax_masked(theta, arm_mask)
    return theta, leader, coin(keys.coin, beta, stats.counts.dtype)


def stopping_rule(
    obs: fc.Observed,
    stopping: str,
    family: str,
    arm_mask: Array,
    sigma: ArrayLike,
    level: ArrayLike,
) -> tuple[Array, Array | None]:
    """``(stop, alpha)``: the step's stopping decision (never during the round robin)
    and, for ``"posterior"``, the best-arm probabilities it used (else None)."""
    if stopping == "glr":
        return obs.stop, None
    alpha = posterior.best_arm_probabilities(family, obs.stats, arm_mask, sigma)
    top = jnp.max(jnp.where(arm_mask, alpha, -jnp.inf))
    return ~obs.forced & (top >= level), alpha


def recommend(
    stats: arms.ArmStats, arm_mask: Array, stopping: str, family: str, sigma
) -> Array:
    """The empirical best (``"glr"``) or ``argmax_i alpha_i`` (``"posterior"``, once
    every real arm is pulled; the empirical best before), lowest index on ties."""
    best = fc.recommend(stats, arm_mask)
    if stopping == "glr":
        return best
    alpha = posterior.best_arm_probabilities(family, stats, arm_mask, sigma)
    pulled = jnp.all(~arm_mask | (stats.counts > 0))
    return jnp.where(pulled, arms.argmax_masked(alpha, arm_mask), best)


def tc_challenger(
    family: str,
    stats: arms.ArmStats,
    leader: Array,
    arm_mask: Array,
    sigma: ArrayLike,
    key: Key,
) -> Array:
    """``argmin_{j != leader} W_n(leader, j)`` (Shang et al. 2020, eq. (1); the TC
    challenger of Jourdan et al. 2022), ties uniformly at random: among the tied real
    arms, the ``floor(b n / 2^32)``-th in index order, ``b = bits(key)``
    (:func:`jbandits.policies.blocks.arms.argmin_masked` with ``tie_break="random"``).
    The leader itself with one real arm.

    Tied means within :data:`TIE_ULPS` ulps of the minimum (``W <= min (1 + TIE_ULPS
    eps)``): with few pulls, costs from different counts and means are often equal in
    exact arithmetic (leader ``(N, mu) = (2, 1)`` against ``(1, 0)`` and ``(4, 1/4)``:
    both ``log(27/4)``) but not in floating point, where the rounding alone would
    decide. Every arm whose mean is at least the leader's has ``W = 0`` exactly: such
    ties are the rule when the leader is not the empirical best.
    """
    costs = glr.transport_costs(
        family, stats.counts, arms.mean(stats), leader, arm_mask, sigma
    )
    others = arm_mask & (jnp.arange(arm_mask.shape[-1]) != leader)
    low = jnp.min(jnp.where(others, costs, jnp.inf))
    eps = jnp.finfo(costs.dtype).eps
    tied = costs <= low * (1.0 + TIE_ULPS * eps)
    score = jnp.where(tied, 0.0, 1.0)
    pick = arms.argmin_masked(score, others, key=key, tie_break="random")
    return jnp.where(pick < 0, leader, pick).astype(jnp.int32)
