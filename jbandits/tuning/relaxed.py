"""Softmax relaxations of index policies, for the policy-gradient estimator.

An index policy pulls ``argmin_i B_i(theta)`` (or arg-max). Its softmax relaxation
pulls arm ``i`` with probability ``softmax(-B(theta) / temperature)_i`` over the real
arms (after the same forced first pass), so the probability of a trajectory is
differentiable in ``theta`` and

    grad_theta E[L] = E[(L - b) * sum_t grad_theta log pi_theta(A_t | H_t)]

(the score-function / REINFORCE identity with a baseline ``b``). This is the
construction of Boutilier, Hsu, Kveton, Mladenov, Szepesvari and Zaheer,
"Differentiable Meta-Learning of Bandit Policies" (NeurIPS 2020, Sections 3-4), who
optimise softmax bandit policies by gradient ascent on the Bayes reward with this
estimator and baseline subtraction. The score is accumulated in the policy state as
each arm is drawn (forward mode: one ``[d]`` vector per replication, no stored
trajectory), and read from the final state by the tuner.

The relaxed policy equals the hard one in the limit ``temperature -> 0``; a tuned
``theta`` is then used with the hard policy.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import jax
import jax.numpy as jnp

from jbandits.core import registry
from jbandits.core.types import Array, Policy
from jbandits.policies.blocks import arms
from jbandits.policies.blocks.index import IndexState
from jbandits.policies.identification.ucb_e import ucb_e_index
from jbandits.policies.thresholding.apt import apt_index
from jbandits.policies.thresholding.lsa import lsa_index

# name -> (index(stats, mask, **numeric kwargs), "min" | "max", numeric names used)
INDEX: dict[str, tuple[Callable, str, tuple]] = {
    "lsa": (
        lambda stats, mask, threshold, alpha=1.35, **_: lsa_index(
            stats, threshold, alpha
        ),
        "min",
        ("threshold", "alpha"),
    ),
    "apt": (
        lambda stats, mask, threshold, epsilon=0.0, **_: apt_index(
            stats, threshold, epsilon
        ),
        "min",
        ("threshold", "epsilon"),
    ),
    "ucb_e": (
        lambda stats, mask, a, **_: ucb_e_index(stats, a),
        "max",
        ("a",),
    ),
}


class RelaxedState(NamedTuple):
    stats: arms.ArmStats
    arm_mask: Array  # [K] bool
    t: Array  # [] int32 pulls done
    arm: Array  # [] int32 next arm
    score: dict  # name -> [] sum_t d log pi(A_t) / d theta_name


def relaxed_policy(
    num_arms: int,
    *,
    name: str,
    temperature: float,
    tuned: tuple,
    **kwargs,
) -> Policy:
    """Softmax relaxation of the registered index policy ``name``.

    Args:
      num_arms: static K.
      name: a key of :data:`INDEX`.
      temperature: softmax temperature (> 0) on the index scale.
      tuned: names of the numeric arguments whose score is accumulated.
      **kwargs: the policy's own arguments (threshold, alpha, ...).
    """
    if name not in INDEX:
        raise ValueError(
            f"the policy-gradient estimator needs an index policy; {name!r} is not "
            f"one of {sorted(INDEX)} (use estimator='es')"
        )
    index, select, _ = INDEX[name]
    hard = registry.raw_factory(name)(num_arms=num_arms, **kwargs)
    sign = -1.0 if select == "min" else 1.0
    fixed = {k: v for k, v in kwargs.items() if k not in tuned}

    def logits(stats, mask, theta):
        b = index(stats, mask, **fixed, **theta)
        return jnp.where(mask, sign * b / temperature, -jnp.inf)

    def init_fn(key, arm_mask):
        del key
        zero = jnp.zeros((), jnp.int32)
        score = {k: jnp.zeros((), jnp.result_type(float)) for k in tuned}
        return RelaxedState(
            arms.init_stats(num_arms),
            arm_mask,
            zero,
            arms.round_robin(0, arm_mask),
            score,
        )

    def step_fn(state, key, reward):
        stats = arms.update(state.stats, state.arm, reward)
        t = state.t + 1
        forced, rr = arms.forced_arm(t, state.arm_mask, 1)
        theta = {k: jnp.asarray(kwargs[k], jnp.result_type(float)) for k in tuned}
        lg = logits(stats, state.arm_mask, theta)
        arm = jax.random.categorical(key, lg).astype(jnp.int32)

        def logp(th):
            return jax.nn.log_softmax(logits(stats, state.arm_mask, th))[arm]

        grad = jax.grad(logp)(theta)
        score = {
            k: state.score[k] + jnp.where(forced, 0.0, jnp.nan_to_num(grad[k]))
            for k in tuned
        }
        return RelaxedState(stats, state.arm_mask, t, jnp.where(forced, rr, arm), score)

    def output_fn(state):
        return hard.output(IndexState(state.stats, state.arm_mask, state.t, state.arm))

    return Policy(init_fn, step_fn, output_fn, hard.setting)


def source(name: str, static: dict, tuned: tuple, temperature: float):
    """A :class:`jbandits.sim.runner.Source` building the relaxed ``name``."""
    from jbandits.sim import runner

    if not (isinstance(temperature, (int, float)) and temperature > 0):
        raise ValueError(f"temperature must be a number > 0, got {temperature!r}")
    items = tuple(sorted(static.items())) + (
        ("name", name),
        ("temperature", float(temperature)),
        ("tuned", tuple(tuned)),
    )
    return runner.Source(
        relaxed_policy,
        items,
        ident=("relaxed", name),
        name=f"{name}-softmax",
        prepare=None,
    )
