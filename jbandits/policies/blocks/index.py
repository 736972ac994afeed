"""The shared skeleton of index policies (APT, LSA, UCBE, UCBEV, UCB-E, GapE, ...).

An index policy pulls every real arm ``passes`` times in index order, then the arm
that minimises (or maximises) an index computed from the per-arm statistics. Only the
index and the output differ between such algorithms, so they are written once here:

    policy = index_policy(K, lambda stats, mask: index, select="min",
                          output=lambda stats, mask: labels, setting="thresholding")
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import NamedTuple

import jax
import jax.numpy as jnp

from jbandits.core import validate as _validate
from jbandits.core.execution import Execution
from jbandits.core.types import Array, Policy
from jbandits.policies.blocks import arms


class IndexState(NamedTuple):
    stats: arms.ArmStats
    arm_mask: Array  # [K] bool: real arms
    t: Array | None  # [] int32: pulls done (None where the index does not read it)
    arm: Array  # [] int32: next arm
    after: Array | None = None  # [K] int32: real arm after each arm (one-pass only)
    # the next arm's column of stats.table (F + E numbers), read where it is chosen
    # (the GPU form, Execution.one_hot_arms; None otherwise): arms.update(column=...)
    column: tuple[Array, ...] | None = None
    succ: Array | None = None  # [] int32: after[arm], read with column (one pass)
    # [] int32: passes * (real arms), the forced pulls (GPU form, with_pulls only)
    forced_until: Array | None = None

    @property
    def index(self) -> Array | None:
        """``[K]`` index of every arm, kept by ``local`` policies (None otherwise):
        the extra row of their statistics, written with the pulled arm's column."""
        extra = self.stats.extra
        return extra[..., 0, :] if extra.shape[-2] else None


