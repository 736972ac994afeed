"""Top-Two Thompson Sampling (TTTS; Russo, "Simple Bayesian Algorithms for Best-Arm
Identification", Operations Research 68(6), 2020, Algorithm 1, first as "pure-exploration
Thompson sampling" in arXiv:1602.08448 and COLT 2016) with Chernoff's GLR stopping rule
(Shang, de Heide, Kaufmann, Ménard, Valko, AISTATS 2020, Sec. 2.3 and 6; the authors'
``ttts_c`` in BestArm.jl and ``ChernoffTTTS`` in Kaufmann's BAI code) or Russo's
posterior stopping rule.

Every real arm is pulled once (round robin); then at every time ``t`` the policy stops
(:mod:`jbandits.policies.fixed_confidence._top_two`: ``"glr"`` or ``"posterior"``),
else, with ``Pi_n`` the posterior of :mod:`jbandits.policies.blocks.posterior`
(``Beta(1 + S, 1 + N - S)``, or ``N(mu_hat, sigma^2 / N)``):

1. ``theta ~ Pi_n``, ``I = argmax_i theta_i`` (the step's ``leader`` key);
2. with probability ``beta`` (``u < beta``, ``u`` from the ``coin`` key) pull ``I``;
3. else resample ``theta' ~ Pi_n`` until ``J = argmax theta' != I`` and pull ``J``.
   Try ``r = 0, 1, ...`` draws with ``fold_in(second, r)``, at most ``max_resamples``
   tries (a ``lax.while_loop``; under ``vmap`` it runs to the slowest lane).

The loop is unbounded in the paper and in both authors' codes (``while I == J``). Its
length is geometric with mean ``1 / (1 - alpha_{n,I})``, which grows without bound as
the posterior concentrates (about 1000 tries per challenger step at Russo's ``c =
0.999``). When the ``max_resamples`` tries all return ``I``, the fallback draws ``J``
from the law the loop would have produced: ``P(J = j) = alpha_j / sum_{k != I}
alpha_k`` (Shang et al. eq. (3); ``alpha`` by
:func:`~jbandits.policies.blocks.posterior.best_arm_probabilities`), the first ``j !=
I`` whose running sum of ``alpha`` exceeds ``u sum_{k != I} alpha_k`` with ``u ~ U[0,
1)`` from the ``extra`` key. So the challenger's law is the paper's for every cap
(``P(first success = j) + P(all fail) P(fallback = j) = alpha_j / (1 - alpha_I)``, up
to the quadrature's error, below 1e-6); ``max_resamples`` sets only how much of it is
drawn by resampling (``0``: always by the fallback). If every ``alpha_j`` (``j != I``)
underflows to 0, the fallback is the runner-up of the step's first sample, ``argmax_{j
!= I} theta_j``. The state counts the challenger steps, the resamples and the fallbacks
(``state.extra``: ``challenges``, ``resamples``, ``fallbacks``; ``return_state=True``
returns them).
With the default cap of 16, the fallback decided about half of the challenger steps on
Shang et al.'s instances at ``delta = 0.01`` (0.47-0.61) and 0.06 / 0.21 / 0.49 of them
in Russo's experiment 1 at ``c = 0.95 / 0.99 / 0.999`` (50 runs each;
``docs/algorithm_notes/ttts.md``); the mean stopping times did not move with the cap.

Departures: Russo's Algorithm 1 starts from the Beta(1, 1) prior without forced pulls;
here (as in the authors' codes, and as Shang et al. require for the improper Gaussian
prior) every arm is pulled once first. ``argmax theta`` ties (probability 0) go to the
lowest index.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp

from jbandits.core import prng as _prng
from jbandits.core import registry
from jbandits.core import validate as _validate
from jbandits.core.types import Array, ArrayLike, Key, Policy
from jbandits.policies.blocks import arms, posterior
from jbandits.policies.blocks import fixed_confidence as fc
from jbandits.policies.blocks.tracking import when_any
from jbandits.policies.fixed_confidence import _top_two

MAX_RESAMPLES = 16


class Counters(NamedTuple):
    """TTTS's part of the state (``StoppingState.extra``)."""

    challenges: Array  # [] int32: steps that went to the challenger
    resamples: Array  # [] int32: posterior draws made by those steps' loops
    fallbacks: Array  # [] int32: challenger steps decided by the fallback


def resample(
    family: str,
    key: Key,
    stats: arms.ArmStats,
    arm_mask: Array,
    leader: Array,
    need: Array,
    max_resamples: int,
    sigma: ArrayLike,
) -> tuple[Array, Array, Array]:
    """``(J, tries, found)``: draws ``theta' ~ Pi_n`` with ``fold_in(key, r)``, ``r =
    0, 1, ...``, until ``argmax theta' != leader`` or ``max_resamples`` tries; nothing
    is drawn where ``need`` is False."""
    none = jnp.zeros((), jnp.int32)
    if max_resamples == 0:
        return leader, none, jnp.zeros((), bool)

    def cond(carry):
        r, j = carry
        return (r < max_resamples) & (j == leader)

    def body(carry):
        r, _ = carry
        draw = _prng.fold_in(key, r)
        theta = posterior.sample_posterior(family, draw, stats, arm_mask, sigma)
        return r + 1, arms.argmax_masked(theta, arm_mask)

    start = (none, jnp.where(need, leader, -1).astype(jnp.int32))
    tries, j = jax.lax.while_loop(cond, body, start)
    return j, tries, need & (j != leader)


