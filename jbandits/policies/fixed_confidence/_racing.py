"""Racing in rounds (Garivier & Kaufmann, COLT 2016, Sec. 6, pp. 13-14; Kaufmann &
Kalyanakrishnan, COLT 2013, Algorithm 1 with m = 1, eps = 0), shared by
:mod:`~jbandits.policies.fixed_confidence.kl_racing` and
:mod:`~jbandits.policies.fixed_confidence.chernoff_racing`.

All real arms start active. A round pulls every active arm once, in index order; at
the end of round ``r`` (every active arm then has ``r`` samples) the empirical best
``a_r`` and the empirical worst ``b`` of the active arms (lowest index on ties) are
compared by the policy's elimination test with the exploration rate ``beta(s, delta)``
of :func:`jbandits.policies.blocks.glr.threshold`; at most one arm (``b``) is
eliminated per round. The policy stops (``arm = -1``) as soon as one arm remains and
recommends it; a run cut by its budget recommends the empirical best active arm.

``clock`` (static) is the time ``s`` in the rate: ``"round"`` (the papers: ``beta(r,
delta)``) or ``"pulls"`` (the authors' Julia code, ``BAIalgos.jl``: the global number
of samples ``t``, ``rate(t, ., delta)``). The test is made at the end of every round,
the first included (GK16: "at the end of a round"); the authors' code tests from the
second round on (its loop draws before it tests), which only differs where a single
sample per arm already separates two arms.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import NamedTuple

import jax.numpy as jnp

from jbandits.core import validate as _validate
from jbandits.core.arguments import SharedArguments
from jbandits.core.types import Array, ArrayLike, Policy
from jbandits.policies.blocks import arms, glr
from jbandits.policies.blocks import fixed_confidence as fc

CLOCKS = ("round", "pulls")


class Race(NamedTuple):
    """The race's part of the state (``StoppingState.extra``; its ``arm`` is -1 once
    one arm remains)."""

    active: Array  # [K] bool: arms still in the race
    rounds: Array  # [] int32: completed rounds


# (family, sigma, mean of the best, mean of the worst, samples per arm r, beta) ->
# eliminate the worst
Eliminate = Callable[[str, ArrayLike, Array, Array, Array, Array], Array]


def _resolve(name, num_arms, *, clock, **chernoff) -> dict:
    out = fc.CHERNOFF.resolve(name, num_arms, **chernoff)
    _validate.choice("clock", clock, CLOCKS)
    return {**out, "clock": clock}


#: The racing policies' public arguments (``shared=ARGUMENTS``): those of
#: :data:`jbandits.policies.blocks.fixed_confidence.CHERNOFF` and ``clock``.
ARGUMENTS = SharedArguments(
    parameters=(
        *fc.CHERNOFF.parameters,
        inspect.Parameter(
            "clock", inspect.Parameter.KEYWORD_ONLY, default="round", annotation="str"
        ),
    ),
    doc=fc.CHERNOFF.doc
    + """
clock: static, the time ``s`` of the rate ``beta(s, delta)``: "round" (the papers,
  ``s = r``) or "pulls" (the authors' code, ``s = t``).""",
    provides=("chernoff", "clock"),
    resolve=_resolve,
)


def racing(
    num_arms: int,
    eliminate: Eliminate,
    chernoff: fc.Chernoff,
    *,
    clock: str,
) -> Policy:
    """The racing policy with elimination test ``eliminate`` (module docstring);
    ``chernoff`` and ``clock`` as resolved by :data:`ARGUMENTS`."""
    delta, family, sigma, threshold = chernoff
    iota = jnp.arange(num_arms, dtype=jnp.int32)

    def init_fn(key, arm_mask):
        del key
        return fc.init_state(
            num_arms, arm_mask, chernoff, lambda _, m: Race(m, jnp.zeros((), jnp.int32))
        )

    def step_fn(state, key, reward):
        del key
        stats = arms.update(state.stats, state.arm, reward)
        t = state.t + 1
        race = state.extra
        later = race.active & (iota > state.arm)
        in_round = jnp.any(later)
        rounds = race.rounds + jnp.where(in_round, 0, 1)
        means = arms.mean(stats)
        best = arms.argmax_masked(means, race.active)
        worst = arms.argmin_masked(means, race.active)
        when = rounds if clock == "round" else t
        num_real = jnp.sum(state.arm_mask)
        beta = glr.threshold(
            threshold, when, delta, num_real, family, constant=state.constant
        )
        r = rounds.astype(means.dtype)
        test = eliminate(family, sigma, means[best], means[worst], r, beta)
        drop = ~in_round & (best != worst) & test
        active = race.active & ~(drop & (iota == worst))
        done = jnp.sum(active) <= 1
        arm = jnp.where(
            in_round, jnp.argmax(later), jnp.where(done, -1, jnp.argmax(active))
        ).astype(jnp.int32)
        return fc.StoppingState(
            stats, state.arm_mask, t, state.constant, arm, Race(active, rounds)
        )

    def output_fn(state):
        return arms.best_empirical(state.stats, state.extra.active)

    return Policy(init_fn, step_fn, output_fn, "identification")
