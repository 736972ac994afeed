"""Beta draws for shapes ``>= 1`` at a near-fixed cost per decision.

``jax.random.beta`` draws two gammas by Marsaglia and Tsang's rejection method with a
``while`` loop per element (and a nested loop for the normal), re-deriving a key per
element and try by splitting: under ``vmap`` on CPU every loop runs to its slowest
lane, one thunk sequence per trip. Here the same method (Marsaglia, Tsang, "A simple
method for generating gamma variables", ACM TOMS 26(3), 2000, section 3) runs in three
stages, each of which keeps, per gamma, the first accepted try of one unbounded
sequence of tries, so the draw is exact in distribution and does not depend on
which stage finished it:

1. :data:`TRIES` tries of every gamma, in straight-line code fused into one kernel;
   a gamma none of whose tries accepted is NaN.
2. For at most ``slots`` NaN gammas per draw (lowest numbers first), ``retries``
   more tries of that gamma alone: a few scalar tries instead of ``[K]``-wide ones
   (the gamma that did accept keeps its value: redoing both gammas of the entry from
   try 0 would take 2 (1 + retries) tries per slot instead of ``retries``). Both grow
   with the number of entries and of lanes (:func:`default_stages`), so that stage 3
   stays rare at every ``K`` and ``R``. Inside the batched runner these gammas of all
   lanes share one pool of :func:`pool_size` slots, computed once for the batch
   (per-lane slots must each cover their lane's rare worst case, so most of them
   idle; one pool for the batch needs far fewer slots). Both forms give the same
   draws as the simpler ones they replace and run faster (measurements in
   ``benchmarks/notes_policies.md``).
3. Only when some gamma of some lane is still NaN (checked with
   :func:`jbandits.core.lanes.any_lane`, so a ``lax.cond`` skips it on the other steps),
   every gamma by a ``while`` loop over tries until all accept; it replaces the NaN
   gammas only.

The Beta draw is then ``G_a / (G_a + G_b)``.

Try ``m`` of gamma ``e`` (``e = j`` for ``G_a`` of entry ``j``, ``e = n + j`` for
``G_b``, ``n`` entries) is a pure function of ``(key, m, e)``: one threefry2x32 hash of
the counter ``(m, e)`` under the key gives two 32-bit words, the first mapped to a
standard normal ``x`` and the second to a uniform ``u`` on ``[0, 1)`` exactly as
``jax.random.normal`` / ``uniform`` map bits (float64: two hashes, counters
``(m, 2e)`` for ``x`` and ``(m, 2e + 1)`` for ``u``, 64 bits each).
:func:`try_draws` returns these numbers so that a reference implementation can
replay the sampler. For shape 1 the gamma is the exponential ``-ln(1 - u)`` of try
0's uniform (exact, no rejection): Marsaglia-Tsang rejects ~4.8 % of tries there, the
most of any shape ``>= 1`` (1.8 % at 2, 0.3 % at 10).

Shapes below 1 (or NaN) give NaN.
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from jbandits.core import lanes as _lanes
from jbandits.core import prng as _prng
from jbandits.core.types import Array, ArrayLike, Key
from jbandits.policies.blocks import arms
from jbandits.policies.blocks import fuse as _fuse

TRIES = 1  # tries of every gamma (stage 1)
# Stage 3 runs for every lane of a batch when one lane needs it, so stage 2 is sized
# by the lanes of the batch (:func:`jbandits.core.lanes.count`; 1 outside the runner):
# stage 3 should run at no more than about STAGE3_RATE of the steps, half of that from
# more NaN gammas in a lane than slots, half from a slot whose gamma rejects all its
# tries again. The rates assumed: stage 1 leaves fewer than P_NAN NaN gammas per
# entry (both gammas of an entry rejecting is rare: ~P_REJECT^2), a
# count per lane close to Poisson (both measured along Thompson runs, see
# benchmarks/notes_policies.md), and a try rejects with probability at most
# P_REJECT (1.8 % at shape 2, the most of any shape >= 2; shape 1 never rejects
# try 0). A slot's gamma fails its ``retries`` tries of stage 2 with probability
# P_REJECT^retries. Slots and retries fixed rather than grown with the entries
# and the lanes let stage 3 run on many steps (nearly every step at large K) and
# made the sampler slower (benchmarks/notes_policies.md).
P_NAN = 0.02
P_REJECT = 0.02
# the most NaN gammas per entry after stage 1 for shapes 1 or >= 2 (whole-number
# shapes of posteriors on binary rewards): both gammas of shape 2, which rejects most
# (shape 1 never does at try 0; shapes in (1, 2) reject more, up to 4.8 %)
P_NAN_MAX = 2.0 * P_REJECT
STAGE3_RATE = 0.02
SQUEEZE = 0.0331  # Marsaglia & Tsang's squeeze constant


def _words(key, m: Array, e: Array, width: int) -> tuple[Array, Array]:
    """Raw bits ``(bx, bu)`` of try ``m`` (scalar) of the elements ``e``.

    ``key``: a key, or the two uint32 words of threefry2x32 keys as a pair of arrays
    broadcasting with ``e`` (one key per element: the pooled stage 2)."""
    m = m.astype(jnp.uint32)
    if isinstance(key, tuple):
        k1, k2 = key
    elif not _prng._fast(key):  # other key types: bits of fold_in(key, m)
        udtype = jnp.uint32 if width == 32 else jnp.uint64
        bits = jax.random.bits(jax.random.fold_in(key, m), (2, *e.shape), udtype)
        return bits[0], bits[1]
    else:
        kd = jax.random.key_data(key)
        k1, k2 = kd[0], kd[1]
    if width == 32:
        return _prng.threefry2x32(k1, k2, m, e)
    out = []
    for half in (0, 1):
        o1, o2 = _prng.threefry2x32(k1, k2, m, 2 * e + np.uint32(half))
        out.append((o1.astype(jnp.uint64) << np.uint64(32)) | o2.astype(jnp.uint64))
    return out[0], out[1]


def try_draws(key, m: ArrayLike, e: ArrayLike, dtype) -> tuple[Array, Array]:
    """``(x, u)`` of try ``m`` (a scalar) of the gammas numbered ``e`` (any shape):
    ``x ~ N(0, 1)``, ``u ~ U[0, 1)``, each of ``e``'s shape. ``key``: a key, or a
    pair of uint32 arrays, the words of one threefry2x32 key per element."""
    dtype = jnp.dtype(dtype)
    e = jnp.asarray(e).astype(jnp.uint32)
    bx, bu = _words(key, jnp.asarray(m), e, jnp.finfo(dtype).bits)
    return _prng.normal_from_bits(bx, dtype), _prng.unit_from_bits(bu, dtype)


def default_stages(n: int, lanes: int = 1) -> tuple[int, int]:
    """``(slots, retries)`` of stage 2 for ``n``-entry draws in ``lanes`` lanes.

    ``slots`` (NaN gammas per lane): the least ``s >= 1`` (at most ``2 n``) with
    ``P(Poisson(P_NAN n) > s) <= STAGE3_RATE / (2 lanes)``; ``retries``: the least
    ``r >= 1`` with ``lanes P_NAN n P_REJECT^r <= STAGE3_RATE / 2``. At 50 lanes:
    ``(4, 2)`` at ``n = 20``, ``(9, 3)`` at 100; at 250 lanes ``(5, 3)`` and
    ``(10, 3)``.
    """
    lam = P_NAN * n
    slots = _poisson_quantile(lam, STAGE3_RATE / (2.0 * lanes))
    return min(slots, 2 * n), _retries(lam * lanes)


def pool_size(n: int, lanes: int) -> int:
    """Slots of the pooled stage 2 (:func:`beta` under the runner) for ``lanes``
    lanes of ``n`` entries (``2 n`` gammas): the least ``s >= 1`` (at most
    ``2 n lanes``) with
    ``P(Poisson(P_NAN_MAX n lanes) > s) <= STAGE3_RATE / 2``, rounded up to a
    multiple of 8. 50 lanes: 56 slots at ``n = 20`` (per lane: 4 each, 200), 240 at
    ``n = 100`` (450).

    Sized for the highest stage-1 NaN rate, not the average P_NAN: the
    whole batch's count moves with the shapes of its draws (early in a Thompson
    run most shapes are small), where a lane's count is dominated by its own
    Poisson spread: sized with P_NAN instead, the pool overflowed early in runs
    and stage 3 ran often (``benchmarks/notes_policies.md``).
    """
    lam = P_NAN_MAX * n * lanes
    size = min(_poisson_quantile(lam, STAGE3_RATE / 2.0), 2 * n * lanes)
    # a multiple of 8: XLA:CPU runs the tries' kernel much slower at odd sizes
    # (benchmarks/notes_policies.md)
    return -(-size // 8) * 8


def _poisson_quantile(lam: float, tail: float) -> int:
    """The least ``s >= 1`` with ``P(Poisson(lam) > s) <= tail``."""
    if lam <= 0.0:  # no entries
        return 1
    # terms in logs: exp(-lam) underflows beyond lam ~ 745 (10^4 lanes at n = 100)
    log_term = -lam
    below, s = math.exp(log_term), 0  # P(count <= s)
    while 1.0 - below > tail or s < 1:
        s += 1
        log_term += math.log(lam / s)
        below += math.exp(log_term)
    return s


def _retries(nan_gammas: float) -> int:
    """The least ``r >= 1`` with ``nan_gammas P_REJECT^r <= STAGE3_RATE / 2``."""
    retries = 1
    while nan_gammas * P_REJECT**retries > STAGE3_RATE / 2.0:
        retries += 1
    return retries


def _marsaglia_tsang(
    alpha: Array, x: Array, u: Array, log_u: Array | None = None
) -> tuple[Array, Array]:
    """One try: ``(accepted, d v)`` for shape ``alpha >= 1`` from ``x``, ``u``
    (and ``ln u`` where already known)."""
    d = alpha - 1.0 / 3.0
    c = (1.0 / 3.0) / jnp.sqrt(d)
    v = 1.0 + c * x
    v = v * v * v
    x2 = x * x
    squeeze = u < 1.0 - SQUEEZE * x2 * x2
    log_u = jnp.log(u) if log_u is None else log_u
    full = log_u < 0.5 * x2 + d * (1.0 - v + jnp.log(v))
    return (v > 0.0) & (squeeze | full), d * v


def _tries(key, alpha, e, first, count, done=None, value=None):
    """Tries ``first .. first + count - 1`` of the gammas ``e`` with shapes ``alpha``:
    ``(done, value)``, the value of the first accepted try (0 while not done)."""
    if done is None:
        done = jnp.zeros(alpha.shape, bool)
        value = jnp.zeros(alpha.shape, alpha.dtype)
    for i in range(first, first + count):
        x, u = try_draws(key, np.uint32(i), e, alpha.dtype)
        if i == 0:
            # one logarithm for both uses: ln(1 - u) (exact argument: u is a
            # multiple of the dtype's epsilon in [0, 1)) for the exponential of
            # shape 1, ln u for the rejection test of the other shapes
            exp1 = alpha == 1.0
            log_w = jnp.log(jnp.where(exp1, 1.0 - u, u))
            ok, v = _marsaglia_tsang(alpha, x, u, log_w)
            ok, v = ok | exp1, jnp.where(exp1, -log_w, v)
        else:
            ok, v = _marsaglia_tsang(alpha, x, u)
        value = jnp.where(done, value, v)
        done = done | ok
    return done, value


def _gammas(key, alpha, e, first, count):
    """Tries ``first .. first + count - 1`` of the gammas ``e``: the first accepted
    value, NaN where none was."""
    done, value = _tries(key, alpha, e, first, count)
    return jnp.where(done, value, jnp.nan)


def _first_nan(gammas, slots):
    """The first ``slots`` NaN gammas (1-D), lowest index first (the gammas' count
    where there are fewer), and how many there are (at most ``slots``)."""
    left = jnp.isnan(gammas)
    count = jnp.minimum(jnp.sum(left, dtype=jnp.int32), slots)
    return arms.lowest_set(left, slots), count


def _slots(key, alpha, gammas, first, slots, retries):
    """Stage 2: the first ``slots`` NaN gammas (1-D), ``retries`` tries from
    ``first`` (the tries of stage 1)."""
    m = gammas.shape[0]
    idx, _ = _first_nan(gammas, slots)
    safe = jnp.minimum(idx, m - 1)
    redo = _gammas(key, alpha[safe], safe, first, retries)
    return gammas.at[idx].set(redo, mode="drop")


def _pooled(key, alpha, gammas, first, slots, size, retries, axis):
    """Stage 2 for the lanes of ``axis`` together: each lane's first
    ``slots`` NaN gammas (as :func:`_slots` picks them) go, lane after lane, into
    one pool of ``size`` slots whose tries are computed once for the batch with each
    slot's lane key (:func:`jbandits.core.lanes.gather`); per-lane slots must each be
    sized for that lane's rare worst case. Gammas that find no slot stay NaN."""
    m = gammas.shape[0]
    cand, count = _first_nan(gammas, slots)
    # the pool, the same on every lane: lane l's k-th gamma at offset_l + k
    counts = _lanes.gather(count, axis)  # [lanes]
    offsets = jnp.cumsum(counts) - counts
    ks = lax.iota(jnp.int32, slots)
    at = offsets[:, None] + ks  # [lanes, slots]
    at = jnp.where((ks < counts[:, None]) & (at < size), at, size).reshape(-1)
    lanes = counts.shape[0]
    lane_ids = jnp.repeat(lax.iota(jnp.int32, lanes), slots)
    lane = jnp.zeros(size, jnp.int32).at[at].set(lane_ids, mode="drop")
    elem = jnp.zeros(size, jnp.int32)
    elem = elem.at[at].set(
        jnp.minimum(_lanes.gather(cand, axis), m - 1).reshape(-1), mode="drop"
    )
    kd = _lanes.gather(jax.random.key_data(key), axis)  # [lanes, 2]
    # the tries' inputs gathered in kernels of their own: fused into the tries'
    # kernel, the gathers kept XLA:CPU from vectorising it (much slower per slot,
    # benchmarks/notes_policies.md)
    k1, k2, alpha_s = _fuse.materialise(
        kd[lane, 0], kd[lane, 1], _lanes.gather(alpha, axis)[lane, elem]
    )
    redo = _gammas((k1, k2), alpha_s, elem, first, retries)
    # once: XLA would otherwise fuse the tries into the lanes' gathers below and
    # compute them again for every lane
    redo = _fuse.materialise(redo)
    # this lane's results
    mine = offsets[_lanes.index(axis)] + ks
    ok = (ks < count) & (mine < size)
    return gammas.at[jnp.where(ok, cand, m)].set(
        redo[jnp.minimum(mine, size - 1)], mode="drop"
    )


