"""Paired comparisons and verdicts of paper claims, shared by every experiment.

Every algorithm of an experiment sees the same replication keys (common random
numbers), so two algorithms are compared by the mean of their per-replication
difference and its standard error (a paired test; Glasserman and Yao, "Some guidelines
and guarantees for common random numbers", Management Science 1992). Intervals are
normal 95% intervals, ``d +- Z * se`` with ``Z = jbandits.metrics.Z95``.

A claim's verdict is read on a fixed ladder (:func:`ladder`): "reproduced" when the
whole statement holds, "partly" when some of it does, "not reproduced" otherwise;
"not testable" where the paper gives nothing measurable. The rules of each claim are
written in its note and fixed before the run.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from experiments._core import Claim
from jbandits import metrics

Z = metrics.Z95
REPRODUCED, PARTLY, NOT_REPRODUCED = "reproduced", "partly", "not reproduced"
NOT_TESTABLE = "not testable"
VERDICTS = (REPRODUCED, PARTLY, NOT_REPRODUCED, NOT_TESTABLE)


class Diff(NamedTuple):
    """Paired difference ``a - b``: mean ``d`` and standard error ``se``."""

    d: float | np.ndarray
    se: float | np.ndarray

    @property
    def lo(self):
        return self.d - Z * self.se

    @property
    def hi(self):
        return self.d + Z * self.se

    @property
    def z(self):
        """``d / se``; with ``se = 0``: 0 if ``d = 0``, else +-inf (a sure difference)."""
        d, se = np.asarray(self.d, float), np.asarray(self.se, float)
        with np.errstate(divide="ignore", invalid="ignore"):
            z = np.where(se > 0, d / np.where(se > 0, se, 1.0), np.sign(d) * np.inf)
        z = np.where((se > 0) | (d != 0), z, 0.0)
        return float(z) if z.ndim == 0 else z

    @property
    def lower(self):
        """``a`` significantly below ``b`` (two-sided 5% test: z < -Z)."""
        return self.z < -Z

    @property
    def higher(self):
        """``a`` significantly above ``b`` (z > Z)."""
        return self.z > Z

    def points(self) -> tuple[float, float, float]:
        """``(d, lo, hi)`` times 100 (rates as percentage points)."""
        return 100 * float(self.d), 100 * float(self.lo), 100 * float(self.hi)


def paired(a, b) -> Diff:
    """Mean of ``a - b`` and its standard error, paired over replications (axis 0)."""
    d = np.asarray(a, float) - np.asarray(b, float)
    mean, se = d.mean(0), d.std(0, ddof=1) / math.sqrt(d.shape[0])
    if np.ndim(mean) == 0:
        return Diff(float(mean), float(se))
    return Diff(mean, se)


def ladder(whole: bool, some: bool) -> str:
    """The verdict ladder: the whole claim holds, some of it, or none."""
    if whole:
        return REPRODUCED
    return PARTLY if some else NOT_REPRODUCED


def tally(ok: int, total: int) -> str:
    """Verdict of a claim made of ``total`` parts of which ``ok`` hold."""
    return ladder(ok == total, ok > 0)


def beats(values: dict, winner: str, losers) -> tuple[dict, int, int]:
    """``winner`` vs each loser present in ``values`` (label -> per-replication [R]).

    Returns ``({loser: Diff(winner - loser)}, #significantly lower, #significantly
    higher)``.
    """
    diffs = {k: paired(values[winner], values[k]) for k in losers if k in values}
    wins = sum(bool(d.lower) for d in diffs.values())
    losses = sum(bool(d.higher) for d in diffs.values())
    return diffs, wins, losses


def lowest(values: dict, winner: str) -> tuple[bool, list]:
    """Whether ``winner`` has the lowest mean, and the labels it is significantly below."""
    means = {k: np.mean(v) for k, v in values.items()}
    others = [k for k in values if k != winner]
    sig = [k for k in others if paired(values[winner], values[k]).lower]
    return bool(means[winner] <= min(means.values())), sig


def comparable(diff: Diff, tol: float, scale: float = 1.0) -> str:
    """'comparable': the 95% CI of ``diff * scale`` inside ``+-tol`` (reproduced); only
    its mean inside (partly)."""
    d, lo, hi = (scale * float(x) for x in (diff.d, diff.lo, diff.hi))
    return ladder(-tol <= lo and hi <= tol, abs(d) <= tol)


def rate(x) -> tuple[float, float, float]:
    """Rate of 0/1 outcomes ``x [R]`` and its Wilson 95% interval."""
    p, lo, hi = metrics.binomial_ci(np.asarray(x, float))
    return float(p), float(lo), float(hi)


def fmt_ci(mean: float, lo: float, hi: float, digits: int = 4) -> str:
    return f"{mean:.{digits}g} [{lo:.{digits}g}, {hi:.{digits}g}]"


def fmt_rate(x, digits: int = 3) -> str:
    """``rate [lo, hi]`` of 0/1 outcomes ``x [R]``."""
    return fmt_ci(*rate(x), digits)


def fmt_mean(x, digits: int = 4) -> str:
    """``mean [lo, hi]`` (normal 95% interval) of ``x [R]``."""
    m, lo, hi = metrics.mean_ci(x)
    return fmt_ci(float(m), float(lo), float(hi), digits)


def fmt_pct(x) -> str:
    """Error % of 0/1 outcomes ``x [R]`` with its Wilson 95% interval."""
    p, lo, hi = (100 * v for v in rate(x))
    return f"{p:.1f}% [{lo:.1f}, {hi:.1f}]"


def fmt_points(diff: Diff) -> str:
    """A paired difference of rates in percentage points with its 95% CI."""
    d, lo, hi = diff.points()
    return f"{d:+.1f} [{lo:+.1f}, {hi:+.1f}]"


# ------------------------------------------------------------ claims on 0/1 outcomes
# ``finals``: label -> 0/1 outcomes at the final time [R] (e.g. error at T); numbers
# are printed in percentage points.
def rate_beats(finals: dict, winner: str, losers, text: str) -> Claim:
    """``winner``'s rate is significantly below each of ``losers``."""
    diffs, ok, _ = beats(finals, winner, losers)
    parts = [f"{winner}-{k} {fmt_points(d)}" for k, d in diffs.items()]
    ours = f"error at T, paired difference in points: {'; '.join(parts)}"
    note = f"{ok}/{len(losers)} significantly lower (95% CI below 0)"
    return Claim(text, ours, tally(ok, len(losers)), note)


