"""lil'UCB (Jamieson, Malloy, Nowak & Bubeck, COLT 2014) for best-arm identification
with fixed confidence, with its LIL stopping criterion (Sec. 5) and the paper's two
experimental settings.

Figure 1: after one pull per arm, while ``T_i < 1 + lambda sum_{j != i} T_j`` for every
arm i, pull::

    I_t = argmax_i  mu_i + (1 + beta) (1 + sqrt(eps))
                    * sqrt(2 sigma^2 (1 + eps) log(log((1 + eps) T_i + c) / delta) / T_i)

and otherwise stop and output ``argmax_i T_i`` (the most-pulled arm). ``c = 0`` in
Figure 1; ``c = 2`` is footnote 2's variant ("one can allow the full range of delta by
using log(log((1 + eps) t + 2) / delta)"), which the heuristic setting applies (Sec. 3:
"we recommend applying footnote 2 and setting eps = 0, ...").

LIL stopping (LS, Sec. 5, eq. (9)), ``stopping="ls"``: with ``n`` the number of real
arms and the bound::

    B_i = (1 + sqrt(eps')) sqrt(2 sigma^2 (1 + eps') log(2 log((1 + eps') T_i + 2)
                                                   / (delta' / n)) / T_i)

the run also stops when the empirical best ``i_hat`` (lowest index on ties) has
``mu_{i_hat} - B_{i_hat} >= mu_j + B_j`` for every other arm j, and then outputs
``i_hat`` ("lil'UCB (+LS)": "the algorithm terminates according to Fig. 1 (or when the
LIL stopping criterion is met)"; when both fire at once, LS's ``i_hat`` is output).
Confidence split (Sec. 5): "run the algorithm with nu/2 in place of nu and assign the
other nu/2 confidence to the LIL stopping criterion", with ``delta' = log(1 + eps')
((nu/2) eps' / (2 + eps'))^(1/(1 + eps'))`` (the paper's "should use delta = log(1 +
eps) (nu eps / (2 + eps))^(1/(1 + eps))" for a bound holding with probability 1 - nu,
applied at nu/2).

Settings (Sec. 5, both from the overall confidence ``nu``, the argument ``delta``; nu'
= nu/2 with LS, nu otherwise):

* ``"theory"`` (lil'UCB, lil'UCB+LS): eps = 0.01, beta = 1, lambda = ((2 + beta) /
  beta)^2 (= 9), index delta = (sqrt(1 + nu') - 1)^2 / (4 c_eps), with c_eps = ((2 +
  eps) / eps) (1 / log(1 + eps))^(1 + eps) (Theorem 2: the success probability 1 - 4
  sqrt(c_eps delta) - 4 c_eps delta is then 1 - nu'); Figure 1's log-log (c = 0).
* ``"heuristic"`` (lil'UCB Heuristic; no guarantee): eps = 0, beta = 1/2, lambda = 1 +
  10/n, index delta = nu'/5; footnote 2's log-log (c = 2).

Overrides (``epsilon``, ``beta``, ``lam``, ``index_delta``) replace one number and keep
the setting's formulas for the others (so under "theory" a new beta gives lambda =
((2 + beta)/beta)^2 and a new epsilon its own c_eps). LS's eps' is ``ls_epsilon``,
default ``epsilon`` if given, else 0.01: LS is undefined at eps' = 0 (delta' = 0, so
``B_i = +inf``), and the paper does not say which eps its heuristic+LS runs used ("it
had no impact on the lil'UCB Heuristic variant (not plotted)"); 0.01 is the theory
setting's eps (our choice).

Sub-Gaussian scale: ``family="gaussian"`` uses the known std ``sigma``;
``family="bernoulli"`` (rewards in [0, 1]) uses sigma = 1/2 (the paper's footnote 1:
"if a <= X <= b almost surely then it suffices to take sigma^2 = (b - a)^2/4").
Ties: lowest index (the index's arg-max, the most-pulled arm, the empirical best).
"""

from __future__ import annotations

from typing import NamedTuple

import jax.numpy as jnp

from jbandits.core import registry
from jbandits.core import validate as _validate
from jbandits.core.types import Array, ArrayLike, Policy
from jbandits.policies.blocks import arms

