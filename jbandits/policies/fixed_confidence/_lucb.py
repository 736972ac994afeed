"""The LUCB sampling and stopping machinery shared by :mod:`.lucb1` and
:mod:`.kl_lucb` (Kaufmann & Kalyanakrishnan, COLT 2013, Algorithm 2, with m = 1).

One *stage* of LUCB draws two arms: the empirical best ``h_t`` (``J(t)`` for m = 1,
whose lower bound is ``l_t``'s) and the challenger ``u_t = argmax_{j != h_t} U_j(t)``.
The engine pulls one arm a step, so a stage is two consecutive steps: the leader first,
then the challenger chosen with it (the bounds change only at stage boundaries). After
the K initial pulls the stage counter is ``t = 1`` and ``B(1) = +inf`` (no stopping
test); at every later boundary ``B(t) = U_{u_t}(t) - L_{h_t}(t)`` and the run stops
when ``B(t) <= eps`` (KK13 Algorithm 2: "while B(t) > eps"), outputting ``h_t``.
With ``stopping="glr"`` the boundary test is instead the Chernoff GLR rule of
:mod:`jbandits.policies.blocks.glr` at the number of samples ``n`` (``Z(n) >
beta(n, delta)``), the sampling unchanged (the authors' ``ChernoffKLLUCB``).

Exploration rates (static ``rate``):

* ``"kk13"``: ``beta(t, delta) = log(k1 K t^alpha / delta) + log log(k1 K t^alpha /
  delta)`` with t the stage (KK13 Theorem 1 for (KL-)LUCB; experiments alpha = 1.1,
  k1 = 405.5, Sec. 5), evaluated as ``x = log(((k1 K) t^alpha) / delta)``, ``x +
  log(x)``;
* ``"practical"``: ``log((log n + 1) / delta)`` with n the number of samples so far
  (the exploration rate ``explo`` of GK16's experiments code, called with the global
  time; :func:`jbandits.policies.blocks.glr.threshold` ``"practical"``).

Ties: lowest index (the leader among equal means, the challenger among equal UCBs).
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

RATES = ("kk13", "practical")
STOPPINGS = ("lucb", "glr")
FAMILIES = ("bernoulli", "gaussian")

# (means [K], counts [K], beta) -> (lower [K], upper [K])
Bounds = Callable[[Array, Array, Array], tuple[Array, Array]]


class Stage(NamedTuple):
    """The quantities of one LUCB stage boundary (padded arms: bounds unused)."""

    lower: Array  # [K] L_a(t)
    upper: Array  # [K] U_a(t)
    leader: Array  # [] int32: h_t, the empirical best (lowest index on ties)
    challenger: Array  # [] int32: u_t = argmax_{j != h_t} U_j(t) (lowest index)
    index: Array  # [] B(t) = U_{u_t}(t) - L_{h_t}(t)


class LUCBState(NamedTuple):
    stats: arms.ArmStats
    arm_mask: Array  # [K] bool
    t: Array  # [] int32: pulls done
    stage: Array  # [] int32: KK13's stage t (0 during the initial pulls, 1 after)
    second: Array  # [] int32: the challenger still to pull in this stage (-1: none)
    constant: Array  # [] the GLR threshold's delta part (stopping="glr"; else 0)
    arm: Array  # [] int32: next arm; -1 once stopped (absorbing)


def kk13_rate(
    stage: ArrayLike,
    num_real: ArrayLike,
    delta: ArrayLike,
    alpha: ArrayLike,
    k1: ArrayLike,
) -> Array:
    """``log(k1 K t^alpha / delta) + log log(k1 K t^alpha / delta)`` (KK13 Thm 1)."""
    dtype = jnp.result_type(float, delta, alpha, k1)
    t = jnp.asarray(stage, dtype)
    x = jnp.log(k1 * jnp.asarray(num_real, dtype) * t**alpha / delta)
    return x + jnp.log(x)


def stage_select(
    bounds: Bounds, stats: arms.ArmStats, arm_mask: Array, beta: ArrayLike
) -> Stage:
    """``J(t) = {h_t}``, ``u_t`` and ``B(t)`` from the statistics and the rate."""
    means = arms.mean(stats)
    lower, upper = bounds(means, stats.counts, beta)
    leader = arms.best_empirical(stats, arm_mask)
    others = arm_mask & (jnp.arange(arm_mask.shape[-1]) != leader)
    challenger = arms.argmax_masked(upper, others)
    index = upper[jnp.maximum(challenger, 0)] - lower[leader]
    return Stage(lower, upper, leader, challenger, index)


def check_common(
    num_arms, family, delta, sigma, epsilon, alpha, k1, rate, stopping, threshold
) -> int:
    """Validate the common arguments of LUCB1 and KL-LUCB; returns ``num_arms``."""
    num_arms = _validate.static_int("num_arms", num_arms, minimum=2)
    _validate.choice("family", family, FAMILIES)
    _validate.choice("rate", rate, RATES)
    _validate.choice("stopping", stopping, STOPPINGS)
    _validate.choice("threshold", threshold, glr.THRESHOLDS)
    if threshold != "delta_correct" and family not in glr.THRESHOLD_FAMILIES[threshold]:
        raise ValueError(
            f"threshold {threshold!r} is not calibrated for {family} arms: use "
            f"'delta_correct' or 'practical'"
        )
    _validate.in_range("delta", delta, 0.0, 1.0, low_open=True, high_open=True)
    _validate.in_range("sigma", sigma, 0.0, low_open=True)
    _validate.in_range("epsilon", epsilon, 0.0)
    _validate.in_range("alpha", alpha, 0.0, low_open=True)
    # k1 >= 1 keeps beta > 0 for every K >= 2, t >= 1, delta < 1 (k1 K / delta > 2)
    _validate.in_range("k1", k1, 1.0)
    return num_arms


class Arguments(NamedTuple):
    """The checked arguments of LUCB1 and KL-LUCB (:data:`ARGUMENTS`)."""

    delta: ArrayLike
    family: str
    sigma: ArrayLike
    epsilon: ArrayLike
    alpha: ArrayLike
    k1: ArrayLike
    rate: str
    stopping: str
    threshold: str


_DOC = """\
delta: confidence, 0 < delta < 1 (traced).
family: static, "bernoulli" (rewards in [0, 1]) or "gaussian" (known std ``sigma``);
  the bounds of each are above.
