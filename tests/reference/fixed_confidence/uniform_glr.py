"""Reference: uniform sampling with Chernoff's or Russo's posterior stopping rule
(spec §1, §5, §6), one pull at a time.

Round robin over the K arms first; then at every t: stop if Chernoff's ``Z(t) >
beta(t, delta)`` ("glr"; recommend the first empirical best) or if ``max_i alpha_i >=
c`` ("posterior"; recommend the first ``argmax alpha``), ``alpha_i = int f_i(x)
prod_{j != i} F_j(x) dx`` over the posteriors (Beta(1 + S, 1 + N - S), or N(mu,
sigma^2 / N)) by a dense fixed quadrature (:func:`best_arm_probabilities`); else the next arm, ``t mod K``
("round_robin") or ``randint(key of pull t, 0, K)`` ("random").
"""

from __future__ import annotations

import math

import jax
import numpy as np
from scipy import special, stats

from reference.fixed_confidence import tracking_tools as tt
from reference.stats import arms as new_arms

PANELS, NODES = 250, 8
_Z, _W = np.polynomial.legendre.leggauss(NODES)


def _grid(lo: float, hi: float) -> tuple[np.ndarray, np.ndarray]:
    """Composite Gauss-Legendre nodes and weights on ``[lo, hi]``."""
    edges = np.linspace(lo, hi, PANELS + 1)
    half = np.diff(edges)[:, None] / 2.0
    nodes = (edges[:-1, None] + half) + half * _Z[None]
    return nodes.ravel(), (half * _W[None]).ravel()


def best_arm_probabilities(family, arms, sigma=1.0) -> list[float]:
    """``alpha_i = int f_i(x) prod_{j != i} F_j(x) dx`` by a dense composite
    Gauss-Legendre rule (250 equal panels of 8 nodes over the posteriors' joint
    support: ``[0, 1]`` for Beta, the means +- 12 posterior standard deviations for
    Gaussian); densities and distribution functions from SciPy."""
    if family == "bernoulli":
        a = np.array([1.0 + x.total for x in arms])
        b = np.array([1.0 + x.n - x.total for x in arms])
        x, w = _grid(0.0, 1.0)
        pdf = stats.beta.pdf(x[None], a[:, None], b[:, None])
        cdf = special.betainc(a[:, None], b[:, None], x[None])
    else:
        mean = np.array([x.mean for x in arms])
        scale = np.array([sigma / math.sqrt(x.n) for x in arms])
        x, w = _grid(float(np.min(mean - 12 * scale)), float(np.max(mean + 12 * scale)))
        z = (x[None] - mean[:, None]) / scale[:, None]
        pdf = np.exp(-0.5 * z * z) / (math.sqrt(2 * math.pi) * scale[:, None])
        cdf = special.ndtr(z)
    alpha = []
    for i in range(len(arms)):
        others = np.prod(np.delete(cdf, i, axis=0), axis=0)
        alpha.append(float(np.sum(w * pdf[i] * others)))
    return alpha


def uniform_glr(inst, draws, *, family, threshold="practical", sampling="round_robin",
                stopping="glr"):  # fmt: skip
    k = inst.num_arms
    delta, sigma = float(inst.hp["delta"]), float(inst.hp.get("sigma", 1.0))
    level = float(inst.hp.get("confidence", 1.0 - delta))
    arms, pulls = new_arms(k), []
    t = 0
    while True:
        if t < k:
            i = t
        else:
            if stopping == "glr":
                z, _, _ = tt.glr(family, arms, sigma)
                if z > tt.threshold(threshold, t, delta, k, family):
                    break
            elif max(best_arm_probabilities(family, arms, sigma)) >= level:
                break
            if sampling == "round_robin":
                i = t % k
            else:
                i = int(jax.random.randint(draws.key_for_pull(t), (), 0, k))
        if len(pulls) == inst.budget:
            break
        arms[i].add(inst.table[i, arms[i].n])
        pulls.append(i)
        t += 1
    if stopping == "posterior" and t >= k:
        return pulls, tt.first_best(best_arm_probabilities(family, arms, sigma))
    return pulls, tt.first_best([a.mean if a.n else -math.inf for a in arms])
