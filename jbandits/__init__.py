"""jbandits: bandit algorithms as pure JAX functions, batched with vmap, run with scan.

Quick start::

    import jax, jbandits
    bandit, params = jbandits.envs.bernoulli([0.2, 0.45, 0.55, 0.8])
    policy = jbandits.make("apt", num_arms=4, threshold=0.5, epsilon=0.05)
    res = jbandits.simulate(policy, bandit, params, jax.random.key(0), budget=200,
                            num_reps=1000, metric=jbandits.metrics.thresholding(0.5))
    res.metrics["error"].mean()
"""

from jbandits import arms, envs, metrics, problems, schedules, truth, tune
from jbandits.engine import RunResult, product_grid, run, simulate, sweep
from jbandits.policies.identification import (
    gape,
    gape_v,
    sar,
    sequential_halving,
    shadavar,
    shvar,
    successive_rejects,
    ucb_e,
    ugapeb,
    ugapec,
    vbr_provisional,
)
from jbandits.policies.regret import (
    bayes_ucb,
    dmed,
    eucbv,
    klucb,
    median_elimination,
    moss,
    ocucb,
    thompson,
    ucb1,
    ucb_improved,
    ucbv,
)
from jbandits.policies.thresholding import (
    apt,
    augucb,
    csar,
    lsa,
    optkg,
    ua,
    ucbe,
    ucbev,
    uniform,
)
from jbandits.registry import factory, make, names, register
from jbandits.types import Bandit, Policy

__version__ = "0.1.0"

__all__ = [
    "Bandit",
    "Policy",
    "RunResult",
    "apt",
    "arms",
    "augucb",
    "bayes_ucb",
    "csar",
    "dmed",
    "envs",
    "eucbv",
    "factory",
    "gape",
    "gape_v",
    "klucb",
    "lsa",
    "make",
    "median_elimination",
    "metrics",
    "moss",
    "names",
    "ocucb",
    "optkg",
    "problems",
    "product_grid",
    "register",
    "run",
    "sar",
    "schedules",
    "sequential_halving",
    "shadavar",
    "shvar",
    "simulate",
    "successive_rejects",
    "sweep",
    "thompson",
    "truth",
    "tune",
    "ua",
    "ucb1",
    "ucb_e",
    "ucb_improved",
    "ucbe",
    "ucbev",
    "ucbv",
    "ugapeb",
    "ugapec",
    "uniform",
    "vbr_provisional",
]