SETTINGS = ("theory", "heuristic")
STOPPINGS = ("pulls", "ls")
FAMILIES = ("bernoulli", "gaussian")
_THEORY = {"epsilon": 0.01, "beta": 1.0}
_HEURISTIC = {"epsilon": 0.0, "beta": 0.5}
_LS_EPSILON = 0.01  # LS's eps when neither ls_epsilon nor epsilon is given


class LilState(NamedTuple):
    stats: arms.ArmStats
    arm_mask: Array  # [K] bool
    t: Array  # [] int32: pulls done
    by_ls: Array  # [] bool: stopped by the LIL criterion (output: empirical best)
    arm: Array  # [] int32: next arm; -1 once stopped (absorbing)


def c_epsilon(epsilon: ArrayLike) -> Array:
    """``c_eps = ((2 + eps) / eps) (1 / log(1 + eps))^(1 + eps)`` (Theorem 2)."""
    eps = jnp.asarray(epsilon, jnp.result_type(float, epsilon))
    return (2.0 + eps) / eps * (1.0 / jnp.log(1.0 + eps)) ** (1.0 + eps)


def theory_delta(nu: ArrayLike, epsilon: ArrayLike) -> Array:
    """``(sqrt(1 + nu) - 1)^2 / (4 c_eps)``: the index delta of the theory setting."""
    dtype = jnp.result_type(float, nu, epsilon)
    root = jnp.sqrt(1.0 + jnp.asarray(nu, dtype)) - 1.0
    return root * root / (4.0 * c_epsilon(epsilon))


def ls_delta(nu: ArrayLike, epsilon: ArrayLike) -> Array:
    """``log(1 + eps) (nu eps / (2 + eps))^(1/(1 + eps))``: LS's delta for a bound
    holding with probability ``1 - nu`` (Sec. 5)."""
    dtype = jnp.result_type(float, nu, epsilon)
    eps = jnp.asarray(epsilon, dtype)
    base = jnp.asarray(nu, dtype) * eps / (2.0 + eps)
    return jnp.log(1.0 + eps) * base ** (1.0 / (1.0 + eps))


def lil_index(means, counts, *, sigma, epsilon, beta, delta, offset) -> Array:
    """Figure 1's index (module docstring); ``offset`` is c (0, or 2: footnote 2)."""
    n = jnp.maximum(counts, 1.0)
    factor = (1.0 + beta) * (1.0 + jnp.sqrt(epsilon))
    inner = jnp.log(jnp.log((1.0 + epsilon) * n + offset) / delta)
    width = jnp.sqrt(2.0 * (sigma * sigma) * (1.0 + epsilon) * inner / n)
    return means + factor * width


def ls_bound(counts, num_real, *, sigma, epsilon, delta) -> Array:
    """``B_i`` of LS, eq. (9), with ``delta / n`` inside the log."""
    n = jnp.maximum(counts, 1.0)
    inner = jnp.log(2.0 * jnp.log((1.0 + epsilon) * n + 2.0) / (delta / num_real))
    width = jnp.sqrt(2.0 * (sigma * sigma) * (1.0 + epsilon) * inner / n)
    return (1.0 + jnp.sqrt(epsilon)) * width


def ls_stops(means, bound, arm_mask) -> tuple[Array, Array]:
    """``(stop, i_hat)``: LS's test ``mu_ihat - B_ihat >= mu_j + B_j`` for all j."""
    best = arms.argmax_masked(means, arm_mask)
    others = arm_mask & (jnp.arange(means.shape[-1]) != best)
    clear = means[best] - bound[best] >= means + bound
    return jnp.all(clear | ~others), best


def pulls_rule(counts, t, lam, arm_mask) -> Array:
    """Figure 1's stopping test: some real arm has ``T_i >= 1 + lambda (t - T_i)``."""
    t = jnp.asarray(t, counts.dtype)
    return jnp.any(arm_mask & (counts >= 1.0 + lam * (t - counts)))


def _check(family, setting, stopping, delta, given) -> None:
    _validate.choice("family", family, FAMILIES)
    _validate.choice("setting", setting, SETTINGS)
    _validate.choice("stopping", stopping, STOPPINGS)
    _validate.in_range("delta", delta, 0.0, 1.0, low_open=True, high_open=True)
    if stopping == "pulls" and given["index_delta"] and given["delta"]:
        raise ValueError(
            "lil_ucb: give either delta (the overall confidence nu, from which the "
            "setting derives the index's delta) or index_delta, not both: with "
            "stopping='pulls' delta would be ignored"
        )
    if stopping == "pulls" and given["ls_epsilon"]:
        raise ValueError("lil_ucb: ls_epsilon is used only with stopping='ls'")


