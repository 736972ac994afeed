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
from jbandits.policies.thresholding import apt, lsa, ua, uniform
from jbandits.registry import factory, make, names, register
from jbandits.types import Bandit, Policy

__version__ = "0.1.0"

__all__ = [
    "Bandit",
    "Policy",
    "RunResult",
    "apt",
    "arms",
    "envs",
    "factory",
    "lsa",
    "make",
    "metrics",
    "names",
    "problems",
    "product_grid",
    "register",
    "run",
    "schedules",
    "simulate",
    "sweep",
    "truth",
    "tune",
    "ua",
    "uniform",
]
