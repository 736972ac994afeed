"""Fixed-confidence best-arm identification: what a claims table can state about a batch
of runs (host, NumPy float64).

A fixed-confidence run stops at ``tau_delta`` and recommends an arm; a policy is
delta-correct when ``P(tau_delta < inf, recommended != best) <= delta`` (Garivier &
Kaufmann, "Optimal Best Arm Identification with Fixed Confidence", COLT 2016, Sec. 1),
and its expected stopping time is compared with the lower bound of their Theorem 1,
``E[tau_delta] >= T*(mu) kl(delta, 1 - delta)``, and with its asymptote ``T*(mu)
log(1/delta)`` (``kl(delta, 1 - delta) = (1 - 2 delta) log((1 - delta) / delta)``).

Runs that reach the budget cap without stopping (``capped``) are part of every
statistic here, as the engine reports them: their ``num_pulls`` is the cap (so with
``capped > 0`` the mean and the quantiles are lower bounds of those of ``tau_delta``)
and their recommendation is the policy's output at the cap, which counts as an error
when it is not the best arm. The summary keeps the count, so a table can report it
beside the error rate, or treat the capped runs as errors (the authors' Julia code
records an aborted run as a failure): ``errors + capped`` bounds that count. The error
interval is Wilson's (:func:`jbandits.analysis.metrics.binomial_ci`).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from jbandits.analysis import metrics, stats

QUANTILES = (0.1, 0.5, 0.9)


class StoppingSummary(NamedTuple):
    """The stopping times and the errors of a batch of fixed-confidence runs."""

    runs: int  # number of runs
    mean: float  # mean of num_pulls over all runs (capped runs count at the cap)
    se: float  # its standard error, sd (ddof = 1) / sqrt(runs); 0 for one run
    quantiles: dict  # {0.1: .., 0.5: .., 0.9: ..} of num_pulls (linear interpolation)
    errors: int  # runs whose recommendation is not the best arm (capped runs included)
    error_rate: float  # errors / runs
    error_ci: tuple[float, float]  # Wilson 95 % interval of the error rate
    capped: int  # runs that reached the budget cap without stopping
    t_star: float | None  # T*(mu), when given
    lower_bound: float | None  # T*(mu) kl(delta, 1 - delta) (GK16 Theorem 1)
    t_star_log: float | None  # T*(mu) log(1/delta)


def kl_delta(delta: float) -> float:
    """``kl(delta, 1 - delta) = (1 - 2 delta) log((1 - delta) / delta)``, the factor of
    GK16's Theorem 1 lower bound (``~ log(1/delta)``, ``>= log(1/(2.4 delta))``)."""
    delta = _delta(delta)
    return (1.0 - 2.0 * delta) * math.log((1.0 - delta) / delta)


def _delta(delta) -> float:
    delta = float(delta)
    if not 0.0 < delta < 1.0:  # also refuses NaN
        raise ValueError(f"delta must be in (0, 1), got {delta!r}")
    return delta


def _vector(name: str, value, runs: int | None = None) -> np.ndarray:
    arr = np.asarray(value)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be a 1-D array of runs, got shape {arr.shape}")
    if runs is not None and arr.shape[0] != runs:
        raise ValueError(f"{name} has {arr.shape[0]} runs, num_pulls has {runs}")
    return arr


def _integers(name: str, arr: np.ndarray) -> np.ndarray:
    if arr.dtype.kind not in "biu" and not (
        arr.dtype.kind == "f" and np.all(np.isfinite(arr) & (arr == np.round(arr)))
    ):
        raise ValueError(f"{name} must hold integers, got {arr.dtype} values")
    return arr.astype(np.int64)


