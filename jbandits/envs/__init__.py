"""Reward families (bandit environments), the named problem instances of the papers
(:mod:`jbandits.envs.problems`), instance utilities, and the public helper to define
a reward family of one's own (:func:`family`, :func:`reward_uniform`,
:func:`reward_normal`; :mod:`jbandits.envs.common`), and the families by name that
``jbandits sweep`` reads (:func:`register_family`, :func:`make_family`,
:func:`family_names`; :mod:`jbandits.envs.families`)."""

from jbandits.envs import common, movielens, problems  # noqa: F401  (modules)
from jbandits.envs.bernoulli import BERNOULLI, BernoulliParams, bernoulli
from jbandits.envs.common import family, reward_normal, reward_uniform
from jbandits.envs.families import (
    family_names,
    make_family,
    register_family,
    unregister_family,
)
from jbandits.envs.gaussian import GAUSSIAN, GaussianParams, gaussian
from jbandits.envs.movielens import MOVIELENS, MovieLensParams
from jbandits.envs.replay import REPLAY, ReplayParams, replay
from jbandits.envs.utils import pad_arms, stack_instances

__all__ = [
    "BERNOULLI",
    "GAUSSIAN",
    "MOVIELENS",
    "REPLAY",
    "BernoulliParams",
    "GaussianParams",
    "MovieLensParams",
    "ReplayParams",
    "bernoulli",
    "family",
    "family_names",
    "gaussian",
    "make_family",
    "movielens",
    "pad_arms",
    "register_family",
    "replay",
    "reward_normal",
    "reward_uniform",
    "stack_instances",
    "unregister_family",
]
