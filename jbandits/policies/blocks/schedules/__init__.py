"""Host-side exact phase schedules.

Every ceil/floor that depends only on (K, T) is computed here in exact arithmetic
(``fractions.Fraction`` and integer division) and handed to JAX as int32 arrays: float
evaluation of Successive Rejects' n_k is off by one for K = 8, T = 1871. A sweep over
budgets stacks the schedules of each point with :func:`stack`; arrays are padded to a
common length ``size`` (phase ends padded with ``NEVER``), so the sweep compiles once.

This package is the import point (``from jbandits import schedules``); the code lives
in modules with one job each:

* :mod:`jbandits.policies.blocks.schedules.phases`: :class:`PhaseSchedule` of Successive Rejects (and
  so SAR and VBR) and CSAR; the exact harmonic numbers and log-bar(K) behind them.
* :mod:`jbandits.policies.blocks.schedules.halving`: :class:`StageSchedule` of the sequential-halving
  family.
* :mod:`jbandits.policies.blocks.schedules.rounds`: round constants of the policies with
  data-dependent rounds (AugUCB, EUCBV, UCB-Improved).
* :mod:`jbandits.policies.blocks.schedules.tables`: rows per real K of padded instances
  (:func:`for_k`, :func:`by_k`, :func:`stack`) and the device-side :func:`select`;
  its docstring states the convention that every padded instance follows.
* :mod:`jbandits.policies.blocks.schedules.common`: :data:`NEVER`, :class:`Infeasible`, and the
  check and padding every builder shares.
"""

from jbandits.policies.blocks.schedules.common import NEVER, Infeasible
from jbandits.policies.blocks.schedules.halving import (
    StageSchedule,
    halving_equal_stages,
    halving_karnin,
    halving_min_budget,
    num_halving_stages,
)
from jbandits.policies.blocks.schedules.phases import (
    PhaseSchedule,
    csar,
    csar_authors_code,
    harmonic,
    log_bar,
    phases_min_budget,
    successive_rejects,
)
from jbandits.policies.blocks.schedules.rounds import (
    AUGUCB_MAX_SIZE,
    AUGUCB_VARIANTS,
    AugUCBTables,
    ImprovedSchedule,
    augucb_tables,
    eucbv_rounds,
    num_rounds,
    ucb_improved,
)
from jbandits.policies.blocks.schedules.tables import (
    Schedule,
    by_k,
    for_k,
    phase_rows,
    select,
    stack,
    stage_rows,
)

__all__ = [
    "AUGUCB_MAX_SIZE",
    "AUGUCB_VARIANTS",
    "NEVER",
    "AugUCBTables",
    "ImprovedSchedule",
    "Infeasible",
    "PhaseSchedule",
    "Schedule",
    "StageSchedule",
    "augucb_tables",
    "by_k",
    "csar",
    "csar_authors_code",
    "eucbv_rounds",
    "for_k",
    "halving_equal_stages",
    "halving_karnin",
    "halving_min_budget",
    "harmonic",
    "log_bar",
    "num_halving_stages",
    "num_rounds",
    "phase_rows",
    "phases_min_budget",
    "select",
    "stack",
    "stage_rows",
    "successive_rejects",
    "ucb_improved",
]
