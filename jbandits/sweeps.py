"""Batched entry points over the one runner (:mod:`jbandits.runner`).

* :func:`simulate`: one policy on one instance (or a stack of instances), ``R``
  replications -> :class:`~jbandits.engine.RunResult` with leaves ``[R, ...]``
  (``[N, R, ...]``).
* :func:`sweep`: ``make_policy(**hp)`` over a grid of ``P`` traced hyper-parameter
  points x instances x replications -> leaves ``[P, (N,) R, ...]``.
* :func:`sweep_grid`: the declarative sweep — policies x hyper-parameter grids x K x
  budgets x replications, padded to K buckets and horizon buckets (one compiled
  program per policy and bucket), with a resumable store and a tidy table
  (:class:`SweepResult`).

All of them default to ``permute=True`` (a random relabelling of the arms per
replication): the policies break ties toward the lowest index, which is faithful to
the papers only when arm labels are random.

This module is their public home; each lives in a module of its own:
:mod:`jbandits._simulate`, :mod:`jbandits._sweep` (with :func:`product_grid`),
:mod:`jbandits._sweep_grid` (with :func:`k_bucket`), :mod:`jbandits._sweep_result`;
their argument checks are :mod:`jbandits._checks`, the steps they share on the way
to the runner :mod:`jbandits._entry`.
"""

from __future__ import annotations

# the private names (moved) that the tuner, benchmarks and tests still reach here
from jbandits._checks import budget_array as _budget_array  # noqa: F401
from jbandits._checks import mask as _mask  # noqa: F401
from jbandits._checks import metric as _check_metric  # noqa: F401
from jbandits._checks import one_metric as _one_metric  # noqa: F401
from jbandits._entry import host_policy as _host_policy  # noqa: F401
from jbandits._entry import prepared as _prepared  # noqa: F401
from jbandits._simulate import simulate
from jbandits._sweep import product_grid, sweep
from jbandits._sweep_grid import k_bucket, sweep_grid
from jbandits._sweep_result import SweepResult

__all__ = ["SweepResult", "k_bucket", "product_grid", "simulate", "sweep", "sweep_grid"]