def _check_index_delta(setting, index_delta, epsilon) -> None:
    """The index's log-log must be positive at T = 1: ``delta < log(1 + eps)`` for
    Figure 1's form, ``delta < 1`` (footnote 2's "full range") for the heuristic."""
    if setting == "heuristic":
        _validate.in_range(
            "index_delta", index_delta, 0.0, 1.0, low_open=True, high_open=True
        )
        return
    _validate.in_range("index_delta", index_delta, 0.0, low_open=True)
    if _validate.is_concrete((index_delta, epsilon)):
        top = float(jnp.log(1.0 + jnp.asarray(epsilon, float)))
        if not float(index_delta) < top:
            raise ValueError(
                f"index_delta must be < log(1 + epsilon) = {top:.6g} with "
                f"setting='theory' (Figure 1's log(log((1 + eps) T) / delta) must be "
                f"positive at T = 1), got {index_delta!r}"
            )


def _numbers(setting, stopping, delta, epsilon, beta, lam, index_delta, ls_epsilon):
    """``(nu, eps, beta, index_delta, ls_epsilon)`` from the arguments and the
    setting (module docstring), validated."""
    theory = setting == "theory"
    defaults = _THEORY if theory else _HEURISTIC
    nu = 0.1 if delta is None else delta
    nu_index = nu / 2.0 if stopping == "ls" else nu
    eps = defaults["epsilon"] if epsilon is None else epsilon
    if theory:
        _validate.in_range("epsilon", eps, 0.0, 1.0, low_open=True, high_open=True)
    else:
        _validate.in_range("epsilon", eps, 0.0)
    b = defaults["beta"] if beta is None else beta
    _validate.in_range("beta", b, 0.0, low_open=True)
    _validate.in_range("lam", lam, 0.0, low_open=True)
    if index_delta is None:
        index_delta = theory_delta(nu_index, eps) if theory else nu_index / 5.0
    else:
        _check_index_delta(setting, index_delta, eps)
    if ls_epsilon is None:
        ls_epsilon = _LS_EPSILON if epsilon is None else epsilon
    if stopping == "ls":
        _validate.in_range(
            "ls_epsilon", ls_epsilon, 0.0, 1.0, low_open=True, high_open=True
        )
    return nu, eps, b, index_delta, ls_epsilon


