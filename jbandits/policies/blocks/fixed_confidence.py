"""The fixed-confidence skeleton: a policy that samples until Chernoff's GLR stopping
rule certifies the best arm at confidence ``1 - delta`` (Garivier & Kaufmann, "Optimal
Best Arm Identification with Fixed Confidence", COLT 2016, GK16, Sec. 3.2, via
:mod:`jbandits.policies.blocks.glr`), written once: the state, its initialisation, the
argument checks, the observe-then-stop step and the recommendation. A policy supplies
only its sampling rule::

    @registry.policy("my_rule", shared=fixed_confidence.CHERNOFF)
    def my_rule(num_arms, *, chernoff):  # public: delta, family, sigma, threshold
        def rule(state, obs, key):  # -> Decision(arm, extra)
            return fixed_confidence.Decision(my_pick(obs.stats, state.arm_mask))

        return fixed_confidence.glr_policy(num_arms, rule, chernoff)

:data:`CHERNOFF` is the stopping rule's four arguments as a registry group
(:mod:`jbandits.core.arguments`): the public factory takes ``delta``, ``family``,
``sigma`` and ``threshold`` (checked by :func:`check_args`; their entries are
appended to the ``Args:`` section its docstring must have), the policy's own function
receives them as one :class:`Chernoff`.

A step (:func:`glr_policy`): the statistics take the reward of ``state.arm``; ``t``
(the number of samples observed) grows by one; while ``t < K`` (real arms) the next
arm is the initial round robin's; from ``t = K`` on the policy stops (``arm = -1``,
absorbing) when ``Z(t) > beta(t, delta)``, else pulls the rule's ``A_{t+1}``. A rule
may keep state of its own (``state.extra``, from ``start``), replace the stopping
decision (``Decision.stop``: a posterior rule, GLR-epsilon) and skip the round robin
(``round_robin=False``). The recommendation is the empirical best (:func:`recommend`).

Track-and-Stop, Best Challenger, uniform sampling, FWS, DKM, T3C, TTTS, TTUCB and
EB-TC are built on :func:`glr_policy`; the racing policies keep :class:`StoppingState`
and :func:`init_state` with a step of their own. The parts of tracking rules are in
:mod:`jbandits.policies.blocks.tracking`.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any, NamedTuple

import jax.numpy as jnp

from jbandits.core import validate as _validate
from jbandits.core.arguments import SharedArguments
from jbandits.core.types import Array, ArrayLike, Key, Policy
from jbandits.policies.blocks import arms, glr

FAMILIES = glr.FAMILIES


def check_args(num_arms, delta, family: str, sigma, threshold: str) -> int:
    """Validate the arguments every GLR-stopped policy takes; the static K."""
    num_arms = _validate.static_int("num_arms", num_arms, minimum=2)
    _validate.in_range("delta", delta, 0.0, 1.0, low_open=True, high_open=True)
    _validate.choice("family", family, FAMILIES)
    _validate.in_range("sigma", sigma, 0.0, low_open=True)
    # a threshold name the family has no calibration for raises here (glr's message)
    glr.threshold_constant(threshold, 0.5, 2, family)
    return num_arms


def threshold_constant(threshold: str, delta, arm_mask: Array, family: str) -> Array:
    """The time-free part of ``beta(t, delta)`` for the real arms of ``arm_mask``."""
    return glr.threshold_constant(threshold, delta, jnp.sum(arm_mask), family)


class Chernoff(NamedTuple):
    """The checked arguments of Chernoff's stopping rule (:data:`CHERNOFF`)."""

    delta: ArrayLike  # confidence, 0 < delta < 1 (traced)
    family: str  # static: "bernoulli" or "gaussian"
    sigma: ArrayLike  # Gaussian standard deviation (traced)
    threshold: str  # static: a name of glr.THRESHOLDS


_CHERNOFF_DOC = """\
delta: confidence, 0 < delta < 1 (traced).
family: static, "bernoulli" or "gaussian" (known ``sigma``).
sigma: Gaussian standard deviation > 0 (traced; unused for Bernoulli).
threshold: static name of :data:`jbandits.policies.blocks.glr.THRESHOLDS`, the
  stopping threshold ``beta(t, delta)`` (default "practical", ``log((log t +
  1)/delta)``, the rate of GK16's experiments and of the authors' codes; not covered
  by a theorem, "delta_correct" is)."""


def _keyword(name: str, default, annotation: str) -> inspect.Parameter:
    return inspect.Parameter(
        name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=annotation
    )


def _resolve(name, num_arms, *, delta, family, sigma, threshold) -> dict:
    del name
    check_args(num_arms, delta, family, sigma, threshold)
    return {"chernoff": Chernoff(delta, family, sigma, threshold)}


#: The stopping rule's public arguments as a registry group (``shared=CHERNOFF``):
#: ``delta=0.1``, ``family="bernoulli"``, ``sigma=1.0``, ``threshold="practical"``,
#: checked, then passed to the policy's function as ``chernoff`` (:class:`Chernoff`).
CHERNOFF = SharedArguments(
    parameters=(
        _keyword("delta", 0.1, "ArrayLike"),
        _keyword("family", "bernoulli", "str"),
        _keyword("sigma", 1.0, "ArrayLike"),
        _keyword("threshold", "practical", "str"),
    ),
    doc=_CHERNOFF_DOC,
    provides=("chernoff",),
    resolve=_resolve,
)