def summarize_stopping(
    num_pulls,
    recommended,
    best_arm,
    stopped,
    *,
    delta: float,
    t_star: float | None = None,
) -> StoppingSummary:
    """Summarise ``runs`` fixed-confidence runs (module docstring for capped runs).

    Args:
      num_pulls: ``[runs]`` stopping times (the engine's pull counts; the cap for a run
        that did not stop).
      recommended: ``[runs]`` recommended arms (the policy's output).
      best_arm: the best arm, a scalar or ``[runs]`` (with arms permuted per run).
      stopped: ``[runs]`` bool, False for a run that reached the cap.
      delta: the confidence the runs were given, in ``(0, 1)``.
      t_star: ``T*(mu)`` of the instance (e.g. from
        :func:`jbandits.analysis.tstar.characteristic_time`), or None.

    Returns:
      A :class:`StoppingSummary` of Python floats and ints.

    Raises:
      ValueError: arrays that are not 1-D of one length (at least one run), negative or
        non-finite stopping times, non-integer arms, a negative ``best_arm``, ``delta``
        outside ``(0, 1)``, or a ``t_star`` that is not finite and positive.
    """
    pulls = _vector("num_pulls", num_pulls).astype(np.float64)
    runs = pulls.shape[0]
    if runs == 0:
        raise ValueError("num_pulls holds no run")
    if not np.all(np.isfinite(pulls) & (pulls >= 0)):
        raise ValueError("num_pulls must be finite and >= 0")
    rec = _integers("recommended", _vector("recommended", recommended, runs))
    best = np.asarray(best_arm)
    best = _integers("best_arm", _vector("best_arm", best, runs) if best.ndim else best)
    if np.any(best < 0):
        raise ValueError(
            f"best_arm must be an arm index >= 0 (the instance's best arm, e.g. "
            f"np.argmax(means)), got {int(best.min())}"
        )
    best = np.broadcast_to(best, (runs,))
    done = _vector("stopped", stopped, runs)
    if done.dtype != bool:
        raise ValueError(f"stopped must be a bool array, got {done.dtype}")
    delta = _delta(delta)
    wrong = rec != best
    rate, low, high = metrics.binomial_ci(wrong.astype(np.float64))
    se = stats.standard_error(pulls, single=0.0)
    quantiles = {q: float(np.quantile(pulls, q)) for q in QUANTILES}
    bound = log_bound = None
    if t_star is not None:
        t_star = float(t_star)
        if not (math.isfinite(t_star) and t_star > 0):
            raise ValueError(f"t_star must be finite and > 0, got {t_star!r}")
        bound, log_bound = t_star * kl_delta(delta), t_star * math.log(1.0 / delta)
    return StoppingSummary(
        runs=runs,
        mean=float(pulls.mean()),
        se=se,
        quantiles=quantiles,
        errors=int(wrong.sum()),
        error_rate=float(rate),
        error_ci=(float(low), float(high)),
        capped=int((~done).sum()),
        t_star=t_star,
        lower_bound=bound,
        t_star_log=log_bound,
    )


def delta_correct(errors: int, runs: int, delta: float, z: float = metrics.Z95) -> bool:
    """True when the Wilson upper bound of the error rate ``errors / runs`` is at most
    ``delta``: the runs show the policy delta-correct at the interval's level (default
    two-sided 95 %, ``z = 1.96``; one-sided 97.5 %).

    False does not show the contrary: with few runs the bound exceeds ``delta`` even
    with no error (0 errors in ``n`` runs give ``z^2 / (n + z^2)``; at ``delta = 0.1``
    and ``z = 1.96``, ``n >= 35`` runs are needed). To show a policy not
    delta-correct, check that the Wilson lower bound exceeds ``delta``.

    Raises:
      ValueError: ``runs < 1``, ``errors`` outside ``[0, runs]``, non-integer counts,
        ``delta`` outside ``(0, 1)`` or ``z <= 0``.
    """
    for name, value in (("errors", errors), ("runs", runs)):
        if isinstance(value, bool) or int(value) != value:
            raise ValueError(f"{name} must be an integer, got {value!r}")
    errors, runs = int(errors), int(runs)
    if runs < 1 or not 0 <= errors <= runs:
        raise ValueError(
            f"need 0 <= errors <= runs and runs >= 1, got {errors}, {runs}"
        )
    delta = _delta(delta)
    if not (math.isfinite(z) and z > 0):
        raise ValueError(f"z must be finite and > 0, got {z!r}")
    outcomes = np.zeros(runs)
    outcomes[:errors] = 1.0
    _, _, high = metrics.binomial_ci(outcomes, z=z)
    return bool(high <= delta)
