"""Oracle tunings: exploration parameters computed from a known instance (host, float64).

Several papers run their baselines with the parameter their theory prescribes, computed
from the true means (and variances) of the instance. These choices live here, apart
from the policies, which take ``a`` (and ``b``) as plain traced inputs:

* :func:`ucbe_oracle_a`, :func:`ucbev_oracle_a`: UCBE / UCBEV for thresholds
  (Mukherjee, Naveen, Sudarsanam, Ravindran, IJCAI 2017, Sec. 4; Locatelli, Gutzeit,
  Carpentier, ICML 2016), in the paper's form or the authors' experiment code's.
* :func:`ucb_e_oracle_a`: UCB-E (Audibert, Bubeck, Munos, COLT 2010, Thm 1).
* :func:`gape_oracle_params`, :func:`gape_v_oracle_params`: GapE / GapE-V (Gabillon,
  Ghavamzadeh, Lazaric, Bubeck, NIPS 2011) as tuned by Lalitha, Kalantari, Ma, Deoras,
  Kveton (UAI 2023, Sec. 5); :func:`reward_range` is their range ``b``.
* :func:`ugapeb_oracle_a`: UGapEb (Gabillon, Ghavamzadeh, Lazaric, NIPS 2012, Thm 1).

Every function takes one instance (``means [K]``, optional ``arm_mask``; masked arms
are ignored) and raises ValueError where the complexity is infinite (a relevant gap
of 0), through :func:`jbandits.analysis.truth.oracle_parameter`.
"""

from __future__ import annotations

import math

import numpy as np

from jbandits.analysis import truth
from jbandits.analysis.tstar import characteristic_time as characteristic_time
from jbandits.core import validate as _validate

VARIANTS = ("paper", "authors_code")


# ------------------------------------------------------------------ thresholding
def authors_code_arms(means, arm_mask=None) -> np.ndarray:
    """Real means the authors' H sums over: arm K and every arm with mean == mu_K out."""
    mu = truth._real(means, arm_mask)
    return mu[_authors_code_keep(mu)]


def _authors_code_keep(mu: np.ndarray) -> np.ndarray:
    """``[K] bool``: the real arms of :func:`authors_code_arms` (``mu`` real means)."""
    keep = np.zeros(mu.size, bool)
    keep[:-1] = mu[:-1] != mu[-1]
    return keep


def _thresholding_instance(means, variances, budget, variant, arm_mask, pulls: int):
    """UCBE's / UCBEV's instance: ``(mu, var, K, T)``, the real means (and variances,
    None without) their H sums over (:func:`authors_code_arms`' arms for
    ``variant="authors_code"``), the number of real arms and the budget, checked to
    exceed their ``pulls`` per arm of initialisation."""
    _validate.choice("variant", variant, VARIANTS)
    mu = truth._real(means, arm_mask)
    var = None if variances is None else truth._real(variances, arm_mask)
    k = mu.size
    budget = _validate.concrete_int("budget", budget, minimum=pulls * k + 1)
    if variant == "authors_code":
        keep = _authors_code_keep(mu)
        mu, var = mu[keep], None if var is None else var[keep]
    return mu, var, k, budget


def ucbe_oracle_a(
    means,
    *,
    threshold: float,
    budget: int,
    exponent: float = 0.0,
    variant: str = "paper",
    arm_mask=None,
) -> float:
    """UCBE's ``a = 4^i (T - K) / H1`` (``i = exponent``).

    ``variant="paper"``: ``H1 = sum_i 1 / Delta_i^2`` over all real arms, ``Delta_i =
    |mu_i - tau|`` (Mukherjee et al. 2017, Sec. 4; Tao et al., NeurIPS 2019, Sec. 5
    UCBE(i)). ``"authors_code"``: H1 over the real arms whose mean differs from the
    last real arm's, the last arm excluded (the AugUCB authors' experiment code).
    """
    mu, _, k, budget = _thresholding_instance(means, None, budget, variant, arm_mask, 1)
    h = truth.h1(truth.tbp_gaps(mu, threshold)) if mu.size else 0.0
    return truth.oracle_parameter("UCBE a", 4.0**exponent * (budget - k), h)


def ucbev_oracle_a(
    means,
    variances,
    *,
    threshold: float,
    budget: int,
    exponent: float = 0.0,
    variant: str = "paper",
    arm_mask=None,
) -> float:
    """UCBEV's ``a``; ``sigma_i = sqrt(variances_i)``.

    ``"paper"``: ``a = 4^i (T - 2K) / H_{sigma,1}`` with Mukherjee et al.'s unsquared
    ``H_{sigma,1} = sum xi_i / Delta_i^2`` (:func:`jbandits.analysis.truth.hsigma1`).
    ``"authors_code"``: ``a = 4^i (8/9) (T - 2K) / H^sigma`` with the squared H^sigma of
    Gabillon et al. 2011 (b = 1) over the real arms whose mean differs from the last
    real arm's, the last arm excluded; pass the listed "variance" column of the
    authors' environment files (their code takes sigma = sqrt of it).
    """
    mu, var, k, budget = _thresholding_instance(
        means, variances, budget, variant, arm_mask, 2
    )
    gaps = truth.tbp_gaps(mu, threshold)
    sig = np.sqrt(var)
    if variant == "paper":
        h = truth.hsigma1(gaps, sig)
        num = 4.0**exponent * (budget - 2 * k)
    else:
        h = truth.hsigma_gabillon(gaps, sig) if mu.size else 0.0
        num = 4.0**exponent * (8.0 / 9.0) * (budget - 2 * k)
    return truth.oracle_parameter("UCBEV a", num, h)


