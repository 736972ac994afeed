"""Which arguments are numbers, and how a registered policy carries them: the one home.

**The rule.** A keyword argument of a policy factory is *static* (it fixes the
compiled program: shapes, control flow) when it is ``num_arms``, an integer the
policy declares with ``static=`` at registration, or a string, a bool, ``None`` or
an :class:`~jbandits.core.execution.Execution` (:func:`is_static`). Every other
argument is a *number* (τ, ε, α, ρ, δ, priors, budgets, horizons, host schedules) and
is traced: a sweep, a loop of ``simulate`` calls or a tuner over it compiles one
program, its default value included (defaults are traced like any other value).

**How numbers travel.** A registered policy splits into its *structure*
(:class:`Structure`) and its numbers.

Every registered policy splits into its *structure* (name, K, tie rule, variant, the
integers it declares static, its :class:`~jbandits.core.execution.Execution`), which fixes
the compiled program, and its *numbers* (τ, ε, α, ρ, δ, priors, budgets, horizons,
host schedules), a dict pytree: :attr:`jbandits.Policy.params`, with the factory's
numeric defaults filled in. As in optax's ``inject_hyperparams``, ``init`` puts the
numbers into the state (:class:`WithParams`) and ``step`` / ``output`` read them from
there, so the contract stays ``step(state, key, reward) -> state`` and a batch of lanes
with different numbers is a batch of states, not a batch of programs::

    structure = jbandits.core.registry.bind("apt", num_arms=4)
    policy = structure.policy({"threshold": 0.5, "epsilon": 0.05})
    policy.params                      # {"epsilon": 0.05, "threshold": 0.5}
    state = policy.init(key, mask)     # state.params is that dict, state.inner APT's
    state.counts                       # the algorithm's own fields read through

**Optional numbers.** A number whose factory default is ``None`` ("derived from
the other arguments", e.g. APT's epsilon, the top-two rules' confidence) is static
unless the policy declares it ``optional=`` at registration: then ``None`` is spelled
:data:`NOT_GIVEN` (a float NaN), traced like any value, and the factory resolves it
with :func:`given` (the derived value where not given: on the host for a concrete
NaN, by ``jnp.where`` in a trace), so a loop through the default compiles once.

**Types.** Every number is cast to its declared type before it becomes part of a
key or a traced argument (:func:`kind_of`, :func:`cast`): an ``int`` default or a
count (``budget``, ``horizon``) without a numeric default is an integer, every other
number (optional ones included) a float; ``alpha=2`` and ``alpha=2.5`` are the same
program.

The batched runner compiles one program per structure (:meth:`Structure.policy`
under ``vmap`` with each lane's numbers) and keys its cache and stores on the name,
the digest of the registered code (:mod:`jbandits.core.code_identity`), the
structure and the numbers. The factory is the validator: it is called with the
numbers on the host by :func:`jbandits.make` (concrete values, clear errors) and with
the state's numbers whenever ``step`` is traced.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from jbandits.core import validate as _validate
from jbandits.core.declared import (  # noqa: F401  (the policies' spelling)
    COUNTS,
    NOT_GIVEN,
    absent,
    cast,
    cast_all,
    given,
    given_on_host,
    kind_of,
)
from jbandits.core.execution import Execution
from jbandits.core.types import Policy, PolicySpec

# Integer arguments that fix shapes for every policy (a policy adds its own with
# ``static=``; strings, bools, None and an Execution are static too).
STATIC_INTS = frozenset({"num_arms"})


def is_static(
    key: str, value: Any, declared: frozenset | tuple = (),
    optional: frozenset | tuple = (),
) -> bool:  # fmt: skip
    """Whether keyword ``key = value`` fixes the program (the rule above);
    ``declared``: the integers the policy registered as static; ``optional``: its
    optional numbers (``None`` there is a number, :data:`NOT_GIVEN`)."""
    if key in STATIC_INTS or key in declared:
        return True
    if value is None:
        return key not in optional
    return isinstance(value, (str, bool, np.bool_, Execution))


class WithParams(NamedTuple):
    """The state of a registered policy: its numbers and the algorithm's own state.

    The algorithm's fields read through (``state.counts`` is ``state.inner.counts``).
    """

    params: dict
    inner: Any

    def __getattr__(self, name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(self.inner, name)


@dataclass(frozen=True)
class Structure:
    """What fixes the program of a registered policy: its factory and static arguments.

    Attributes:
      name: the registered name.
      factory: ``factory(num_arms, **static, **numbers) -> Policy`` (the algorithm with
        its numbers closed over: the inner policy).
      static: sorted ``((key, value), ...)``, hashable.
      defaults: sorted ``((key, value), ...)``, the factory's numeric defaults.
      host: numbers the factory derives host-side schedules from when it is not
        handed them (``budget`` of a policy with a ``prepare`` hook): given concrete,
        they stay those values when ``step`` is traced (the schedule is exact host
        arithmetic); the batched runner hands the schedules in and traces them.
      kinds: sorted ``((key, "int" | "float"), ...)``, the declared type of each
        number (:func:`kind_of`); optional numbers default to :data:`NOT_GIVEN`.
    """

    name: str
    factory: Callable[..., Policy]
    static: tuple
    defaults: tuple = ()
    host: tuple = ()
    kinds: tuple = ()

    def numbers(self, params: dict) -> dict:
        """``params`` with the numeric defaults filled in, each cast to its declared
        type (a new dict)."""
        return cast_all(dict(self.kinds), {**dict(self.defaults), **params})

    def build(self, params: dict) -> Policy:
        """The algorithm with ``params`` (defaults filled in) closed over (refused
        unless the factory returns a usable Policy)."""
        built = self.factory(**dict(self.static), **self.numbers(params))
        who = f"the factory of {self.name!r} ({_qualname(self.factory)})"
        return _validate.policy_object(built, who)

    def policy(self, params: dict) -> Policy:
        """The policy with numbers ``params`` (defaults filled in) as data: ``init``
        puts them into the state, ``step`` and ``output`` read them from it."""
        params = self.numbers(params)
        _scalars(self.name, self.defaults, params)
        first = self.build(params)
        pinned = {
            k: params[k] for k in self.host if k in params and _concrete(params[k])
        }
        carried = jax.tree_util.tree_map(_as_array, params)  # the state's numbers
        numbers = _Numbers(self, pinned, carried, first)
        diagnostics = None if first.diagnostics is None else numbers.diagnostics
        spec = PolicySpec(self.name, self.static, params)
        return Policy(
            numbers.init, numbers.step, numbers.output, first.setting, spec,
            diagnostics,
        )  # fmt: skip


class _Numbers:
    """The functions of a registered policy whose numbers are data in its state: each
    reads them from the state and runs the algorithm built for them
    (:meth:`algorithm`)."""

    def __init__(self, structure: Structure, pinned: dict, carried: dict, first):
        self.structure = structure
        self.pinned = pinned  # host numbers kept concrete when rebuilt
        self.carried = carried  # the numbers init puts into the state
        self.first = first  # the algorithm built for them
        self.last = [carried, first]  # numbers, the algorithm built last for them

    def algorithm(self, params: dict) -> Policy:
        """The algorithm for the state's numbers: the one built last while the state
        holds those very arrays (an eager loop; the engine, which keeps them out of
        its loop: :func:`outside_loop`), else built again for the new ones (a trace
        of ``step`` alone), its host arithmetic on concrete values done at once and
        the ``pinned`` host numbers kept."""
        if not _same_leaves(params, self.last[0]):
            with jax.ensure_compile_time_eval():
                built = self.structure.build({**params, **self.pinned})
            self.last[:] = [params, built]
        return self.last[1]

    def init(self, key, arm_mask):
        mask = _mask(arm_mask, self.structure.static)
        return WithParams(self.carried, self.first.init(key, mask))

    def step(self, state, key, reward):
        new = self.algorithm(state.params).step(state.inner, key, reward)
        return WithParams(state.params, _as_structure_of(state.inner, new))

    def output(self, state):
        return self.algorithm(state.params).output(state.inner)

    def diagnostics(self, state):
        return self.algorithm(state.params).diagnostics(state.inner)


def outside_loop(policy: Policy, state):
    """``(policy, state)`` for a loop that carries the algorithm's own state only.

    A registered policy's numbers do not change from step to step: the engine keeps
    them out of its loop carry and runs the algorithm built for them (its ``step``
    is what the loop calls), so the numbers a lane was given are the ones its steps
    read (the algorithm is built once per program, as a closure over them). Returns
    ``wrap(inner) -> state`` as third item, to give back a final state in the
    policy's own form. Any other policy and state come back as they are.
    """
    if not isinstance(state, WithParams):
        return policy, state, lambda inner: inner
    params = state.params

    def wrap(inner):
        return WithParams(params, inner)

    numbers = getattr(policy.step, "__self__", None)
    if isinstance(numbers, _Numbers):
        algorithm = numbers.algorithm(params)
        loop = algorithm._replace(
            init=lambda key, mask: policy.init(key, mask).inner,
            setting=policy.setting,
            spec=policy.spec,
            diagnostics=policy.diagnostics and algorithm.diagnostics,
        )
        return loop, state.inner, wrap
    # a registered policy's state under another step (a user's wrapper)
    diagnostics = policy.diagnostics and (lambda s: policy.diagnostics(wrap(s)))
    loop = policy._replace(
        init=lambda key, mask: policy.init(key, mask).inner,
        step=lambda s, key, reward: policy.step(wrap(s), key, reward).inner,
        output=lambda s: policy.output(wrap(s)),
        diagnostics=diagnostics,
    )
    return loop, state.inner, wrap


def _same_leaves(a, b) -> bool:
    if a is b:
        return True
    xs, ys = jax.tree_util.tree_leaves(a), jax.tree_util.tree_leaves(b)
    return len(xs) == len(ys) and all(x is y for x, y in zip(xs, ys, strict=True))


def _as_array(value):
    return value if isinstance(value, jax.Array) else jnp.asarray(value)


def _concrete(value) -> bool:
    return not any(
        isinstance(x, jax.core.Tracer) for x in jax.tree_util.tree_leaves(value)
    )


def _as_structure_of(like, new):
    """``new`` in the pytree structure of ``like`` when only the node classes differ
    (a state class defined inside the factory is a new class at each build)."""
    like_def = jax.tree_util.tree_structure(like)
    leaves, new_def = jax.tree_util.tree_flatten(new)
    if new_def == like_def or new_def.num_leaves != like_def.num_leaves:
        return new
    return jax.tree_util.tree_unflatten(like_def, leaves)


def _mask(arm_mask, static: tuple):
    """A list or NumPy ``arm_mask`` (a direct call, outside the engine) as a device
    array, refused unless boolean ``[K]``."""
    if isinstance(arm_mask, jax.Array):
        return arm_mask
    host = np.asarray(arm_mask)
    if host.dtype != np.bool_:
        raise ValueError(f"arm_mask must be a boolean array [K], got {arm_mask!r}")
    num_arms = dict(static).get("num_arms")
    if isinstance(num_arms, int) and host.shape != (num_arms,):
        raise ValueError(
            f"arm_mask must have shape ({num_arms},) (num_arms), got shape {host.shape}"
        )
    return jnp.asarray(host)


def _qualname(fn) -> str:
    return f"{getattr(fn, '__module__', '?')}.{getattr(fn, '__qualname__', fn)}"


def _scalars(name: str, defaults: tuple, params: dict) -> None:
    """A number whose factory default is a scalar (``threshold=0.5``) must be one:
    an array there (``threshold=np.array([.5, .5])``) is broadcast against the
    policy's per-arm arrays and fails deep in its trace, or silently changes the
    shape of its state. Traced numbers are checked by shape only."""
    for key, default in defaults:
        value = params.get(key)
        scalar_default = isinstance(default, (int, float)) and not isinstance(
            default, bool
        )
        if scalar_default and value is not None and np.ndim(value) > 0:
            raise ValueError(
                f"{name}: {key} must be a scalar (its default is {default!r}), got "
                f"an array of shape {tuple(np.shape(value))}; for several values, "
                "sweep over them (jbandits.sweep, or a list in jbandits.sweep_grid)"
            )
