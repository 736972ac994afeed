"""A pathwise gradient through a relaxed trajectory vs ES at equal simulations
(issue 40, item 3): does it lower the gradient's variance?

    python -m benchmarks.tuning_pathwise            # 3 tasks, ~2 min on 2 cores

The relaxed trajectory: after the forced first pull of every arm, step ``t`` pulls
*every* arm fractionally, with the softmax weights ``p_t = softmax(+-index / tau)``
of the policy's index (``tau``: the temperature), so the counts and sums are
``n_i += p_ti`` and ``s_i += p_ti r_ti`` with ``r_ti`` the reward arm ``i`` would
give at time ``t`` (a reward stack drawn once per replication: common random numbers
for every theta). The loss is smoothed the same way (a sigmoid of the mean's side of
the threshold, a softmax recommendation) and ``jax.grad`` of it in the normalised
coordinate ``z`` is the pathwise estimate. As ``tau -> 0`` the trajectory tends to
the hard policy's on the same rewards, but the gradient's variance grows (the loss
becomes piecewise constant). The thresholding loss is the soft count of misclassified
arms (the ``misclassified`` metric counts them), the identification loss one minus
the softmax weight (temperature 0.02) of the best arm in the recommendation.

Compared at one simulation per relaxed trajectory and two per ES replication (one
antithetic pair in one dimension, sigma = 0.1, as ``tune`` uses): the variance of
the mean estimate at N simulations, ``Var_rep / (N / cost)``. The *bias* matters as
much: the table also gives the mean of each estimate and a reference, the ES
gradient of the hard policy with many replications.

Index policies are written here in a few lines each (LSA, APT, UCB-E). Elimination
and phase policies (EUCBV, AugUCB, successive rejects, UGapE's pair choice) have no
such relaxation: their state changes discretely when an arm leaves the active set
or a phase ends, so a soft trajectory would need a relaxed active set, which is
another policy.
"""

from __future__ import annotations

import math
import time

import jax
import jax.numpy as jnp
import numpy as np

from jbandits import envs
from jbandits.analysis import metrics
from jbandits.tuning import LogSpace, Objective, Space
from jbandits.tuning.estimators import es_gradient

N_SIMS = 1000
THRESH10 = np.linspace(0.35, 0.65, 10)
IDENT8 = np.r_[0.6, 0.55, np.full(6, 0.45)]


def _lsa(n, mu, theta, thr):
    return -(theta * n * (mu - thr) ** 2 + 0.5 * jnp.log(jnp.maximum(n, 1.0)))


def _apt(n, mu, theta, thr):
    return -(jnp.sqrt(n) * (jnp.abs(mu - thr) + theta))


def _ucbe(n, mu, theta, thr):
    del thr
    return mu + jnp.sqrt(theta / n)


def soft_loss(index, kind, k, thr, budget, tau, tau_loss, lo, hi):
    """``(z, key, means) -> relaxed loss`` of one replication of a ``k``-armed
    Bernoulli bandit (``kind``: "thr" or "ident")."""
    scale = math.log(hi / lo)

    def loss(z, key, mu_true):
        theta = lo * jnp.exp(z * scale)
        r = jax.random.bernoulli(key, mu_true, (budget, k)).astype(jnp.float32)
        n0, s0 = jnp.ones(k), r[0]  # the forced first pass (rows 0 of the stack)

        def step(carry, rt):
            n, s = carry
            p = jax.nn.softmax(index(n, s / n, theta, thr) / tau)
            return (n + p, s + p * rt), None

        (n, s), _ = jax.lax.scan(step, (n0, s0), r[1 : budget - k + 1])
        mu = s / n
        if kind == "thr":
            above = jax.nn.sigmoid((mu - thr) / tau_loss)
            return jnp.sum(jnp.where(mu_true >= thr, 1.0 - above, above))
        best = jnp.argmax(mu_true)
        return 1.0 - jax.nn.softmax(mu / tau_loss)[best]

    return loss


TASKS = [
    # name, policy, index, kind, instance or prior, budget, fixed, loss, metric, space
    ("LSA alpha (prior)", "lsa", _lsa, "thr", "prior", 600,
     {"threshold": 0.5}, "misclassified", metrics.thresholding(0.5),
     (0.02, 20.0), "alpha"),
    ("APT epsilon", "apt", _apt, "thr", THRESH10, 600, {"threshold": 0.5},
     "misclassified", metrics.thresholding(0.5), (0.001, 1.0), "epsilon"),
    ("UCB-E a (oracle)", "ucb_e", _ucbe, "ident", IDENT8, 600, {}, "error",
     metrics.identification(), (0.1, 1000.0), "a"),
]  # fmt: skip


