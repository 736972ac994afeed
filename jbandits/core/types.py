"""Core types: the Policy and Bandit contracts shared by every module.

A *policy* is a NamedTuple of pure functions over a state pytree (optax/blackjax style):

* ``init(key, arm_mask) -> state``: ``state.arm`` is the first arm to pull.
* ``step(state, key, reward) -> state``: ``reward`` is the reward of ``state.arm``; the
  new state holds the next arm in ``state.arm``. ``state.arm == -1`` means *idle*: the
  policy has finished (a fixed schedule is spent, or a fixed-confidence rule stopped);
  the engine then stops pulling and the state is frozen (idle is absorbing).
* ``output(state)``: thresholding -> labels ``[K] bool``; identification -> best arm
  ``[] int32``; top-m -> mask ``[K] bool``; regret -> best-arm guess ``[] int32``.

A *bandit* is static configuration plus a params pytree (gymnax style). Its ``sample``
follows the reward-stack model: the ``j``-th reward of arm ``i`` in a replication is a
deterministic function of ``(key, i, j)``, so all algorithms fed the same key see the
same rewards (common random numbers) and plain-Python references can be fed the same
stack.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple, Protocol

import jax

Array = jax.Array
ArrayLike = jax.typing.ArrayLike
Key = jax.Array
Params = Any


class State(Protocol):
    """A policy's state: a pytree, in practice the policy's own NamedTuple (e.g.
    ``SRState``), in policy arm numbering. The engine reads only ``arm`` (the next
    arm to pull, ``-1`` when idle); ``RunResult.state`` returns it whole."""

    arm: Array


SETTINGS = ("thresholding", "identification", "top_m", "regret")


class Policy(NamedTuple):
    """A bandit algorithm as pure functions; see the module docstring.

    ``setting`` is static metadata: one of :data:`SETTINGS`; it tells the engine which
    metrics apply to ``output``. ``spec`` records how a registered policy was built
    (:class:`PolicySpec`, set by :func:`jbandits.make` and the top-level factories), so
    the batched runner can rebuild it inside ``jit`` with its numbers traced and cache
    one compilation per program rather than per closure; hand-built policies leave it
    None.

    ``diagnostics`` (optional) is the policy's read-only info channel, in the spirit of
    blackjax's ``info``: ``diagnostics(state) -> {name: array}`` with every array either
    a scalar or indexed by arm on its last axis (policy numbering). The engine reads it
    at each checkpoint when asked (``diagnostics=True``) and returns it in bandit
    numbering as ``RunResult.diagnostics`` (e.g. EUCBV's active set), so nothing has to
    rebuild a policy to look inside it.
    """

    init: Callable[[Key, Array], State]
    step: Callable[[State, Key, Array], State]
    output: Callable[[State], Array]
    setting: str
    spec: Any = None
    diagnostics: Callable[[State], dict] | None = None

    @property
    def params(self) -> dict | None:
        """The numbers of a registered policy (``spec.params``: data, carried in its
        state; see :mod:`jbandits.core.numbers`), None for a hand-built one."""
        return None if self.spec is None else self.spec.params


class PolicySpec(NamedTuple):
    """What a registered policy was built from, split once by :func:`jbandits.make`.

    * ``name``: the registered name;
    * ``static``: the structure, sorted ``((key, value), ...)`` of hashable values
      (``num_arms``, tie rules, variants, the integers the policy declares static,
      its :class:`~jbandits.core.execution.Execution`): the compiled program depends on
      these, and they key its cache;
    * ``params``: the numbers (threshold, epsilon, rho, budgets, schedules, ...),
      a dict pytree of scalars or arrays, the factory's numeric defaults filled in:
      data, carried in the policy's state and batched by the runner, so a sweep over
      them compiles once (:mod:`jbandits.core.numbers`).
    """

    name: str
    static: tuple
    params: dict

    @property
    def kwargs(self) -> tuple:
        """Every keyword argument, sorted ``((key, value), ...)`` (static and
        numeric together: what the factory was called with)."""
        return tuple(sorted((*self.static, *self.params.items())))


class Bandit(NamedTuple):
    """A reward family. ``params`` is a pytree of arrays with an ``arm_mask`` leaf.

    * ``sample(params, key, arm, pull_index) -> reward`` (the reward stack);
    * ``means(params) -> [K]`` true means (padded arms hold a finite dummy value);
    * ``stds(params) -> [K]`` true standard deviations;
    * ``check(params, budget)``: host-side validation before a run (raise ValueError);
    * ``name``: a short name for reports;
    * ``params_type`` (optional): the params class of the family (e.g.
      ``BernoulliParams``); the entry points refuse params of another class (a
      Gaussian instance on the Bernoulli family would run with its stds ignored).
      None (the default, for hand-built families) skips the check.
    """

    sample: Callable[[Params, Key, Array, Array], Array]
    means: Callable[[Params], Array]
    stds: Callable[[Params], Array]
    check: Callable[[Params, Any], None]
    name: str
    params_type: Any = None
