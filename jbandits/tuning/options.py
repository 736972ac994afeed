"""The tuner's options, in three small frozen groups (and the estimator's choice).

:func:`jbandits.tuning.tune` takes what to minimise (an
:class:`~jbandits.tuning.Objective`), where (a space) and how:

* :class:`Search`: the simulation budget and the search itself (the coarse grid or
  the starting points, the optimiser, when to stop, averaging, the final comparison);
* the estimator: :class:`ES` (antithetic evolution strategies, any policy) or
  :class:`PG` (the softmax policy gradient of an index policy), each with its own
  numbers, as an optax optimiser or a blackjax kernel carries its own;
* :class:`Report`: what the result reports besides ``theta`` (a final evaluation on
  fresh replications) and whether each step is printed.

``None`` means "chosen from the space's dimension" where a default depends on it.
Values that can be checked without the space are checked at construction.
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

ALLOCATIONS = ("grid", "halving")


def _positive(name: str, value, none: bool = False) -> float | None:
    if value is None and none:
        return None
    ok = isinstance(value, (int, float, np.integer, np.floating))
    if isinstance(value, bool) or not ok or not np.isfinite(value) or value <= 0:
        raise ValueError(f"{name} must be a finite number > 0, got {value!r}")
    return float(value)


@dataclass(frozen=True)
class Search:
    """How the tuner spends its simulations and moves ``theta``.

    Procedure: (1) unless ``start`` is given, a coarse grid of ``init_points`` per
    parameter on common random numbers picks the ``starts`` best points, each moved
    to the vertex of the parabola through it and its grid neighbours; (2) from each,
    ``optimizer`` follows the gradient estimate in normalised coordinates until the
    simulations are spent, ``max_steps`` is reached or (with ``snr_stop``) the mean
    gradient of the last ``patience`` steps is within ``snr_stop`` standard errors of
    0; (3) each start's candidate is the average of the second half of its iterates
    (Polyak-Ruppert; Polyak and Juditsky, SIAM J. Control Optim. 1992); (4) with
    ``select`` > 0 a share of the simulations is kept for a paired comparison on
    fresh common replications between these averages, the start and the best point
    evaluated during the search: the lowest mean wins.

    Attributes:
      simulations: total simulations for the search (grid included).
      num_reps: replications per evaluated point (>= 2).
      start: a ``theta`` pytree (or a list of them) to start from instead of the grid.
      init_points: coarse-grid points per parameter (with ``allocation="grid"``
        default 5 for d <= 2, 3 beyond: for EUCBV (rho, psi) a 5 x 5 grid reached
        the edge of the low-regret valley that a 4 x 4 one missed, mean ratio to
        the fine grid 1.013 -> 1.007 over 5 seeds; with ``"halving"`` 16, 11 per
        axis for two parameters, 6 beyond, or 8 / 5 per axis where the finer
        grid's first halving round would give a point fewer than 6 replications:
        ``TuneResult.method`` says which ran).
      starts: how many of the best grid points to start from (multi-start).
      optimizer: any ``optax.GradientTransformation`` acting on normalised
        coordinates (default :func:`~jbandits.tuning.default_optimizer` with a step
        of a quarter of the grid spacing, or 0.1 from ``start``).
      max_steps: at most this many steps per start.
      snr_stop: if set (e.g. 1.0), stop when the mean gradient of the last
        ``patience`` steps is within ``snr_stop`` standard errors of 0: it saves
        simulations once converged, but can also stop on a plateau (off by default;
        every step's SNR is in ``TuneResult.path`` either way).
      patience: the window of ``snr_stop``.
      average: return the averaged iterate (else the last one).
      select: share of ``simulations`` kept for the final comparison, in [0, 1)
        (default 0.2 for two or more parameters, 0 for one, where the budget is a
        few steps; 0.2 for any dimension with ``allocation="halving"``); skipped
        when there is a single candidate.
      allocation: how the coarse grid and the final comparison spend their
        simulations (default ``"grid"`` for one parameter, ``"halving"`` for two or
        more: see ``benchmarks/notes_tuning_tasks.md``, runs 3 and 4). ``"grid"``: every grid point gets ``num_reps`` common
        replications and the final comparison gives every candidate the same
        share. ``"halving"``: a finer grid (``init_points`` default 16 for one
        parameter, 11 per axis for two, 6 beyond; 8 / 5 on small budgets) is
        *successively halved*
        (:func:`jbandits.tuning.allocation.halve`: each round a fresh block of
        common replications for the survivors, the better half kept, so the
        replications double where the choice is close), on the simulations
        left after ``select``'s reserve (for two or more parameters on 0.6 of
        them, ES steps get the rest); the final comparison is a *race*
        (:func:`jbandits.tuning.allocation.race`) between the averaged iterates,
        the halving's two survivors (possibly from distinct basins), for one
        parameter the vertex of the parabola fitted to the last round's paired
        means, and the best evaluated point, dropping a candidate once it is more than 2 paired
        standard errors behind the leader.

    Raises:
      ValueError: ``simulations`` not an integer >= 1 (and, in
        :func:`~jbandits.tuning.tune`, fewer than the search needs: the coarse grid
        or one step), ``num_reps`` < 2, ``init_points`` / ``starts`` / ``patience``
        not integers >= 1, ``max_steps`` not an integer >= 0, ``snr_stop`` not a
        number > 0, ``select`` outside [0, 1) or an unknown ``allocation``.
    """

    simulations: int = 4000
    num_reps: int = 100
    start: Any = None
    init_points: int | None = None
    starts: int = 1
    optimizer: optax.GradientTransformation | None = None
    max_steps: int = 100
    snr_stop: float | None = None
    patience: int = 5
    average: bool = True
    select: float | None = None
    allocation: str | None = None

    def __post_init__(self):
        object.__setattr__(self, "num_reps", count("num_reps", self.num_reps, 2))
        for name, least, none in (
            ("simulations", 1, False),
            ("init_points", 1, True),
            ("starts", 1, False),
            ("max_steps", 0, False),
            ("patience", 1, False),
        ):
            value = count(f"Search({name}=...)", getattr(self, name), least, none=none)
            object.__setattr__(self, name, value)
        _positive("Search(snr_stop=...)", self.snr_stop, none=True)
        if self.select is not None and not 0.0 <= float(self.select) < 1.0:
            raise ValueError(f"select must lie in [0, 1), got {self.select}")
        if self.allocation is not None and self.allocation not in ALLOCATIONS:
            raise ValueError(
                f"allocation must be one of {ALLOCATIONS}, got {self.allocation!r}"
            )

    def allocation_for(self, dim: int) -> str:
        """``allocation`` with its default for a ``dim``-parameter space."""
        if self.allocation is not None:
            return self.allocation
        return "grid" if dim == 1 else "halving"

    def halving_for(self, dim: int) -> bool:
        """The grid is halved (no ``start`` given, allocation "halving")."""
        return self.allocation_for(dim) == "halving" and self.start is None

    def select_for(self, dim: int) -> float:
        """``select`` with its default for a ``dim``-parameter space."""
        if self.select is not None:
            return float(self.select)
        return 0.2 if dim > 1 or self.halving_for(dim) else 0.0

    def init_points_for(self, dim: int) -> int:
        """``init_points`` with its default for a ``dim``-parameter space."""
        if self.init_points:
            return self.init_points
        if self.halving_for(dim):
            from jbandits.tuning.allocation import halving_points

            return halving_points(dim)
        return 5 if dim <= 2 else 3


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
      sigma_decay: step ``i`` smooths with ``sigma / (1 + i / sigma_decay)``, the
        default optimiser's schedule (Kiefer and Wolfowitz, Ann. Math. Statist.
        1952: with a shrinking difference the iterates approach the minimum of
        the loss, not of its smoothing); ``math.inf`` keeps ``sigma`` at every
        step. Default 5 for one parameter (MOSS alpha, whose loss has a kink at
        its minimum: at 4000 simulations the constant sigma ended 3-6 % above
        the optimum on 10/10 seeds, the schedule within 2 % on 9/10;
        ``benchmarks/notes_tuning_tasks.md``), constant for more (not measured
        there yet).

    Raises:
      ValueError: ``sigma`` outside (0, 0.5), ``sigma_decay`` not a number > 0.
    """

    sigma: float | None = None
    num_pairs: int | None = None
    crn: bool | None = None
    sigma_decay: float | None = None

    def __post_init__(self):
        if self.sigma is not None:
            _check_sigma(self.sigma)
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
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
                ok = False
            else:
                ok = value == 0 or value >= 2
            if not ok:
                raise ValueError(
                    f"Report({name}=...) must be 0 (none) or an integer >= 2 "
                    f"(replications per point), got {value!r}"
                )
        if self.confidence not in (None, 0):
            object.__setattr__(
                self, "confidence", count("confidence", self.confidence, 2)
            )

    def confidence_for(self, num_reps: int) -> int:
        """Replications of the confidence statement (0: none)."""
        return 2 * num_reps if self.confidence is None else int(self.confidence)


def _check_sigma(sigma) -> None:
    if not 0.0 < sigma < 0.5:
        raise ValueError(f"sigma must lie in (0, 0.5) (normalised units), got {sigma}")


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