def _loop(key, alpha, e, axis):
    """Stage 3: every gamma by a ``while`` loop over tries until all accept."""
    done, value = _tries(key, alpha, e, 0, 1)

    def cond(c):
        return _lanes.any_lane(~jnp.all(c[1]), axis)

    def body(c):
        i, done, value = c
        x, u = try_draws(key, i, e, alpha.dtype)
        ok, v = _marsaglia_tsang(alpha, x, u)
        return i + 1, done | ok, jnp.where(done, value, v)

    start = (jnp.asarray(1, jnp.uint32), done, value)
    return lax.while_loop(cond, body, start)[2]


def beta(
    key: Key,
    a: ArrayLike,
    b: ArrayLike,
    *,
    tries: int = TRIES,
    slots: int | None = None,
    retries: int | None = None,
    pool: int | None = None,
    lanes: str | None = None,
) -> Array:
    """Draws from ``Beta(a, b)`` (``a, b >= 1``, broadcast together; else NaN).

    ``tries``, ``slots``, ``retries`` and ``pool`` set how much work each stage
    does (see the module docstring); the draws do not depend on them. ``lanes``: the
    name of the ``vmap`` axis over the batch's lanes, or None
    (:attr:`jbandits.core.execution.Execution.lanes`). Stage 2 is pooled over the lanes
    (``pool`` slots for the whole batch, default :func:`pool_size`) with a lanes
    axis of more than one lane, a threefry key, ``slots`` not given and ``pool``
    not 0; else ``slots`` per lane (default :func:`default_stages` of the entries
    and the lanes).
    ``retries``: default from :func:`default_stages` either way.
    """
    dtype = jnp.result_type(float, a, b)
    a, b = jnp.broadcast_arrays(jnp.asarray(a, dtype), jnp.asarray(b, dtype))
    shape = a.shape
    a, b = a.reshape(-1), b.reshape(-1)
    n = a.shape[0]
    axis, lanes = lanes, _lanes.count(lanes)
    stages = default_stages(n, lanes)
    pooled = (
        slots is None and pool != 0 and lanes > 1 and _prng._fast(key) and not key.shape
    )
    slots = stages[0] if slots is None else slots
    retries = stages[1] if retries is None else retries
    ok = (a >= 1.0) & (b >= 1.0)
    # gamma e: G_a of entry e (e < n), G_b of entry e - n; invalid shapes draw at 1
    alpha = jnp.where(jnp.concatenate([ok, ok]), jnp.concatenate([a, b]), 1.0)
    e = lax.iota(jnp.int32, 2 * n)
    gammas = _gammas(key, alpha, e, 0, tries)
    if pooled:
        size = pool_size(n, lanes) if pool is None else pool
        gammas = _pooled(key, alpha, gammas, tries, slots, size, retries, axis)
    elif slots:
        gammas = _slots(key, alpha, gammas, tries, slots, retries)
    need = _lanes.any_lane(jnp.any(jnp.isnan(gammas)), axis)

    def fill(g):
        return jnp.where(jnp.isnan(g), _loop(key, alpha, e, axis), g)

    gammas = lax.cond(need, fill, lambda g: g, gammas)
    theta = gammas[:n] / (gammas[:n] + gammas[n:])
    return jnp.where(ok, theta, jnp.nan).reshape(shape)
