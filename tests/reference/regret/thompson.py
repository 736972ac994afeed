"""Reference: Thompson sampling, Beta-Bernoulli and Gaussian (spec §2.8).

Each decision's key splits into (binarisation, posterior sample, tie) keys, in that
order (the JAX policy documents the same split). The first arm is drawn from the prior.
Random numbers are drawn in padded numbering (``[k_max]``) and restricted to the real
arms; the draw functions are jitted only to avoid per-primitive dispatch.
"""

from __future__ import annotations

import math
from functools import partial

import jax

from reference.regret._bayes_common import empirical_best, pick_max, scatter
from reference.stats import arms as new_arms


@jax.jit
def _split(key):
    key_bin, key_theta, key_tie = jax.random.split(key, 3)
    return jax.random.uniform(key_bin, ()), key_theta, key_tie


_beta = jax.jit(jax.random.beta)


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