def measure(task, zs, reps=400, taus=(1.0, 0.3, 0.1), ref_reps=4000):
    name, policy, index, kind, inst, budget, fixed, loss, metric, (lo, hi), p = task
    k = 10 if isinstance(inst, str) else len(inst)
    if isinstance(inst, str):
        prior = lambda key: envs.bernoulli(  # noqa: E731
            jax.random.uniform(key, (k,), minval=0.3, maxval=0.7)
        )[1]
        obj = Objective(policy, envs.BERNOULLI, prior, budget=budget, loss=loss,
                        metric=metric, fixed=fixed)  # fmt: skip
    else:
        bandit, params = envs.bernoulli(inst)
        obj = Objective(policy, bandit, params, budget=budget, loss=loss,
                        metric=metric, fixed=fixed)  # fmt: skip
    space = Space({p: LogSpace(lo, hi)})
    thr = fixed.get("threshold", 0.0)
    rows = []
    for z in zs:
        zz = np.array([z])
        # ES per replication: 2 simulations (one antithetic pair), sigma 0.1
        _, _, g_es, se_es, _ = es_gradient(
            obj, space, zz, jax.random.key(1), sigma=0.1, num_pairs=1,
            num_reps=reps, chunk=2 * reps,
        )  # fmt: skip
        var_es = float(se_es[0] ** 2 * reps)  # per replication
        _, _, g_ref, se_ref, _ = es_gradient(
            obj, space, zz, jax.random.key(2), sigma=0.1, num_pairs=1,
            num_reps=ref_reps, chunk=2 * reps,
        )  # fmt: skip
        keys = jax.random.split(jax.random.key(3), 2 * reps)
        if isinstance(inst, str):
            mus = jax.random.uniform(jax.random.key(4), (2 * reps, k), minval=0.3,
                                     maxval=0.7)  # fmt: skip
        else:
            mus = jnp.tile(jnp.asarray(inst, jnp.float32), (2 * reps, 1))
        for tau in taus:
            f = soft_loss(index, kind, k, thr, budget, tau, 0.02, lo, hi)
            f = jax.jit(jax.vmap(jax.value_and_grad(f), in_axes=(None, 0, 0)))
            _, g = f(jnp.float32(z), keys, mus)
            g = np.asarray(g, np.float64)
            g = g[np.isfinite(g)]
            rows.append(
                dict(
                    task=name, z=z, tau=tau, theta=float(lo * (hi / lo) ** z),
                    es=float(g_es[0]), es_sd=math.sqrt(var_es),
                    ref=float(g_ref[0]), ref_se=float(se_ref[0]),
                    pw=float(g.mean()), pw_sd=float(g.std(ddof=1)),
                    # variance of the mean at equal simulations N: ES costs 2 per rep
                    ratio=(2 * var_es) / max(float(g.var(ddof=1)), 1e-300),
                    # error of each mean estimate against the reference at N = 1000
                    # simulations (ES is unbiased for it; PW is not)
                    rmse_es=math.sqrt(2 * var_es / N_SIMS),
                    rmse_pw=math.sqrt(
                        (float(g.mean()) - float(g_ref[0])) ** 2 + g.var() / N_SIMS
                    ),
                    dropped=int(2 * reps - g.size),
                )
            )  # fmt: skip
    return rows


def main() -> None:
    t0 = time.perf_counter()
    print(
        f"{'task':20s} {'theta':>8s} {'tau':>5s} {'ES mean':>9s} {'ES sd':>8s} "
        f"{'ref':>9s} {'ref se':>7s} {'PW mean':>9s} {'PW sd':>8s} {'var ES/PW':>9s} "
        f"{'RMSE ES':>8s} {'RMSE PW':>8s} {'nan':>4s}"
    )
    for task in TASKS:
        for r in measure(task, zs=(0.25, 0.5, 0.75)):
            print(
                f"{r['task']:20s} {r['theta']:8.3g} {r['tau']:5.2f} {r['es']:9.4f} "
                f"{r['es_sd']:8.3f} {r['ref']:9.4f} {r['ref_se']:7.4f} {r['pw']:9.4g} "
                f"{r['pw_sd']:8.3g} {r['ratio']:9.3g} {r['rmse_es']:8.3f} "
                f"{r['rmse_pw']:8.3g} {r['dropped']:4d}",
                flush=True,
            )
    print(f"{time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()
