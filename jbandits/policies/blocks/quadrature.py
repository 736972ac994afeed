"""Best-arm probabilities ``alpha_i = int f_i(x) prod_{j != i} F_j(x) dx`` of ``K``
independent posteriors by one shared, graded Gauss-Legendre grid: ``O(K G)`` work with
``G`` nodes independent of ``K`` (used by :mod:`jbandits.policies.blocks.posterior`).

(The quantity is Russo's, "Simple Bayesian Algorithms for Best-Arm Identification",
Operations Research 68(6), 2020, §2, and Shang et al.'s eq. (2), AISTATS 2020.)

Where the integrands live. Give every real arm ``j`` (posterior mean ``m_j``, standard
deviation ``s_j``) the window ``[lo_j, hi_j] = [m_j - A s_j, m_j + B s_j]`` (clipped to
``[0, 1]`` for Beta) outside which its mass is negligible (:data:`LOWER`,
:data:`UPPER`), and let ``x* = max_j lo_j``. Below ``x*`` the arm ``a`` with ``lo_a =
x*`` has ``F_a < F_a(x*)``, negligible, so every integrand but ``alpha_a``'s is
negligible there, and ``alpha_a``'s is bounded by ``f_a``, whose mass below ``x*`` is
``F_a(x*)``: every ``alpha_i`` is an integral over ``[x*, top]``, ``top = max_j hi_j``,
up to ``F_a(x*)`` (``ndtr(-8) = 6e-16`` for Gaussian; for Beta, whose lower tail is at
worst ``~ e^{-(k + 1)}`` at ``k`` standard deviations (``Beta(a, 1)``), ``A = 30``).
Above ``x*`` an arm's ``f_j`` and ``F_j`` vary only on ``[x*, hi_j]``, of length at
most ``(A + B) s_j`` since ``lo_j <= x*``: the narrow posteriors matter only just above
``x*``, and at a distance ``d`` above ``x*`` only arms with ``s_j >= d / (A + B)`` vary.

The grid. Panels start at ``x*``: :data:`UNIFORM` equal panels covering ``(A + B)
s_min`` (``s_min`` the smallest ``s_j`` of the arms with ``hi_j > x*``: every arm's
window above ``x*`` at the resolution of ``2 B / 16`` standard deviations per panel, as
the narrowest arm's own panels would have it), then :data:`GEOMETRIC` panels whose ends
grow geometrically up to ``top`` (ratio ``(D / D_0)^(1 / GEOMETRIC)``; at ``d`` the
panel is about ``d / 16`` (Gaussian) wide while the arms varying there have ``s_j >= d
/ 16``, for scale ratios ``s_max / s_min`` up to ~150 (Gaussian) / ~25 (Beta), and
coarser, still accurate on the tests' cases, beyond). :data:`NODES` Gauss-Legendre nodes
per panel.

At the nodes: Gaussian ``f_j`` and ``F_j = ndtr`` exactly; Beta densities relative to
their modes (no large normalising constant), ``F_j(x) = (M_j + int_{x*}^x g_j) / (M_j +
int_{x*}^{top} g_j)`` with ``M_j = int^{x*} g_j`` by the arm's own panels (:data:`OWN`
panels on ``[lo_j, hi_j]`` cut at ``x*``) and the cumulative Gauss-Legendre weights
inside a panel. ``prod_{j != i} F_j`` as prefix and suffix products over the arms (a
fold, one multiplication per arm and node): ``alpha`` is a sum of positive terms, so
small ``alpha_j`` (a dominant arm) keep their relative accuracy.

Cost: ``K`` densities and distribution functions at ``G = (UNIFORM + GEOMETRIC) NODES``
shared nodes (and, Beta, ``OWN NODES`` own nodes per arm): ``O(K G)``; the rule it
replaces merged every arm's panels, ``O(K^2)`` nodes x arms.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from jax.scipy.special import log_ndtr

from jbandits.core.types import Array

#: window ends in posterior standard deviations below / above the mean (module docstring)
LOWER = {"bernoulli": 30.0, "gaussian": 8.0}
UPPER = {"bernoulli": 12.0, "gaussian": 8.0}
#: equal panels per ``(LOWER + UPPER) s_min`` above ``x*`` (1.5 / 1 sd each)
UNIFORM = {"bernoulli": 28, "gaussian": 16}
#: geometric panels from there to the top
GEOMETRIC = 96
#: Beta: each arm's own panels on its window (for its mass below ``x*``)
OWN = 28
NODES = 6
#: ``log F`` below it counts as it (``F < 1e-30``: its arm's density is negligible there)
LOG_FLOOR = -69.0


def gauss_legendre(q: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Nodes ``u`` and weights ``w`` of the ``q``-point Gauss-Legendre rule on
    ``[0, 1]``, and the cumulative weights ``C`` (``C[k, l] = int_0^{u_k} ell_l``, the
    ``ell_l`` the Lagrange basis on ``u``: ``int_0^{u_k} g ~ sum_l C[k, l] g(u_l)``)."""
    x, w = np.polynomial.legendre.leggauss(q)
    u, w = (x + 1.0) / 2.0, w / 2.0
    powers = np.arange(q)
    vander = u[:, None] ** powers[None, :]  # [k, l] = u_k^l
    integrals = u[:, None] ** (powers[None, :] + 1) / (powers[None, :] + 1)
    cumulative = integrals @ np.linalg.inv(vander)
    return u, w, cumulative


