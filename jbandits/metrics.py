"""Losses evaluated on a policy's output, and confidence intervals over replications.

A metric is a small frozen dataclass (hashable, so the engine can cache compilations)
called as ``metric(output, means, arm_mask) -> dict[str, scalar]`` inside the scan at
every checkpoint. Cumulative pseudo-regret is always tracked by the engine itself.

* :class:`Thresholding` (spec §2.1-2.2): ``error`` = 1{some arm misclassified}
  (simple regret / P(error)), ``misclassified`` = number of misclassified arms
  (aggregate regret). With ``epsilon > 0`` arms within epsilon of tau are don't-care.
* :class:`Identification` (§2.3): ``error`` = 1{recommended arm is not the best},
  ``simple_regret`` = mu* - mu_out.
* :class:`TopM` (§2.4): ``error`` = 1{r_Omega > epsilon} (AMB-1), ``simple_regret`` =
  r_Omega = mu_(m) - min_{k in Omega} mu_k.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import jax.numpy as jnp
import numpy as np

from jbandits.types import Array


@dataclass(frozen=True)
class Thresholding:
    threshold: float
    epsilon: float = 0.0

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
    m: int
    epsilon: float = 0.0

    def __call__(self, output: Array, means: Array, arm_mask: Array) -> dict:
        score = jnp.where(arm_mask, means, -jnp.inf)
        mu_m = jnp.sort(score)[::-1][self.m - 1]
        chosen = output.astype(bool) & arm_mask
        worst = jnp.min(jnp.where(chosen, means, jnp.inf))
        r = mu_m - worst
        return {"error": (r > self.epsilon).astype(jnp.float32), "simple_regret": r}


def thresholding(threshold: float, epsilon: float = 0.0) -> Thresholding:
    return Thresholding(float(threshold), float(epsilon))


def identification() -> Identification:
    return Identification()


def top_m(m: int, epsilon: float = 0.0) -> TopM:
    return TopM(int(m), float(epsilon))


# --------------------------------------------------------------- confidence intervals
Z95 = 1.959963984540054


def mean_ci(values, axis: int = 0, z: float = Z95):
    """Mean and normal-approximation CI ``mean +- z * sd / sqrt(n)`` along ``axis``."""
    x = np.asarray(values, dtype=np.float64)
    n = x.shape[axis]
    mean = x.mean(axis=axis)
    se = x.std(axis=axis, ddof=1) / math.sqrt(n) if n > 1 else np.zeros_like(mean)
    return mean, mean - z * se, mean + z * se


def binomial_ci(values, axis: int = 0, z: float = Z95):
    """Rate and Wilson score interval for 0/1 outcomes along ``axis``."""
    x = np.asarray(values, dtype=np.float64)
    n = x.shape[axis]
    p = x.mean(axis=axis)
    denom = 1.0 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return p, centre - half, centre + half
