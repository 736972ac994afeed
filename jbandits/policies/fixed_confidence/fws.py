"""Frank-Wolfe Sampling (FWS; Wang, Tzeng & Proutière, "Fast Pure Exploration via
Frank-Wolfe", NeurIPS 2021) for best-arm identification, with Chernoff's GLR stopping
rule. ``benchmarks/notes_fc_baselines.md`` (FWS) records what the paper and the
authors' code (``rctzeng/NeurIPS2021-FWS``, ``standard/samplingrules.jl``) say and
what was decided.

FWS runs one Frank-Wolfe step per sample on ``F(x) = min_{j != i*} f_j(x)``, the
lower-bound objective at the empirical means ``mu`` (``i* = argmax mu``, lowest
index), with ``f_j(x) = x_{i*} d(mu_{i*}, m_j) + x_j d(mu_j, m_j)``, ``m_j = (x_{i*}
mu_{i*} + x_j mu_j) / (x_{i*} + x_j)``, whose gradient ``g_j`` has the two entries
``a_j = d(mu_{i*}, m_j)`` (at ``i*``) and ``b_j = d(mu_j, m_j)`` (at ``j``).

Every real arm is pulled once; ``x`` starts uniform over the real arms. At every time
``t`` (samples observed) the policy stops if ``Z(t) > beta(t, delta)``
(:mod:`jbandits.policies.blocks.glr`; recommend the empirical best), else:

1. forced exploration: ``z = (1/K, ..., 1/K)`` when ``floor(t/K)`` is a perfect square
   or the empirical best is not unique (``mu`` outside the set where ``F`` is
   defined);
2. else ``F_r = {j != i* : f_j(x) < min_k f_k(x) + r_t}``, ``r_t = t^(-0.9)/K`` (the
   r-subdifferential); with one element ``z`` is the vertex ``argmax_i g_j[i]``
   (``i*`` or ``j``; entries within a relative ``2^-20`` tie, the lower index
   wins); with more, ``z`` solves the matrix
   game ``max_{z in simplex} min_{j in F_r} <z - x, g_j>`` (:func:`game_direction`);
3. ``x <- x (t - 1)/t + z/t``; pull ``argmax_i x_i / (N_i / t)``, the ratios rounded
   to a multiple of ``2^-20`` (as ``tracking.weights_of``) and ties to the lowest
   index: ``x`` is an average of vertices and ``N/t`` of unit vectors, so ratios equal
   in exact arithmetic (``x_i = N_i / t``) are frequent, and the rounding of ``x``
   would otherwise decide them.

K is the number of real arms throughout.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from jbandits.core import registry
from jbandits.core.types import Array, Policy
from jbandits.policies.blocks import arms, glr, tracking
from jbandits.policies.blocks import fixed_confidence as fc

# bisection steps on the game's value (game_direction): the bracket shrinks from at
# most max(a, b) to below one ulp of the value in either dtype
GAME_ITERS = {"float32": 40, "float64": 64}
R_EXPONENT = -0.9  # r_t = t^(-0.9) / K (the authors' code)
TIE = 2.0**-20  # gradient entries within this relative distance tie (fw_direction)


def is_square(n: Array) -> Array:
    """Whether the non-negative int ``n`` is a perfect square (0 is)."""
    root = jnp.floor(jnp.sqrt(n.astype(jnp.float32))).astype(n.dtype)
    root = root - (root * root > n) + ((root + 1) * (root + 1) <= n)
    return root * root == n


def _g(s: Array, w: Array, a, b, c, rows) -> Array:
    """``G(s, w) = s + sum_{j in rows} max(w + c_j - s a_j, 0) / b_j`` for ``s [S]``:
    the mass that ``z_{i*} = s`` and the cheapest ``z_j`` reaching value ``w`` need."""
    need = jnp.maximum(w + c[None, :] - s[:, None] * a[None, :], 0.0) / b[None, :]
    return s + jnp.sum(jnp.where(rows[None, :], need, 0.0), axis=-1)


def _candidates(w: Array, a, c, rows) -> Array:
    """``[K + 2]``: the breakpoints where ``G(., w)`` (convex, piecewise linear in
    ``s``) can be least: 0, 1 and ``clip((w + c_j)/a_j, 0, 1)`` (0 off ``rows``)."""
    kink = jnp.clip((w + c) / a, 0.0, 1.0)
    return jnp.concatenate(
        [jnp.zeros(2, a.dtype).at[1].set(1.0), jnp.where(rows, kink, 0.0)]
    )


def game_direction(a: Array, b: Array, c: Array, rows: Array) -> tuple[Array, Array]:
    """``(z_rows, z_star)``: a solution of ``max_{z in simplex} min_{j in rows} (z_{i*}
    a_j + z_j b_j - c_j)``, the FW direction ``<z - x, g_j> = z.g_j - f_j(x)`` with
    ``c_j = f_j(x)`` (the authors solve this linear program with an interior-point
    solver; here it is solved through its structure).

    Arms outside ``rows`` and ``i*`` get ``z = 0`` (they raise no row). With ``z_{i*}
    = s``, value ``w`` is reachable iff ``G(s, w) <= 1``; ``H(w) = min_s G(s, w)`` is
    attained at a breakpoint (:func:`_candidates`) and increases with ``w``, so the
    game's value is the largest ``w`` with ``H(w) <= 1``: found by bisection
    (:data:`GAME_ITERS` steps) from ``[min_j (a_j - c_j), min_j (max(a_j, b_j) -
    c_j)]`` (``z = e_{i*}`` reaches the lower end; no ``z`` passes the upper). Then
    ``s`` is the largest breakpoint with ``G(s, w) <= 1 + 2^-20`` (the game's solutions are
    often not unique: ``G(., w)`` is flat where ``sum a_j / b_j = 1``, e.g. one row
    with ``x_{i*} = x_j`` for Gaussian arms; the largest ``s`` is a choice that the
    rounding of equal values cannot flip), ``z_j = max(w + c_j - s a_j,
    0)/b_j`` rounded to a multiple of ``2^-20`` (as ``tracking.weights_of``), and
    ``z_{i*} = max(1 - sum_j z_j, 0)``. ``a, b > 0`` on ``rows``.
    """
    dtype = a.dtype
    inf = jnp.asarray(jnp.inf, dtype)
    some = jnp.any(rows)  # none: the caller discards the result
    lo = jnp.where(some, jnp.min(jnp.where(rows, a - c, inf)), 0.0)
    hi = jnp.where(some, jnp.min(jnp.where(rows, jnp.maximum(a, b) - c, inf)), 0.0)
    b = jnp.where(rows, b, 1.0)
    a_safe = jnp.where(rows, a, 1.0)

    def body(_, bracket):
        lo, hi = bracket
        mid = (lo + hi) / 2.0
        ok = jnp.min(_g(_candidates(mid, a_safe, c, rows), mid, a, b, c, rows)) <= 1.0
        return jnp.where(ok, mid, lo), jnp.where(ok, hi, mid)

    iters = GAME_ITERS["float64" if dtype == jnp.float64 else "float32"]
    w, _ = jax.lax.fori_loop(0, iters, body, (lo, hi))
    cand = _candidates(w, a_safe, c, rows)
    # within TIE of the budget: at the value, G(s, w) = 1 exactly at the ends of a
    # flat stretch (e.g. s = 1 when w = a_k - c_k), where rounding would decide
    feasible = _g(cand, w, a, b, c, rows) <= 1.0 + TIE
    s = jnp.where(jnp.any(feasible), jnp.max(jnp.where(feasible, cand, -1.0)), 1.0)
    z = jnp.where(rows, jnp.maximum(w + c - s * a, 0.0) / b, 0.0)
    z = tracking.on_grid(z)
    return z, jnp.maximum(1.0 - jnp.sum(z), 0.0)


def gradient_entries(family: str, top, means, x_top, x, others, sigma):
    """``(a, b)``: ``a_j = d(mu_{i*}, m_j)``, ``b_j = d(mu_j, m_j)`` on ``others`` (0
    elsewhere), from the differences to the midpoint ``mu_{i*} - m_j = gap w_j`` and
    ``m_j - mu_j = gap w_{i*}`` (``gap = mu_{i*} - mu_j``, ``w`` the two arms' shares of
    ``x_{i*} + x_j``), as :mod:`jbandits.policies.blocks.glr` evaluates the GLR: no
    cancellation, and for Gaussian arms ``a_j = b_j`` exactly when ``x_{i*} = x_j``.
    Bernoulli: glr's cancellation-free ``kl`` to the midpoint."""
    gap = jnp.where(others, top - means, 1.0)
    total = jnp.where(others, x_top + x, 1.0)
    w_top, w_j = x_top / total, x / total
    up, down = gap * w_j, gap * w_top
    if family == "gaussian":
        two_var = 2.0 * sigma * sigma
        a, b = up * up / two_var, down * down / two_var
    else:
        a, b = glr._bernoulli_pair(top, jnp.where(others, means, 0.0), gap, w_top, w_j)
    return jnp.where(others, a, 0.0), jnp.where(others, b, 0.0)


