"""Thompson sampling, Beta-Bernoulli and Gaussian (Agrawal and Goyal,
COLT 2012 and AISTATS 2013).

At every decision draw one sample ``theta_j`` from each real arm's posterior and pull
``argmax_j theta_j``. There are no forced initial pulls: the prior decides the first
arm (uniform over the real arms).

* ``posterior="beta"`` (Agrawal & Goyal 2012): prior ``Beta(1, 1)``, posterior
  ``Beta(1 + succ_j, 1 + fail_j)``. A reward ``r`` is binarised as
  ``r~ = 1{u < r}``, ``u ~ U[0, 1)`` (identity on ``{0, 1}``; a reward in ``(0, 1)``
  counts as a success with probability ``r``).
* ``posterior="gauss"`` (Agrawal & Goyal 2013): prior ``N(0, prior_var)`` and unit
  noise variance, posterior precision ``1 / prior_var + k_j`` and mean
  ``S_j / (1 / prior_var + k_j)``; with ``prior_var = 1`` this is
  ``N(S_j / (k_j + 1), 1 / (k_j + 1))``.

Randomness: the key a decision receives (the init key for the first arm, the step key
afterwards) is split as ``key_bin, key_theta, key_tie = jax.random.split(key, 3)``:
``key_bin`` binarises the reward just observed (a scalar ``uniform``; Beta only),
``key_theta`` draws the ``[K]`` posterior samples, and ``key_tie`` breaks exact ties
(probability 0 in exact arithmetic; kept for ``tie_break="random"``). The split,
the binarising uniform and the Gaussian draws (``jax.random.normal(key_theta,
(K,))``) go through :mod:`jbandits.core.prng` (the same bits as ``jax.random``, in fewer
kernels). Beta draws come from :func:`jbandits.policies.blocks.sampling.beta` (Marsaglia-Tsang
gammas with a fixed number of tries per step and an exact fallback; the bits
differ from ``jax.random.beta``, the law is the same).
"""

from __future__ import annotations

from typing import NamedTuple

import jax.numpy as jnp

from jbandits.core import prng as _prng
from jbandits.core import registry
from jbandits.core import validate as _validate
from jbandits.core.execution import Execution
from jbandits.core.types import Array, ArrayLike, Key, Policy
from jbandits.policies.blocks import arms
from jbandits.policies.blocks import fuse as _fuse
from jbandits.policies.blocks import sampling as _sampling

POSTERIORS = ("beta", "gauss")


class ThompsonState(NamedTuple):
    stats: arms.ArmStats  # raw rewards: counts and sums ([K] each; no M2)
    succ: Array  # [K] float: binarised successes (Beta only; stays 0 for "gauss")
    arm_mask: Array  # [K] bool: real arms
    arm: Array  # [] int32: next arm


def binarise(key: Key, reward: ArrayLike) -> Array:
    """Bernoulli binarisation ``1{u < r}`` with ``u ~ U[0, 1)`` drawn from ``key``."""
    reward = jnp.asarray(reward, jnp.result_type(float))
    return (_prng.uniform(key, (), reward.dtype) < reward).astype(reward.dtype)


def add_success(succ: Array, arm: Array, key: Key, reward: ArrayLike) -> tuple:
    """``(succ, won)``: the pulled ``arm``'s binarised success (:func:`binarise`)
    added to the successes ``succ [K]``."""
    hit = arms.one_hot(arm, succ.shape[-1])
    # one kernel: XLA would otherwise fuse the hash into every [K]-wide consumer
    won = _fuse.materialise(binarise(key, reward))
    return succ + jnp.where(hit, won, 0.0), won


def beta_samples(
    key: Key, stats: arms.ArmStats, succ: Array, lanes: str | None = None
) -> Array:
    """``[K]`` draws from ``Beta(1 + succ, 1 + fail)`` with ``fail = counts - succ``
    (``lanes``: the batch's lanes axis, see :func:`jbandits.policies.blocks.sampling.beta`)."""
    return _sampling.beta(key, 1.0 + succ, 1.0 + stats.counts - succ, lanes=lanes)


def gauss_samples(key: Key, stats: arms.ArmStats, prior_var: ArrayLike) -> Array:
    """``[K]`` draws ``mean_j + z_j / sqrt(prec_j)``, ``prec_j = 1 / prior_var + k_j``."""
    precision = 1.0 / prior_var + stats.counts
    z = _prng.normal(key, stats.counts.shape, stats.counts.dtype)
    return stats.sums / precision + z / jnp.sqrt(precision)


@registry.policy("thompson")
def thompson(
    num_arms: int,
    *,
    posterior: str = "beta",
    prior_var: ArrayLike = 1.0,
    tie_break: str = "random",
    execution: Execution | None = None,
) -> Policy:
    """Thompson sampling.

    Args:
      num_arms: static K_max (real arms are given by ``arm_mask`` at ``init``).
      posterior: static, ``"beta"`` (Beta-Bernoulli, rewards in ``[0, 1]``, binarised)
        or ``"gauss"`` (Gaussian prior ``N(0, prior_var)``, unit noise variance).
      prior_var: prior variance of the Gaussian model (traced, ``> 0``); ignored by
        ``"beta"``.
      tie_break: static, ``"random"`` (default) or ``"first"``: "random" (uniform among exact maximisers) is the paper-faithful default; "first" mimics the authors' Python scripts.
      execution: how the step compiles (static); see :mod:`jbandits.policies`.

    Returns:
      A regret :class:`~jbandits.core.types.Policy`; ``output`` is the empirical best arm
      (highest mean of the raw rewards among pulled real arms).

    References:
      Agrawal, Goyal. Analysis of Thompson sampling for the multi-armed bandit
      problem. COLT 2012.
      Agrawal, Goyal. Further optimal regret bounds for Thompson sampling. AISTATS
      2013.
    """
    num_arms = _validate.static_int("num_arms", num_arms, minimum=2)
    _validate.choice("posterior", posterior, POSTERIORS)
    _validate.choice("tie_break", tie_break, arms.TIE_BREAKS)
    _validate.in_range("prior_var", prior_var, 0.0, low_open=True)
    execution = Execution.resolve(execution)

    def choose(key_theta, key_tie, stats, succ, arm_mask):
        if posterior == "beta":
            theta = beta_samples(key_theta, stats, succ, execution.lanes)
        else:
            theta = gauss_samples(key_theta, stats, prior_var)
        return arms.argmax_masked(theta, arm_mask, key=key_tie, tie_break=tie_break)

    def init_fn(key, arm_mask):
        _, key_theta, key_tie = _prng.split(key, 3)
        stats = arms.init_stats(num_arms, variance=False)  # no variance read
        succ = jnp.zeros_like(stats.counts)
        arm = choose(key_theta, key_tie, stats, succ, arm_mask)
        return ThompsonState(stats, succ, arm_mask, arm)

    def step_fn(state, key, reward):
        key_bin, key_theta, key_tie = _prng.split(key, 3)
        stats = arms.update(
            state.stats, state.arm, reward, one_hot=execution.one_hot_arms
        )
        if posterior == "beta":
            succ, _ = add_success(state.succ, state.arm, key_bin, reward)
        else:
            succ = state.succ
        arm = choose(key_theta, key_tie, stats, succ, state.arm_mask)
        return ThompsonState(stats, succ, state.arm_mask, arm)

    def output_fn(state):
        return arms.best_empirical(state.stats, state.arm_mask)

    return Policy(init_fn, step_fn, output_fn, "regret")
