"""Posterior samples and best-arm probabilities of the two conjugate models of Bayesian
best-arm identification.

Models (Shang, de Heide, Kaufmann, Ménard, Valko, "Fixed-Confidence Guarantees for
Bayesian Best-Arm Identification", AISTATS 2020, §2.1; the Beta-Bernoulli model is also
that of Russo, "Simple Bayesian Algorithms for Best-Arm Identification", Operations
Research 68(6), 2020, experiment 1), for an arm with ``N`` pulls and reward sum ``S``:

* ``"bernoulli"``: uniform ``Beta(1, 1)`` prior, posterior ``Beta(1 + S, 1 + N - S)``.
  ``S`` is the sum of the raw rewards (no binarisation), so rewards must lie in
  ``[0, 1]``; a shape below 1 (a reward outside) gives NaN.
* ``"gaussian"``: known standard deviation ``sigma`` and the improper flat prior,
  posterior ``N(mu_hat, sigma^2 / N)``. It is undefined before the arm's first pull:
  an unpulled real arm gives NaN (policies pull every arm once first, as Shang et al.
  prescribe). Russo's Gaussian experiments use ``N(0, 1)`` priors instead; that model is
  not provided here.

:func:`sample_posterior` draws one ``theta ~ Pi_n`` ([K]; padded arms ``-inf``). Beta
draws come from the library's sampler :func:`jbandits.policies.blocks.sampling.beta`
(as Thompson sampling's; replayable from its raw draws, so a plain-Python reference can
reproduce them), Gaussian draws are ``mu_hat + sigma * z / sqrt(N)`` with ``z`` the
``[K]`` standard normals of :func:`jbandits.core.prng.normal` (the bits of
``jax.random.normal(key, (K,))``).

:func:`best_arm_probabilities` returns ``alpha_i = Pi_n(theta_i > max_{j != i}
theta_j) = int f_i(x) prod_{j != i} F_j(x) dx`` (Russo 2020, §2; Shang et al. eq. (2))
by the fixed composite Gauss-Legendre quadrature of
:mod:`jbandits.policies.blocks.quadrature` (no Monte Carlo, a fixed number of nodes): one
grid shared by all arms, starting at ``x* = max_j (m_j - A s_j)`` (below it every
integrand is negligible), equal panels at the narrowest relevant posterior's scale just
above ``x*`` and panels growing geometrically beyond (where only the wider posteriors
still vary), ``O(K G)`` work with ``G`` independent of ``K``. Gaussian ``F_j`` is
``ndtr``; the Beta density is evaluated relative to its mode (no large normalising
constant cancelled) and its ``F_j`` is its cumulative quadrature (own panels below
``x*``, the shared ones above).

Accuracy, against scipy's adaptive quadrature (float64, ``epsabs=1e-14``) on the cases of
``tests/test_posterior.py`` (counts 0..10^5, narrow posteriors against wide ones, exact
ties, zero successes, best arms at ``alpha ~ 0.999``) and against an mpmath / scipy
float64 reference at ``K = 100`` (spread, concentrated at ``N`` in the thousands, one
dominant arm at ``alpha ~ 1 - 1e-6``): see the tests and
``benchmarks/notes_fixed_confidence.md`` §6 for the measured errors. Russo's stopping
rule ``max_i alpha_i >= c`` with ``c <= 0.999`` leaves a margin ``1 - c >= 1e-3``, orders
above them.

Cost per call: ``O(K G)`` elementwise work, ``G = (UNIFORM + GEOMETRIC) NODES`` shared
nodes (the rule before it merged every arm's panels: ``O(K^2)`` nodes x arms).
"""

from __future__ import annotations

import jax.numpy as jnp

from jbandits.core import prng as _prng
from jbandits.core import validate as _validate
from jbandits.core.types import Array, ArrayLike, Key
from jbandits.policies.blocks import arms, quadrature
from jbandits.policies.blocks import sampling as _sampling

FAMILIES = ("bernoulli", "gaussian")


