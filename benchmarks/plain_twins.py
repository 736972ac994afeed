"""Plain-JAX twins of policies, for the GPU kernel counts of ``benchmarks/gpu_compile.py``.

A *twin* is the least a JAX program of a policy does (as
:func:`benchmarks.plain.plain_apt` is APT's): ``vmap`` over lanes, one
``lax.fori_loop`` over the budget, the state a few ``[K]`` arrays, one-hot sums and
selects for the pulled arm, the reward of each pull read from the library's reward
stack (``bandit.sample`` of the lane's key, the bandit arm and its pull number, as the
engine reads it). No checkpoints, budgets per lane, idle states, metrics or regret.
``python -m benchmarks.gpu_compile --twins`` compiles each twin for an H100 beside its
policy (issue 61, item 4: the engine's step within 1.5x the kernels of its twin).
Twins are not run here: they are kernel-count yardsticks, written from the papers:

* ``apt``: :func:`benchmarks.plain.plain_apt` (Locatelli et al., ICML 2016).
* ``ucb1``: after one pull per arm, the largest ``mean_i + sqrt(2 ln n / n_i)``
  (Auer, Cesa-Bianchi, Fischer, 2002), ties uniform among the maximisers (the
  policy's default; one 32-bit draw per step from the step key, as the library's
  ``"random"`` ties).
* ``thompson:gauss``: the largest draw of ``N(mean_i', 1 / (n_i + 1/v))`` with
  ``mean_i' = sum_i / (n_i + 1/v)`` (Gaussian prior ``N(0, v)``, unit noise;
  Agrawal and Goyal, AISTATS 2013), ties uniform.
* ``sequential_halving``: ``ceil(log2 K)`` rounds; round ``r`` pulls each of its
  ``|S_r|`` arms ``floor(T / (|S_r| ceil(log2 K)))`` times, round-robin by fewest
  pulls in the round, then keeps the better half by empirical mean (Karnin, Koren,
  Somekh, ICML 2013). The schedule is the same on every lane, so a round's end is a
  real branch (taken on a few steps), not a select.
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp

from benchmarks.plain import EPS, TAU, plain_apt
from jbandits.policies.blocks.arms import _mulhi

_ALPHA, _PRIOR_VAR = 2.0, 1.0


def _pull(bandit, params, key, arm, n):
    """The reward of ``arm`` (its ``n[arm]``-th, one-hot read) and the one-hot mask."""
    hot = jnp.arange(n.shape[-1]) == arm
    count = jnp.sum(jnp.where(hot, n, 0.0)).astype(jnp.int32)
    r = bandit.sample(params, key, arm, count).astype(n.dtype)
    return r, hot


def _random_tie(best, key):
    """The first of the maximisers ``best`` ``[K] bool`` after a uniform draw ranks
    them: ``floor(b * m / 2**32)``-th maximiser, ``m`` their number."""
    m = jnp.sum(best.astype(jnp.uint32))
    j = _mulhi(jax.random.bits(key, dtype=jnp.uint32), m).astype(jnp.int32)
    rank = jnp.cumsum(best.astype(jnp.int32)) - 1
    return jnp.argmax(best & (rank == j)).astype(jnp.int32)


def apt(bandit, params, kdata, steps: int):
    """:func:`benchmarks.plain.plain_apt` on key data ``[L, 2]``."""
    return plain_apt(bandit, params, jax.random.wrap_key_data(kdata), steps)


def ucb1(bandit, params, kdata, steps: int):
    """Pull counts ``[L, K]`` of UCB1 after ``steps`` pulls on each lane."""
    num_arms = params.means.shape[-1]

    def lane(kd):
        key = jax.random.wrap_key_data(kd)
        k_env, k_steps = jax.random.split(key)

        def step(t, carry):
            n, s = carry
            bonus = jnp.sqrt(_ALPHA * jnp.log(jnp.maximum(t, 1)) / jnp.maximum(n, 1.0))
            idx = jnp.where(n > 0, s / jnp.maximum(n, 1.0) + bonus, jnp.inf)
            best = idx == jnp.max(idx)
            arm = _random_tie(best, jax.random.fold_in(k_steps, t))
            r, hot = _pull(bandit, params, k_env, arm, n)
            return n + hot, s + jnp.where(hot, r, 0.0)

        zero = jnp.zeros(num_arms, jnp.float32)
        return jax.lax.fori_loop(0, steps, step, (zero, zero))[0]

    return jax.vmap(lane)(kdata)


def thompson_gauss(bandit, params, kdata, steps: int):
    """Pull counts ``[L, K]`` of Gaussian Thompson sampling after ``steps`` pulls."""
    num_arms = params.means.shape[-1]

    def lane(kd):
        key = jax.random.wrap_key_data(kd)
        k_env, k_steps = jax.random.split(key)

        def step(t, carry):
            n, s = carry
            k_theta, k_tie = jax.random.split(jax.random.fold_in(k_steps, t))
            prec = n + 1.0 / _PRIOR_VAR
            z = jax.random.normal(k_theta, (num_arms,), n.dtype)
            theta = s / prec + z * jax.lax.rsqrt(prec)
            arm = _random_tie(theta == jnp.max(theta), k_tie)
            r, hot = _pull(bandit, params, k_env, arm, n)
            return n + hot, s + jnp.where(hot, r, 0.0)

        zero = jnp.zeros(num_arms, jnp.float32)
        return jax.lax.fori_loop(0, steps, step, (zero, zero))[0]

    return jax.vmap(lane)(kdata)


def sequential_halving(bandit, params, kdata, steps: int):
    """Pull counts ``[L, K]`` of Sequential Halving with budget ``steps``."""
    num_arms = params.means.shape[-1]
    rounds = max(1, math.ceil(math.log2(num_arms)))
    ends, size, t = [], num_arms, 0
    for _ in range(rounds):  # the static schedule: the step at which each round ends
        t += size * (steps // (size * rounds))
        ends.append(t)
        size = max(1, -(-size // 2))
    ends = jnp.asarray(ends, jnp.int32)
    ids = jnp.arange(num_arms)

    def lane(kd):
        k_env = jax.random.wrap_key_data(kd)

        def halve(carry):
            n, s, active, m = carry
            mean = jnp.where(active, s / jnp.maximum(n, 1.0), -jnp.inf)
            # rank by mean (ties by index): arms ahead of each arm
            ahead = (mean[None, :] > mean[:, None]) | (
                (mean[None, :] == mean[:, None]) & (ids[None, :] < ids[:, None])
            )
            keep = jnp.sum(ahead & active[None, :], axis=1) < -(-jnp.sum(active) // 2)
            return n, s, active & keep, jnp.zeros_like(m)

        def step(t, carry):
            n, s, active, m = carry
            arm = jnp.argmin(jnp.where(active, m, jnp.inf)).astype(jnp.int32)
            r, hot = _pull(bandit, params, k_env, arm, n)
            carry = (n + hot, s + jnp.where(hot, r, 0.0), active, m + hot)
            return jax.lax.cond(jnp.any(ends == t + 1), halve, lambda c: c, carry)

        zero = jnp.zeros(num_arms, jnp.float32)
        active = jnp.ones(num_arms, bool)
        return jax.lax.fori_loop(0, steps, step, (zero, zero, active, zero))[0]

    return jax.vmap(lane)(kdata)


TWINS = {
    "apt": apt,
    "ucb1": ucb1,
    "thompson:gauss": thompson_gauss,
    "sequential_halving": sequential_halving,
}
"""Policy label (as ``benchmarks/gpu_compile.py`` names rows) -> its twin."""

__all__ = ["TAU", "EPS", "TWINS"]