_U, _W, _C = gauss_legendre(NODES)


def _rule(ends: Array) -> tuple[Array, Array, Array]:
    """Nodes and weights ``[..., P, q]`` and widths ``[..., P]`` of the panels between
    consecutive ``ends`` ``[..., P + 1]``."""
    dtype = ends.dtype
    left, width = ends[..., :-1], ends[..., 1:] - ends[..., :-1]
    nodes = left[..., None] + width[..., None] * jnp.asarray(_U, dtype)
    return nodes, width[..., None] * jnp.asarray(_W, dtype), width


def shared_grid(family: str, mean: Array, scale: Array, arm_mask: Array):
    """``(nodes [P, q], weights [P, q], widths [P], x*)`` of the shared grid (module
    docstring); ``mean``, ``scale`` finite at every arm."""
    lower, upper, unit = LOWER[family], UPPER[family], UNIFORM[family]
    lo, hi = mean - lower * scale, mean + upper * scale
    if family == "bernoulli":
        lo, hi = jnp.clip(lo, 0.0, 1.0), jnp.clip(hi, 0.0, 1.0)
    start = jnp.max(jnp.where(arm_mask, lo, -jnp.inf))
    top = jnp.max(jnp.where(arm_mask, hi, -jnp.inf))
    live = arm_mask & (hi > start)
    s_min = jnp.min(jnp.where(live, scale, jnp.inf))
    s_min = jnp.where(
        jnp.isfinite(s_min), s_min, jnp.max(jnp.where(arm_mask, scale, 0))
    )
    dtype = mean.dtype
    # the equal panels: the narrowest window above x*, or half the span if that is less
    first = jnp.maximum(jnp.minimum((lower + upper) * s_min, 0.5 * (top - start)), 0)
    first = jnp.where(first > 0, first, (lower + upper) * s_min)
    even = first * jnp.arange(unit + 1, dtype=dtype) / unit
    ratio = jnp.maximum((top - start) / first, 1.0)
    steps = jnp.arange(1, GEOMETRIC + 1, dtype=dtype) / GEOMETRIC
    graded = first * ratio**steps
    ends = start + jnp.concatenate([even, graded])
    if family == "bernoulli":
        ends = jnp.minimum(ends, 1.0)
    nodes, weights, width = _rule(ends)
    return nodes, weights, width, start


