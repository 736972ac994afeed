"""The fixed-confidence skeleton: a policy that samples until Chernoff's GLR stopping
rule certifies the best arm at confidence ``1 - delta`` (Garivier & Kaufmann, "Optimal
Best Arm Identification with Fixed Confidence", COLT 2016, GK16, Sec. 3.2, via
:mod:`jbandits.policies.blocks.glr`), written once: the state, its initialisation, the
argument checks, the observe-then-stop step and the recommendation. A policy supplies
only its sampling rule::

    def rule(state, obs, key):  # -> Decision(arm, extra)
        return stopping.Decision(my_pick(obs.stats, state.arm_mask), state.extra)

    policy = stopping.glr_policy(K, rule, delta=delta, family=family, sigma=sigma,
                                 threshold=threshold)

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

from collections.abc import Callable
from typing import Any, NamedTuple

import jax.numpy as jnp

from jbandits.core import validate as _validate
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
    num_arms: int,
    arm_mask: Array,
    start: Start | None = None,
    *,
    delta: ArrayLike,
    family: str,
    threshold: str,
) -> StoppingState:
    """No samples, the round robin's first arm next, ``extra = start(stats, arm_mask)``
    (None without ``start``)."""
    stats = arms.init_stats(num_arms, variance=False)
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
    *,
    family: str,
    sigma: ArrayLike,
    delta: ArrayLike,
    threshold: str,
) -> Observed:
    """Update ``stats`` with ``reward`` of ``arm``, then Chernoff's stopping test."""
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
    *,
    delta: ArrayLike,
    family: str,
    sigma: ArrayLike,
    threshold: str,
    start: Start | None = None,
    output: Callable[[StoppingState], Array] | None = None,
    round_robin: bool = True,
) -> Policy:
    """A fixed-confidence policy with sampling rule ``rule`` (module docstring).

    Args:
      num_arms: static K (including padded arms), checked by :func:`check_args`.
      rule: ``(state, obs, key) -> Decision``: ``state`` the previous
        :class:`StoppingState` (``state.arm`` the arm whose reward ``obs`` holds),
        ``obs`` the :class:`Observed` step, ``key`` the step's key.
      delta, family, sigma, threshold: those of :func:`check_args` (``delta`` and
        ``sigma`` may be traced).
      start: ``(stats, arm_mask) -> extra``, the rule's initial state (None: none).
      output: ``state -> answer`` (default :func:`recommend`, the empirical best).
      round_robin: static; False: the rule chooses every arm (no initial round robin;
        ``Decision.stop`` must then stay False while the rule's own start lasts).

    Returns a :class:`jbandits.Policy` of setting ``"identification"`` whose state is
    a :class:`StoppingState`; the engine's ``num_pulls`` is the stopping time.
    """

    def init_fn(key, arm_mask):
        del key
        return init_state(
            num_arms, arm_mask, start, delta=delta, family=family, threshold=threshold
        )

    def step_fn(state, key, reward):
        obs = observe(
            state.stats, state.arm, reward, state.t, state.arm_mask, state.constant,
            family=family, sigma=sigma, delta=delta, threshold=threshold,
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
