"""Intervals and paired differences over replications: the one place they are computed.

Every comparison in the library, its tuner, its experiments and its benchmarks reads
replications through these functions:

* :func:`standard_error` -- ``sd / sqrt(n)`` with the sample standard deviation
  (``ddof=1``);
* :func:`paired` -- the mean of the per-replication differences ``a - b`` with its
  standard error and normal 95% interval (a :class:`Paired`). On common random numbers
  (the same replication keys for ``a`` and ``b``) the noise both share cancels
  (Glasserman and Yao, "Some guidelines and guarantees for common random numbers",
  Management Science 38(6), 1992);
* :func:`mean_ci` -- a mean with its normal-approximation interval ``mean +- z se``;
* :func:`wilson_ci` -- a rate of 0/1 outcomes with the Wilson score interval (Wilson,
  "Probable inference, the law of succession, and statistical inference", JASA 22,
  1927);
* :func:`z_score` -- ``mean / se`` with the zero-SE cases decided (a sure difference
  is infinite);
* :func:`count` -- a count argument (replications, points, steps) checked on the host;
* :data:`Z95` -- the two-sided 95% normal quantile ``Phi^-1(0.975)``.

All work on NumPy arrays on the host, in float64, along an ``axis`` of replications.

Example::

    from jbandits.analysis import stats
    d = stats.paired(res_a.regret[:, -1], res_b.regret[:, -1])
    d.mean, d.se, d.lo, d.hi, d.sign   # sign: -1 a lower, +1 a higher, 0 undecided
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

Z95 = 1.959963984540054  # Phi^-1(0.975) in float64 (scipy.stats.norm.ppf(0.975))


def count(name: str, value, least: int = 1, *, none: bool = False) -> int | None:
    """``value`` as a Python int ``>= least`` (None kept when ``none``).

    A float, a bool or a smaller number raises ``ValueError("<name> must be an
    integer >= <least>, got <value>")``: never rounded or replaced by a default.
    NumPy integers are accepted.
    """
    if value is None and none:
        return None
    integral = isinstance(value, (int, np.integer)) and not isinstance(value, bool)
    if not integral or value < least:
        raise ValueError(f"{name} must be an integer >= {least}, got {value!r}")
    return int(value)


def standard_error(values, axis: int = 0, *, single: float = math.nan):
    """``sd / sqrt(n)`` along ``axis`` (sample sd, ``ddof=1``; ``n`` the axis length).

    ``single``: the value with one replication, where no sd exists: NaN (no interval,
    the default) or 0.0 (an interval collapsed on the point). Returns a float for a
    1-D input, else an array with ``axis`` removed.
    """
    x = np.asarray(values, np.float64)
    n = x.shape[axis]
    if n > 1:
        se = x.std(axis=axis, ddof=1) / math.sqrt(n)
    else:
        se = np.full(np.delete(x.shape, axis), single, np.float64)
    return float(se) if np.ndim(se) == 0 else se


class Paired(NamedTuple):
    """A (paired) difference of means: ``mean``, its standard error ``se`` and the
    interval ``[lo, hi] = mean -+ z se`` (95% by default). Floats, or arrays of one
    shape for a vector of comparisons."""

    mean: float | np.ndarray
    se: float | np.ndarray
    lo: float | np.ndarray
    hi: float | np.ndarray

    @property
    def z(self):
        """``mean / se`` (:func:`z_score`)."""
        return z_score(self.mean, self.se)

    @property
    def lower(self):
        """Significantly below 0: the interval's upper end ``hi < 0``."""
        return self.hi < 0

    @property
    def higher(self):
        """Significantly above 0: ``lo > 0``."""
        return self.lo > 0

    @property
    def sign(self):
        """-1 significantly below 0, +1 significantly above, 0 undecided (the
        interval contains 0, or there is none)."""
        s = np.where(self.lower, -1, np.where(self.higher, 1, 0))
        return int(s) if s.ndim == 0 else s

    @property
    def significant(self):
        """The interval excludes 0."""
        return self.lower | self.higher


def z_score(mean, se):
    """``mean / se`` elementwise; with ``se = 0``: 0 if ``mean = 0``, else +-inf (a
    sure difference); NaN when ``se`` or ``mean`` is NaN (no interval). A float for
    scalars, else an array."""
    d, se = np.asarray(mean, float), np.asarray(se, float)
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.where(se > 0, d / np.where(se > 0, se, 1.0), np.sign(d) * np.inf)
    z = np.where((se > 0) | (d != 0), z, 0.0)
    z = np.where(np.isnan(se) | np.isnan(d), np.nan, z)
    return float(z) if z.ndim == 0 else z


def paired(a, b=None, *, axis: int = 0, z: float = Z95, single: float = math.nan):
    """The mean of ``a - b`` along ``axis`` (the replications, common to both) with
    its standard error and ``mean -+ z se`` interval: a :class:`Paired`.

    ``b`` None: ``a`` is already the per-replication difference (or any sample whose
    mean is estimated). ``a`` and ``b`` broadcast against each other. ``single``:
    the standard error with one replication (:func:`standard_error`).
    """
    d = np.asarray(a, np.float64)
    if b is not None:
        d = d - np.asarray(b, np.float64)
    mean = d.mean(axis=axis)
    se = standard_error(d, axis, single=single)
    lo, hi = mean - z * se, mean + z * se
    if np.ndim(mean) == 0:
        return Paired(float(mean), float(se), float(lo), float(hi))
    return Paired(mean, se, lo, hi)


def mean_ci(values, axis: int = 0, z: float = Z95):
    """Mean and normal-approximation interval ``mean +- z * sd / sqrt(n)`` along ``axis``.

    Args:
      values: array of replications (any shape), e.g. ``res.metrics["misclassified"]``.
      axis: the replication axis (its length is ``n``).
      z: the normal quantile; default :data:`Z95` (a two-sided 95% interval).

    Returns:
      ``(mean, low, high)``, NumPy float64 arrays with ``axis`` removed. ``sd`` is the
      sample standard deviation (``ddof=1``); with ``n = 1`` the interval is the point
      itself, and an empty axis gives NaN (with NumPy's warning).

    Example::

        mean, low, high = jbandits.analysis.stats.mean_ci(res.regret[:, -1])
    """
    x = np.asarray(values, dtype=np.float64)
    n = x.shape[axis]
    mean = x.mean(axis=axis)
    se = x.std(axis=axis, ddof=1) / math.sqrt(n) if n > 1 else np.zeros_like(mean)
    return mean, mean - z * se, mean + z * se


def wilson_ci(values, axis: int = 0, z: float = Z95):
    """Rate and Wilson score interval for 0/1 outcomes along ``axis``.

    The interval (Wilson 1927) stays inside [0, 1] and does not collapse at rates of
    0 or 1, unlike the normal approximation of :func:`mean_ci`:
    ``(p + z^2/2n -+ z sqrt(p(1-p)/n + z^2/4n^2)) / (1 + z^2/n)``.

    Args:
      values: 0/1 outcomes (e.g. ``res.metrics["error"]``), replications on ``axis``.
      axis: the replication axis (its length is ``n``).
      z: the normal quantile; default :data:`Z95` (95%).

    Returns:
      ``(rate, low, high)``, NumPy float64 arrays with ``axis`` removed.

    Raises:
      ZeroDivisionError: if ``axis`` is empty (``n = 0``).

    Example::

        rate, low, high = jbandits.analysis.stats.wilson_ci(res.metrics["error"][:, -1])
    """
    x = np.asarray(values, dtype=np.float64)
    n = x.shape[axis]
    p = x.mean(axis=axis)
    denom = 1.0 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    # at a rate of exactly 0 (1) the lower (upper) end is exactly 0 (1); the formula
    # leaves a rounding residue there (1e-19), which printed tables would show
    low = np.where(p == 0.0, 0.0, centre - half)
    high = np.where(p == 1.0, 1.0, centre + half)
    return p, low, high


__all__ = [
    "Z95",
    "Paired",
    "count",
    "mean_ci",
    "paired",
    "standard_error",
    "wilson_ci",
    "z_score",
]