def _beta_log_rel(a: Array, b: Array, x: Array) -> Array:
    """``log`` of the ``Beta(a, b)`` density relative to its value at the mode
    (``a``, ``b`` broadcast against ``x``; shapes ``>= 1``)."""
    n = a + b - 2.0
    mode = jnp.where(n > 0, (a - 1.0) / jnp.maximum(n, 1.0), 0.5)
    up, down = a > 1.0, b > 1.0  # the x^(a-1), (1 - x)^(b-1) factors present
    lo = jnp.where(up, (a - 1.0) * jnp.log1p((x - mode) / jnp.where(up, mode, 1.0)), 0)
    hi = jnp.where(
        down, (b - 1.0) * jnp.log1p((mode - x) / jnp.where(down, 1.0 - mode, 1.0)), 0
    )
    return lo + hi


def beta_parts(a, b, mean, scale, nodes, weights, width, start):
    """Beta densities and distribution functions ``[K, P, q]`` at the shared nodes
    (module docstring); ``a``, ``b``, ``mean``, ``scale`` ``[K]``."""
    dtype = nodes.dtype
    z = jnp.linspace(-LOWER["bernoulli"], UPPER["bernoulli"], OWN + 1, dtype=dtype)
    own_ends = jnp.clip(mean[:, None] + scale[:, None] * z, 0.0, start)  # [K, OWN + 1]
    own_nodes, own_weights, _ = _rule(own_ends)
    own = jnp.exp(_beta_log_rel(a[:, None, None], b[:, None, None], own_nodes))
    below = jnp.sum(own * own_weights, axis=(-2, -1))  # [K]
    a, b = a[:, None, None], b[:, None, None]
    g = jnp.exp(_beta_log_rel(a, b, nodes[None]))  # [K, P, q]
    per_panel = jnp.sum(g * weights[None], axis=-1)  # [K, P]
    before = jax.lax.associative_scan(jnp.add, per_panel, axis=-1) - per_panel
    inside = jnp.einsum("kpl,ml->kpm", g, jnp.asarray(_C, dtype)) * width[None, :, None]
    above = jnp.sum(per_panel, axis=-1)[:, None] - before - per_panel  # later panels
    norm = (below + jnp.sum(per_panel, axis=-1))[:, None, None]
    cdf = (below[:, None, None] + before[..., None] + inside) / norm
    tail = (above[..., None] + (per_panel[..., None] - inside)) / norm  # 1 - F
    return g / norm, _log_cdf(cdf, tail)


def _log_cdf(cdf: Array, tail: Array) -> Array:
    """``log F`` from ``F`` and ``1 - F`` (each accurate where it is small): ``log1p(-(1
    - F))`` near 1, so that a product of many ``F ~ 1`` keeps its accuracy."""
    tiny = jnp.finfo(cdf.dtype).tiny
    near_one = tail < 0.5
    safe_tail = jnp.where(near_one, jnp.clip(tail, 0.0, 0.5), 0.0)
    return jnp.where(near_one, jnp.log1p(-safe_tail), jnp.log(jnp.clip(cdf, tiny, 1.0)))


def gaussian_parts(mean: Array, scale: Array, nodes: Array) -> tuple[Array, Array]:
    """Gaussian densities and distribution functions ``[K, P, q]`` at the nodes."""
    z = (nodes[None] - mean[:, None, None]) / scale[:, None, None]
    density = jnp.exp(-0.5 * z * z) / (scale[:, None, None] * np.sqrt(2.0 * np.pi))
    return density, log_ndtr(z)


def alpha_from_parts(density: Array, log_cdf: Array, weights: Array) -> Array:
    """``alpha_i = sum_nodes w f_i prod_{j != i} F_j`` ``[K]`` from ``[K, P, q]``
    densities and log distribution functions (padded arms: density 0, ``log F = 0``):
    ``prod_{j != i} F_j = exp(sum_j log F_j - log F_i)``, ``log F`` floored at
    :data:`LOG_FLOOR` (where ``F_i`` is below it, ``f_i`` is negligible)."""
    log_cdf = jnp.maximum(log_cdf, LOG_FLOOR)
    total = jnp.sum(log_cdf, axis=0)
    return jnp.sum(
        density * jnp.exp(total[None] - log_cdf) * weights[None], axis=(-2, -1)
    )
