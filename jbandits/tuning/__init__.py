"""Tuning hyper-parameters (alpha, epsilon, rho, psi, ...) by simulation.

``jax.grad`` through a bandit trajectory is exactly zero almost everywhere, so tuning
needs a grid or a gradient *estimator* of a smoothed objective:

* :func:`tune`: ``tune(Objective(policy, bandit, instance, budget=...), space,
  search=Search(...), estimator=ES(...) | PG(...), report=Report(...), key=...)``,
  compiled once: a grid (halved for two or more parameters), antithetic ES on common
  random numbers or the softmax policy gradient, any optax optimiser, iterate
  averaging, a race, a confidence statement and warnings (a flat landscape, an
  optimum on the box's edge); :func:`tune_budgets`: theta as a function of the budget;
* :func:`grid_tune`: a compile-once grid on common random numbers;
* :class:`Box`, :class:`LogSpace`, :class:`Logit`: search spaces;
* :func:`es_value_and_grad` and :func:`minimize`: for a hand-written traced loss.

A Bayes objective passes a prior ``key -> instance`` instead of an instance.
"""

from jbandits.core.grad_guard import TrajectoryGradientError
from jbandits.tuning.confidence import (
    Confidence,
    Paired,
    TuningWarning,
    evaluate_points,
)
from jbandits.tuning.estimators import (
    es_gradient,
    es_value_and_grad,
    minimize,
    pg_gradient,
)
from jbandits.tuning.grid import grid_tune
from jbandits.tuning.objective import Objective
from jbandits.tuning.options import ES, PG, Report, Search
from jbandits.tuning.relaxed import relaxed_policy
from jbandits.tuning.results import Evaluation, GridResult, Step, TuneResult
from jbandits.tuning.space import Box, Logit, LogSpace, Space
from jbandits.tuning.tuner import default_optimizer, tune, tune_budgets

__all__ = [
    "ES",
    "Box",
    "Confidence",
    "Evaluation",
    "GridResult",
    "LogSpace",
    "Logit",
    "Objective",
    "PG",
    "Paired",
    "Report",
    "Search",
    "Space",
    "Step",
    "TrajectoryGradientError",
    "TuneResult",
    "TuningWarning",
    "default_optimizer",
    "es_gradient",
    "es_value_and_grad",
    "evaluate_points",
    "grid_tune",
    "minimize",
    "pg_gradient",
    "relaxed_policy",
    "tune",
    "tune_budgets",
]
