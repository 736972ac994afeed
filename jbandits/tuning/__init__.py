"""Tuning hyper-parameters (alpha, epsilon, rho, psi, ...) by simulation.

``jax.grad`` through a bandit trajectory is exactly zero almost everywhere, so tuning
needs a grid or a gradient *estimator* of a smoothed objective. This package has:

* :func:`tune`: the one-call tuner on the batched runner (compiled once, cached),
  ``tune(Objective(policy, bandit, instance, budget=...), space, search=Search(...),
  estimator=ES(...) | PG(...), report=Report(...), key=...)``: coarse-grid or
  halving-grid initialisation, antithetic ES with common random numbers or the
  softmax policy-gradient estimator, any optax optimiser, decaying steps,
  iterate averaging, a race, a final evaluation with CIs, a
  confidence statement (paired CIs of tuned vs start vs best evaluated point) and
  warnings for a flat landscape or an optimum on the box's edge;
* :func:`grid_tune`: a compile-once grid on common random numbers (first choice for
  one parameter); :func:`tune_budgets`: theta as a function of the budget;
* :class:`Box`, :class:`LogSpace`, :class:`Logit`: search spaces;
* :func:`es_value_and_grad` and :func:`minimize`: the estimator and loop for a
  hand-written traced loss.

A Bayes objective passes a prior ``key -> instance`` instead of an instance; the
environment constructors (:func:`jbandits.envs.bernoulli`, ...) accept traced means.
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
