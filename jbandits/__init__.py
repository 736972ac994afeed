"""jbandits: bandit algorithms as pure JAX functions, batched with vmap, run with scan.

Quick start::

    import jax, jbandits
    bandit, params = jbandits.envs.bernoulli([0.2, 0.45, 0.55, 0.8])
    policy = jbandits.make("apt", num_arms=4, threshold=0.5, epsilon=0.05)
    res = jbandits.simulate(policy, bandit, params, jax.random.key(0), budget=200,
                            num_reps=1000, metric=jbandits.metrics.thresholding(0.5))
    res.metrics["error"].mean()
"""

from jbandits import analysis, core, envs, policies, sim, tuning
from jbandits.analysis import metrics, oracles, truth
from jbandits.core import registry
from jbandits.core.execution import Execution
from jbandits.core.registry import factory, make, names, register
from jbandits.core.types import Bandit, Policy
from jbandits.envs import problems
from jbandits.policies import blocks
from jbandits.sim import (
    RunResult,
    SweepResult,
    product_grid,
    run,
    simulate,
    sweep,
    sweep_grid,
)

# Top-level factories (``jbandits.apt``, ...), one per registered policy, generated
# from the registry: they build policies that remember their arguments
# (policy.spec), so the runner compiles one program per policy rather than one per
# closure. A policy registered later (outside the package) is reached the same way
# through the module's __getattr__.
_BUILTIN = tuple(names())
globals().update({_name: factory(_name) for _name in _BUILTIN})


def __getattr__(name: str):
    if name in names():
        return factory(name)
    raise AttributeError(f"module 'jbandits' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(names()))


__version__ = "0.2.0"

__all__ = [
    "Bandit",
    "Execution",
    "Policy",
    "RunResult",
    "SweepResult",
    "analysis",
    "blocks",
    "core",
    "envs",
    "factory",
    "make",
    "metrics",
    "names",
    "oracles",
    "policies",
    "problems",
    "product_grid",
    "register",
    "registry",
    "run",
    "sim",
    "simulate",
    "sweep",
    "sweep_grid",
    "truth",
    "tuning",
    *_BUILTIN,
]