class StoppingState(NamedTuple):
    """The state of a fixed-confidence policy."""

    stats: arms.ArmStats
    arm_mask: Array  # [K] bool
    t: Array  # [] int32: samples observed
    constant: Array  # [] the time-free part of beta (delta, K)
    arm: Array  # [] int32: next arm; -1 once stopped (absorbing)
    extra: Any = None  # the sampling rule's own state (a pytree; None: none)


# (fresh statistics, arm_mask) -> the rule's initial extra state
Start = Callable[[arms.ArmStats, Array], Any]


def init_state(
    num_arms: int, arm_mask: Array, chernoff: Chernoff, start: Start | None = None
) -> StoppingState:
    """No samples, the round robin's first arm next, ``extra = start(stats, arm_mask)``
    (None without ``start``)."""
    stats = arms.init_stats(num_arms, variance=False)
    delta, family, _, threshold = chernoff
    return StoppingState(
        stats,
        arm_mask,
        jnp.zeros((), jnp.int32),
        threshold_constant(threshold, delta, arm_mask, family),
        arms.round_robin(0, arm_mask),
        None if start is None else start(stats, arm_mask),
    )


class Observed(NamedTuple):
    """A step's bookkeeping before the sampling rule."""

    stats: arms.ArmStats  # with the new reward
    t: Array  # [] int32: samples observed
    forced: Array  # [] bool: the initial round robin is not over
    rr: Array  # [] int32: its next arm
    stop: Array  # [] bool: Z(t) > beta(t, delta) (never during the round robin)
    stat: glr.GLR  # Z(t), leader, challenger


def observe(
    stats: arms.ArmStats,
    arm: Array,
    reward: ArrayLike,
    t: Array,
    arm_mask: Array,
    constant: Array,
    chernoff: Chernoff,
) -> Observed:
    """Update ``stats`` with ``reward`` of ``arm``, then Chernoff's stopping test."""
    delta, family, sigma, threshold = chernoff
    stats = arms.update(stats, arm, reward)
    t = t + 1
    forced, rr = arms.forced_arm(t, arm_mask)
    means = arms.mean(stats)
    stop, stat = glr.stops(
        family, stats.counts, means, arm_mask, t, delta, sigma, threshold,
        constant=constant,
    )  # fmt: skip
    return Observed(stats, t, forced, rr, ~forced & stop, stat)


def recommend(stats: arms.ArmStats, arm_mask: Array) -> Array:
    """``argmax_a mu_a`` over the pulled real arms, lowest index on ties (GK16 Sec. 3)."""
    return arms.best_empirical(stats, arm_mask)


class Decision(NamedTuple):
    """A sampling rule's answer for one step."""

    arm: Array  # [] int: the arm to pull if the policy goes on
    extra: Any = None  # the rule's new extra state
    stop: Array | None = None  # [] bool replacing Chernoff's test (None: obs.stop)


# (previous state, this step's observation, step key) -> Decision
Rule = Callable[[StoppingState, Observed, Key], Decision]


def glr_policy(
    num_arms: int,
    rule: Rule,
    chernoff: Chernoff,
    *,
    start: Start | None = None,
    output: Callable[[StoppingState], Array] | None = None,
    round_robin: bool = True,
) -> Policy:
    """A fixed-confidence policy with sampling rule ``rule`` (module docstring).

    Args:
      num_arms: static K (including padded arms).
      rule: ``(state, obs, key) -> Decision``: ``state`` the previous
        :class:`StoppingState` (``state.arm`` the arm whose reward ``obs`` holds),
        ``obs`` the :class:`Observed` step, ``key`` the step's key.
      chernoff: the stopping rule's arguments (:class:`Chernoff`, from
        :data:`CHERNOFF`; or checked by :func:`check_args`).
      start: ``(stats, arm_mask) -> extra``, the rule's initial state (None: none).
      output: ``state -> answer`` (default :func:`recommend`, the empirical best).
      round_robin: static; False: the rule chooses every arm (no initial round robin;
        ``Decision.stop`` must then stay False while the rule's own start lasts).

    Returns a :class:`jbandits.Policy` of setting ``"identification"`` whose state is
    a :class:`StoppingState`; the engine's ``num_pulls`` is the stopping time.
    """

    def init_fn(key, arm_mask):
        del key
        return init_state(num_arms, arm_mask, chernoff, start)

    def step_fn(state, key, reward):
        obs = observe(
            state.stats, state.arm, reward, state.t, state.arm_mask, state.constant,
            chernoff,
        )  # fmt: skip
        decision = rule(state, obs, key)
        stop = obs.stop if decision.stop is None else decision.stop
        arm = jnp.where(stop, -1, decision.arm)
        if round_robin:
            arm = jnp.where(obs.forced, obs.rr, arm)
        return StoppingState(
            obs.stats, state.arm_mask, obs.t, state.constant, arm.astype(jnp.int32),
            decision.extra,
        )  # fmt: skip

    def output_fn(state):
        if output is None:
            return recommend(state.stats, state.arm_mask)
        return output(state)

    return Policy(init_fn, step_fn, output_fn, "identification")
