"""Per-arm statistics and masked selection helpers shared by every policy.

Statistics (:class:`ArmStats`) keep counts, reward sums and Welford's M2. The mean is
``sums / n`` (exact for integer rewards, so Bernoulli ties are exact ties in every
implementation) and M2 is updated with Welford's recurrence
``M2 += (x - mean_old) * (x - mean_new)``, which avoids the cancellation of
``E[X^2] - mean^2`` in float32.

Selection helpers never let NaN win (spec §1.8): for an arg-max a NaN score counts as
``-inf``, for an arg-min as ``+inf``; ineligible arms are excluded the same way.
``+inf`` / ``-inf`` scores are legitimate priorities and are kept.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp

from jbandits.types import Array, ArrayLike, Key

TIE_BREAKS = ("first", "random")


class ArmStats(NamedTuple):
    counts: Array  # [K] float: pulls of each arm
    sums: Array  # [K] float: sum of rewards
    m2: Array  # [K] float: Welford sum of squared deviations from the mean


def init_stats(num_arms: int) -> ArmStats:
    zeros = jnp.zeros((num_arms,), dtype=jnp.result_type(float))
    return ArmStats(counts=zeros, sums=zeros, m2=zeros)


def one_hot(arm: ArrayLike, num_arms: int) -> Array:
    """``[K] bool`` indicator of ``arm`` (all False for ``arm = -1``)."""
    return jnp.arange(num_arms) == arm


def update(stats: ArmStats, arm: ArrayLike, reward: ArrayLike, weight=True) -> ArmStats:
    """Add ``reward`` to ``arm``'s statistics; ``weight=False`` or ``arm < 0`` is a no-op.

    Gathers the arm's three scalars, updates them and scatters them back: under
    ``vmap`` on CPU this is several times faster than a one-hot update over ``[K]``
    (measured in benchmarks/throughput.py's development, see DESIGN §3).
    """
    arm = jnp.asarray(arm)
    live = (arm >= 0) & weight
    i = jnp.maximum(arm, 0)
    reward = jnp.asarray(reward, stats.sums.dtype)
    n_old, s_old, m2_old = stats.counts[i], stats.sums[i], stats.m2[i]
    n_new = n_old + 1.0
    s_new = s_old + reward
    mean_old = s_old / jnp.maximum(n_old, 1.0)
    mean_new = s_new / n_new
    m2_new = m2_old + (reward - mean_old) * (reward - mean_new)
    return ArmStats(
        counts=stats.counts.at[i].set(jnp.where(live, n_new, n_old)),
        sums=stats.sums.at[i].set(jnp.where(live, s_new, s_old)),
        m2=stats.m2.at[i].set(jnp.where(live, m2_new, m2_old)),
    )


def mean(stats: ArmStats) -> Array:
    """Empirical means; 0 for arms never pulled."""
    return stats.sums / jnp.maximum(stats.counts, 1.0)


def var_biased(stats: ArmStats) -> Array:
    """Population variance ``M2 / n`` (0 for n <= 1)."""
    return jnp.maximum(stats.m2 / jnp.maximum(stats.counts, 1.0), 0.0)


def var_unbiased(stats: ArmStats) -> Array:
    """Sample variance ``M2 / (n - 1)``; only meaningful for n >= 2 (0 otherwise)."""
    return jnp.maximum(stats.m2 / jnp.maximum(stats.counts - 1.0, 1.0), 0.0)


def _first_true(flags: Array) -> Array:
    """Lowest index with ``flags`` True (0 if none).

    ``min(where(flags, iota, K))`` rather than ``argmax``: XLA's CPU arg-reductions are
    2-3x slower than a plain min-reduction under vmap (measured).
    """
    size = flags.shape[-1]
    first = jnp.min(jnp.where(flags, jnp.arange(size, dtype=jnp.int32), size))
    return jnp.where(first < size, first, 0).astype(jnp.int32)


def _pick(
    s: Array, ok: Array, best_value: Array, key: Key | None, tie_break: str
) -> Array:
    tied = ok & (s == best_value)
    if tie_break == "first":
        return _first_true(tied)
    if tie_break != "random":
        raise ValueError(f"tie_break must be one of {TIE_BREAKS}, got {tie_break!r}")
    if key is None:
        raise ValueError("tie_break='random' needs a key")
    u = jnp.where(tied, jax.random.uniform(key, tied.shape), -1.0)
    return _first_true(tied & (u == jnp.max(u)))


# In the two selections below ``s`` passes an optimization barrier before both the
# reduction and the tie comparison: otherwise XLA may recompute it in two fusions that
# contract multiply-adds differently, so that no entry equals the reduced extreme.


def argmax_masked(
    score: Array,
    eligible: Array | None = None,
    *,
    key: Key | None = None,
    tie_break: str = "first",
) -> Array:
    """Index of the largest eligible score (``[] int32``); NaN never wins.

    Ties: ``"first"`` = lowest index; ``"random"`` = uniform among the tied arms, via
    ``argmax(where(tied, uniform(key, [K]), -1))``. Returns 0 when no arm is eligible;
    callers that can meet an empty set check ``eligible.any()`` themselves.
    """
    ok = ~jnp.isnan(score)
    if eligible is not None:
        ok = ok & eligible
    s = jax.lax.optimization_barrier(jnp.where(ok, score, -jnp.inf))
    return _pick(s, ok, jnp.max(s), key, tie_break)


def argmin_masked(
    score: Array,
    eligible: Array | None = None,
    *,
    key: Key | None = None,
    tie_break: str = "first",
) -> Array:
    """Index of the smallest eligible score (``[] int32``); NaN never wins."""
    ok = ~jnp.isnan(score)
    if eligible is not None:
        ok = ok & eligible
    s = jax.lax.optimization_barrier(jnp.where(ok, score, jnp.inf))
    return _pick(s, ok, jnp.min(s), key, tie_break)


def nth_active(active: Array, j: ArrayLike) -> Array:
    """Index of the ``j``-th (0-based) True entry of ``active`` (0 if there is none).

    The prefix count uses ``lax.associative_scan`` (log-depth, elementwise): XLA's CPU
    ``cumsum`` is a quadratic reduce-window, ~4x slower at K = 100 (measured).
    """
    counts = jax.lax.associative_scan(jnp.add, active.astype(jnp.int32))
    return _first_true(active & (counts == j + 1))


def least_pulled(counts: Array, active: Array) -> Array:
    """Least-pulled active arm, lowest index on ties (round robin within a phase)."""
    return argmin_masked(counts, active)


def keep_top(score: Array, active: Array, k: ArrayLike) -> Array:
    """``[K] bool`` mask of the ``k`` active arms with the largest scores (ties first)."""
    order = jnp.argsort(jnp.where(active, -score, jnp.inf), stable=True)
    rank = jnp.empty_like(order).at[order].set(jnp.arange(order.shape[0]))
    return active & (rank < k)


def round_robin(t: ArrayLike, arm_mask: Array) -> Array:
    """The ``(t mod K_real)``-th real arm: round robin over unmasked arms."""
    num_real = jnp.maximum(jnp.sum(arm_mask), 1)
    return nth_active(arm_mask, jnp.mod(t, num_real))


def forced_arm(t: ArrayLike, arm_mask: Array, passes: int = 1) -> tuple[Array, Array]:
    """Forced initial pulls: ``(is_forced, arm)`` for the pull numbered ``t`` (0-based).

    "Pull each arm ``passes`` times" = the first ``passes * K_real`` pulls go round
    robin over the real arms in index order (spec §3.3).
    """
    num_real = jnp.sum(arm_mask)
    return t < passes * num_real, round_robin(t, arm_mask)


def labels_above(stats: ArmStats, arm_mask: Array, threshold: ArrayLike) -> Array:
    """TBP read-out ``1{mean_i >= tau}``; unpulled and padded arms get label 0."""
    return arm_mask & (stats.counts > 0) & (mean(stats) >= threshold)


def best_empirical(stats: ArmStats, arm_mask: Array) -> Array:
    """argmax of the empirical mean over pulled real arms (first on ties)."""
    return argmax_masked(jnp.where(stats.counts > 0, mean(stats), -jnp.inf), arm_mask)
