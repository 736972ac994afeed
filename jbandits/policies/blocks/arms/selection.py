"""Masked selection: the arg-max / arg-min of a score over the eligible arms (a
one-pass reduction, a knock-out tree or two passes, by the number of arms), their
tie rules (``"first"``, ``"random"``), and the ranks that order the eligible arms
(:func:`rank`, :func:`keep_top`).

Selection helpers never select an ineligible (masked) arm, whatever the scores: NaN
scores rank as the worst value among the eligible arms (``-inf`` for an arg-max,
``+inf`` for an arg-min: never above a finite score, tied with a legitimate ``-inf``),
so an all-NaN score vector still yields the first eligible arm. ``+inf`` / ``-inf``
scores are legitimate priorities and are kept. When no arm is eligible the helpers
return ``-1`` (the idle arm of :mod:`jbandits.core.types`; ``update`` ignores it).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from jbandits.core import prng as _prng
from jbandits.core.types import Array, ArrayLike, Key
from jbandits.policies.blocks.arms.bits import (
    _mulhi,
    _nth_set_bit,
    _nth_set_unrolled,
    pack_bits,
)

TIE_BREAKS = ("first", "random")


def _first_true(flags: Array) -> Array:
    """Lowest index with ``flags`` True (``-1`` if none).

    ``min(where(flags, iota, K))`` rather than ``argmax``: over more arms than
    :data:`ONE_PASS_MAX_ARMS`, XLA's CPU arg-reductions are slower than a plain
    min-reduction under vmap (``benchmarks/notes_policies.md``; below it see
    :func:`_one_pass`).
    """
    size = flags.shape[-1]
    first = jnp.min(jnp.where(flags, jnp.arange(size, dtype=jnp.int32), size))
    return jnp.where(first < size, first, -1).astype(jnp.int32)


def _random_tied(tied: Array, key: Key, unrolled: bool = False) -> Array:
    """The ``floor(b * n / 2**32)``-th tied arm in index order (``-1`` if none), with
    ``n`` the number of tied arms and ``b = jax.random.bits(key)`` (32 bits).

    Multiply-shift maps ``b`` to ``{0, .., n - 1}`` with every value within
    ``2**-32`` of probability ``1 / n`` (Lemire, "Fast random integer generation in
    an interval", ACM TOMACS 2019, section 3). The tied set is packed into 32-bit
    words (bit ``j`` of word ``w`` = arm ``32 w + j``), so counting it is a population
    count and the ``r``-th tied arm is a word chosen by prefix counts over the
    ``ceil(K / 32)`` words plus :func:`_nth_set_bit`: one hash per selection and no
    per-arm random numbers.

    ``unrolled`` (static; the GPU form, ``Execution.one_hot_arms``): the prefix
    counts and the word's choice are written out over the words, as
    :func:`jbandits.policies.blocks.arms.lowest_set` does, elementwise over the
    lanes (one kernel after the packing; the scan and the masked sums over the
    words are kernels of their own on a GPU). The same integers, so the same arm.
    """
    packed = pack_bits(tied)
    words = packed.shape[0]
    per_word = jax.lax.population_count(packed).astype(jnp.int32)  # [W]
    if unrolled and words > 1:
        counts = [per_word[w] for w in range(words)]
        upto = [counts[0]]  # tied arms in words 0..w
        for w in range(1, words):
            upto.append(upto[-1] + counts[w])
        n = upto[-1]
        r = _mulhi(_prng.bits(key), n.astype(jnp.uint32)).astype(jnp.int32)
        found = _nth_set_unrolled(packed, counts, upto, r)
        return jnp.where(n > 0, found, -1).astype(jnp.int32)
    n = jnp.sum(per_word)
    r = _mulhi(_prng.bits(key), n.astype(jnp.uint32)).astype(jnp.int32)
    if words == 1:
        w, word, rank = 0, packed[0], r
    else:
        upto = jax.lax.associative_scan(jnp.add, per_word)  # tied arms in words 0..w
        w = jnp.sum((upto <= r).astype(jnp.int32))  # first word with upto > r
        pick = jnp.arange(words) == w
        word = jnp.sum(jnp.where(pick, packed, np.uint32(0)), dtype=jnp.uint32)
        rank = r - jnp.sum(jnp.where(pick, upto - per_word, 0))
    return jnp.where(n > 0, 32 * w + _nth_set_bit(word, rank), -1).astype(jnp.int32)


# Up to this many arms a "first" selection is one variadic reduction over (value,
# index) pairs: one kernel whose loop over the arms LLVM unrolls, instead of a
# reduction, a comparison and a second reduction. Above it the unrolling stops and
# the pairwise loop does not vectorise, so the two-pass form (vectorised over the
# arms) is faster (timings: benchmarks/notes_policies.md).
ONE_PASS_MAX_ARMS = 10

# Above it and up to this many arms a "first" selection asked for with ``tree=True``
# is a knock-out tree written out over the arms (arm 2i against arm 2i + 1, then the
# winners, ...): K - 1 elementwise comparisons per lane in one kernel, vectorised over
# the lanes, where the two-pass form's reductions over a short arm axis run an element
# at a time. It pays where the score is read from memory or computed arm by arm, and
# loses where computing it reduces over the arms (XLA fuses that computation into the
# tree's kernel): index policies ask for it when their index is elementwise. Its
# gains fade by K = 100 and it loses to the one-pass form at K = 10 (timings:
# benchmarks/notes_policies.md).
TREE_MAX_ARMS = 64


def uses_one_pass(num_arms: int, tie_break: str) -> bool:
    """Whether :func:`argmin_masked` / :func:`argmax_masked` select in one pass."""
    return tie_break == "first" and num_arms <= ONE_PASS_MAX_ARMS


def uses_tree(num_arms: int, tie_break: str) -> bool:
    """Whether :func:`argmin_masked` / :func:`argmax_masked` called with ``tree=True``
    select by a knock-out tree over the arms (``"first"`` ties, more arms than the
    one-pass form takes, at most :data:`TREE_MAX_ARMS`)."""
    return tie_break == "first" and ONE_PASS_MAX_ARMS < num_arms <= TREE_MAX_ARMS


def _better(a, b, largest: bool):
    """The (value, index) pair that ranks first: the better value, NaN last, ties
    and NaN pairs by lower index."""
    (va, ia), (vb, ib) = a, b
    na, nb = jnp.isnan(va), jnp.isnan(vb)
    strict = (va > vb) if largest else (va < vb)
    same = (va == vb) | (na & nb)
    take_a = strict | (nb & ~na) | (same & (ia < ib))
    return jnp.where(take_a, va, vb), jnp.where(take_a, ia, ib)


# module-level reducers: lax.reduce caches its traced computation per function
# object, so a fresh closure per call would recompile every eager selection
def _larger_first(a, b):
    return _better(a, b, largest=True)


def _smaller_first(a, b):
    return _better(a, b, largest=False)


def _ranked(score: Array, ok: Array, largest: bool) -> Array:
    """The values the one-pass and tree forms rank: eligible NaN scores become the
    worst value and ineligible arms NaN (worse than any value)."""
    worst = -jnp.inf if largest else jnp.inf
    value = jnp.where(jnp.isnan(score), worst, score)
    return jax.lax.stop_gradient(jnp.where(ok, value, jnp.nan))


def _winner(best: Array, arm: Array) -> Array:
    """The selected arm, ``-1`` where the winning value is NaN (no eligible arm)."""
    return jnp.where(jnp.isnan(best), -1, arm).astype(jnp.int32)


def _one_pass(score: Array, ok: Array, largest: bool) -> Array:
    """The "first" selection as one (value, index) reduction over :func:`_ranked`
    values (NaN pairs tie by index); ``-1`` when the result is an ineligible arm.
    The same arm as :func:`_pick` of the two-pass form, ``-0.0 == 0.0`` included."""
    value = _ranked(score, ok, largest)
    index = jnp.arange(score.shape[-1], dtype=jnp.int32)
    better = _larger_first if largest else _smaller_first
    init = (jnp.asarray(jnp.nan, value.dtype), jnp.asarray(score.shape[-1], jnp.int32))
    best, arm = jax.lax.reduce((value, index), init, better, (score.ndim - 1,))
    return _winner(best, arm)


def _tree(score: Array, ok: Array, largest: bool) -> Array:
    """The "first" selection as a knock-out tree over the arms' :func:`_ranked`
    values: of two entries the later one (higher indices) wins only by a strictly
    better value or against a NaN, so ties go to the lower index; ``-1`` when the
    winner is NaN. The same arm as :func:`_pick` of the two-pass form,
    ``-0.0 == 0.0`` included."""
    value = _ranked(score, ok, largest)
    batch = score.shape[:-1]
    entries = [
        (value[..., i], jnp.full(batch, i, jnp.int32)) for i in range(score.shape[-1])
    ]
    while len(entries) > 1:
        winners = []
        for (va, ia), (vb, ib) in zip(entries[::2], entries[1::2], strict=False):
            better = (vb > va) if largest else (vb < va)
            take = better | (jnp.isnan(va) & ~jnp.isnan(vb))
            winners.append((jnp.where(take, vb, va), jnp.where(take, ib, ia)))
        if len(entries) % 2:  # the last entry goes up unopposed
            winners.append(entries[-1])
        entries = winners
    return _winner(*entries[0])


def _pick(
    s: Array,
    ok: Array,
    best_value: Array,
    key: Key | None,
    tie_break: str,
    unrolled: bool = False,
) -> Array:
    tied = ok & (s == best_value)
    if tie_break == "first":
        return _first_true(tied)
    if tie_break != "random":
        raise ValueError(f"tie_break must be one of {TIE_BREAKS}, got {tie_break!r}")
    if key is None:
        raise ValueError("tie_break='random' needs a key")
    return _random_tied(tied, key, unrolled)


# In the two-pass form of the two selections below (more than ONE_PASS_MAX_ARMS arms
# without ``tree=True``, more than TREE_MAX_ARMS with it, or random ties) ``s`` passes
# an optimization barrier before both the reduction and the tie comparison: otherwise
# XLA may recompute it in two fusions that contract multiply-adds differently, so
# that no entry equals the reduced extreme.
# NaN and ineligible entries both become the worst value, but ties are taken among
# the eligible arms only: an all-NaN (or all-worst) eligible set yields its first arm
# and an ineligible arm can never be returned.


def _eligible(score: Array, eligible: Array | None) -> Array:
    return jnp.ones(score.shape, bool) if eligible is None else eligible


def _select(
    score: Array,
    eligible: Array | None,
    key: Key | None,
    tie_break: str,
    tree: bool,
    largest: bool,
    one_pass: bool = False,
    unrolled: bool = False,
) -> Array:
    """:func:`argmax_masked` (``largest``) or :func:`argmin_masked`: one pass, the
    knock-out tree, or the two-pass form; ineligible and NaN entries rank worst.
    ``one_pass``: a "first" selection is one pass at any K (the GPU form,
    ``Execution.one_hot_arms``: one reduction kernel that fuses the score);
    ``unrolled``: a ``"random"`` one picks among the ties with
    :func:`_random_tied`'s unrolled form (the XLA engine on a GPU)."""
    ok = _eligible(score, eligible)
    if uses_one_pass(score.shape[-1], tie_break) or (one_pass and tie_break == "first"):
        return _one_pass(score, ok, largest=largest)
    if tree and uses_tree(score.shape[-1], tie_break):
        return _tree(score, ok, largest=largest)
    worst = -jnp.inf if largest else jnp.inf
    s = jax.lax.optimization_barrier(jnp.where(ok & ~jnp.isnan(score), score, worst))
    best = jnp.max(s) if largest else jnp.min(s)
    return _pick(s, ok, best, key, tie_break, unrolled=unrolled)


def _selector(largest: bool, name: str, doc: str):
    """The public arg-max (``largest``) or arg-min: one signature for both."""

    def select(
        score: Array,
        eligible: Array | None = None,
        *,
        key: Key | None = None,
        tie_break: str = "first",
        tree: bool = False,
        one_pass: bool = False,
        unrolled: bool = False,
    ) -> Array:
        return _select(
            score, eligible, key, tie_break, tree, largest, one_pass, unrolled
        )

    select.__name__ = select.__qualname__ = name
    select.__doc__ = doc
    return select


argmax_masked = _selector(
    True,
    "argmax_masked",
    """Index of the largest eligible score (``[] int32``); NaN ranks as ``-inf``.

    Ties: ``"first"`` = lowest index; ``"random"`` = uniform among the ``n`` tied
    arms: the ``floor(b * n / 2**32)``-th of them in index order, with ``b =
    jax.random.bits(key)`` (one 32-bit draw; Lemire, ACM TOMACS 2019), so each tied
    arm has probability within ``2**-32`` of ``1 / n`` and a single maximiser is
    returned whatever the key. An ineligible arm is never returned, whatever
    ``score`` holds (NaN, +-inf); ``-1`` when no arm is eligible.

    ``tree`` (static): with ``"first"`` ties over ``ONE_PASS_MAX_ARMS + 1`` to
    ``TREE_MAX_ARMS`` arms, select by a knock-out tree (the same arm; faster where
    ``score`` is read from memory or computed arm by arm, slower where computing it
    reduces over the arms: see :data:`TREE_MAX_ARMS`).

    ``one_pass`` (static; ``Execution.one_hot_arms``, the GPU form): a ``"first"``
    selection is one (value, index) reduction at any K (the same arm).
    ``unrolled`` (static; ``Execution.kept_column``, the XLA engine on a GPU): a
    ``"random"`` tie is drawn with the prefix counts over the packed words written
    out (no scan; the same arm). Off in the fused kernel (more registers there).
    """,
)

argmin_masked = _selector(
    False,
    "argmin_masked",
    """Index of the smallest eligible score (``[] int32``); NaN ranks as ``+inf``.

    Same contract as :func:`argmax_masked` (never ineligible; ``-1`` if none; the
    same ``tree``, ``one_pass`` and ``unrolled``).
    """,
)


def rank(score: Array, eligible: Array | None = None, *, largest: bool = True) -> Array:
    """``[K] int32``: 0-based position of each arm when the eligible arms are ordered
    by score, largest first (``largest=False``: smallest first), ties by lowest index.

    The order is that of repeated :func:`argmax_masked` (:func:`argmin_masked`)
    selections without replacement: NaN ranks with the worst value among the eligible
    arms (``-inf`` for ``largest``, ``+inf`` otherwise) and ``-0.0 == 0.0``. Every
    ineligible arm ranks after every eligible one (its sort key is NaN, which sorts
    last), so ``rank < k`` holds for exactly ``min(k, #eligible)`` eligible arms.
    One stable sort, O(K log K).
    """
    ok = _eligible(score, eligible)
    worst = jnp.where(jnp.isnan(score), jnp.inf, -score if largest else score)
    key = jax.lax.optimization_barrier(jnp.where(ok, worst, jnp.nan))
    order = jnp.argsort(key, stable=True)
    positions = jnp.arange(order.shape[0], dtype=jnp.int32)
    return jnp.empty_like(positions).at[order].set(positions)


def keep_top(score: Array, active: Array, k: ArrayLike) -> Array:
    """``[K] bool`` mask of the ``k`` active arms with the largest scores (ties first).

    Exactly ``min(k, #active)`` arms: NaN and ``-inf`` scores rank last among the
    active arms but still before every inactive arm (see :func:`rank`).
    """
    return active & (rank(score, active) < k)