sigma: Gaussian reward std, > 0 (traced; ignored for "bernoulli").
epsilon: tolerance eps >= 0 (traced); 0 is exact best-arm identification.
alpha, k1: the constants of the "kk13" rate (traced; alpha > 0, k1 >= 1); defaults
  1.1 and 405.5, KK13's experiments (Sec. 5).
rate: static, "kk13" (``log(k1 K t^alpha / delta) + log log(...)``, t = stage) or
  "practical" (``log((log n + 1) / delta)``, n = samples; GK16's code).
stopping: static, "lucb" (``B(t) <= epsilon``) or "glr" (the Chernoff GLR test ``Z(n)
  > threshold(n, delta)`` of ``blocks.glr`` at stage boundaries, recommending the
  empirical best; the authors' ``ChernoffKLLUCB``).
threshold: static name of ``glr.THRESHOLDS`` (``stopping="glr"`` only)."""


def _keyword(name: str, default, annotation: str) -> inspect.Parameter:
    return inspect.Parameter(
        name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=annotation
    )


def _resolve(name, num_arms, **values) -> dict:
    del name
    args = Arguments(**values)
    check_common(
        num_arms, args.family, args.delta, args.sigma, args.epsilon, args.alpha,
        args.k1, args.rate, args.stopping, args.threshold,
    )  # fmt: skip
    return {"lucb": args}


#: LUCB's public arguments as a registry group (``shared=ARGUMENTS``): checked by
#: :func:`check_common`, then passed to the policy's function as ``lucb``
#: (:class:`Arguments`).
ARGUMENTS = SharedArguments(
    parameters=(
        _keyword("delta", 0.1, "ArrayLike"),
        _keyword("family", "bernoulli", "str"),
        _keyword("sigma", 1.0, "ArrayLike"),
        _keyword("epsilon", 0.0, "ArrayLike"),
        _keyword("alpha", 1.1, "ArrayLike"),
        _keyword("k1", 405.5, "ArrayLike"),
        _keyword("rate", "kk13", "str"),
        _keyword("stopping", "lucb", "str"),
        _keyword("threshold", "practical", "str"),
    ),
    doc=_DOC,
    provides=("lucb",),
    resolve=_resolve,
)


def _check_mask(arm_mask) -> None:
    if _validate.is_concrete(arm_mask) and int(jnp.sum(arm_mask)) < 2:
        raise ValueError(
            f"LUCB needs at least 2 real arms, got {int(jnp.sum(arm_mask))}"
        )


def build(num_arms: int, bounds: Bounds, args: Arguments) -> Policy:
    """The LUCB policy with confidence bounds ``bounds(means, counts, beta)``."""
    delta, family, sigma, epsilon, alpha, k1, rate, stopping, threshold = args

    def init_fn(key, arm_mask):
        del key
        _check_mask(arm_mask)
        num_real = jnp.sum(arm_mask)
        dtype = jnp.result_type(float)
        constant = jnp.zeros((), dtype)
        if stopping == "glr":
            constant = glr.threshold_constant(threshold, delta, num_real, family)
        zero = jnp.zeros((), jnp.int32)
        return LUCBState(
            arms.init_stats(num_arms, variance=False),
            arm_mask,
            zero,
            zero,
            jnp.full((), -1, jnp.int32),
            jnp.asarray(constant, dtype),
            arms.round_robin(0, arm_mask),
        )

    def beta_at(stage, n, num_real):
        if rate == "kk13":
            return kk13_rate(stage, num_real, delta, alpha, k1)
        return glr.threshold("practical", n, delta, num_real, family)

    def step_fn(state, key, reward):
        del key
        stats = arms.update(state.stats, state.arm, reward)
        n = state.t + 1
        mask = state.arm_mask
        num_real = jnp.sum(mask)
        forced, rr = arms.forced_arm(n, mask)
        pending = state.second >= 0
        boundary = ~forced & ~pending
        stage = state.stage + boundary.astype(jnp.int32)
        sel = stage_select(bounds, stats, mask, beta_at(stage, n, num_real))
        if stopping == "lucb":
            rule = sel.index <= epsilon
        else:
            rule = glr.stops(
                family,
                stats.counts,
                arms.mean(stats),
                mask,
                n,
                delta,
                sigma,
                threshold,
                constant=state.constant,
            )[0]
        stop = boundary & (stage > 1) & rule
        arm = jnp.where(pending, state.second, jnp.where(stop, -1, sel.leader))
        arm = jnp.where(forced, rr, arm).astype(jnp.int32)
        second = jnp.where(boundary & ~stop, sel.challenger, -1).astype(jnp.int32)
        return LUCBState(stats, mask, n, stage, second, state.constant, arm)

    def output_fn(state):
        return arms.best_empirical(state.stats, state.arm_mask)

    return Policy(init_fn, step_fn, output_fn, "identification")
