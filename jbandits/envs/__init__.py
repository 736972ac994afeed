"""Reward families (bandit environments) and instance utilities."""

from jbandits.envs.bernoulli import BERNOULLI, BernoulliParams, bernoulli
from jbandits.envs.gaussian import GAUSSIAN, GaussianParams, gaussian
from jbandits.envs.replay import REPLAY, ReplayParams, replay
from jbandits.envs.utils import pad_arms, stack_instances

__all__ = [
    "BERNOULLI",
    "GAUSSIAN",
    "REPLAY",
    "BernoulliParams",
    "GaussianParams",
    "ReplayParams",
    "bernoulli",
    "gaussian",
    "pad_arms",
    "replay",
    "stack_instances",
]
