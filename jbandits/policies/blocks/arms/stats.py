"""Per-arm statistics: :class:`ArmStats`, updated one pull at a time by
:func:`update`, and what is read from them (means, variances, the thresholding and
best-arm read-outs).

Statistics (:class:`ArmStats`) keep counts, reward sums and Welford's M2. The mean is
``sums / n`` (exact for integer rewards, so Bernoulli ties are exact ties in every
implementation) and M2 is updated with Welford's recurrence
``M2 += (x - mean_old) * (x - mean_new)`` (Welford, Technometrics 1962), which avoids
the cancellation of ``E[X^2] - mean^2`` in float32.

Both running sums (``sums`` and ``M2``) are Kahan-compensated (Kahan, CACM 1965;
Higham, *Accuracy and Stability of Numerical Algorithms*, 2nd ed., section 4.3): a
second array per sum holds the rounding error of the last addition and is fed back
into the next one. Plain float32 accumulation loses the mean once ``n * mean`` is large
(1e6 pulls of N(1000, 1): mean 1008.9, variance 15.6); compensated, the relative errors
stay below 1e-6 (mean) and 1e-4 (variance) at 1e7 pulls with offsets up to 1e4. For
rewards whose partial sums are exact (Bernoulli, multiples of 1/2) the compensation
stays 0, so ``sums`` and the mean are bit-identical to plain summation.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from jbandits.core.types import Array, ArrayLike
from jbandits.policies.blocks.arms.selection import argmax_masked

_FIELDS = ("counts", "sums", "sums_err", "m2", "m2_err")  # rows of ArmStats.table


@jax.tree_util.register_pytree_node_class
class ArmStats:
    """Per-arm statistics. Build with :func:`init_stats`, change with :func:`update`.

    Fields (each ``[..., K]`` float): ``counts`` (pulls of each arm), ``sums`` (sum of
    rewards, compensated), ``m2`` (Welford sum of squared deviations from the mean),
    and ``sums_err`` / ``m2_err``, the Kahan compensations of ``sums`` / ``m2`` (the
    rounding error of the last addition, to be subtracted from the next addend).

    They are stored as the rows of one ``[..., F, K]`` array, ``table`` (the order of
    :data:`_FIELDS`; ``F = 5``, or 3 without a second moment), so that a pull reads
    the pulled arm's statistics with one gather and writes them with one scatter
    instead of one of each per field (APT keeps three fields: its step ran three
    gathers, three selects and three scatters for them before). Reading a field is a
    slice of the table, fused into whatever consumes it; the rows are field-major, so
    each field stays contiguous over the arms.

    ``ArmStats(counts, sums, m2=None, sums_err=0.0, m2_err=0.0)`` builds statistics
    from per-field arrays (hand-built statistics in tests need only the first three;
    the compensations default to 0). ``m2=None`` keeps no second moment (the static
    attribute ``variance`` is then False, ``m2`` and ``m2_err`` read None): a policy
    whose index uses only counts and means does not pay for Welford's update every
    step, and :func:`var_biased` / :func:`var_unbiased` refuse such statistics.

    A policy may keep per-arm values of its own that change only when the arm is
    pulled (the cached index of :func:`jbandits.policies.blocks.index.index_policy`) as
    ``extra`` rows below the fields (:func:`init_stats` ``extra=``, written by
    :func:`update`'s ``derive``): the same gather and scatter then serve them too.
    """

    __slots__ = ("table", "variance")

    def __init__(self, counts, sums, m2=None, sums_err=0.0, m2_err=0.0):
        sums = jnp.asarray(sums)
        rows = [counts, sums, sums_err] + ([] if m2 is None else [m2, m2_err])
        rows = [jnp.broadcast_to(jnp.asarray(r, sums.dtype), sums.shape) for r in rows]
        self.table = jnp.stack(rows, axis=-2)
        self.variance = m2 is not None

    @classmethod
    def from_table(cls, table: Array, variance: bool) -> ArmStats:
        """Statistics whose rows are ``table`` ``[..., F + E, K]``: the F fields (3,
        or 5 with ``variance``) in the order of :data:`_FIELDS`, then E extra rows."""
        out = object.__new__(cls)
        out.table, out.variance = table, bool(variance)
        return out

    def tree_flatten(self):
        return (self.table,), self.variance

    @classmethod
    def tree_unflatten(cls, aux, children):
        return cls.from_table(children[0], aux)

    @property
    def num_fields(self) -> int:
        return len(_FIELDS) if self.variance else 3

    def _row(self, j: int):
        return self.table[..., j, :]

    counts = property(lambda self: self._row(0))
    sums = property(lambda self: self._row(1))
    sums_err = property(lambda self: self._row(2))
    m2 = property(lambda self: self._row(3) if self.variance else None)
    m2_err = property(lambda self: self._row(4) if self.variance else None)

    @property
    def extra(self) -> Array:
        """``[..., E, K]``: the policy's extra rows (E = 0 unless asked for)."""
        return self.table[..., self.num_fields :, :]

    def __repr__(self) -> str:
        fields = ", ".join(f"{f}={getattr(self, f)!r}" for f in _FIELDS)
        return f"ArmStats({fields})"


def init_stats(num_arms: int, variance: bool = True, extra: int = 0) -> ArmStats:
    """Zero statistics of ``num_arms`` arms; ``variance=False``: no second moment;
    ``extra``: that many zero rows for per-arm values of the policy's own."""
    rows = (len(_FIELDS) if variance else 3) + extra
    table = jnp.zeros((rows, num_arms), jnp.result_type(float))
    return ArmStats.from_table(table, variance)


def with_extra(stats: ArmStats, values: Array) -> ArmStats:
    """``stats`` with its extra rows set to ``values`` ``[E, K]``."""
    table = stats.table.at[..., stats.num_fields :, :].set(values)
    return ArmStats.from_table(table, stats.variance)


def _kahan_add(total: Array, err: Array, x: Array) -> tuple[Array, Array]:
    """Compensated ``total + x``: returns the new ``(total, err)`` (Kahan 1965)."""
    y = x - err
    new = total + y
    return new, (new - total) - y


def update(
    stats: ArmStats,
    arm: ArrayLike,
    reward: ArrayLike,
    weight=True,
    derive=None,
    one_hot: bool = False,
    column=None,
) -> ArmStats:
    """Add ``reward`` to ``arm``'s statistics; ``weight=False`` or ``arm < 0`` is a no-op.

    Gathers the arm's column of the table, updates it and scatters it back: one
    gather and one scatter per pull (under ``vmap`` on CPU faster than a one-hot
    update over ``[K]``: ``benchmarks/notes_policies.md``). ``sums`` and ``m2`` are
    accumulated with Kahan compensation (see the module docstring).

    ``derive``: for statistics with extra rows, ``column -> [E]`` values of the
    pulled arm's extra rows, computed from its updated statistics (``column`` is an
    :class:`ArmStats` of ``[1]`` fields); without it extra rows are kept as they are.

    ``one_hot`` (static; ``Execution.one_hot_arms``, the GPU form): the column is read
    as a masked sum over the arms and written by one select over the table, every
    row elementwise (no gather, scatter or concatenation, which are kernels of their
    own on a GPU); the same values (a sum of one entry and zeros is that entry).
    ``column`` (one-hot form only): the pulled arm's column of ``stats`` (F + E
    numbers) read beforehand (:func:`column_of`, e.g. where the arm was chosen, the
    reduction-free read of :func:`jbandits.policies.blocks.index.index_policy`'s GPU
    form); it replaces the masked sum, so the update is one select that reads the
    table elementwise only (written in place on a GPU).
    """
    arm = jnp.asarray(arm)
    live = (arm >= 0) & weight
    i = jnp.maximum(arm, 0)
    table = stats.table
    if one_hot:
        return _update_one_hot(stats, i, live, reward, derive, column)
    if column is not None:
        raise ValueError("update: column= is read by the one-hot form only")
    col = table[:, i]
    reward = jnp.asarray(reward, table.dtype)
    new = jnp.stack(_new_column(stats, col, reward))
    if derive is not None:
        fresh = ArmStats.from_table(new[:, None], stats.variance)
        new = jnp.concatenate([new, jnp.reshape(derive(fresh), (-1,))])
    else:
        new = jnp.concatenate([new, col[stats.num_fields :]])
    new = jnp.where(live, new, col)
    return ArmStats.from_table(table.at[:, i].set(new), stats.variance)


def _new_column(stats: ArmStats, col, reward: Array) -> list:
    """The pulled arm's updated fields (counts, sums, Kahan term[, M2, term]) from
    its column ``col`` (an array, or a list of its fields)."""
    n_old, s_old, e_old = col[0], col[1], col[2]
    n_new = n_old + 1.0
    s_new, s_err = _kahan_add(s_old, e_old, reward)
    new = [n_new, s_new, s_err]
    if stats.variance:
        mean_old = s_old / jnp.maximum(n_old, 1.0)
        mean_new = s_new / n_new
        new += list(
            _kahan_add(col[3], col[4], (reward - mean_old) * (reward - mean_new))
        )
    return new


def column_of(stats: ArmStats, arm: ArrayLike) -> tuple[Array, ...]:
    """``arm``'s column of the table (arm 0 for ``arm < 0``), one ``[]`` number per
    row (F + E of them), for :func:`update`'s ``column=``: a gather of one number
    per row, which a GPU fuses into a kernel that reads ``arm`` (as a ``[F + E]``
    gather it would be a kernel of its own, of another shape under ``vmap``)."""
    i = jnp.maximum(jnp.asarray(arm), 0)
    return tuple(stats.table[j, i] for j in range(stats.table.shape[-2]))


def _update_one_hot(stats: ArmStats, i, live, reward, derive, column) -> ArmStats:
    """:func:`update`'s one-hot form (see there)."""
    table = stats.table
    hot = jnp.arange(table.shape[-1]) == i
    if column is None:
        col = jnp.sum(jnp.where(hot, table, 0.0), axis=-1)
    else:
        col = [jnp.asarray(c, table.dtype) for c in column]
    rows = [col[j] for j in range(table.shape[-2])]
    new = _new_column(stats, rows, jnp.asarray(reward, table.dtype))
    if derive is not None:
        fresh = ArmStats.from_table(jnp.stack(new)[:, None], stats.variance)
        new += list(jnp.reshape(derive(fresh), (-1,)))
    else:
        new += rows[stats.num_fields :]
    row = jnp.arange(table.shape[-2])[:, None]
    value = new[-1]
    for j in range(len(new) - 2, -1, -1):
        value = jnp.where(row == j, new[j], value)
    return ArmStats.from_table(jnp.where(hot & live, value, table), stats.variance)


def mean(stats: ArmStats) -> Array:
    """Empirical means; 0 for arms never pulled."""
    return stats.sums / jnp.maximum(stats.counts, 1.0)


def _second_moment(stats: ArmStats) -> Array:
    if not stats.variance:
        raise ValueError(
            "these statistics keep no second moment (init_stats(K, variance=False)): "
            "build them with variance=True to read a variance"
        )
    return stats.m2


def var_biased(stats: ArmStats) -> Array:
    """Population variance ``M2 / n`` (0 for n <= 1)."""
    return jnp.maximum(_second_moment(stats) / jnp.maximum(stats.counts, 1.0), 0.0)


def var_unbiased(stats: ArmStats) -> Array:
    """Sample variance ``M2 / (n - 1)``; only meaningful for n >= 2 (0 otherwise)."""
    m2 = _second_moment(stats)
    return jnp.maximum(m2 / jnp.maximum(stats.counts - 1.0, 1.0), 0.0)


def labels_above(stats: ArmStats, arm_mask: Array, threshold: ArrayLike) -> Array:
    """TBP read-out ``1{mean_i >= tau}``; unpulled and padded arms get label 0."""
    return arm_mask & (stats.counts > 0) & (mean(stats) >= threshold)


def best_empirical(stats: ArmStats, arm_mask: Array) -> Array:
    """argmax of the empirical mean over pulled real arms (first on ties)."""
    return argmax_masked(jnp.where(stats.counts > 0, mean(stats), -jnp.inf), arm_mask)
