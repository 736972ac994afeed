"""jbandits: bandit algorithms as pure JAX functions, batched with vmap, run with scan.

Quick start::

    import jax, jbandits
    bandit, params = jbandits.envs.bernoulli([0.2, 0.45, 0.55, 0.8])
    policy = jbandits.make("apt", num_arms=4, threshold=0.5, epsilon=0.05)
    res = jbandits.simulate(policy, bandit, params, jax.random.key(0), budget=200,
                            num_reps=1000, metric=jbandits.metrics.thresholding(0.5))
    res.metrics["error"].mean()
"""

import importlib as _importlib

__version__ = "0.3.0"

# ``import jbandits`` loads nothing: the library (JAX with it) is imported on the first
# use of a name, ``jbandits.simulate`` or ``from jbandits import make`` (PEP 562), all
# of it at once, so every name below is there as before. A program that needs only a
# light part starts without JAX: the ``jbandits`` command installs its Ctrl-C handler
# before the heavy imports (:mod:`jbandits.cli.launch`).
_SUBPACKAGES = ("analysis", "core", "envs", "policies", "sim", "tuning", "cli")
_NAMES = {  # public name -> (module, attribute)
    "metrics": ("jbandits.analysis", "metrics"),
    "oracles": ("jbandits.analysis", "oracles"),
    "truth": ("jbandits.analysis", "truth"),
    "registry": ("jbandits.core", "registry"),
    "Execution": ("jbandits.core.execution", "Execution"),
    "factory": ("jbandits.core.registry", "factory"),
    "make": ("jbandits.core.registry", "make"),
    "names": ("jbandits.core.registry", "names"),
    "register": ("jbandits.core.registry", "register"),
    "Bandit": ("jbandits.core.types", "Bandit"),
    "Policy": ("jbandits.core.types", "Policy"),
    "problems": ("jbandits.envs", "problems"),
    "blocks": ("jbandits.policies", "blocks"),
    "RunResult": ("jbandits.sim", "RunResult"),
    "SweepResult": ("jbandits.sim", "SweepResult"),
    "product_grid": ("jbandits.sim", "product_grid"),
    "run": ("jbandits.sim", "run"),
    "simulate": ("jbandits.sim", "simulate"),
    "sweep": ("jbandits.sim", "sweep"),
    "sweep_grid": ("jbandits.sim", "sweep_grid"),
}
_LOADED = _LOADING = False


def _load() -> None:
    """Import the library and bind its public names here (once)."""
    global _LOADED, _LOADING
    if _LOADED or _LOADING:  # loaded, or a name read by the imports themselves
        return
    _LOADING = True
    try:
        for sub in _SUBPACKAGES[:-1]:  # cli stays unloaded until used
            _importlib.import_module(f"jbandits.{sub}")
        for name, (module, attr) in _NAMES.items():
            globals()[name] = _attribute(module, attr)
        _factories()
        _LOADED = True
    finally:
        _LOADING = False


def _attribute(module: str, attr: str):
    """``module.attr``: an attribute, or a submodule not imported by its package."""
    mod = _importlib.import_module(module)
    if hasattr(mod, attr):
        return getattr(mod, attr)
    return _importlib.import_module(f"{module}.{attr}")


def _factories() -> None:
    global __all__
    registry = _importlib.import_module("jbandits.core.registry")
    # Top-level factories (``jbandits.apt``, ...), one per registered policy, from
    # the registry: they build policies that remember their arguments (policy.spec),
    # so the runner compiles one program per policy rather than one per closure. A
    # policy registered later (outside the package) is reached the same way, below.
    builtin = registry.names()
    globals().update({name: registry.factory(name) for name in builtin})
    __all__ = sorted({*_SUBPACKAGES[:-1], *_NAMES}) + builtin


def __getattr__(name: str):
    if name in _SUBPACKAGES:
        # a subpackage, with the library loaded first (cli excepted), so that what an
        # eager import made reachable, ``jbandits.core.registry``, is there as before
        if name != "cli":
            _load()
        return _importlib.import_module(f"jbandits.{name}")
    if name.startswith("__") and name != "__all__":
        raise AttributeError(f"module 'jbandits' has no attribute {name!r}")
    _load()
    if name in globals():
        return globals()[name]
    registry = _importlib.import_module("jbandits.core.registry")
    if name in registry.names():
        return registry.factory(name)
    raise AttributeError(f"module 'jbandits' has no attribute {name!r}")


def __dir__() -> list[str]:
    _load()
    registry = _importlib.import_module("jbandits.core.registry")
    return sorted(set(globals()) | set(registry.names()))