def rate_lowest(finals: dict, winner: str, text: str) -> Claim:
    """``winner`` has the lowest rate, significantly below every other."""
    low, sig = lowest(finals, winner)
    ranking = sorted(finals.items(), key=lambda kv: kv[1].mean())
    ours = "error at T: " + ", ".join(f"{k} {100 * v.mean():.1f}%" for k, v in ranking)
    ours += f"; {winner} significantly lower than: " + (", ".join(sig) or "none")
    verdict = ladder(low and len(sig) == len(finals) - 1, low or bool(sig))
    return Claim(text, ours, verdict, "lowest mean" if low else "not the lowest mean")


def rate_comparable(finals: dict, a: str, b: str, text: str, tol: float) -> Claim:
    """|a - b| within ``tol`` points, decided on the 95% CI (:func:`comparable`)."""
    d = paired(finals[a], finals[b])
    ours = f"{a}-{b} at T: {fmt_points(d)} points"
    note = f"'comparable' read as: 95% CI of the difference inside +-{tol:g} points"
    return Claim(text, ours, comparable(d, tol, 100), note)


def rate_not_worse(finals: dict, a: str, b: str, text: str) -> Claim:
    """a's rate is not above b's: at or below (reproduced), above but not
    significantly (partly)."""
    d = paired(finals[a], finals[b])
    verdict = ladder(d.d <= 0, d.lo <= 0)
    note = {
        REPRODUCED: f"{a} at or below {b}",
        PARTLY: f"{a} above {b}, not significantly",
        NOT_REPRODUCED: f"{a} significantly above {b}",
    }[verdict]
    return Claim(text, f"{a}-{b} at T: {fmt_points(d)} points", verdict, note)
