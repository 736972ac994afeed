"""Reward families (bandit environments) and instance utilities."""

from jbandits.envs import movielens  # module: loader, ALS completion, instances
from jbandits.envs.bernoulli import BERNOULLI, BernoulliParams, bernoulli
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
    "gaussian",
    "movielens",
    "pad_arms",
    "replay",
    "stack_instances",
]
