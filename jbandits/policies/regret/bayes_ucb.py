"""Bayes-UCB (Kaufmann, Cappé, Garivier, AISTATS 2012), Beta and Gaussian posteriors.

Pull the arm with the largest upper posterior quantile

    q_j(t) = Quantile(1 - alpha_t; posterior_j),   alpha_t = 1 / (t (ln T)^c),

with ``t = n + 1`` the 1-based index of the pull being decided. The computation works
with the tail probability ``alpha_t`` (never ``1 - alpha_t``, which loses ~6 % of
``alpha`` in float32 near ``t ~ 1e6``).

* ``posterior="beta"``: ``Beta(1 + succ_j, 1 + fail_j)`` on binarised rewards (as in
  Thompson sampling). The index is the midpoint of the ``2^-num_iters`` dyadic cell
  ``(lo, lo + 2^-num_iters]`` holding the quantile (what ``num_iters`` bisection
  halvings return), computed lazily (:func:`_beta_choose`): an arm is resolved to its
  cell only when needed to tell the arg-max and its exact ties apart. Per arm the state
  keeps the last point ``x_j`` where the tail was evaluated, with
  ``(ln P(X > x_j), Mills ratio)``, the posterior's log-norm and a grid point ``lo_j``
  below the quantile. As ``alpha`` only falls between two pulls of an arm, ``lo_j``
  stays valid, and ``ln P(X > x)`` being concave in ``ln(1 - x)`` (log-concavity of the
  density of ``ln(1 - X)`` for ``a, b >= 1``) turns the stored tangent at ``x_j`` into a
  grid point above the quantile at no cost
  (:func:`jbandits.numerics.beta_root_ceiling`). Per decision the pulled arm takes one
  Halley step guided by the tail recurrences (DLMF 8.17.20-21) and one tail evaluation a
  cell below it; while several arms can still be the arg-max and one is not resolved,
  the open one with the highest ceiling is probed at one grid point (a data-dependent
  ``lax.while_loop``). A lone contender is the arg-max unresolved; arms that cannot be
  the arg-max get index ``-inf``: the pulled arm and the exact ties are those of the
  full index vector. ``Execution.fixed_bisection`` gives the same cells (bar a root
  within rounding error of a grid point) by ``num_iters`` halvings of every arm in a
  loop of static trip count (slower: ``benchmarks/notes_bayes_ucb.md``).
* ``posterior="gauss"``: the Gaussian model of Thompson sampling, prior ``N(0, s2)`` and
  noise variance ``s2 = noise_var``, so the posterior is
  ``N(S_j / (k_j + 1), s2 / (k_j + 1))`` and
  ``q_j = S_j / (k_j + 1) + sqrt(s2 / (k_j + 1)) z_alpha``, ``z_alpha = -ndtri(alpha)``.

No forced initial pulls. At ``t = 1`` (and ``c = 0``) every quantile is equal (0 for
Beta, ``-inf`` for Gauss), so the first arm comes from the tie-break: uniform over the
real arms under ``tie_break="random"``.

Randomness: the key of a decision is split as
``key_bin, key_tie = jax.random.split(key)``; ``key_bin`` binarises the reward just
observed (Beta only), ``key_tie`` breaks ties among the maximal quantiles.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from jbandits import _fuse, _prng, _validate, arms, numerics, registry
from jbandits.execution import Execution
from jbandits.policies.regret.thompson import POSTERIORS, add_success
from jbandits.types import Array, ArrayLike, Policy


class BayesUCBState(NamedTuple):
    stats: arms.ArmStats  # raw rewards: counts and sums ([K] each; no M2)
    succ: Array  # [K] float: binarised successes (Beta only; stays 0 for "gauss")
    quant: tuple  # 5 x [K] float: Beta (x, ln P(X > x), Mills ratio, log-norm, lo)
    arm_mask: Array  # [K] bool: real arms
    t: Array  # [] int32: pulls done (n)
    arm: Array  # [] int32: next arm


def tail_level(
    t: ArrayLike, c: ArrayLike = 0.0, horizon: ArrayLike | None = None
) -> Array:
    """``alpha_t = 1 / (t (ln T)^c)`` for the 1-based pull index ``t``.

    Without ``horizon`` the factor ``(ln T)^c`` is 1 (the ``c = 0`` level ``1/t``).
    ``ln T`` is floored at 1 (binding only for ``T <= 2``) so that ``alpha_t <= 1``.
    """
    t = jnp.asarray(t, jnp.result_type(float))
    if horizon is None:
        return 1.0 / t
    log_horizon = jnp.maximum(jnp.log(jnp.asarray(horizon, t.dtype)), 1.0)
    return 1.0 / (t * log_horizon**c)


def bayes_ucb_index(
    stats: arms.ArmStats,
    succ: Array,
    alpha: ArrayLike,
    *,
    posterior: str = "beta",
    noise_var: ArrayLike = 1.0,
    num_iters: int | None = None,
) -> Array:
    """``[K]`` upper posterior quantiles at tail probability ``alpha``."""
    if posterior == "beta":
        return numerics.beta_upper_quantile(
            1.0 + succ, 1.0 + stats.counts - succ, alpha, num_iters
        )
    shrink = stats.counts + 1.0
    z = numerics.normal_upper_quantile(alpha)
    return stats.sums / shrink + jnp.sqrt(noise_var / shrink) * z


def _put(hits, v, new):
    """``v`` with ``new[k]`` written where ``hits[k]`` (one-hot selects, which XLA
    fuses in place, where a scatter costs kernels and copies). ``new`` is
    materialised first (:func:`jbandits._fuse.materialise`): XLA would otherwise fuse
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


