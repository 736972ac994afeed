"""DMED: Deterministic Minimum Empirical Divergence (Honda and
Takemura, COLT 2010).

After one pull of each real arm (round robin in index order), arms are played one per
step from a list, in increasing arm index. When the list is empty it is rebuilt from
the current statistics (``n`` completed pulls) as

    {i : z_i kl(mu_i, mu_max) < ln(n / z_i)}     (variant="genuine", Honda-Takemura)
    {i : z_i kl(mu_i, mu_max) < ln(n)}           (variant="gc")

where ``mu_max`` is the largest empirical mean over the real arms. The empirical best
arm (lowest index among equal means) is always added to the list; it satisfies the
genuine criterion anyway when ``K >= 2`` (``kl = 0 < ln(n / z)``), so the guard only
covers numeric corners and keeps the list non-empty.

Fixed-shape form: a ``[K] bool`` ``pending`` mask is the list; the next arm is its
lowest set bit, which is cleared when the arm is chosen. DMED is deterministic: the
step key is unused, and there is no tie-break option (the list order is fixed).
"""

from __future__ import annotations

from typing import NamedTuple

import jax.numpy as jnp

from jbandits.core import registry
from jbandits.core import validate as _validate
from jbandits.core.types import Array, ArrayLike, Policy
from jbandits.policies.blocks import arms, numerics

VARIANTS = ("genuine", "gc")
KLS = ("bernoulli", "gauss")


class DMEDState(NamedTuple):
    stats: arms.ArmStats  # counts, sums, M2 ([K] each)
    pending: Array  # [K] bool: arms still to play from the current list
    arm_mask: Array  # [K] bool: real arms
    t: Array  # [] int32: pulls done (n)
    arm: Array  # [] int32: next arm


def dmed_list(
    stats: arms.ArmStats,
    arm_mask: Array,
    n: ArrayLike,
    *,
    variant: str = "genuine",
    kl: str = "bernoulli",
    sigma2: ArrayLike = 1.0,
) -> Array:
    """``[K] bool``: the arms of a freshly rebuilt DMED list (incl. the best arm)."""
    mu = arms.mean(stats)
    mu_max = jnp.max(jnp.where(arm_mask, mu, -jnp.inf))
    if kl == "bernoulli":
        div = numerics.kl_bernoulli(jnp.clip(mu, 0.0, 1.0), jnp.clip(mu_max, 0.0, 1.0))
    else:
        div = numerics.kl_gaussian(mu, mu_max, sigma2)
    n = jnp.asarray(n, mu.dtype)
    if variant == "genuine":
        rhs = jnp.log(n / jnp.maximum(stats.counts, 1.0))
    else:
        rhs = jnp.log(jnp.maximum(n, 1.0))
    crit = arm_mask & (stats.counts * div < rhs)
    return crit | arms.one_hot(arms.argmax_masked(mu, arm_mask), mu.shape[-1])


@registry.policy("dmed")
def dmed(
    num_arms: int,
    *,
    variant: str = "genuine",
    kl: str = "bernoulli",
    sigma2: ArrayLike = 1.0,
) -> Policy:
    """DMED.

    Args:
      num_arms: static K_max (real arms are given by ``arm_mask`` at ``init``).
      variant: static, ``"genuine"`` (right-hand side ``ln(n / z_i)``, Honda & Takemura,
        the default) or ``"gc"`` (``ln n``). SMPyBandits calls the genuine rule
        "DMED+"; the formulas, not the names, are what this switch selects.
      kl: static, ``"bernoulli"`` (rewards in ``[0, 1]``; means are clipped into it)
        or ``"gauss"`` (``(mu_max - mu_i)^2 / (2 sigma2)``).
      sigma2: Gaussian KL variance (traced, ``> 0``); ignored by ``"bernoulli"``.

    Returns:
      A regret :class:`~jbandits.core.types.Policy`; ``output`` is the empirical best arm.

    References:
      Honda, Takemura. An asymptotically optimal bandit algorithm for bounded support
      models. COLT 2010.
    """
    num_arms = _validate.static_int("num_arms", num_arms, minimum=2)
    _validate.choice("variant", variant, VARIANTS)
    _validate.choice("kl", kl, KLS)
    _validate.in_range("sigma2", sigma2, 0.0, low_open=True)

    def init_fn(key, arm_mask):
        del key  # deterministic
        t = jnp.zeros((), jnp.int32)
        pending = jnp.zeros((num_arms,), bool)
        return DMEDState(
            arms.init_stats(num_arms),
            pending,
            arm_mask,
            t,
            arms.round_robin(t, arm_mask),
        )

    def step_fn(state, key, reward):
        del key  # deterministic
        stats = arms.update(state.stats, state.arm, reward)
        t = state.t + 1
        forced, rr = arms.forced_arm(t, state.arm_mask)
        fresh = dmed_list(
            stats, state.arm_mask, t, variant=variant, kl=kl, sigma2=sigma2
        )
        rebuild = ~forced & ~jnp.any(state.pending)
        pending = jnp.where(rebuild, fresh, state.pending)
        first = jnp.argmax(pending).astype(jnp.int32)  # lowest set bit
        arm = jnp.where(forced, rr, first).astype(jnp.int32)
        pending = jnp.where(forced, pending, pending & ~arms.one_hot(first, num_arms))
        return DMEDState(stats, pending, state.arm_mask, t, arm)

    def output_fn(state):
        return arms.best_empirical(state.stats, state.arm_mask)

    return Policy(init_fn, step_fn, output_fn, "regret")
