"""Which arguments are numbers, and how a registered policy carries them: the one home.

**The rule.** A keyword argument of a policy factory is *static* (it fixes the
compiled program: shapes, control flow) when it is ``num_arms``, an integer the
policy declares with ``static=`` at registration, or a string, a bool, ``None`` or
an :class:`~jbandits.core.execution.Execution` (:func:`is_static`). Every other
argument is a *number* (τ, ε, α, ρ, δ, priors, budgets, horizons, host schedules) and
is traced: a sweep, a loop of ``simulate`` calls or a tuner over it compiles one
program, its default value included (defaults are traced like any other value).

**How numbers travel.** A registered policy splits into its *structure*
(:class:`Structure`: name, K, tie rule, variant, the integers it declares static, its
:class:`~jbandits.core.execution.Execution`), which fixes the compiled program, and
its *numbers* (τ, ε, α, ρ, δ, priors, budgets, horizons, host schedules), a dict
pytree: :attr:`jbandits.Policy.params`, with the factory's numeric defaults filled
in. As in blackjax, the structure is fixed and the numbers are arguments: the
policy is the factory's own, built for its numbers (:meth:`Structure.policy`), and
its state is the algorithm's own state. The batched runner builds it once per lane,
inside the compiled program, from the lane's traced numbers, so a batch of lanes
with different numbers is one program, and the loop calls the algorithm's ``step``
itself::

    structure = jbandits.core.registry.bind("apt", num_arms=4)
    policy = structure.policy({"threshold": 0.5, "epsilon": 0.05})
    policy.params                      # {"epsilon": 0.05, "threshold": 0.5}
    state = policy.init(key, mask)     # APT's own state

For numbers as data in code of one's own (a ``jit`` over several values, a
``vmap`` over lanes with different numbers), the structure has the explicit form
``structure.init(params, key, mask)``, ``structure.step(params, state, key,
reward)`` and ``structure.output(params, state)``: each builds the algorithm for
``params`` (traced or not) and calls it.

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
from typing import Any

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


@dataclass(frozen=True)
class Structure:
    """What fixes the program of a registered policy: its factory and static arguments.

    Attributes:
      name: the registered name.
      factory: ``factory(num_arms, **static, **numbers) -> Policy`` (the algorithm with
        its numbers closed over: the inner policy).
      static: sorted ``((key, value), ...)``, hashable.
      defaults: sorted ``((key, value), ...)``, the factory's numeric defaults.
      kinds: sorted ``((key, "int" | "float"), ...)``, the declared type of each
        number (:func:`kind_of`); optional numbers default to :data:`NOT_GIVEN`.
    """

    name: str
    factory: Callable[..., Policy]
    static: tuple
    defaults: tuple = ()
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
        """The factory's own policy for numbers ``params`` (defaults filled in, each
        cast to its declared type; concrete on the host, traced inside a program),
        with its :class:`~jbandits.core.types.PolicySpec` attached: ``init`` takes a
        list or NumPy ``arm_mask`` too, ``step`` and ``output`` are the algorithm's."""
        params = self.numbers(params)
        _scalars(self.name, self.defaults, params)
        built = self.build(params)
        spec = PolicySpec(self.name, self.static, params)
        return built._replace(
            init=_taking_host_masks(built.init, self.static), spec=spec
        )

    def init(self, params: dict, key, arm_mask):
        """``policy(params).init(key, arm_mask)``: numbers as data (see the module
        docstring)."""
        return self.policy(params).init(key, arm_mask)

    def step(self, params: dict, state, key, reward):
        """``policy(params).step(state, key, reward)``, the new state in the pytree
        structure of ``state`` (a state class defined inside the factory is a new
        class at each build)."""
        new = self.policy(params).step(state, key, reward)
        return _as_structure_of(state, new)

    def output(self, params: dict, state):
        """``policy(params).output(state)``."""
        return self.policy(params).output(state)


def _taking_host_masks(init, static: tuple):
    """``init`` that takes a list or NumPy boolean ``arm_mask`` as well."""

    def init_with_mask(key, arm_mask):
        return init(key, _mask(arm_mask, static))

    return init_with_mask


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