#: From this many arms (``num_arms``, static) the Gaussian Bayes-UCB keeps every arm's
#: posterior mean ``S / (k + 1)`` and scale ``sqrt(s2 / (k + 1))`` as two extra rows of
#: its statistics, the pulled arm's recomputed with its column (the same operations on
#: the same numbers, so the same indices): a step is then one multiply-add per arm
#: instead of a division and a square root. Below it the two extra rows cost more than
#: they save (``benchmarks/notes_policies.md``, CPU: 10-20 % faster at K = 100, 5 % at
#: K = 50, 3-4 % at K = 32; 4-16 % slower at K = 16-20).
GAUSS_KEPT_ARMS = 32


def _terms(dtype) -> int:
    return numerics._iters(numerics.BETA_CF_ITERS, dtype, None)


@registry.policy("bayes_ucb", static=("num_iters",))
def bayes_ucb(
    num_arms: int,
    *,
    posterior: str = "beta",
    c: ArrayLike = 0.0,
    horizon: ArrayLike | None = None,
    noise_var: ArrayLike = 1.0,
    tie_break: str = "random",
    num_iters: int | None = None,
    execution: Execution | None = None,
) -> Policy:
    """Bayes-UCB.

    Args:
      num_arms: static K_max (real arms are given by ``arm_mask`` at ``init``).
      posterior: static, ``"beta"`` (rewards in ``[0, 1]``, binarised) or ``"gauss"``.
      c: exponent of ``(ln T)^c`` in the tail level (traced, ``>= 0``); the paper's
        experiments and pymaBandits use ``c = 0`` (level ``1 - 1/t``), the theory
        ``c >= 5``. A concrete ``c != 0`` needs ``horizon``.
      horizon: T (traced), only used with ``c``.
      noise_var: Gaussian model's variance ``s2`` (traced, ``> 0``); ignored by Beta.
      tie_break: static, ``"random"`` (default) or ``"first"``: "random" (uniform among exact maximisers) is the paper-faithful default; "first" mimics the authors' Python scripts.
      num_iters: static resolution of the Beta quantile: the index is the midpoint
        of the ``2^-num_iters`` dyadic cell holding it, as ``num_iters`` bisection
        halvings return; default 20 (float32) / 40 (float64)
        (``numerics.BETA_GRID_BITS``), at most 23 / 52 (the cells' midpoints must be
        exact in the dtype).
      execution: static :class:`~jbandits.execution.Execution`, how the step is
        compiled (never what it computes); the batched runner sets it. Default:
        :meth:`Execution.default() <jbandits.execution.Execution.default>`.

    Returns:
      A regret :class:`~jbandits.types.Policy`; ``output`` is the empirical best arm.

    References:
      Kaufmann, Cappé, Garivier. On Bayesian upper confidence bounds for bandit
      problems. AISTATS 2012.
    """
    num_arms = _validate.static_int("num_arms", num_arms, minimum=2)
    execution = Execution.resolve(execution)
    _validate.choice("posterior", posterior, POSTERIORS)
    _validate.choice("tie_break", tie_break, arms.TIE_BREAKS)
    _validate.in_range("c", c, 0.0)
    _validate.in_range("noise_var", noise_var, 0.0, low_open=True)
    if num_iters is not None:
        num_iters = _validate.static_int("num_iters", num_iters, minimum=1)
    if horizon is None:
        if _validate.is_concrete(c) and np.any(np.asarray(c) != 0):
            raise ValueError("horizon is required when c != 0 (alpha = 1/(t (ln T)^c))")
    else:
        _validate.in_range("horizon", horizon, 1.0)

    # over GAUSS_KEPT_ARMS arms the Gaussian posterior's mean and scale are kept per
    # arm (see GAUSS_KEPT_ARMS)
    kept = posterior == "gauss" and num_arms >= GAUSS_KEPT_ARMS

    def _gauss_rows(stats):
        """``[2, K]`` posterior means ``S / (k + 1)`` and scales ``sqrt(s2 / (k + 1))``."""
        shrink = stats.counts + 1.0
        return jnp.stack([stats.sums / shrink, jnp.sqrt(noise_var / shrink)])

    def choose(key_tie, t, stats, succ, quant, arm_mask, changed, success=None):
        alpha = tail_level(t + 1, c, horizon)
        if posterior == "beta":
            a, b = 1.0 + succ, 1.0 + stats.counts - succ
            bits = numerics._iters(numerics.BETA_GRID_BITS, a.dtype, num_iters)
            # grid points and midpoints stay exact in the dtype (2^-23 in float32),
            # so every probe moves a bound by at least one cell
            bits = min(bits, jnp.finfo(a.dtype).nmant)
            index, quant = _beta_choose(
                a,
                b,
                quant,
                jnp.log(alpha),
                changed,
                success,
                arm_mask,
                bits,
                execution.fixed_bisection,
            )
        elif not kept:
            index = bayes_ucb_index(
                stats, succ, alpha, posterior=posterior, noise_var=noise_var
            )
        else:
            # the same two terms, read from the rows kept with the statistics
            z = numerics.normal_upper_quantile(alpha)
            index = stats.extra[0] + stats.extra[1] * z
        arm = arms.argmax_masked(index, arm_mask, key=key_tie, tie_break=tie_break)
        return arm, quant

    def init_fn(key, arm_mask):
        _, key_tie = _prng.split(key)
        stats = arms.init_stats(num_arms, variance=False, extra=2 * kept)
        if kept:
            stats = arms.with_extra(stats, _gauss_rows(stats))
        succ = jnp.zeros_like(stats.counts)
        # P(X > 0) = 1 (ln 0) and an infinite Mills ratio are exact for every (a, b)
        ones = jnp.ones_like(succ)
        quant = (succ, succ, jnp.full_like(succ, jnp.inf))
        quant += (numerics.beta_log_norm(ones, ones, integer=True), succ)
        t = jnp.zeros((), jnp.int32)
        arm, quant = choose(key_tie, t, stats, succ, quant, arm_mask, None)
        return BayesUCBState(stats, succ, quant, arm_mask, t, arm)

    def step_fn(state, key, reward):
        key_bin, key_tie = _prng.split(key)
        derive = _gauss_rows if kept else None
        stats = arms.update(state.stats, state.arm, reward, derive=derive)
        if posterior == "beta":
            succ, won = add_success(state.succ, state.arm, key_bin, reward)
        else:
            succ, won = state.succ, None
        t = state.t + 1
        arm, quant = choose(
            key_tie, t, stats, succ, state.quant, state.arm_mask, state.arm,
            None if won is None else won > 0,
        )  # fmt: skip
        return BayesUCBState(stats, succ, quant, state.arm_mask, t, arm)

    def output_fn(state):
        return arms.best_empirical(state.stats, state.arm_mask)

    return Policy(init_fn, step_fn, output_fn, "regret")