def index_policy(
    num_arms: int,
    index: Callable[[arms.ArmStats, Array], Array],
    *,
    select: str,
    output: Callable[[arms.ArmStats, Array], Array],
    setting: str,
    passes: int = 1,
    tie_break: str = "first",
    with_pulls: bool = False,
    variance: bool = True,
    local: bool = False,
    elementwise: bool = False,
    execution: Execution | None = None,
) -> Policy:
    """Build an index policy.

    Args:
      num_arms: static K (including padded arms).
      index: ``(stats, arm_mask) -> [K]`` scores, evaluated after every update (for
        ``local`` indices on the pulled arm's statistics only, as ``[1]`` arrays).
      select: static "min" or "max": pull the arm with the smallest / largest index.
      output: ``(stats, arm_mask) -> output`` read-out.
      setting: one of :data:`jbandits.core.types.SETTINGS`.
      passes: static number of forced round-robin passes over the real arms.
      tie_break: static "first" (lowest index) or "random" (uniform among ties, drawn
        with the step key).
      with_pulls: static; the index is called ``index(stats, arm_mask, n)`` with
        ``n`` the number of completed pulls (``[] int32``, every pull updates the
        statistics, so ``n = sum(stats.counts)`` without a reduction per step).
      variance: static; False when neither the index nor the output reads a
        variance: the statistics then keep no second moment
        (:func:`jbandits.policies.blocks.arms.init_stats`), two fewer arrays to update per step.
      local: static; True when arm ``i``'s index depends on arm ``i``'s statistics
        only (elementwise in ``stats``, not on ``arm_mask``, other arms or ``n``):
        the state then keeps the index of every arm, as an extra row of the
        statistics, and a pull recomputes only the pulled arm's entry, from the same
        formula on the same statistics, written by the same scatter as its
        statistics (the other entries are unchanged by the pull). APT, UCBE, UCBEV,
        LSA, UCB-E.
      elementwise: static; True when arm ``i``'s index is computed from arm ``i``'s
        statistics (and ``n``, ``arm_mask``'s count) without reducing over the arms,
        as in UCB1 or MOSS (implied by ``local``): over 11 to
        :data:`jbandits.policies.blocks.arms.TREE_MAX_ARMS` arms with ``"first"`` ties the selection
        is then a knock-out tree (``arms.argmin_masked(tree=True)``), which is
        faster there and slower where the index reduces over the arms (GapE; see
        ``benchmarks/notes_policies.md``).
      execution: static :class:`~jbandits.core.execution.Execution` (default
        None: the CPU form). With ``one_hot_arms`` (the GPU form) the statistics
        update is one-hot (``arms.update(one_hot=True)``) and a ``"first"``
        selection one pass at any K; the same arms. With ``kept_column`` too (the
        XLA engine on a GPU) the state also keeps the next arm's column of the
        statistics and its successor (``IndexState.column``, ``succ``), read with
        the arm's choice, so that the update is one select over the table and no
        reduction (on a GPU a kernel of its own: issue 61, item 4).
    """
    num_arms = _validate.static_int("num_arms", num_arms, minimum=2)
    _validate.choice("select", select, ("min", "max"))
    _validate.choice("tie_break", tie_break, arms.TIE_BREAKS)
    lean = execution is not None and execution.one_hot_arms
    kept = lean and execution.kept_column  # the next arm's column in the state
    pick = functools.partial(
        arms.argmin_masked if select == "min" else arms.argmax_masked,
        tree=local or elementwise,
        **({"one_pass": True} if lean else {}),
        **({"unrolled": True} if kept else {}),
    )
    one_pass = arms.uses_one_pass(num_arms, tie_break) or (
        lean and tie_break == "first"
    )
    update = functools.partial(arms.update, one_hot=True) if lean else arms.update

    if local and with_pulls:
        raise ValueError("a local index cannot read the number of pulls")

    def init_fn(key, arm_mask):
        del key
        zero = jnp.zeros((), jnp.int32) if with_pulls else None
        stats = arms.init_stats(num_arms, variance, extra=1 if local else 0)
        if local:
            stats = arms.with_extra(stats, index(stats, arm_mask)[None])
        after = None
        if one_pass:
            ids = jnp.arange(num_arms, dtype=jnp.int32)
            after = jax.vmap(lambda a: arms.next_real(a, arm_mask))(ids)
        first = arms.round_robin(0, arm_mask)
        column = arms.column_of(stats, first) if kept else None
        succ = after[first] if kept and one_pass else None
        until = None
        if kept and with_pulls:
            until = passes * jnp.sum(arm_mask.astype(jnp.int32))
        return IndexState(stats, arm_mask, zero, first, after, column, succ, until)

    def step_fn(state, key, reward):
        t = state.t + 1 if with_pulls else None
        read = {"column": state.column} if kept else {}
        if local:
            # the pulled arm's index, from its updated statistics, is written with
            # them (the other arms' entries are unchanged by the pull)
            ok = state.arm_mask[jnp.maximum(state.arm, 0)][None]
            stats = update(
                state.stats, state.arm, reward, derive=lambda col: index(col, ok),
                **read,
            )  # fmt: skip
            value = stats.extra[0]
        else:
            stats = update(state.stats, state.arm, reward, **read)
            if with_pulls:
                value = index(stats, state.arm_mask, t)
            else:
                value = index(stats, state.arm_mask)
        # forced round robin: while forced, the arm just pulled was round_robin(t - 1)
        # and the next one is the first real arm after it, cyclically. Where the
        # selection is one pass (few arms, "first" ties: arms.uses_one_pass) that arm
        # is read from a table of successors built at init (arms.next_real of every
        # arm), which keeps the index reduction free of a select; otherwise the same
        # reduction as the index selects it, through a score that ranks every real
        # arm by its distance ahead (distinct, so no tie and no tie-break draw): one
        # reduction per step instead of two.
        #
        # Without a pull counter (the index does not read it), whether the next pull
        # is forced follows from the pulled arm's count after this pull, n, and
        # whether it is the last real arm: in pass p of the round robin the pulled
        # arm has n = p + 1, so the next pull is forced while n < passes, or
        # n = passes and a later real arm is still owed its last forced pull; after
        # the forced pulls every pull leaves n > passes. The count is read from the
        # updated statistics (the old ones are overwritten in place by the scatter);
        # a counter is one more kernel per step.
        forced = _forced(state, stats, t, passes, kept)
        if one_pass:
            arm = pick(value, state.arm_mask, key=key, tie_break=tie_break)
            if state.succ is not None:  # read with the arm (the GPU form)
                succ = state.succ
            elif state.after is None:  # a hand-built state
                succ = arms.next_real(state.arm, state.arm_mask)
            else:  # forced implies a real arm was pulled: state.arm >= 0
                succ = state.after[jnp.maximum(state.arm, 0)]
            arm = jnp.where(forced, succ, arm)
        else:
            ahead = arms.steps_ahead(state.arm, num_arms).astype(stats.counts.dtype)
            score = jnp.where(forced, ahead if select == "min" else -ahead, value)
            arm = pick(score, state.arm_mask, key=key, tie_break=tie_break)
        # the GPU form reads the next arm's column and successor here, in the kernel
        # that chooses the arm (gathers of one number each), not with the next update
        column = arms.column_of(stats, arm) if kept else None
        succ = None
        if kept and one_pass and state.after is not None:
            succ = state.after[jnp.maximum(arm, 0)]
        return IndexState(
            stats, state.arm_mask, t, arm, state.after, column, succ, state.forced_until
        )

    def output_fn(state):
        return output(state.stats, state.arm_mask)

    return Policy(init_fn, step_fn, output_fn, setting)


