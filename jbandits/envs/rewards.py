"""What the rewards of a built-in family's instance are known to be
(:class:`jbandits.core.reward_model.Rewards`), for the entry points' reward-model check
(:mod:`jbandits.core.reward_model`).

* Bernoulli arms: rewards in ``[0, 1]``.
* Gaussian arms: Gaussian, of the largest std of the real arms (with every std 0, the
  rewards are the means: bounded by them).
* A replay table: bounded by its smallest and largest value on the real arms.
* MovieLens: bounded by the smallest and largest rating of the arms' movies.
* Any other family (one's own, a hand-built Bandit): unknown.

A family is recognised by its sampler and its params type together (a family of one's
own named "bernoulli", or built on ``BernoulliParams`` with another sampler, is not the
built-in one). Only concrete params are read; traced ones are unknown.
"""

from __future__ import annotations

import jax
import numpy as np

from jbandits.core.reward_model import UNKNOWN, Rewards
from jbandits.core.validate import is_concrete
from jbandits.envs.bernoulli import BERNOULLI, BernoulliParams
from jbandits.envs.gaussian import GAUSSIAN, GaussianParams
from jbandits.envs.movielens import MOVIELENS, MovieLensParams
from jbandits.envs.replay import REPLAY, ReplayParams


def _is(bandit, family, params, params_type) -> bool:
    return getattr(bandit, "sample", None) is family.sample and isinstance(
        params, params_type
    )


def _host(x) -> np.ndarray:
    return np.asarray(jax.device_get(x))


def _bounded(values: np.ndarray, what: str) -> Rewards:
    low, high = float(values.min()), float(values.max())
    return Rewards("bounded", f"{what} in [{low:g}, {high:g}]", low, high)


def rewards_of(bandit, params) -> Rewards:
    """What the rewards of instance ``params`` (one ``[K]`` or a stack ``[N, K]``) of
    ``bandit`` are known to be (module docstring)."""
    if not is_concrete(params):
        return UNKNOWN
    if _is(bandit, BERNOULLI, params, BernoulliParams):
        return Rewards("bounded", "Bernoulli rewards", 0.0, 1.0)
    mask = _host(params.arm_mask).astype(bool)
    if _is(bandit, GAUSSIAN, params, GaussianParams):
        stds = _host(params.stds)[mask]
        if not np.any(stds > 0):
            return _bounded(_host(params.means)[mask], "constant rewards")
        sigma = float(stds.max())
        return Rewards(
            "gaussian", f"Gaussian rewards of std up to {sigma:g}", sigma=sigma
        )
    if _is(bandit, REPLAY, params, ReplayParams):
        return _bounded(_host(params.table)[mask], "replayed rewards")
    if _is(bandit, MOVIELENS, params, MovieLensParams):
        matrix = _host(params.matrix)
        if matrix.ndim == 2:  # the shared matrix: the arms' columns
            matrix = matrix[:, _host(params.movies)[mask]]
        return _bounded(matrix, "ratings")
    return UNKNOWN
