"""Truth helpers: best arm, S_tau, gaps and complexity quantities.

Host-side NumPy float64: these feed oracle-tuned baselines (UCBE, UCBEV, GapE, GapE-V,
UGapEb) and tests. Every function takes the true means of one instance and an optional
``arm_mask``; masked (padded) arms are ignored. A relevant gap of 0 makes a complexity
infinite; oracle tuning must then be refused (:func:`oracle_parameter`).
"""

from __future__ import annotations

import math

import numpy as np


def real_arms(values, arm_mask=None) -> np.ndarray:
    """The entries of one instance's ``[K]`` ``values`` at its real arms (float64).

    ``arm_mask`` (``[K]`` bool) marks the real arms; None means all are real.

    Raises:
      ValueError: ``values`` is not one instance ``[K]``, or ``arm_mask`` has another
        shape.
    """
    values = np.asarray(values, dtype=np.float64)
    if values.ndim != 1:
        raise ValueError(f"expected one instance [K], got shape {values.shape}")
    if arm_mask is None:
        return values
    mask = np.asarray(arm_mask, dtype=bool)
    if mask.shape != values.shape:
        raise ValueError(f"arm_mask shape {mask.shape} != {values.shape}")
    return values[mask]


_real = real_arms  # the old private name (jbandits.analysis.oracles still uses it)


def best_arm(means, arm_mask=None) -> int:
    """Index (in the padded numbering) of the largest real mean, first on ties."""
    means = np.asarray(means, dtype=np.float64)
    score = means if arm_mask is None else np.where(arm_mask, means, -np.inf)
    return int(np.argmax(score))


def s_tau(means, threshold: float, arm_mask=None) -> np.ndarray:
    """``[K] bool``: arms with mean >= threshold (ties count as above; padded False)."""
    means = np.asarray(means, dtype=np.float64)
    above = means >= threshold
    return above if arm_mask is None else above & np.asarray(arm_mask, bool)


# ----------------------------------------------------------------- thresholding (TBP)
def tbp_gaps(
    means, threshold: float, epsilon: float = 0.0, arm_mask=None
) -> np.ndarray:
    """Delta_i = |mu_i - tau| + epsilon over real arms."""
    return np.abs(real_arms(means, arm_mask) - threshold) + epsilon


def _safe_inv_sq(gaps: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore"):
        return np.where(gaps > 0, 1.0 / np.maximum(gaps, 1e-300) ** 2, np.inf)


def h1(gaps) -> float:
    """H1 = sum_i 1 / Delta_i^2 (inf if a gap is 0)."""
    return float(np.sum(_safe_inv_sq(np.asarray(gaps, np.float64))))


def h2(gaps) -> float:
    """H2 = max_i i / Delta_(i)^2 over gaps sorted increasingly (Audibert, Bubeck,
    Munos, COLT 2010; Mukherjee et al., IJCAI 2017,
    print "min", which contradicts their H1 <= log(2K) H2)."""
    g = np.sort(np.asarray(gaps, np.float64))
    ranks = np.arange(1, g.size + 1)
    return float(np.max(ranks * _safe_inv_sq(g)))


def xi(gaps, sigmas, b: float = 1.0) -> np.ndarray:
    """xi_i = sigma_i + sqrt(sigma_i^2 + (16/3) b Delta_i)."""
    gaps = np.asarray(gaps, np.float64)
    sigmas = np.asarray(sigmas, np.float64)
    return sigmas + np.sqrt(sigmas**2 + (16.0 / 3.0) * b * gaps)


def hsigma1(gaps, sigmas) -> float:
    """Mukherjee et al. (IJCAI 2017, Section 3) H_{sigma,1} = sum_i xi_i / Delta_i^2
    (unsquared xi, as printed)."""
    return float(np.sum(xi(gaps, sigmas) * _safe_inv_sq(np.asarray(gaps, np.float64))))


def hsigma2(gaps, sigmas) -> float:
    """H_{sigma,2} = max_i i / tilde Delta_(i)^2 with tilde Delta_i^2 = Delta_i^2 / xi_i."""
    gaps = np.asarray(gaps, np.float64)
    with np.errstate(divide="ignore"):
        inv = np.where(
            gaps > 0, xi(gaps, sigmas) / np.maximum(gaps, 1e-300) ** 2, np.inf
        )
    # increasing tilde Delta^2  <=>  decreasing inv
    inv = np.sort(inv)[::-1]
    return float(np.max(np.arange(1, inv.size + 1) * inv))


def hsigma_gabillon(gaps, sigmas, b: float = 1.0) -> float:
    """Gabillon et al. (2011) H^sigma = sum_i xi_i(b)^2 / Delta_i^2 (squared xi)."""
    gaps = np.asarray(gaps, np.float64)
    return float(np.sum(xi(gaps, sigmas, b) ** 2 * _safe_inv_sq(gaps)))


# ------------------------------------------------------------- best-arm identification
def bai_gaps(means, arm_mask=None) -> np.ndarray:
    """Delta_i = mu* - mu_i, and Delta_{i*} = min_{j != i*} Delta_j (Audibert et al.)."""
    mu = real_arms(means, arm_mask)
    if mu.size < 2:
        raise ValueError("need at least 2 real arms")
    order = np.argsort(-mu, kind="stable")
    gaps = mu[order[0]] - mu
    gaps[order[0]] = mu[order[0]] - mu[order[1]]
    return gaps


def h_gape(means, b: float = 1.0, arm_mask=None) -> float:
    """GapE's H = sum_k b^2 / Delta_k^2 with BAI gaps."""
    return b * b * h1(bai_gaps(means, arm_mask))


# ---------------------------------------------------------------- (epsilon, m) top-m
def topm_gaps(means, m: int, arm_mask=None) -> np.ndarray:
    """Delta_k = mu_k - mu_(m+1) for the m best arms, mu_(m) - mu_k otherwise."""
    mu = real_arms(means, arm_mask)
    if not 1 <= m < mu.size:
        raise ValueError(f"m must satisfy 1 <= m < K, got m={m}, K={mu.size}")
    srt = np.sort(mu)[::-1]
    top = np.zeros(mu.size, bool)
    top[np.argsort(-mu, kind="stable")[:m]] = True
    return np.where(top, mu - srt[m], srt[m - 1] - mu)


def h_epsilon(means, m: int, epsilon: float, b: float = 1.0, arm_mask=None) -> float:
    """Gabillon et al. (NIPS 2012), Eq. 6: H_eps = sum_i b^2 / max((Delta_i + eps) / 2,
    eps)^2."""
    gaps = topm_gaps(means, m, arm_mask)
    denom = np.maximum((gaps + epsilon) / 2.0, epsilon)
    return float(b * b * np.sum(_safe_inv_sq(denom)))


def top_m_mask(means, m: int, arm_mask=None) -> np.ndarray:
    """``[K] bool`` of the m best real arms (first on ties)."""
    means = np.asarray(means, np.float64)
    score = means if arm_mask is None else np.where(arm_mask, means, -np.inf)
    out = np.zeros(means.shape, bool)
    out[np.argsort(-score, kind="stable")[:m]] = True
    return out


def oracle_parameter(name: str, numerator: float, complexity: float) -> float:
    """``numerator / complexity`` for oracle tuning; refuses degenerate instances."""
    if not math.isfinite(complexity) or complexity <= 0:
        raise ValueError(
            f"{name}: the complexity is {complexity} (a gap is 0), so the oracle "
            "parameter would be 0; this instance cannot be used for oracle tuning"
        )
    return numerator / complexity
