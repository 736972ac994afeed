"""Bit-packed flags: a boolean vector packed into ``uint32`` words
(:func:`pack_bits`), the lowest indices where it holds (:func:`lowest_set`), the
position of the ``r``-th set bit of a word and the exact high half of a 32-bit
product (the arithmetic of the random tie rule of :mod:`jbandits.policies.blocks.arms.selection`).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from jbandits.core.types import Array


def _mulhi(a: Array, b: Array) -> Array:
    """``floor(a * b / 2**32)`` of ``uint32`` operands, exactly, in 32-bit arithmetic:
    the product of 16-bit halves with the carries propagated (Warren, *Hacker's
    Delight*, 2nd ed., section 8-2, "mulhu")."""
    low, half = np.uint32(0xFFFF), np.uint32(16)
    a0, a1, b0, b1 = a & low, a >> half, b & low, b >> half
    t = a1 * b0 + ((a0 * b0) >> half)
    w1 = a0 * b1 + (t & low)
    return a1 * b1 + (t >> half) + (w1 >> half)


def _nth_set_bit(word: Array, r: Array) -> Array:
    """Position of the ``r``-th (0-based) set bit of the ``uint32`` ``word``, for
    ``r < popcount(word)``: binary search for the shortest low-bit prefix holding
    ``r + 1`` set bits (five population counts)."""
    lo, hi = jnp.zeros_like(r), jnp.full_like(r, 31)
    for _ in range(5):
        mid = (lo + hi) // 2
        below = (np.uint32(2) << mid.astype(jnp.uint32)) - np.uint32(1)  # bits 0..mid
        right = jax.lax.population_count(word & below).astype(r.dtype) > r
        lo, hi = jnp.where(right, lo, mid + 1), jnp.where(right, mid, hi)
    return lo


def pack_bits(flags: Array) -> Array:
    """``flags`` (1-D bool, size ``n``) packed into ``ceil(n / 32)`` ``uint32``
    words: bit ``j`` of word ``w`` is ``flags[32 w + j]`` (0 past ``n``)."""
    size = flags.shape[-1]
    words = -(-size // 32)
    flags = jnp.pad(flags, (0, 32 * words - size)).reshape(words, 32)
    weights = jnp.left_shift(np.uint32(1), jnp.arange(32, dtype=jnp.uint32))
    return jnp.sum(jnp.where(flags, weights, np.uint32(0)), axis=-1, dtype=jnp.uint32)


def lowest_set(flags: Array, count: int) -> Array:
    """The ``count`` lowest indices where ``flags`` (1-D bool, size ``n``) holds, in
    increasing order, ``n`` for those past the last one (``[count] int32``).

    The flags are packed (:func:`pack_bits`); the ``s``-th index lies in the first
    word whose running count of set bits exceeds ``s`` and is found there by
    :func:`_nth_set_bit`: elementwise over the ``count`` results, so XLA computes
    them in one kernel after the packing, where ``count`` masked min-reductions over
    the ``n`` flags took two kernels each.
    """
    size = flags.shape[-1]
    packed = pack_bits(flags)
    per_word = jax.lax.population_count(packed).astype(jnp.int32)
    s = jnp.arange(count, dtype=jnp.int32)
    words = packed.shape[0]
    # running counts through each word, unrolled (ceil(n / 32) words)
    upto = [per_word[0]]
    for w in range(1, words):
        upto.append(upto[-1] + per_word[w])
    found = _nth_set_unrolled(packed, per_word, upto, s)
    return jnp.where(s < upto[-1], found, size).astype(jnp.int32)


def _nth_set_unrolled(packed: Array, per_word, upto: list, r: Array) -> Array:
    """Index of the ``r``-th (0-based) set bit of the packed ``words`` (``r`` below
    the total), elementwise over ``r``: the first word whose running count ``upto``
    exceeds ``r`` (the last one when none before it), written out over the words,
    then :func:`_nth_set_bit` in it. ``per_word``: the words' set-bit counts."""
    words = packed.shape[0]
    word, before, base = packed[-1], upto[-1] - per_word[-1], 32 * (words - 1)
    for w in reversed(range(words - 1)):
        take = r < upto[w]
        word = jnp.where(take, packed[w], word)
        before = jnp.where(take, upto[w] - per_word[w], before)
        base = jnp.where(take, 32 * w, base)
    return base + _nth_set_bit(word, r - before)