@registry.policy("lil_ucb")
def lil_ucb(
    num_arms: int,
    *,
    delta: ArrayLike | None = None,
    family: str = "bernoulli",
    sigma: ArrayLike = 1.0,
    setting: str = "theory",
    stopping: str = "pulls",
    epsilon: ArrayLike | None = None,
    beta: ArrayLike | None = None,
    lam: ArrayLike | None = None,
    index_delta: ArrayLike | None = None,
    ls_epsilon: ArrayLike | None = None,
) -> Policy:
    """lil'UCB (Jamieson et al., COLT 2014, Figure 1), optionally with LIL stopping.

    Pulls each real arm once, then the arm of largest lil'UCB index; stops
    (``state.arm = -1``) as soon as some arm has ``T_i >= 1 + lam sum_{j != i} T_j``
    and outputs the most-pulled arm, or (``stopping="ls"``) as soon as the LIL
    criterion certifies the empirical best, which it then outputs. A run that
    reaches its budget first is not stopped and outputs the empirical best (the
    paper's anytime recommendation, Sec. 5). Every number is traced; the module
    docstring gives the formulas, the settings and the confidence split.

    Args:
      num_arms: static K (including padded arms); at least 2 real arms.
      delta: the overall confidence nu, 0 < nu < 1 (default 0.1); the setting
        derives the index's delta from it (and LS's, with ``stopping="ls"``).
      family: static, "bernoulli" (rewards in [0, 1]: sub-Gaussian scale 1/2) or
        "gaussian" (known std ``sigma``).
      sigma: Gaussian reward std, > 0 (traced; ignored for "bernoulli").
      setting: static, "theory" (eps = 0.01, beta = 1, lam = ((2 + beta)/beta)^2,
        index delta = (sqrt(1 + nu') - 1)^2 / (4 c_eps), Figure 1's index) or
        "heuristic" (eps = 0, beta = 1/2, lam = 1 + 10/K, index delta = nu'/5,
        footnote 2's index); nu' = nu/2 with LS, nu otherwise.
      stopping: static, "pulls" (Figure 1) or "ls" (Figure 1 or the LIL criterion,
        whichever comes first; nu split in halves).
      epsilon: eps of the index (traced); "theory" needs 0 < eps < 1, "heuristic"
        eps >= 0. Default: the setting's.
      beta: beta > 0 of the index (traced). Default: the setting's.
      lam: lambda > 0 of the stopping rule (traced). Default: the setting's.
      index_delta: the delta of Figure 1's index (traced), replacing the one derived
        from nu: 0 < index_delta < log(1 + eps) under "theory", < 1 under
        "heuristic". With ``stopping="pulls"`` it excludes ``delta``.
      ls_epsilon: LS's eps in (0, 1) (traced; ``stopping="ls"`` only). Default:
        ``epsilon`` if given, else 0.01.

    References:
      Jamieson, Malloy, Nowak, Bubeck. lil' UCB: an optimal exploration algorithm
      for multi-armed bandits. COLT 2014, Figure 1, Theorem 2, footnotes 1-2, Sec. 5.
    """
    num_arms = _validate.static_int("num_arms", num_arms, minimum=2)
    given = {
        "delta": delta is not None,
        "index_delta": index_delta is not None,
        "ls_epsilon": ls_epsilon is not None,
    }
    _check(family, setting, stopping, delta, given)
    nu, eps, b, index_delta, ls_epsilon = _numbers(
        setting, stopping, delta, epsilon, beta, lam, index_delta, ls_epsilon
    )
    _validate.in_range("sigma", sigma, 0.0, low_open=True)
    theory = setting == "theory"
    scale = 0.5 if family == "bernoulli" else sigma
    offset = 0.0 if theory else 2.0

    def lam_for(num_real):
        if lam is not None:
            return lam
        return ((2.0 + b) / b) ** 2 if theory else 1.0 + 10.0 / num_real

    def init_fn(key, arm_mask):
        del key
        if _validate.is_concrete(arm_mask) and int(jnp.sum(arm_mask)) < 2:
            raise ValueError(
                f"lil_ucb needs at least 2 real arms, got {int(jnp.sum(arm_mask))}"
            )
        return LilState(
            arms.init_stats(num_arms, variance=False),
            arm_mask,
            jnp.zeros((), jnp.int32),
            jnp.zeros((), bool),
            arms.round_robin(0, arm_mask),
        )

    def step_fn(state, key, reward):
        del key
        stats = arms.update(state.stats, state.arm, reward)
        n = state.t + 1
        mask = state.arm_mask
        num_real = jnp.sum(mask).astype(stats.counts.dtype)
        forced, rr = arms.forced_arm(n, mask)
        means, counts = arms.mean(stats), stats.counts
        stop = pulls_rule(counts, n, lam_for(num_real), mask)
        by_ls = jnp.zeros((), bool)
        if stopping == "ls":
            bound = ls_bound(
                counts,
                num_real,
                sigma=scale,
                epsilon=ls_epsilon,
                delta=ls_delta(nu / 2.0, ls_epsilon),
            )
            by_ls = ls_stops(means, bound, mask)[0]
        stop = ~forced & (stop | by_ls)
        index = lil_index(
            means,
            counts,
            sigma=scale,
            epsilon=eps,
            beta=b,
            delta=index_delta,
            offset=offset,
        )
        arm = jnp.where(stop, -1, arms.argmax_masked(index, mask))
        arm = jnp.where(forced, rr, arm).astype(jnp.int32)
        return LilState(stats, mask, n, stop & by_ls, arm)

    def output_fn(state):
        most = arms.argmax_masked(state.stats.counts, state.arm_mask)
        best = arms.best_empirical(state.stats, state.arm_mask)
        return jnp.where((state.arm < 0) & ~state.by_ls, most, best)

    return Policy(init_fn, step_fn, output_fn, "identification")