def fallback(
    key: Key, alpha: Array, leader: Array, theta: Array, arm_mask: Array
) -> Array:
    """The challenger drawn from ``alpha_j / sum_{k != leader} alpha_k`` (module
    docstring); the runner-up of ``theta`` where those ``alpha`` are all 0."""
    num_arms = arm_mask.shape[-1]
    others = arm_mask & (jnp.arange(num_arms) != leader)
    w = jnp.where(others, alpha, 0.0)
    sums = jax.lax.associative_scan(jnp.add, w)
    total = sums[-1]
    u = _prng.uniform(key, (), w.dtype)
    live = others & (w > 0)
    above = live & (sums > u * total)
    iota = jnp.arange(num_arms, dtype=jnp.int32)
    first = jnp.min(jnp.where(above, iota, num_arms))
    last = jnp.max(jnp.where(live, iota, -1))  # u * total rounded up to total
    drawn = jnp.where(first < num_arms, first, last)
    runner_up = arms.argmax_masked(theta, others)
    return jnp.where(total > 0, drawn, runner_up).astype(jnp.int32)


@registry.policy(
    "ttts", shared=fc.CHERNOFF, static=("max_resamples",), optional=("confidence",)
)
def ttts(
    num_arms: int,
    *,
    beta: ArrayLike = 0.5,
    stopping: str = "glr",
    confidence: ArrayLike | None = None,
    max_resamples: int = MAX_RESAMPLES,
    chernoff: fc.Chernoff,
) -> Policy:
    """Top-Two Thompson Sampling (Russo 2020, Algorithm 1) with GLR or posterior
    stopping.

    Priors: Beta(1, 1) for Bernoulli arms (rewards in [0, 1]); flat for Gaussian arms
    (known ``sigma``).

    Args:
      num_arms: static K (including padded arms).
      beta: probability of pulling the leader, 0 < beta < 1 (traced; Russo's
        default 1/2).
      stopping: static, "glr" (Chernoff, recommend the empirical best) or
        "posterior" (Russo's ``max_i alpha_i >= confidence``, recommend ``argmax
        alpha``).
      confidence: the posterior rule's ``c`` in (0, 1) (traced); default ``1 -
        delta``. Only with ``stopping="posterior"``.
      max_resamples: static cap on the resampling loop (>= 0); beyond it the
        challenger is drawn from its exact law by the fallback (module docstring).

    Output: the recommended arm (``[] int32``); the engine's ``num_pulls`` is the
    stopping time and the run's budget its cap.
    """
    delta, family, sigma, _ = chernoff
    _top_two.check_beta(beta)
    level = _top_two.check_stopping(stopping, confidence, delta)
    max_resamples = _validate.static_int("max_resamples", max_resamples, minimum=0)

    def start(stats, arm_mask):
        del stats, arm_mask
        zero = jnp.zeros((), jnp.int32)
        return Counters(zero, zero, zero)

    def choose(state, obs, key):
        mask = state.arm_mask
        stop, alpha = _top_two.stopping_rule(obs, stopping, family, mask, sigma, level)
        keys = _top_two.split_keys(key)
        stats = obs.stats
        theta, leader, play_leader = _top_two.thompson_leader(
            family, stats, mask, sigma, keys, beta
        )
        need = ~obs.forced & ~stop & ~play_leader
        second, tries, found = resample(
            family, keys.second, stats, mask, leader, need, max_resamples, sigma
        )
        if alpha is None:
            # rare under vmap: computed only at the steps where some live lane needs it
            alpha = when_any(
                need & ~found & (state.arm >= 0),
                lambda s, m, sd: posterior.best_arm_probabilities(family, s, m, sd),
                lambda s, m, sd: jnp.zeros_like(s.counts),
                stats,
                mask,
                jnp.asarray(sigma, stats.counts.dtype),
            )
        other = fallback(keys.extra, alpha, leader, theta, mask)
        count = state.extra
        return fc.Decision(
            jnp.where(play_leader, leader, jnp.where(found, second, other)),
            Counters(
                count.challenges + need.astype(jnp.int32),
                count.resamples + tries,
                count.fallbacks + (need & ~found).astype(jnp.int32),
            ),
            stop,
        )

    def output(state):
        return _top_two.recommend(state.stats, state.arm_mask, stopping, family, sigma)

    return fc.glr_policy(num_arms, choose, chernoff, start=start, output=output)
