"""Reference: Thompson sampling, Beta-Bernoulli and Gaussian (spec §2.8).

Each decision's key splits into (binarisation, posterior sample, tie) keys, in that
order (the JAX policy documents the same split). The first arm is drawn from the prior.
Beta posterior draws replay the library's sampler from its raw draws
(``jbandits.policies.blocks.sampling.try_draws``): per arm ``j`` of ``k_max``, ``G_a`` is gamma
number ``j`` and ``G_b`` number ``k_max + j``; each gamma is the first accepted try of
Marsaglia and Tsang's method (ACM TOMS 2000), ``-ln(1 - u)`` of try 0 for shape 1,
written here in plain float64 scalars; the draw is ``G_a / (G_a + G_b)``.
Random numbers are drawn in padded numbering (``[k_max]``) and restricted to the real
arms; the draw functions are jitted only to avoid per-primitive dispatch.
"""

from __future__ import annotations

import math
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np

from jbandits.policies.blocks import sampling as _sampling
from reference.regret._bayes_common import empirical_best, pick_max, scatter
from reference.stats import arms as new_arms


@jax.jit
def _split(key):
    key_bin, key_theta, key_tie = jax.random.split(key, 3)
    return jax.random.uniform(key_bin, ()), key_theta, key_tie


@partial(jax.jit, static_argnums=2)
def _tries(key, m, num):
    """``(x, u)`` of try ``m`` of gammas ``0 .. num - 1``."""
    return _sampling.try_draws(key, m, jnp.arange(num), jnp.result_type(float))


def _gamma(draw, alpha: float, e: int) -> float:
    """Marsaglia-Tsang ``Gamma(alpha)``, ``alpha >= 1``, from tries ``draw(m)``."""
    d = alpha - 1.0 / 3.0
    c = (1.0 / 3.0) / math.sqrt(d)
    m = 0
    while True:
        x, u = (float(v[e]) for v in draw(m))
        if m == 0 and alpha == 1.0:
            return -math.log1p(-u)
        v = (1.0 + c * x) ** 3
        m += 1
        if v <= 0.0:
            continue
        log_u = math.log(u) if u > 0.0 else -math.inf
        if u < 1.0 - 0.0331 * x**4 or log_u < 0.5 * x * x + d * (1.0 - v + math.log(v)):
            return d * v


def _beta(key, a, b):
    """``[k_max]`` Beta draws replaying ``jbandits.policies.blocks.sampling.beta``."""
    k_max = len(a)
    cache = {}

    def draw(m):
        if m not in cache:
            cache[m] = [np.asarray(v) for v in _tries(key, m, 2 * k_max)]
        return cache[m]

    out = []
    for j in range(k_max):
        ga = _gamma(draw, float(a[j]), j)
        gb = _gamma(draw, float(b[j]), k_max + j)
        out.append(ga / (ga + gb))
    return np.array(out)


@partial(jax.jit, static_argnums=1)
def _normal(key, k_max):
    return jax.random.normal(key, (k_max,))


def make(posterior: str, tie_break: str):
    def reference(inst, draws):
        k = inst.num_arms
        prior_var = float(inst.hp.get("prior_var", 1.0))
        arms = new_arms(k)
        succ, fail = [0.0] * k, [0.0] * k
        pulls, last = [], None
        for t in range(inst.budget):
            u_bin, key_theta, key_tie = _split(draws.key_for_pull(t))
            if last is not None and posterior == "beta":
                # binarise the previous reward: success iff u < r, u ~ U[0, 1)
                i, r = last
                s = 1.0 if float(u_bin) < r else 0.0
                succ[i] += s
                fail[i] += 1.0 - s
            if posterior == "beta":
                a = scatter(draws, [1.0 + s for s in succ], 1.0)
                b = scatter(draws, [1.0 + f for f in fail], 1.0)
                theta = draws.per_arm(_beta(key_theta, a, b))
            else:
                z = draws.per_arm(_normal(key_theta, draws.k_max))
                theta = []
                for j in range(k):
                    precision = 1.0 / prior_var + arms[j].n
                    theta.append(
                        arms[j].total / precision + z[j] / math.sqrt(precision)
                    )
            i = pick_max(theta, tie_break, draws, key_tie)
            r = float(inst.table[i, arms[i].n])
            arms[i].add(r)
            pulls.append(i)
            last = (i, r)
        return pulls, empirical_best(arms)

    return reference
