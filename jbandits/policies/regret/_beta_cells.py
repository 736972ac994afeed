"""The Beta posterior's quantile cells for Bayes-UCB
(:mod:`jbandits.policies.regret.bayes_ucb`): the certified lazy search of the arms
that can be the arg-max (:func:`_beta_choose`) and the fixed-shape bisection of every
arm (:func:`_beta_bisect`), which give the same cells.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from jbandits.policies.blocks import arms, numerics
from jbandits.policies.blocks import fuse as _fuse


def _put(hits, v, new):
    """``v`` with ``new[k]`` written where ``hits[k]`` (one-hot selects, which XLA
    fuses in place, where a scatter costs kernels and copies). ``new`` is
    materialised first (:func:`jbandits.policies.blocks.fuse.materialise`): XLA would otherwise fuse
    its computation into the ``[K]``-wide select and redo it for every arm."""
    new = [_fuse.materialise(w) for w in new]
    for hit, w in zip(hits, new, strict=True):
        v = jnp.where(hit, w, v)
    return v


def _beta_bisect(a, b, log_alpha, usable, bits):
    """Fixed-shape Bayes-UCB cells of every ``usable`` arm (the real arms; none
    under a NaN level); returns (index, new warm).

    ``bits`` bisection halvings of ``[0, 1]`` for all arms at once (a ``lax.fori_loop``
    of static trip count): at the midpoint ``g = lo + 2^-(k+1)`` of the bracket the sign
    of ``ln P(X > g) - ln alpha`` (:func:`numerics.beta_sf`, the tail the certified
    search evaluates) keeps the upper or the lower half. The result is the cell
    ``(lo, lo + 2^-bits]`` with ``P(X > lo) > alpha`` (or ``lo = 0``) and
    ``P(X > lo + 2^-bits) <= alpha`` (or ``lo + 2^-bits = 1``) as evaluated: where the
    evaluated tail decreases across the grid that is the one cell where its sign
    changes, the cell :func:`_beta_choose` certifies. The warm state returned is one the
    certified search can start from: ``x = lo`` with the tail and Mills ratio evaluated
    there (``(0, inf)`` at ``lo = 0``, as at init), the posterior's log-norm and ``lo``.
    """
    dtype = a.dtype
    terms = _terms(dtype)
    log_norm = numerics.beta_log_norm(a, b, integer=True)
    zero = jnp.zeros_like(a)
    # ln P(X > 0) = 0 and an infinite Mills ratio are exact for every (a, b)
    carry = (zero, zero, jnp.full_like(a, jnp.inf), jnp.asarray(0.5, dtype))

    def halve(_, carry):
        lo, log_tail, ratio, half = carry
        g = lo + half  # exact: a multiple of 2^-bits, bits <= the dtype's mantissa
        tail_g, ratio_g = numerics.beta_sf(a, b, g, log_norm, terms)
        above = tail_g > log_alpha  # False for a NaN level: lo stays 0
        return (
            jnp.where(above, g, lo),
            jnp.where(above, tail_g, log_tail),
            jnp.where(above, ratio_g, ratio),
            half / 2.0,
        )

    lo, log_tail, ratio, _ = jax.lax.fori_loop(0, bits, halve, carry)
    cell = 2.0**-bits
    # every usable arm gets its midpoint (the certified search gives -inf to the
    # arms that cannot be the arg-max: their cells lie strictly below the best one,
    # so the arg-max and its ties are the same)
    index = jnp.where(usable, lo + cell / 2.0, -jnp.inf)
    return index, (lo, log_tail, ratio, log_norm, lo)


def _beta_choose(a, b, warm, log_alpha, changed, success, arm_mask, bits, bisect):
    """Bayes-UCB cells of the arms that can be the arg-max; returns (index, new warm).

    Two implementations, chosen by the static ``bisect`` (``Execution.fixed_bisection``
    of the policy): by default the certified search below, lazy and warm-started, with a
    ``lax.while_loop`` that runs until every candidate arm is resolved (data dependent:
    usually a few probes per decision; the faster one on CPU and on GPU,
    ``benchmarks/notes_bayes_ucb.md``); with ``bisect=True`` :func:`_beta_bisect`,
    ``bits`` bisection halvings of every real arm, no data-dependent loop.

    Both give the cell ``(lo, lo + 2^-bits]`` of the root of ``ln P(X > x) = ln alpha``
    on the same grid, the tail evaluated by the same :func:`numerics.beta_sf` with the
    same ``beta_log_norm`` and ``terms``. The bisection brackets the root between grid
    points by the evaluated sign of ``ln P(X > g) - ln alpha`` at them; the certified
    search proves the same bracket from that sign at grid points and from facts that
    hold for the exact tail (tangent bounds from concavity, a lower end kept while
    ``alpha`` falls or after a success, the floor of a point above the root). Both are
    the unique cell of the root wherever the evaluated sign at the grid points next to
    the root is the exact one, i.e. unless the root lies within the tail's rounding
    error of a grid point; then the two can be one cell apart (rarely, and without
    changing the pull where counted: ``benchmarks/notes_bayes_ucb.md``). The certified
    search gives ``-inf`` to the arms whose ceiling is at most the best floor (their
    cells lie strictly below the best one), and an unresolved lone contender a value
    above them all: the pulled arm and the ties are the bisection's.

    ``warm`` holds per arm ``(x, ln P(X > x), Mills ratio at x, log_norm, lo)``: the
    last point where the tail was evaluated and a grid point ``lo`` known to lie below
    the root (``P(X > lo) > alpha``; 0 when none). ``changed`` (int32 arm or None at
    init) had its posterior changed by ``success`` (bool): its log-norm and its point
    are re-evaluated. The fixed-shape path ignores ``warm`` and returns one valid for
    either path.
    """
    # a NaN level (an invalid traced c or horizon) certifies nothing: no arm is
    # usable, every index is -inf and the arm is a tie among the real arms (the
    # certified search would otherwise move its bounds down one cell per probe)
    usable = arm_mask & ~jnp.isnan(log_alpha)
    if bisect:
        return _beta_bisect(a, b, log_alpha, usable, bits)
    dtype = a.dtype
    terms = _terms(dtype)
    scale = 2.0**bits
    cell = 1.0 / scale
    x, log_tail, ratio, log_norm, lo = warm
    if changed is not None:
        # the pulled arm: its tail at x under the new posterior by recurrence guides
        # one Halley step, near which the tail is evaluated
        i = changed
        won = success.astype(dtype)
        pred = numerics.beta_sf_after_pull(
            a[i] - won, b[i] - (1.0 - won), x[i], log_tail[i], ratio[i], success
        )
        # aim one cell below the predicted root: where the prediction holds, the
        # point gives the floor and its tangent the ceiling one or two cells up
        x_i = numerics.beta_halley_step(a[i], b[i], x[i], *pred, log_alpha)
        x_i = jnp.clip(jnp.floor(x_i * scale) / scale - cell, 0.0, 1.0 - cell)
        norm_i = numerics.beta_log_norm(a[i], b[i], integer=True)
        tail_i, ratio_i = numerics.beta_sf(a[i], b[i], x_i, norm_i, terms)
        # a success moves Beta(a, b) up stochastically: lo stays below the root
        lo_i = jnp.where(success, lo[i], 0.0)
        hit = arms.one_hot(i, a.shape[0])[None]
        x, log_tail, ratio, log_norm, lo = (
            _put(hit, v, w[None])
            for v, w in zip(
                (x, log_tail, ratio, log_norm, lo),
                (x_i, tail_i, ratio_i, norm_i, lo_i),
                strict=True,
            )
        )
    lo = jnp.maximum(
        lo, jnp.where(log_tail > log_alpha, jnp.floor(x * scale) / scale, 0.0)
    )
    up = numerics.beta_root_ceiling(x, log_tail, ratio, log_alpha, bits)
    iota = jnp.arange(a.shape[0])
    k1 = a.shape[0] + 1

    def pending(lo, up):
        """The arms that can be the arg-max and whether one must be probed."""
        # an arm whose ceiling is at most the best floor has its cell below the
        # best floor's arm's cell: it cannot be the arg-max
        best = jnp.max(jnp.where(usable, lo, -jnp.inf))
        contend = usable & ((up > best) | (lo == best))
        open_ = contend & (up - lo > cell)
        # one reduction for both counts: contenders + k1 * open contenders
        tally = jnp.sum(contend.astype(jnp.int32) + k1 * open_.astype(jnp.int32))
        return contend, (tally >= k1) & (tally % k1 > 1)

    def separate(carry):
        """Probe the open contender with the highest ceiling, ``j``.

        At ``g = min(rival, up_j - cell)``, ``rival`` the highest ceiling of the
        other contenders (at least ``lo_j + cell``), the tail lifts ``lo_j`` to
        ``g`` (past every rival when ``g = rival``; ``j`` resolved when
        ``g = up_j - cell``) or lowers ``up_j`` to ``g`` at most: a cell of progress
        at least. Arms with ``j``'s posterior have its tail and take the result.
        """
        x, log_tail, ratio, lo, up, contend, _ = carry
        open_ = contend & (up - lo > cell)
        j = arms.argmax_masked(up, open_)
        rival = jnp.max(jnp.where(contend & (iota != j), up, -jnp.inf))
        g = jnp.maximum(jnp.minimum(rival, up[j] - cell), lo[j] + cell)
        tail_g, ratio_g = numerics.beta_sf(a[j], b[j], g, log_norm[j], terms)
        lo_j = jnp.where(tail_g > log_alpha, g, lo[j])
        ceiling = numerics.beta_root_ceiling(g, tail_g, ratio_g, log_alpha, bits)
        up_j = jnp.minimum(up[j], ceiling)
        twins = ((a == a[j]) & (b == b[j]) & usable)[None]
        # each once, in kernels the [K]-wide selects read: XLA would otherwise fuse
        # their chains (the tail's kernel, the ceiling) into every select and redo
        # them for every arm
        g, tail_g, ratio_g, lo_j, up_j = _fuse.materialise(
            g, tail_g, ratio_g, lo_j, up_j
        )
        x, log_tail, ratio = (
            jnp.where(twins[0], w, v)
            for v, w in zip(carry[:3], (g, tail_g, ratio_g), strict=True)
        )
        lo = jnp.where(twins[0], jnp.maximum(lo, lo_j), lo)
        up = jnp.where(twins[0], jnp.minimum(up, up_j), up)
        return (x, log_tail, ratio, lo, up, *pending(lo, up))

    carry = (x, log_tail, ratio, lo, up, *pending(lo, up))
    x, log_tail, ratio, lo, up, contend, _ = jax.lax.while_loop(
        lambda carry: carry[-1], separate, carry
    )
    index = jnp.where(contend, lo + cell / 2.0, -jnp.inf)
    return index, (x, log_tail, ratio, log_norm, lo)


def _terms(dtype) -> int:
    return numerics._iters(numerics.BETA_CF_ITERS, dtype, None)
