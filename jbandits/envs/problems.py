"""Named problem instances of the papers (means, noise, threshold)."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from jbandits.envs.bernoulli import bernoulli
from jbandits.envs.gaussian import gaussian


def _bandit(means, stds):
    if stds is None:
        return bernoulli(means)
    return gaussian(means, stds)


class Problem(NamedTuple):
    name: str
    means: np.ndarray  # [K]
    stds: (
        np.ndarray | None
    )  # [K] standard deviations for Gaussian families, None: Bernoulli
    threshold: float | None
    source: str

    def bandit(self):
        """``(Bandit, params)`` of this instance: Bernoulli rewards when ``stds`` is
        None, Gaussian ``N(mean_i, std_i^2)`` otherwise (:mod:`jbandits.envs`)."""
        return _bandit(self.means, self.stds)


def lsa_setup(number: int) -> Problem:
    """Tao, Blanco, Peng, Zhou, "Thresholding bandit with optimal aggregate regret"
    (NeurIPS 2019), Section 5: Setup ``number``, Bernoulli arms, theta = 0.5."""
    if number == 1:
        means = np.r_[0.2 + 0.05 * np.arange(4), 0.45, 0.55, 0.65 + 0.05 * np.arange(4)]
    elif number == 2:
        means = 0.405 + np.arange(20) / 100.0
    elif number == 3:
        means = np.r_[np.full(5, 0.45), np.full(5, 0.505)]
    else:
        raise ValueError(f"number must be 1, 2 or 3 (the paper's Setups), got {number}")
    return Problem(f"lsa-setup{number}", means, None, 0.5, "Tao et al. 2019, Sec. 5")


# ------------------------------------------- AugUCB (Mukherjee et al., IJCAI 2017)
AUGUCB_NUM_ARMS = 100
AUGUCB_THRESHOLD = 0.5
NOISE_MODELS = ("paper", "authors_code")
# listed "variance" of arms 11-100 ~ U[lo, hi]: (paper text, authors' code)
_AUGUCB_RANGES = {
    "paper": {1: (0.38, 0.42), 5: (0.2, 0.3)},
    "authors_code": {1: (0.3, 0.4), 5: (0.2, 0.3)},
}


def _augucb_first_ten(number: int) -> tuple[np.ndarray, np.ndarray]:
    """Means and listed 'variances' of arms 1-10 of the AugUCB paper's Experiment
    ``number``."""
    if number == 1:  # arithmetic progression
        means = np.r_[0.2 + 0.05 * np.arange(4), 0.45, 0.55, 0.65 + 0.05 * np.arange(4)]
    elif number == 2:  # geometric progression (as in the paper's LaTeX source)
        i = np.arange(1, 5)
        means = np.r_[0.4 - 0.2**i, 0.45, 0.55, 0.6 + 0.2 ** (5 - i)]
    elif number == 3:  # three groups
        means = np.r_[np.full(3, 0.1), 0.35, 0.45, 0.55, 0.65, np.full(3, 0.9)]
    elif number in (4, 5, 6):  # two groups
        means = np.r_[np.full(5, 0.45), np.full(5, 0.55)]
    else:
        raise ValueError(
            f"number must be 1..6 (the AugUCB paper's Experiments), got {number}"
        )
    listed = np.r_[np.full(5, 0.3), np.full(5, 0.8)] if number >= 5 else None
    if listed is None:
        listed = np.r_[np.full(5, 0.5), np.full(5, 0.6)]
    return means, listed


def augucb_listed_values(
    number: int, *, ranges: str = "paper", seed: int = 0
) -> tuple[np.ndarray, np.ndarray]:
    """Means and the listed per-arm "variance" column of the AugUCB paper's Experiment
    ``number``.

    Arms 11-100 have mean 0.4 and a listed value drawn once (not per run) from
    ``U[lo, hi]`` with ``numpy.random.default_rng(seed)``: the same 90 uniforms serve
    every experiment and both ``ranges``, so only ``[lo, hi]`` differs. ``ranges``:
    "paper" (Expt 1-4: [0.38, 0.42]; Expt 5-6: [0.2, 0.3]) or "authors_code" (the
    authors' ``create_environment.py``: Expt 1-4 [0.3, 0.4]; no code is known for
    Expt 5-6, so the paper's [0.2, 0.3] is kept), in which case means and listed values
    are also rounded to 3 decimals as in the authors' environment files.
    """
    if ranges not in NOISE_MODELS:
        raise ValueError(f"ranges must be one of {NOISE_MODELS}, got {ranges!r}")
    first_means, first_listed = _augucb_first_ten(number)
    lo, hi = _AUGUCB_RANGES[ranges][1 if number <= 4 else 5]
    u = np.random.default_rng(seed).uniform(size=AUGUCB_NUM_ARMS - 10)
    means = np.r_[first_means, np.full(AUGUCB_NUM_ARMS - 10, 0.4)]
    listed = np.r_[first_listed, lo + (hi - lo) * u]
    if ranges == "authors_code":
        means, listed = np.round(means, 3), np.round(listed, 3)
    return means, listed


def augucb_experiment(number: int, noise: str = "paper", *, seed: int = 0) -> Problem:
    """Experiment ``number`` (1-6) of Mukherjee, Naveen, Sudarsanam, Ravindran,
    "Thresholding bandits with augmented UCB" (IJCAI 2017), Section 4.

    K = 100 Gaussian arms, tau = 0.5, S_tau = arms 6-10 (indices 5-9). ``noise``:

    * "paper": the listed values are variances (std = sqrt(listed)); arms 11-100 have
      variances U[0.38, 0.42] (Expt 1-4) or U[0.2, 0.3] (Expt 5-6).
    * "authors_code": the authors' experiment code passes the listed value to
      ``random.gauss`` as the standard deviation (std = listed); arms 11-100 use the
      code's range U[0.3, 0.4] (Expt 1-4) and values are rounded to 3 decimals
      (the authors' environment files).

    The draws for arms 11-100 are made once from ``seed`` (fixed across runs);
    Experiment 6 is Experiment 5's instance. The listed column itself is
    :func:`augucb_listed_values` (UCBEV's oracle ``a`` needs it).
    """
    if noise not in NOISE_MODELS:
        raise ValueError(f"noise must be one of {NOISE_MODELS}, got {noise!r}")
    means, listed = augucb_listed_values(number, ranges=noise, seed=seed)
    stds = np.sqrt(listed) if noise == "paper" else listed
    source = f"Mukherjee et al. 2017, Sec. 4, Experiment {number} ({noise} noise)"
    return Problem(
        f"augucb-expt{number}-{noise}", means, stds, AUGUCB_THRESHOLD, source
    )


# ----------------------------------- EUCBV (Mukherjee et al., arXiv:1711.03591 v1)
class RegretProblem(NamedTuple):
    name: str
    means: np.ndarray  # [K]
    stds: np.ndarray | None  # [K] Gaussian standard deviations; None: Bernoulli
    horizon: int  # T
    best_arm: int  # 0-based index of the optimal arm (stored explicitly)
    source: str

    def bandit(self):
        """``(Bandit, params)``: Bernoulli when ``stds`` is None, else Gaussian."""
        return _bandit(self.means, self.stds)


EUCBV_EXPT3_ARMS = tuple(range(20, 101, 10))  # K = 20, 30, ..., 100


def eucbv_experiment(number: int, num_arms: int | None = None) -> RegretProblem:
    """Experiment ``number`` of Mukherjee, Naveen, Sudarsanam, Ravindran,
    "Efficient-UCBV" (arXiv:1711.03591 v1), Section 5, Figures 1-2 (arm numbers are
    the paper's 1-based ones):

    * 1: K = 20 Bernoulli arms, means 0.07 and 0.1 for the optimal arm, T = 60 000.
    * 2: K = 100 Gaussian arms, means 0.7 (arms 1-33), 0.8 (34-99), 0.9 (arm 100);
      variances 0.7, 0.1, 0.7 (the paper's "r*_100 = 0.7" read as sigma^2_100);
      T = 3 * 10^5.
    * 3: K = ``num_arms`` in 20, 30, ..., 100 Gaussian arms, means 0.05 and 0.1 for
      the optimal arm, variances 0.25 and 0.7, T = 10^5 + K^3.
    * 4: K = 100 Gaussian arms, means 0.4 (1-33), 0.6 (34-99), 0.9 (arm 100);
      variances 0.2, 0.1, 0.4; T = 3 * 10^5.

    Gaussian ``stds = sqrt(variance)``. The paper does not place the optimal arm of
    Expt 1 and 3; we use index ``K - 2`` as the authors' scripts do
    (``bestAction = numActions - 2``); Expt 2 and 4 fix it at index 99.
    """
    src = f"Mukherjee et al. (EUCBV) 2017, Sec. 5, Experiment {number}"
    if number == 1:
        k = 20
        means = np.full(k, 0.07)
        means[k - 2] = 0.1
        return RegretProblem("eucbv-expt1", means, None, 60_000, k - 2, src)
    if number in (2, 4):
        lo, mid, top = (0.7, 0.8, 0.9) if number == 2 else (0.4, 0.6, 0.9)
        v_lo, v_mid, v_top = (0.7, 0.1, 0.7) if number == 2 else (0.2, 0.1, 0.4)
        means = np.r_[np.full(33, lo), np.full(66, mid), top]
        var = np.r_[np.full(33, v_lo), np.full(66, v_mid), v_top]
        name = f"eucbv-expt{number}"
        return RegretProblem(name, means, np.sqrt(var), 300_000, 99, src)
    if number == 3:
        if num_arms not in EUCBV_EXPT3_ARMS:
            raise ValueError(
                f"num_arms must be one of {EUCBV_EXPT3_ARMS} for Experiment 3, "
                f"got {num_arms}"
            )
        k = num_arms
        means, var = np.full(k, 0.05), np.full(k, 0.25)
        means[k - 2], var[k - 2] = 0.1, 0.7
        return RegretProblem(
            f"eucbv-expt3-K{k}", means, np.sqrt(var), 100_000 + k**3, k - 2, src
        )
    raise ValueError(
        f"number must be 1..4 (the EUCBV paper's Experiments), got {number}"
    )


# ------------------------------- SHVar (Lalitha et al., UAI 2023: SH with variances)
class BatchedProblem(NamedTuple):
    name: str
    means: np.ndarray  # [N, K] one row per instance
    stds: np.ndarray  # [N, K] standard deviations (sqrt of the variances)
    source: str


SHVAR_PARITIES = ("one_based", "zero_based")


def shvar_base(
    num_arms: int, parity: str = "one_based"
) -> tuple[np.ndarray, np.ndarray]:
    """Lalitha, Kalantari, Ma, Deoras, Kveton, "Fixed-budget best-arm identification
    with heterogeneous reward variances" (UAI 2023), Section 5.1, before perturbation:
    ``(means, variances)`` of ``num_arms`` arms.

    With 1-based arm ``i`` (the paper's numbering): ``mu_i = 1 - sqrt((i - 1) / K)``;
    ``sigma_i^2 = 0.9 mu_i^2 + 0.1`` for even ``i`` and ``0.1`` for odd ``i`` (arm 1,
    the best, is odd: low variance). ``parity="zero_based"`` applies "even" to the
    0-based index instead (the best arm gets the high variance), a sensitivity check
    for a code that numbers arms from 0.
    """
    if isinstance(num_arms, bool) or int(num_arms) != num_arms or num_arms < 2:
        raise ValueError(f"num_arms must be an integer >= 2, got {num_arms!r}")
    if parity not in SHVAR_PARITIES:
        raise ValueError(f"parity must be one of {SHVAR_PARITIES}, got {parity!r}")
    i = np.arange(1, int(num_arms) + 1)
    means = 1.0 - np.sqrt((i - 1) / num_arms)
    even = (i % 2 == 0) if parity == "one_based" else (i % 2 == 1)
    var = np.where(even, 0.9 * means**2 + 0.1, 0.1)
    return means, var


def shvar_gaussian(
    num_arms: int,
    num_instances: int,
    *,
    seed: int = 0,
    perturb: bool = True,
    parity: str = "one_based",
) -> BatchedProblem:
    """Lalitha et al. (UAI 2023), Section 5.1, Gaussian bandit: ``num_instances``
    perturbed instances ``[N, K]``.

    Each instance (one per run: the paper perturbs the means and variances, and its
    MovieLens variant says a new sample is drawn in each run) adds ``N(0, 0.05^2)`` to
    every mean and multiplies every variance by ``U(0.5, 1.5)``, drawn with
    ``numpy.random.default_rng(seed)``. The best arm must then be taken from the
    realised means, not assumed to be arm 1. ``parity``: see
    :func:`shvar_base`.
    """
    if int(num_instances) != num_instances or num_instances < 1:
        raise ValueError(f"num_instances must be an integer >= 1, got {num_instances}")
    means, var = shvar_base(num_arms, parity)
    shape = (int(num_instances), means.size)
    if perturb:
        rng = np.random.default_rng(seed)
        means = means + rng.normal(0.0, 0.05, size=shape)
        var = var * rng.uniform(0.5, 1.5, size=shape)
    else:
        means, var = np.broadcast_to(means, shape), np.broadcast_to(var, shape)
    return BatchedProblem(
        f"shvar-gaussian-K{num_arms}",
        np.array(means),
        np.sqrt(var),
        "Lalitha et al. (UAI 2023), Sec. 5.1",
    )