# ------------------------------------------------------------------ best-arm identification
def ucb_e_oracle_a(means, budget: int, *, c: float = 1.0, arm_mask=None) -> float:
    """UCB-E's ``a = c (T - K) / H1`` with ``H1 = sum_i 1 / Delta_i^2`` (BAI gaps of
    :func:`jbandits.analysis.truth.bai_gaps`). Audibert et al.'s theorem holds for ``c <=
    25/36``; ``c = 1`` is the convention of Mukherjee et al. and Tao et al."""
    gaps = truth.bai_gaps(means, arm_mask)
    num_real = gaps.size
    if budget < num_real:
        raise ValueError(f"budget must be >= K = {num_real}, got {budget}")
    return truth.oracle_parameter("ucb_e", c * (budget - num_real), truth.h1(gaps))


def reward_range(means, stds, budget: int, arm_mask=None) -> float:
    """Lalitha et al.'s reward range ``b = max_i (mu_i + sigma_i sqrt(ln T))``."""
    mu = truth._real(means, arm_mask)
    sd = truth._real(stds, arm_mask)
    return float(np.max(mu + sd * math.sqrt(math.log(budget))))


def gape_oracle_params(means, stds, budget: int, arm_mask=None) -> tuple[float, float]:
    """GapE's ``(a, b)`` as tuned by Lalitha et al. (UAI 2023, Sec. 5).

    ``b`` = :func:`reward_range`, ``a = 16 (T - K) / (H log2 K)`` with ``H = sum_k b^2 /
    Delta_k^2`` (BAI gaps): Gabillon et al.'s ``a = (4/9)(T - K)/H`` with H rescaled by
    ``c / c'``, ``c = 1/144``, ``c' = 1 / (4 log2 K)``.
    """
    gaps = truth.bai_gaps(means, arm_mask)
    num_real = gaps.size
    if budget < num_real:
        raise ValueError(f"budget must be >= K = {num_real}, got {budget}")
    b = reward_range(means, stds, budget, arm_mask)
    h = b * b * truth.h1(gaps)
    a = truth.oracle_parameter(
        "gape", 16.0 * (budget - num_real), h * math.log2(num_real)
    )
    return a, b


def gape_v_oracle_params(
    means, stds, budget: int, arm_mask=None
) -> tuple[float, float]:
    """GapE-V's ``(a, b)`` as tuned by Lalitha et al. (UAI 2023, Sec. 5).

    ``b`` = :func:`reward_range`, ``a = 16 (T - 2K) / (H^sigma log2 K)``, ``H^sigma =
    sum_k (sigma_k + sqrt(sigma_k^2 + (16/3) b Delta_k))^2 / Delta_k^2`` (BAI gaps;
    Gabillon et al.'s squared form). The rate constant is carried over from GapE by
    analogy: Gabillon et al.'s GapE-V theorem was not available to us.
    """
    gaps = truth.bai_gaps(means, arm_mask)
    num_real = gaps.size
    if budget < 2 * num_real:
        raise ValueError(f"budget must be >= 2K = {2 * num_real}, got {budget}")
    sigmas = truth._real(stds, arm_mask)
    b = reward_range(means, stds, budget, arm_mask)
    h = truth.hsigma_gabillon(gaps, sigmas, b)
    a = truth.oracle_parameter(
        "gape_v", 16.0 * (budget - 2 * num_real), h * math.log2(num_real)
    )
    return a, b


def ugapeb_oracle_a(
    means,
    m: int,
    epsilon: float,
    budget: int,
    *,
    eta: float = 1.0,
    b: float = 1.0,
    arm_mask=None,
) -> float:
    """UGapEb's ``a = eta (n - K) / (4 H_eps)`` (Gabillon et al. 2012, Thm 1).

    ``H_eps = sum_i b^2 / max((Delta_i + eps) / 2, eps)^2`` (their Eq. 6,
    :func:`jbandits.analysis.truth.h_epsilon`); infinite when ``eps = 0`` and ``mu_(m) =
    mu_(m+1)``.
    """
    h = truth.h_epsilon(means, m, epsilon, b, arm_mask)
    num_real = truth._real(means, arm_mask).size
    if budget <= num_real:
        raise ValueError(f"budget must be > K = {num_real}, got {budget}")
    return truth.oracle_parameter("ugapeb", eta * (budget - num_real), 4.0 * h)