def fw_direction(family: str, means: Array, x: Array, t: Array, arm_mask: Array, sigma):
    """The step's ``z`` ``[K]`` (module docstring, items 1-2)."""
    size = means.shape[-1]
    idx = jnp.arange(size)
    dtype = x.dtype
    k_real = jnp.sum(arm_mask).astype(jnp.int32)
    best = arms.argmax_masked(means, arm_mask)
    others = arm_mask & (idx != best)
    top = means[best]
    tied = jnp.any(others & (top - means <= 0.0))
    uniform = jnp.where(arm_mask, 1.0 / k_real.astype(dtype), 0.0)
    forced = tied | is_square(t // k_real)
    a, b = gradient_entries(family, top, means, x[best], x, others, sigma)
    xb = x[best]
    f = xb * a + x * b
    low = jnp.min(jnp.where(others, f, jnp.inf))
    r = jnp.asarray(t, dtype) ** R_EXPONENT / k_real.astype(dtype)
    rows = others & (f < low + r)
    single = jnp.sum(rows) == 1
    j = arms.argmax_masked(rows.astype(dtype), rows)
    # entries equal in exact arithmetic (Gaussian x_{i*} = x_j; Bernoulli mu_{i*} = 1 -
    # mu_j too) must tie whatever the rounding: within a relative TIE (2^-20, the
    # weight grid's resolution) they do, and the lower index wins
    tie = jnp.abs(a[j] - b[j]) <= TIE * jnp.maximum(a[j], b[j])
    star_first = jnp.where(tie, best < j, a[j] > b[j])
    vertex = arms.one_hot(jnp.where(star_first, best, j), size).astype(dtype)
    lp_safe = rows & ~forced & ~single
    z_rows, z_star = game_direction(
        jnp.where(lp_safe, a, 1.0), jnp.where(lp_safe, b, 1.0), f, lp_safe
    )
    game = z_rows + arms.one_hot(best, size) * z_star
    return jnp.where(forced, uniform, jnp.where(single, vertex, game))


@registry.policy("fws", shared=fc.CHERNOFF)
def fws(
    num_arms: int,
    *,
    chernoff: fc.Chernoff,
) -> Policy:
    """Frank-Wolfe Sampling (Wang, Tzeng & Proutière 2021) with GLR stopping.

    Args:
      num_arms: static K (including padded arms).

    Output: the recommended arm (``[] int32``); the engine's ``num_pulls`` is the
    stopping time and the run's budget its cap. Cost per step: ``O(K^2)`` per
    bisection step of the game (:func:`game_direction`), 40 steps in float32.
    """
    _, family, sigma, _ = chernoff

    def start(stats, arm_mask):
        # the Frank-Wolfe iterate x [K]: uniform over the real arms, 0 at padded ones
        return jnp.where(arm_mask, 1.0 / jnp.sum(arm_mask), 0.0).astype(
            stats.counts.dtype
        )

    def choose(state, obs, key):
        del key
        mask = state.arm_mask
        counts = jnp.maximum(obs.stats.counts, 1.0)
        dtype = counts.dtype
        tf = obs.t.astype(dtype)
        x = state.extra
        z = fw_direction(family, arms.mean(obs.stats), x, obs.t, mask, sigma)
        decide = ~obs.forced & ~obs.stop
        x = jnp.where(decide, x * ((tf - 1.0) / tf) + z / tf, x)
        ratio = tracking.on_grid(x / (counts / tf))
        return fc.Decision(arms.argmax_masked(ratio, mask), x)

    return fc.glr_policy(num_arms, choose, chernoff, start=start)
