"""Result types of the tuner: the trajectory, the final evaluation, grid results."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, NamedTuple

import jax
import numpy as np

from jbandits.analysis import stats


class Step(NamedTuple):
    """One iteration of the tuner (``grad`` in normalised coordinates)."""

    theta: dict
    loss: float  # mean loss at the step's evaluations
    loss_se: float
    grad: np.ndarray  # [d]
    grad_se: np.ndarray  # [d]
    snr: float  # |grad| / its standard error (chi-like, over the d coordinates)
    accepted: bool  # False: a non-finite estimate was rejected, theta kept


@dataclass
class Evaluation:
    """Final evaluation on fresh replications (common to every row).

    ``rows``: name -> (theta, mean loss, 95% CI low, high);
    ``paired``: "tuned - NAME" -> (mean difference, 95% CI low, high), from the paired
    per-replication differences (common random numbers make them tight).
    """

    rows: dict
    paired: dict
    num_reps: int
    simulations: int

    def __str__(self) -> str:
        lines = [f"final evaluation ({self.num_reps} fresh replications each):"]
        for name, (theta, mean, lo, hi) in self.rows.items():
            lines.append(
                f"  {name:6s} {_fmt(theta)}  loss {mean:.4g} [{lo:.4g}, {hi:.4g}]"
            )
        for name, (d, lo, hi) in self.paired.items():
            lines.append(f"  {name:14s} {d:+.4g} [{lo:+.4g}, {hi:+.4g}]")
        return "\n".join(lines)


@dataclass
class TuneResult:
    """What :func:`tune` found and how.

    Attributes:
      theta: tuned parameters (the space's pytree of floats).
      start: where the optimiser started (the best coarse-grid point by default).
      path: the :class:`Step` trajectory (theta, loss, gradient +- SE per step).
      simulations: simulations (replications of the policy) the tuner used.
      stopped: "budget" (simulations spent) or "max_steps" (100 steps).
      rejected: steps whose estimate was not finite (theta was kept).
      init: ``(thetas [n, d] in natural units, mean losses [n])`` of the coarse grid.
      evaluation: the final :class:`Evaluation`, or None.
      seconds: wall time of the tuning (not of the evaluation).
      confidence: the :class:`~jbandits.tuning.confidence.Confidence` statement:
        paired differences tuned - start and tuned - best evaluated point (mean, SE,
        95% CI) on fresh common replications, or None (``Report(confidence=0)``).
      warnings: why the result deserves caution (also issued as
        :class:`~jbandits.tuning.confidence.TuningWarning`): a landscape flat within
        noise, a tuned value on the box's edge.
      method: which search ran: ``allocation`` ("grid", "halving" or "start"),
        ``design`` (e.g. "11 x 11", or "none"), ``estimator``, ``final`` ("race",
        "equal shares" or "none") and ``why``, one sentence for each.
      extra: ``"race"``: the final comparison, ``name -> (theta, mean loss on fresh
        common replications)``, or None when it did not run; ``"z"``: the result's
        normalised coordinates.
    """

    theta: dict
    start: dict
    path: list
    simulations: int
    stopped: str
    rejected: int
    init: Any = None
    evaluation: Evaluation | None = None
    seconds: float = 0.0
    extra: dict = field(default_factory=dict)
    confidence: Any = None
    warnings: tuple = ()
    method: dict = field(default_factory=dict)

    def __str__(self) -> str:
        out = [
            f"tuned {_fmt(self.theta)} from {_fmt(self.start)}: {len(self.path)} steps,"
            f" {self.simulations} simulations, stopped by {self.stopped}"
            + (f", {self.rejected} non-finite steps rejected" if self.rejected else "")
        ]
        if self.method:
            m = self.method
            out.append(
                f"method: {m['allocation']} (starting grid {m['design']}), "
                f"{m['estimator']},"
                f" final comparison: {m['final']}"
            )
        if self.evaluation is not None:
            out.append(str(self.evaluation))
        if self.confidence is not None:
            out.append(str(self.confidence))
        out.extend(f"warning: {w}" for w in self.warnings)
        return "\n".join(out)


@dataclass
class GridResult:
    """:func:`grid_tune` output: every point's mean loss and its standard error."""

    thetas: dict  # the space's pytree with [G] leaves
    z: np.ndarray  # [G, d]
    loss: np.ndarray  # [G]
    loss_se: np.ndarray  # [G]
    theta: dict  # the best point
    simulations: int
    per_rep: np.ndarray | None = None  # [G, R]


def _fmt(theta) -> str:
    return (
        "{"
        + ", ".join(
            f"{jax.tree_util.keystr(p)[2:-2]}: {v:.4g}"
            for p, v in jax.tree_util.tree_flatten_with_path(theta)[0]
        )
        + "}"
    )


def _ci(x: np.ndarray) -> tuple[float, float, float]:
    """Mean of ``[R]`` losses and its 95% CI (one replication: the point)."""
    p = stats.paired(x, single=0.0)
    return p.mean, p.lo, p.hi
