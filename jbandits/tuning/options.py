"""The tuner's options, in three small frozen groups: :class:`Search` (the budget,
the replications per point, a start, the optimiser), the estimator (:class:`ES` or
:class:`PG`, each with its own numbers) and :class:`Report` (what the result reports
besides ``theta``). The search itself follows the space's dimension (the runs that
chose it: ``benchmarks/notes_tuning_tasks.md``; :class:`Search` describes it).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import optax

from jbandits.analysis.stats import count

if TYPE_CHECKING:
    from jbandits.tuning.objective import Objective
    from jbandits.tuning.space import Space

GRID_POINTS = (
    5  # the one-parameter starting grid (runs 3 and 4: a halved 16 did no better)
)
SELECT = 0.2  # share kept for the final comparison with two or more parameters
MAX_STEPS = 100  # ES steps per start at most


def _positive(name: str, value) -> float:
    ok = isinstance(value, (int, float, np.integer, np.floating))
    if isinstance(value, bool) or not ok or not np.isfinite(value) or value <= 0:
        raise ValueError(f"{name} must be a finite number > 0, got {value!r}")
    return float(value)


@dataclass(frozen=True)
class Search:
    """How many simulations the tuner spends, and where it starts.

    Procedure: (1) unless ``start`` is given, a grid on common random numbers gives
    the start: for one parameter :data:`GRID_POINTS` points, the best moved to the
    vertex of the parabola through it and its neighbours; for two or more a
    successively halved grid (11 x 11, 6 per axis beyond; 8 x 8 / 5 per axis where
    its first round would give a point fewer than 6 replications:
    :func:`jbandits.tuning.allocation.halving_design`) on 0.6 of the simulations
    left after the final comparison's share; (2) ``optimizer`` follows the gradient
    estimate in normalised coordinates until the simulations are spent (at most
    :data:`MAX_STEPS` steps); (3) the candidate is the average of the second half of
    the iterates (Polyak-Ruppert; Polyak and Juditsky, SIAM J. Control Optim.
    1992); (4) for two or more parameters :data:`SELECT` of the simulations are kept
    for a paired comparison on fresh common replications between the average, the
    start, the halving's other survivor and the best point evaluated during the
    search: a race (:func:`jbandits.tuning.allocation.race`; equal shares from a
    given ``start``), the lowest mean wins.

    Attributes:
      simulations: total simulations for the search (grid included).
      num_reps: replications per evaluated point (>= 2).
      start: a ``theta`` pytree (or a list of them) to start from instead of the grid.
      optimizer: any ``optax.GradientTransformation`` acting on normalised
        coordinates (None: :func:`~jbandits.tuning.default_optimizer` with a step
        of a quarter of the grid spacing, or 0.1 from ``start``).

    Raises:
      ValueError: ``simulations`` not an integer >= 1 (and, in
        :func:`~jbandits.tuning.tune`, fewer than the search needs: the grid or one
        step), ``num_reps`` < 2.
    """

    simulations: int = 4000
    num_reps: int = 100
    start: Any = None
    optimizer: optax.GradientTransformation | None = None

    def __post_init__(self):
        object.__setattr__(self, "num_reps", count("num_reps", self.num_reps, 2))
        sims = count("Search(simulations=...)", self.simulations, 1)
        object.__setattr__(self, "simulations", sims)

    def halving_for(self, dim: int) -> bool:
        """The grid is halved (two or more parameters, no ``start`` given)."""
        return dim > 1 and self.start is None

    def select_for(self, dim: int) -> float:
        """The final comparison's share of the simulations."""
        return SELECT if dim > 1 else 0.0


