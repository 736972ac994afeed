"""Per-arm statistics and masked selection helpers shared by every policy.

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

Selection helpers never select an ineligible (masked) arm, whatever the scores: NaN
scores rank as the worst value among the eligible arms (``-inf`` for an arg-max,
``+inf`` for an arg-min: never above a finite score, tied with a legitimate ``-inf``),
so an all-NaN score vector still yields the first eligible arm. ``+inf`` / ``-inf``
scores are legitimate priorities and are kept. When no arm is eligible the helpers
return ``-1`` (the idle arm of :mod:`jbandits.types`; ``update`` ignores it).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from jbandits import _prng
from jbandits.types import Array, ArrayLike, Key

TIE_BREAKS = ("first", "random")


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
    pulled (the cached index of :func:`jbandits.policies._index.index_policy`) as
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


def one_hot(arm: ArrayLike, num_arms: int) -> Array:
    """``[K] bool`` indicator of ``arm`` (all False for ``arm = -1``)."""
    return jnp.arange(num_arms) == arm


def _kahan_add(total: Array, err: Array, x: Array) -> tuple[Array, Array]:
    """Compensated ``total + x``: returns the new ``(total, err)`` (Kahan 1965)."""
    y = x - err
    new = total + y
    return new, (new - total) - y


def update(
    stats: ArmStats, arm: ArrayLike, reward: ArrayLike, weight=True, derive=None
) -> ArmStats:
    """Add ``reward`` to ``arm``'s statistics; ``weight=False`` or ``arm < 0`` is a no-op.

    Gathers the arm's column of the table, updates it and scatters it back: one
    gather and one scatter per pull (under ``vmap`` on CPU several times faster than
    a one-hot update over ``[K]``, measured in benchmarks/throughput.py's
    development). ``sums`` and ``m2`` are accumulated with Kahan compensation (see
    the module docstring).

    ``derive``: for statistics with extra rows, ``column -> [E]`` values of the
    pulled arm's extra rows, computed from its updated statistics (``column`` is an
    :class:`ArmStats` of ``[1]`` fields); without it extra rows are kept as they are.
    """
    arm = jnp.asarray(arm)
    live = (arm >= 0) & weight
    i = jnp.maximum(arm, 0)
    table = stats.table
    col = table[:, i]
    reward = jnp.asarray(reward, table.dtype)
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
    new = jnp.stack(new)
    if derive is not None:
        fresh = ArmStats.from_table(new[:, None], stats.variance)
        new = jnp.concatenate([new, jnp.reshape(derive(fresh), (-1,))])
    else:
        new = jnp.concatenate([new, col[stats.num_fields :]])
    new = jnp.where(live, new, col)
    return ArmStats.from_table(table.at[:, i].set(new), stats.variance)


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


def _first_true(flags: Array) -> Array:
    """Lowest index with ``flags`` True (``-1`` if none).

    ``min(where(flags, iota, K))`` rather than ``argmax``: over more arms than
    :data:`ONE_PASS_MAX_ARMS`, XLA's CPU arg-reductions are 2-3x slower than a plain
    min-reduction under vmap (measured; below it see :func:`_one_pass`).
    """
    size = flags.shape[-1]
    first = jnp.min(jnp.where(flags, jnp.arange(size, dtype=jnp.int32), size))
    return jnp.where(first < size, first, -1).astype(jnp.int32)


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
    word, before, base = packed[-1], upto[-1] - per_word[-1], 32 * (words - 1)
    for w in reversed(range(words - 1)):
        take = s < upto[w]
        word = jnp.where(take, packed[w], word)
        before = jnp.where(take, upto[w] - per_word[w], before)
        base = jnp.where(take, 32 * w, base)
    found = base + _nth_set_bit(word, s - before)
    return jnp.where(s < upto[-1], found, size).astype(jnp.int32)


def _random_tied(tied: Array, key: Key) -> Array:
    """The ``floor(b * n / 2**32)``-th tied arm in index order (``-1`` if none), with
    ``n`` the number of tied arms and ``b = jax.random.bits(key)`` (32 bits).

    Multiply-shift maps ``b`` to ``{0, .., n - 1}`` with every value within
    ``2**-32`` of probability ``1 / n`` (Lemire, "Fast random integer generation in
    an interval", ACM TOMACS 2019, section 3). The tied set is packed into 32-bit
    words (bit ``j`` of word ``w`` = arm ``32 w + j``), so counting it is a population
    count and the ``r``-th tied arm is a word chosen by prefix counts over the
    ``ceil(K / 32)`` words plus :func:`_nth_set_bit`: one hash per selection and no
    per-arm random numbers.
    """
    packed = pack_bits(tied)
    words = packed.shape[0]
    per_word = jax.lax.population_count(packed).astype(jnp.int32)  # [W]
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
# arms) is faster. APT, 2 cores, R = 500, T = 1e4 (benchmarks.throughput's timer):
# K = 10 71 -> 42 ns/pull, but K = 11 and 12 at 91-104 ns/pull against 74-87 for two
# passes. At K = 8 (Bernoulli), one pass against two: UCB1 1.5x, MOSS 2.8x,
# Sequential Halving 1.3x, KL-UCB 1.1x, Successive Rejects 1.0x.
ONE_PASS_MAX_ARMS = 10

# Above it and up to this many arms a "first" selection asked for with ``tree=True``
# is a knock-out tree written out over the arms (arm 2i against arm 2i + 1, then the
# winners, ...): K - 1 elementwise comparisons per lane in one kernel, vectorised over
# the lanes, where the two-pass form's reductions over a short arm axis run an element
# at a time. It pays where the score is read from memory or computed arm by arm, and
# loses where computing it reduces over the arms (XLA fuses that computation into the
# tree's kernel): index policies ask for it when their index is elementwise. Same
# process, interleaved runs, identical outputs, T = 2000, against the two-pass form,
# ns/pull/core at R = 500 / 2000: APT K = 12 1.23x / 1.32x, K = 16 1.24x / 1.37x,
# K = 32 1.66x / 1.56x, K = 50 1.21x / 1.31x, K = 64 1.29x / 1.33x; at R = 200 / 1000
# and K = 20: UCB1 (first ties) 1.23x / 1.36x, LSA 1.31x / 1.38x, UCBE 1.04x / 1.38x,
# MOSS 1.18x / 1.40x, KL-UCB 1.12x / 0.98x; not asked for: GapE (gaps to the best
# arm) 0.68x / 0.58x, AugUCB 0.81x / 0.92x, Sequential Halving 0.88x / 1.02x. At
# K = 100 APT 1.13x / 0.97x (R = 500 / 2000), and at K = 10 0.81x / 0.44x against
# the one-pass reduction.
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
    s: Array, ok: Array, best_value: Array, key: Key | None, tie_break: str
) -> Array:
    tied = ok & (s == best_value)
    if tie_break == "first":
        return _first_true(tied)
    if tie_break != "random":
        raise ValueError(f"tie_break must be one of {TIE_BREAKS}, got {tie_break!r}")
    if key is None:
        raise ValueError("tie_break='random' needs a key")
    return _random_tied(tied, key)


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


def argmax_masked(
    score: Array,
    eligible: Array | None = None,
    *,
    key: Key | None = None,
    tie_break: str = "first",
    tree: bool = False,
) -> Array:
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
    """
    ok = _eligible(score, eligible)
    if uses_one_pass(score.shape[-1], tie_break):
        return _one_pass(score, ok, largest=True)
    if tree and uses_tree(score.shape[-1], tie_break):
        return _tree(score, ok, largest=True)
    s = jax.lax.optimization_barrier(jnp.where(ok & ~jnp.isnan(score), score, -jnp.inf))
    return _pick(s, ok, jnp.max(s), key, tie_break)


def argmin_masked(
    score: Array,
    eligible: Array | None = None,
    *,
    key: Key | None = None,
    tie_break: str = "first",
    tree: bool = False,
) -> Array:
    """Index of the smallest eligible score (``[] int32``); NaN ranks as ``+inf``.

    Same contract as :func:`argmax_masked` (never ineligible; ``-1`` if none; the
    same ``tree``).
    """
    ok = _eligible(score, eligible)
    if uses_one_pass(score.shape[-1], tie_break):
        return _one_pass(score, ok, largest=False)
    if tree and uses_tree(score.shape[-1], tie_break):
        return _tree(score, ok, largest=False)
    s = jax.lax.optimization_barrier(jnp.where(ok & ~jnp.isnan(score), score, jnp.inf))
    return _pick(s, ok, jnp.min(s), key, tie_break)


def nth_active(active: Array, j: ArrayLike) -> Array:
    """Index of the ``j``-th (0-based) True entry of ``active`` (``-1`` if none).

    The prefix count uses ``lax.associative_scan`` (log-depth, elementwise): XLA's CPU
    ``cumsum`` is a quadratic reduce-window, ~4x slower at K = 100 (measured).
    """
    counts = jax.lax.associative_scan(jnp.add, active.astype(jnp.int32))
    return _first_true(active & (counts == j + 1))


def steps_ahead(arm: ArrayLike, num_arms: int) -> Array:
    """``[K] int32``: how far each arm lies after ``arm`` cyclically, minus one.

    Round robin one pull at a time: if ``arm`` is the ``j``-th active arm, the active
    arm with the smallest value (distinct values, so no tie) is the ``(j + 1) mod
    n``-th, the value of :func:`round_robin` one pull later. As a score it lets a
    policy choose its forced round-robin arm in the same reduction as its index.
    """
    iota = jnp.arange(num_arms, dtype=jnp.int32)
    # iota - arm - 1 lies in [-K, K - 1] for arm in [-1, K - 1]: one conditional add
    # is the modulo (an integer remainder per arm is a scalar division on CPU)
    ahead = iota - jnp.asarray(arm, jnp.int32) - 1
    return jnp.where(ahead < 0, ahead + num_arms, ahead)


def next_real(arm: ArrayLike, arm_mask: Array) -> Array:
    """The first real arm after ``arm`` cyclically (``arm`` itself if it is the only
    one; ``-1`` if no arm is real): one integer min-reduction, the arm that
    :func:`steps_ahead` ranks first among the real arms."""
    num_arms = arm_mask.shape[-1]
    gap = jnp.min(jnp.where(arm_mask, steps_ahead(arm, num_arms), num_arms))
    # arm in [-1, K - 1], gap in [0, K - 1] when some arm is real: after in [0, 2K - 1]
    after = jnp.asarray(arm, jnp.int32) + 1 + gap
    after = jnp.where(after >= num_arms, after - num_arms, after)
    return jnp.where(gap >= num_arms, -1, after).astype(jnp.int32)


def last_real(arm_mask: Array) -> Array:
    """The highest-numbered real arm (``-1`` if none): one integer max-reduction of
    the mask, which XLA hoists out of a loop whose carry passes the mask through."""
    iota = jnp.arange(arm_mask.shape[-1], dtype=jnp.int32)
    return jnp.max(jnp.where(arm_mask, iota, -1))


def least_pulled(counts: Array, active: Array) -> Array:
    """Least-pulled active arm, lowest index on ties (round robin within a phase)."""
    return argmin_masked(counts, active)


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


def round_robin(t: ArrayLike, arm_mask: Array) -> Array:
    """The ``(t mod K_real)``-th real arm: round robin over unmasked arms (-1 if none)."""
    num_real = jnp.maximum(jnp.sum(arm_mask), 1)
    return nth_active(arm_mask, jnp.mod(t, num_real))


def forced_arm(t: ArrayLike, arm_mask: Array, passes: int = 1) -> tuple[Array, Array]:
    """Forced initial pulls: ``(is_forced, arm)`` for the pull numbered ``t`` (0-based).

    "Pull each arm ``passes`` times" = the first ``passes * K_real`` pulls go round
    robin over the real arms in index order.
    """
    num_real = jnp.sum(arm_mask)
    return t < passes * num_real, round_robin(t, arm_mask)


def labels_above(stats: ArmStats, arm_mask: Array, threshold: ArrayLike) -> Array:
    """TBP read-out ``1{mean_i >= tau}``; unpulled and padded arms get label 0."""
    return arm_mask & (stats.counts > 0) & (mean(stats) >= threshold)


def best_empirical(stats: ArmStats, arm_mask: Array) -> Array:
    """argmax of the empirical mean over pulled real arms (first on ties)."""
    return argmax_masked(jnp.where(stats.counts > 0, mean(stats), -jnp.inf), arm_mask)