def _check_family(family: str) -> None:
    _validate.choice("family", family, FAMILIES)


def beta_shapes(stats: arms.ArmStats) -> tuple[Array, Array]:
    """``(1 + S, 1 + N - S)``: the Beta posterior shapes of the uniform prior."""
    return 1.0 + stats.sums, 1.0 + (stats.counts - stats.sums)


def gaussian_scale(stats: arms.ArmStats, sigma: ArrayLike) -> Array:
    """``sigma / sqrt(N)`` (NaN where ``N = 0``: the improper prior has no posterior)."""
    counts = stats.counts
    sigma = jnp.asarray(sigma, counts.dtype)
    return jnp.where(counts > 0, sigma / jnp.sqrt(jnp.maximum(counts, 1.0)), jnp.nan)


def sample_posterior(
    family: str,
    key: Key,
    stats: arms.ArmStats,
    arm_mask: Array,
    sigma: ArrayLike = 1.0,
) -> Array:
    """One draw ``theta ~ Pi_n`` ([K]); padded arms ``-inf`` (module docstring).

    ``"bernoulli"``: :func:`jbandits.policies.blocks.sampling.beta` of
    :func:`beta_shapes` under ``key``. ``"gaussian"``: ``mu_hat + sigma * z /
    sqrt(N)``, ``z = prng.normal(key, (K,))``; NaN at unpulled real arms.
    """
    _check_family(family)
    if family == "bernoulli":
        a, b = beta_shapes(stats)
        theta = _sampling.beta(key, a, b)
    else:
        counts = stats.counts
        z = _prng.normal(key, counts.shape, counts.dtype)
        theta = arms.mean(stats) + gaussian_scale(stats, sigma) * z
    return jnp.where(arm_mask, theta, -jnp.inf)


def _moments(family, stats, arm_mask, sigma):
    """Posterior means and standard deviations ``[K]`` (padded arms: any finite)."""
    if family == "gaussian":
        return arms.mean(stats), gaussian_scale(stats, sigma)
    a, b = beta_shapes(stats)
    total = a + b
    mean = a / total
    return mean, jnp.sqrt(a * b / (total * total * (total + 1.0)))


def best_arm_probabilities(
    family: str,
    stats: arms.ArmStats,
    arm_mask: Array,
    sigma: ArrayLike = 1.0,
) -> Array:
    """``[K]``: ``alpha_i = Pi_n(theta_i > max_{j != i} theta_j)`` over the real arms
    (padded arms 0), by the fixed quadrature of the module docstring.

    Accurate to about ``5e-7`` (float32) and ``1e-10`` (float64; module docstring),
    enough for Russo's stopping rule ``max alpha >= c`` with ``c <= 0.999``.
    ``"gaussian"`` needs every real arm pulled (NaN otherwise: the improper prior has
    no posterior before the first pull).
    """
    _check_family(family)
    arm_mask = jnp.asarray(arm_mask, bool)
    mean, scale = _moments(family, stats, arm_mask, sigma)
    undefined = jnp.any(arm_mask & jnp.isnan(scale))
    safe_mean = jnp.where(arm_mask & ~jnp.isnan(scale), mean, 0.5)
    safe_scale = jnp.where(arm_mask & ~jnp.isnan(scale), scale, 1.0)
    nodes, weights, width, start = quadrature.shared_grid(
        family, safe_mean, safe_scale, arm_mask
    )
    if family == "gaussian":
        density, log_cdf = quadrature.gaussian_parts(safe_mean, safe_scale, nodes)
    else:
        a, b = beta_shapes(stats)
        density, log_cdf = quadrature.beta_parts(
            a, b, safe_mean, safe_scale, nodes, weights, width, start
        )
    real = arm_mask[:, None, None]
    density = jnp.where(real, density, 0.0)
    log_cdf = jnp.where(real, log_cdf, 0.0)
    alpha = quadrature.alpha_from_parts(density, log_cdf, weights)
    alpha = jnp.where(arm_mask, alpha, 0.0)
    return jnp.where(undefined, jnp.nan, alpha)