@dataclass(frozen=True)
class ES:
    """Antithetic evolution strategies on common random numbers (any policy).

    The gradient of the Gaussian smoothing of the loss, from pairs
    ``theta +- sigma u`` that share their replication keys (see
    :func:`jbandits.tuning.es_gradient`).

    Attributes:
      sigma: smoothing scale in normalised coordinates, in (0, 0.5) (default 0.1
        for one parameter, 0.05 for more: measured on EUCBV (rho, psi), a wider
        smoothing moved the optimum of the smoothed objective).
      num_pairs: antithetic pairs per step (default 1 for d = 1, else d).
      crn: every step reuses the coarse grid's replication keys, so the grid's and
        the steps' means are comparable (default: for two or more parameters);
        otherwise each step draws fresh replications.
      sigma_decay: step ``i`` smooths with ``sigma / (1 + i / sigma_decay)``
        (Kiefer and Wolfowitz, Ann. Math. Statist. 1952: with a shrinking
        difference the iterates approach the minimum of the loss, not of its
        smoothing); ``math.inf`` keeps ``sigma``. Default 5 for one parameter (MOSS
        alpha, a kink at its minimum: within 2 % on 9/10 seeds against 0/10 with a
        constant sigma; ``benchmarks/notes_tuning_tasks.md``), constant for more.

    Raises:
      ValueError: ``sigma`` outside (0, 0.5), ``sigma_decay`` not a number > 0.
    """

    sigma: float | None = None
    num_pairs: int | None = None
    crn: bool | None = None
    sigma_decay: float | None = None

    def __post_init__(self):
        if self.sigma is not None and not 0.0 < self.sigma < 0.5:
            raise ValueError(
                f"sigma must lie in (0, 0.5) (normalised units), got {self.sigma}"
            )
        count("ES(num_pairs=...)", self.num_pairs, 1, none=True)
        if self.sigma_decay is not None and self.sigma_decay != np.inf:
            _positive("ES(sigma_decay=...)", self.sigma_decay)

    def resolved(self, dim: int) -> ES:
        """The options with their defaults for a ``dim``-parameter space filled in."""
        return ES(
            sigma=(0.1 if dim == 1 else 0.05) if self.sigma is None else self.sigma,
            num_pairs=self.num_pairs or (1 if dim == 1 else dim),
            crn=dim > 1 if self.crn is None else bool(self.crn),
            sigma_decay=(
                (5.0 if dim == 1 else np.inf)
                if self.sigma_decay is None
                else float(self.sigma_decay)
            ),
        )


@dataclass(frozen=True)
class PG:
    """The score-function gradient of the softmax relaxation of an index policy.

    For LSA, APT and UCB-E given by name: one point per step and no smoothing
    scale, unbiased for the relaxed policy, but its variance grows with the horizon
    and the relaxed optimum need not be the hard policy's (see
    :mod:`jbandits.tuning.relaxed`).

    Attributes:
      temperature: softmax temperature of the relaxation (index units).
    """

    temperature: float = 1.0

    def __post_init__(self):
        _positive("PG(temperature=...)", self.temperature)


@dataclass(frozen=True)
class Report:
    """What :func:`~jbandits.tuning.tune` reports besides ``theta``.

    Attributes:
      evaluate: if > 0, evaluate the tuned theta, the start and the best grid point
        on this many fresh common replications each (``TuneResult.evaluation``).
      verbose: print every step.
      confidence: fresh common replications per point of the confidence statement
        (``TuneResult.confidence``: tuned vs start vs best evaluated point) when
        ``evaluate`` is 0 (default ``2 * Search.num_reps``; 0: none, and no flat
        warning); with ``evaluate`` > 0 the evaluation's replications serve.

    Raises:
      ValueError: ``evaluate`` or ``confidence`` neither 0 nor an integer >= 2.
    """

    evaluate: int = 0
    verbose: bool = False
    confidence: int | None = None

    def __post_init__(self):
        if not isinstance(self.verbose, (bool, np.bool_)):
            raise ValueError(
                f"Report(verbose=...) must be True or False, got {self.verbose!r}"
            )
        for name in ("evaluate", "confidence"):
            value = getattr(self, name)
            if value is None and name == "confidence":
                continue
            integer = isinstance(value, (int, np.integer)) and not isinstance(
                value, bool
            )
            if not integer or not (value == 0 or value >= 2):
                raise ValueError(
                    f"Report({name}=...) must be 0 (none) or an integer >= 2 "
                    f"(replications per point), got {value!r}"
                )

    def confidence_for(self, num_reps: int) -> int:
        """Replications of the confidence statement (0: none)."""
        return 2 * num_reps if self.confidence is None else int(self.confidence)


def check(search, estimator, report) -> None:
    """Each group is of its type (a clear error for a dict or a string)."""
    for name, value, kinds in (
        ("search", search, (Search,)),
        ("estimator", estimator, (ES, PG)),
        ("report", report, (Report,)),
    ):
        if not isinstance(value, kinds):
            want = " or ".join(f"{k.__name__}(...)" for k in kinds)
            raise ValueError(f"{name} must be {want}, got {value!r}")


@dataclass
class Plan:
    """One :func:`tune` call's checked options, with their defaults filled in."""

    objective: Objective
    space: Space
    search: Search
    estimator: ES | PG
    estimate_on: Objective  # the objective itself, or its relaxed copy for PG
    select: float
    chunk: int  # lanes per compiled call
    cost: int  # simulations per gradient estimate
    init_points: int = 0  # points per axis of the starting grid (0: search.start)
    method: dict | None = None  # what runs and why (TuneResult.method)
