"""Fixed-iteration numerics shared by the KL/Bayesian regret policies (KL-UCB,
Bayes-UCB, DMED, Thompson sampling).

Everything here is elementwise (vectorised over arms), branch-free and runs a
**constant** number of iterations, so it compiles to one fixed-shape loop under
``jit``/``vmap``/``scan``. This package is the import point
(``from jbandits import numerics``); the code lives in modules with one job each:

* :mod:`jbandits.policies.blocks.numerics.kl`: KL divergences (:func:`kl_bernoulli`,
  :func:`kl_gaussian`) and the KL-UCB bounds (:func:`klucb_bernoulli`,
  :func:`klucb_gaussian`).
* :mod:`jbandits.policies.blocks.numerics.beta`: Beta tails and quantiles (Bayes-UCB's Beta index):
  :func:`beta_upper_quantile` by bisection, :func:`beta_quantile_newton` warm-started,
  and the tail, step and bound pieces they and Bayes-UCB's certified cells use.
* :mod:`jbandits.policies.blocks.numerics.special`: :func:`normal_upper_quantile`
  (``z_alpha = -ndtri(alpha)``, the Gaussian Bayes-UCB index of Kaufmann, Cappé,
  Garivier, AISTATS 2012), :func:`log1pmx` and :func:`stirling_error`.
* :mod:`jbandits.policies.blocks.numerics.iterations`: the per-dtype iteration counts
  (:data:`KLUCB_ITERS`, :data:`BETA_ITERS`, ...) and how they are chosen.
"""

from jbandits.policies.blocks.numerics.beta import (
    beta_halley_step,
    beta_log_kernel,
    beta_log_norm,
    beta_newton_step,
    beta_quantile_newton,
    beta_root_ceiling,
    beta_sf,
    beta_sf_after_pull,
    beta_upper_quantile,
)
from jbandits.policies.blocks.numerics.iterations import (
    BETA_CF_ITERS,
    BETA_GRID_BITS,
    BETA_ITERS,
    BETA_NEWTON,
    KLUCB_ITERS,
)
from jbandits.policies.blocks.numerics.iterations import _iters as _iters
from jbandits.policies.blocks.numerics.kl import (
    kl_bernoulli,
    kl_gaussian,
    klucb_bernoulli,
    klucb_gaussian,
)
from jbandits.policies.blocks.numerics.special import (
    log1pmx,
    normal_upper_quantile,
    stirling_error,
)

__all__ = [
    "BETA_CF_ITERS",
    "BETA_GRID_BITS",
    "BETA_ITERS",
    "BETA_NEWTON",
    "KLUCB_ITERS",
    "beta_halley_step",
    "beta_log_kernel",
    "beta_log_norm",
    "beta_newton_step",
    "beta_quantile_newton",
    "beta_root_ceiling",
    "beta_sf",
    "beta_sf_after_pull",
    "beta_upper_quantile",
    "kl_bernoulli",
    "kl_gaussian",
    "klucb_bernoulli",
    "klucb_gaussian",
    "log1pmx",
    "normal_upper_quantile",
    "stirling_error",
]
