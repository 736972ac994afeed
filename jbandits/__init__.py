"""jbandits: bandit algorithms as pure JAX functions, batched with vmap, run with scan.

Quick start::

    import jax, jbandits
    bandit, params = jbandits.envs.bernoulli([0.2, 0.45, 0.55, 0.8])
    policy = jbandits.make("apt", num_arms=4, threshold=0.5, epsilon=0.05)
    res = jbandits.simulate(policy, bandit, params, jax.random.key(0), budget=200,
                            num_reps=1000, metric=jbandits.metrics.thresholding(0.5))
    res.metrics["error"].mean()
"""

from jbandits import (
    arms,
    envs,
    metrics,
    oracles,
    problems,
    runner,
    schedules,
    truth,
    tune,
)
from jbandits.engine import RunResult, run
from jbandits.registry import factory, make, names, register
from jbandits.sweeps import (
    SweepResult,
    product_grid,
    simulate,
    sweep,
    sweep_grid,
)
from jbandits.types import Bandit, Policy

# Top-level factories build policies that remember their arguments (policy.spec),
# so the runner compiles one program per policy rather than one per closure.
apt = factory("apt")
augucb = factory("augucb")
bayes_ucb = factory("bayes_ucb")
csar = factory("csar")
dmed = factory("dmed")
eucbv = factory("eucbv")
gape = factory("gape")
gape_v = factory("gape_v")
klucb = factory("klucb")
lsa = factory("lsa")
median_elimination = factory("median_elimination")
moss = factory("moss")
ocucb = factory("ocucb")
optkg = factory("optkg")
sar = factory("sar")
sequential_halving = factory("sequential_halving")
shadavar = factory("shadavar")
shvar = factory("shvar")
successive_rejects = factory("successive_rejects")
thompson = factory("thompson")
ua = factory("ua")
ucb1 = factory("ucb1")
ucb_e = factory("ucb_e")
ucb_improved = factory("ucb_improved")
ucbe = factory("ucbe")
ucbev = factory("ucbev")
ucbv = factory("ucbv")
ugapeb = factory("ugapeb")
ugapec = factory("ugapec")
uniform = factory("uniform")
vbr_provisional = factory("vbr_provisional")

__version__ = "0.1.0"

__all__ = [
    "Bandit",
    "Policy",
    "RunResult",
    "SweepResult",
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
    "oracles",
    "problems",
    "product_grid",
    "register",
    "run",
    "runner",
    "sar",
    "schedules",
    "sequential_halving",
    "shadavar",
    "shvar",
    "simulate",
    "successive_rejects",
    "sweep",
    "sweep_grid",
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
