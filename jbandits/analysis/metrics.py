"""Losses evaluated on a policy's output, and confidence intervals over replications.

A metric is a small frozen dataclass (hashable, so the engine can cache compilations)
called as ``metric(output, means, arm_mask) -> dict[str, scalar]`` inside the scan at
every checkpoint. Cumulative pseudo-regret is always tracked by the engine itself.

* :class:`Thresholding`: ``error`` = 1{some arm misclassified} (the loss of
  Locatelli, Gutzeit and Carpentier, "An optimal algorithm for the thresholding
  bandit problem", ICML 2016; with ``epsilon > 0`` arms within epsilon of tau are
  don't-care), ``misclassified`` = number of misclassified arms (the aggregate regret
  of Tao, Blanco, Peng and Zhou, "Thresholding bandit with optimal aggregate regret",
  NeurIPS 2019).
* :class:`Identification`: ``error`` = 1{recommended arm is not the best} and
  ``simple_regret`` = mu* - mu_out (Audibert, Bubeck and Munos, "Best arm
  identification in multi-armed bandits", COLT 2010).
* :class:`TopM`: ``error`` = 1{r_Omega > epsilon}, ``simple_regret`` = r_Omega =
  mu_(m) - min_{k in Omega} mu_k, the (epsilon, m) loss of Gabillon, Ghavamzadeh and
  Lazaric, "Best arm identification: a unified approach to fixed budget and fixed
  confidence", NIPS 2012. An output that does not select exactly m real arms is an
  error with the worst-case (finite) regret.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import jax
import jax.numpy as jnp
import numpy as np

from jbandits.analysis.stats import Z95 as Z95
from jbandits.analysis.stats import mean_ci as mean_ci
from jbandits.analysis.stats import wilson_ci as binomial_ci  # noqa: F401 (kept name)
from jbandits.core import validate as _validate
from jbandits.core.types import SETTINGS, Array


@dataclass(frozen=True)
class Thresholding:
    """Thresholding loss of a labelling ``output [K]`` (True: mean >= threshold).

    Called as ``metric(output, means, arm_mask)``; returns ``error`` (1.0 if some real
    arm with ``mean >= threshold + epsilon`` is labelled below, or one with ``mean <
    threshold - epsilon`` above; arms in the epsilon band never count) and
    ``misclassified`` (the number of real arms whose label differs from ``mean >=
    threshold``; it ignores ``epsilon``). Build it with :func:`thresholding`.

    Raises:
      ValueError: (on construction) if ``threshold`` is not finite or ``epsilon`` is
        negative or not finite.
    """

    threshold: float
    epsilon: float = 0.0
    settings: ClassVar[tuple] = ("thresholding",)  # policies whose output it scores

    def __post_init__(self):
        if not math.isfinite(self.threshold):
            raise ValueError(f"threshold must be finite, got {self.threshold}")
        if not (math.isfinite(self.epsilon) and self.epsilon >= 0):
            raise ValueError(f"epsilon must be finite and >= 0, got {self.epsilon}")

    def __call__(self, output: Array, means: Array, arm_mask: Array) -> dict:
        labels = output.astype(bool)
        above = means >= self.threshold + self.epsilon
        below = means < self.threshold - self.epsilon
        wrong = arm_mask & ((above & ~labels) | (below & labels))
        truth = means >= self.threshold
        misclassified = jnp.sum(arm_mask & (labels != truth))
        return {
            "error": jnp.any(wrong).astype(jnp.float32),
            "misclassified": misclassified.astype(jnp.float32),
        }


@dataclass(frozen=True)
class Identification:
    """Best-arm identification loss of a recommended arm ``output []`` (int).

    Returns ``error`` (1.0 unless the output's mean equals the best real mean; ties
    with the best count as correct) and ``simple_regret`` (``mu* - mu_output``). An
    output of ``-1`` (a policy that recommends nothing) gives ``error`` 1 and
    ``simple_regret`` NaN. Build it with :func:`identification`. It also scores a
    regret policy's output (its best-arm guess).
    """

    settings: ClassVar[tuple] = ("identification", "regret")

    def __call__(self, output: Array, means: Array, arm_mask: Array) -> dict:
        score = jnp.where(arm_mask, means, -jnp.inf)
        best = jnp.max(score)
        chosen = jnp.where(output >= 0, score[jnp.maximum(output, 0)], -jnp.inf)
        return {
            "error": (chosen < best).astype(jnp.float32),
            "simple_regret": jnp.where(jnp.isfinite(chosen), best - chosen, jnp.nan),
        }


@dataclass(frozen=True)
class TopM:
    """(epsilon, m) loss of a set of arms ``output [K]`` (bool) (Gabillon et al. 2012).

    Returns ``simple_regret`` ``r = mu_(m) - min_{k in output} mu_k`` (``mu_(m)`` the
    m-th largest real mean) and ``error`` = 1{r > epsilon}. ``m >= 1`` is checked at
    construction and ``m <= K`` when the metric is applied (shapes are static under
    jit). The output must select exactly ``m`` real arms; any other output (empty, as
    from a stopped policy, too many arms, a padded arm) is an error whose simple regret
    is the worst case over valid sets, ``mu_(m) - min_real mu`` (finite, never -inf).
    When an instance has fewer than ``m`` real arms, ``mu_(m)`` is read as the smallest
    real mean. Build it with :func:`top_m`.
    """

    m: int
    epsilon: float = 0.0
    settings: ClassVar[tuple] = ("top_m",)

    def __post_init__(self):
        if isinstance(self.m, bool) or not isinstance(self.m, int) or self.m < 1:
            raise ValueError(f"top-m needs an integer m >= 1, got m={self.m!r}")
        if not (math.isfinite(self.epsilon) and self.epsilon >= 0):
            raise ValueError(f"epsilon must be finite and >= 0, got {self.epsilon}")

    def __call__(self, output: Array, means: Array, arm_mask: Array) -> dict:
        num_arms = means.shape[-1]
        if self.m > num_arms:
            raise ValueError(
                f"top-m metric: m={self.m} exceeds the number of arms K={num_arms}"
            )
        picked = output.astype(bool)
        real_means = jnp.where(arm_mask, means, -jnp.inf)
        num_real = jnp.sum(arm_mask)
        # mu_(m) among the real arms (the smallest real mean if there are fewer)
        rank = jnp.clip(jnp.minimum(self.m, num_real) - 1, 0, num_arms - 1)
        mu_m = jnp.sort(real_means)[::-1][rank]
        lowest = jnp.min(jnp.where(arm_mask, means, jnp.inf))
        valid = (jnp.sum(picked & arm_mask) == self.m) & ~jnp.any(picked & ~arm_mask)
        worst_chosen = jnp.min(jnp.where(picked & arm_mask, means, jnp.inf))
        r = mu_m - jnp.where(valid, worst_chosen, lowest)
        r = jnp.where(jnp.isfinite(r), r, 0.0)  # no real arm at all
        error = ~valid | (r > self.epsilon)
        return {"error": error.astype(jnp.float32), "simple_regret": r}


def thresholding(threshold: float, epsilon: float = 0.0) -> Thresholding:
    """Metric of thresholding bandits (:class:`Thresholding`).

    Args:
      threshold: tau; an arm belongs above when its mean is ``>= tau``.
      epsilon: half-width of the don't-care band of ``error``, ``>= 0``.

    Returns:
      A hashable :class:`Thresholding` metric.

    Raises:
      ValueError: if ``threshold`` is not finite or ``epsilon`` is negative or not
        finite.

    Example::

        metric = jbandits.analysis.metrics.thresholding(0.5, epsilon=0.05)
        res = jbandits.simulate(policy, bandit, params, key, budget=200,
                                num_reps=1000, metric=metric)
        res.metrics["error"].mean(0), res.metrics["misclassified"].mean(0)
    """
    return Thresholding(float(threshold), float(epsilon))


def identification() -> Identification:
    """Metric of best-arm identification (:class:`Identification`).

    Returns:
      A hashable :class:`Identification` metric (``error``, ``simple_regret``).

    Example::

        res = jbandits.simulate(jbandits.make("successive_rejects", num_arms=4,
                                budget=400), bandit, params, key, budget=400,
                                num_reps=1000, metric=jbandits.analysis.metrics.identification())
        res.metrics["error"][:, -1].mean()   # P(error) at the budget
    """
    return Identification()


def top_m(m: int, epsilon: float = 0.0) -> TopM:
    """Metric of (epsilon, m) identification (:class:`TopM`).

    Args:
      m: the number of arms the output should hold (the top m), ``>= 1``; an ``m``
        above the number of arms K raises ValueError when the metric is applied.
      epsilon: accuracy: an output is correct when its worst arm is within
        ``epsilon`` of the m-th best mean.

    Returns:
      A hashable :class:`TopM` metric (``error``, ``simple_regret``).

    Raises:
      ValueError: if ``m`` is not an integer ``>= 1`` or ``epsilon`` is negative or
        not finite.

    Example::

        res = jbandits.simulate(jbandits.make("ugapeb", num_arms=6, m=2, budget=600,
                                a=1.0), bandit, params, key, budget=600,
                                num_reps=1000, metric=jbandits.analysis.metrics.top_m(2, 0.05))
    """
    return TopM(_validate.static_int("m", m, minimum=1), float(epsilon))


def for_policy(policy):
    """The default metric of a policy, chosen by its ``setting``.

    * ``"thresholding"``: :func:`thresholding` at the policy's ``threshold`` (no
      don't-care band);
    * ``"identification"``: :func:`identification`;
    * ``"top_m"``: :func:`top_m` with the policy's ``m`` (and ``epsilon``, if any);
    * ``"regret"``: None (the runs record regret and reward anyway).

    The threshold, ``m`` and ``epsilon`` are read from the arguments a registered policy
    was built with (``policy.spec``, set by :func:`jbandits.make`); a hand-built
    policy without them gets None (regret and reward only).

    Example::

        pol = jbandits.make("apt", num_arms=4, threshold=0.5, epsilon=0.05)
        jbandits.analysis.metrics.for_policy(pol)   # thresholding(0.5)
    """
    setting = getattr(policy, "setting", None)
    if setting == "identification":
        return identification()
    spec = getattr(policy, "spec", None)
    kwargs = dict(spec.kwargs) if spec is not None else {}

    def scalar(name):
        value = kwargs.get(name)
        if value is None or np.ndim(value) != 0:
            return None
        try:
            return float(value)
        except (TypeError, jax.errors.ConcretizationTypeError):
            return None

    if setting == "thresholding" and scalar("threshold") is not None:
        return thresholding(scalar("threshold"))
    if setting == "top_m" and scalar("m") is not None:
        return top_m(int(scalar("m")), scalar("epsilon") or 0.0)
    return None


def check_setting(metric, policy) -> None:
    """Raise ValueError if ``metric`` cannot score the output of ``policy``.

    The built-in metrics name the policy settings whose output they read
    (``settings``): a thresholding metric reads labels ``[K]``, the identification
    metric one arm (of an identification or regret policy), the top-m metric a set
    ``[K]``. A metric of another setting runs but measures nothing (a regret policy
    under ``thresholding(0.5)`` reports error 1.0). Metrics without ``settings`` (a
    user's callable) and policies without a known ``setting`` are not checked.
    """
    accepted = getattr(metric, "settings", None)
    setting = getattr(policy, "setting", None)
    if metric is None or accepted is None or setting not in SETTINGS:
        return
    if setting not in accepted:
        raise ValueError(
            f"metric {metric!r} scores the output of {' or '.join(accepted)} "
            f"policies, but the policy is a {setting} policy: pass a metric of its "
            f"setting, 'auto' (its default) or None"
        )


# --------------------------------------------------------------- confidence intervals
# The intervals live in jbandits.analysis.stats (one statistics module); metrics keeps
# its names for them: mean_ci, binomial_ci (= stats.wilson_ci) and Z95.