def threshold_index_policy(
    num_arms: int,
    index: Callable[[arms.ArmStats, Array], Array],
    threshold,
    *,
    tie_break: str,
    passes: int = 1,
    variance: bool = True,
    execution: Execution | None = None,
) -> Policy:
    """The thresholding form (APT, LSA, UCBE, UCBEV): ``passes`` round-robin pulls
    per real arm, then the arm of smallest ``local`` index; output the labels
    ``1{mean_i >= threshold}`` (:func:`jbandits.policies.blocks.arms.labels_above`);
    ``execution``: :func:`index_policy`'s."""
    return index_policy(
        num_arms,
        index,
        select="min",
        output=lambda stats, mask: arms.labels_above(stats, mask, threshold),
        setting="thresholding",
        passes=passes,
        tie_break=tie_break,
        variance=variance,
        local=True,
        execution=execution,
    )


def gap_index_policy(
    num_arms: int,
    threshold,
    width: Callable[[arms.ArmStats], Array],
    *,
    tie_break: str,
    passes: int = 1,
    variance: bool = True,
) -> Policy:
    """UCB-E adapted to thresholds (Locatelli, Gutzeit, Carpentier, ICML 2016;
    Mukherjee et al., IJCAI 2017: UCBE and UCBEV): after ``passes`` pulls per real
    arm, pull the arm of smallest ``|mean_i - threshold| - width_i``, the gap to the
    threshold less an exploration width ``width(stats) -> [K]`` (``sqrt(a / n_i)``
    for UCBE, an empirical-Bernstein width for UCBEV); output the labels. A
    :func:`threshold_index_policy` (``variance=False`` when the width does not read
    the variance)."""

    def index(stats, mask):
        w = width(stats)
        return jnp.abs(arms.mean(stats) - threshold) - w

    return threshold_index_policy(
        num_arms,
        index,
        threshold,
        tie_break=tie_break,
        passes=passes,
        variance=variance,
    )


def best_arm_index_policy(
    num_arms: int, index: Callable[..., Array], setting: str, **options
) -> Policy:
    """The maximising form (UCB-E, the GapE family, the regret indices): the arm of
    largest index after the forced pulls; output the real arm of largest empirical
    mean (:func:`jbandits.policies.blocks.arms.best_empirical`). ``options``: those of
    :func:`index_policy` (``passes``, ``tie_break``, ``variance``, ...)."""
    return index_policy(
        num_arms,
        index,
        select="max",
        output=arms.best_empirical,
        setting=setting,
        **options,
    )


def _forced(state: IndexState, stats, t, passes: int, kept: bool) -> Array:
    """Whether the next pull is forced (round robin), from the pull counter ``t``
    (None without one) or the pulled arm's count after this pull (see
    :func:`index_policy`'s step)."""
    if t is not None and state.forced_until is not None:  # kept: no reduction
        return t < state.forced_until
    if t is not None:
        return t < passes * jnp.sum(state.arm_mask)
    pulled = jnp.maximum(state.arm, 0)
    if kept and state.column is not None:  # the count before the pull, + 1
        n = state.column[0] + (state.arm >= 0).astype(state.column[0].dtype)
    else:
        n = stats.counts[pulled]
    return n < passes + (pulled < arms.last_real(state.arm_mask))
