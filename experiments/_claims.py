"""Paired comparisons and verdicts of paper claims, shared by every experiment.

Every algorithm of an experiment sees the same replication keys (common random
numbers), so two algorithms are compared by the mean of their per-replication
difference and its standard error (a paired test; Glasserman and Yao, "Some guidelines
and guarantees for common random numbers", Management Science 1992):
:func:`jbandits.analysis.stats.paired`, whose :class:`~jbandits.analysis.stats.Paired`
holds the normal 95% interval ``d +- Z * se`` (``Z = jbandits.analysis.stats.Z95``)
and its sign. Rates get Wilson's interval (:func:`jbandits.analysis.stats.wilson_ci`).

A claim's verdict is read on a fixed ladder (:func:`ladder`): "reproduced" when the
whole statement holds, "partly" when some of it does, "not reproduced" otherwise;
"not testable" where the paper gives nothing measurable. The rules of each claim are
written in its note and fixed before the run.

A part of a claim that compares a measured quantity with a bound (an error rate with
delta, a paired difference with 0 or a tolerance) is decided only by its whole 95%
interval (:func:`at_most`, :attr:`~jbandits.analysis.stats.Paired.sign`): when the interval contains the bound
the part is undecided, and a claim with no part decided either way is "undecided"
(:func:`combine`), its note saying which interval contains which bound. A run of
fewer than :data:`MIN_REPS` replications has no interval: :func:`gate` marks its
every verdict "undecided".
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from experiments import _write
from jbandits.analysis import stats
from jbandits.analysis.stats import Paired, paired

Z = stats.Z95
REPRODUCED, PARTLY, NOT_REPRODUCED = "reproduced", "partly", "not reproduced"
UNDECIDED, NOT_TESTABLE = "undecided", "not testable"
VERDICTS = (REPRODUCED, PARTLY, NOT_REPRODUCED, UNDECIDED, NOT_TESTABLE)
MIN_REPS = 2  # a standard error (and so any interval but Wilson's) needs two
MORE = "more reps needed"


@dataclass
class Claim:
    """A paper's claim, our numbers and the verdict (a row of the claims table)."""

    claim: str  # what the paper says
    ours: str  # our number(s)
    verdict: str  # "reproduced" / "not reproduced" / "partly" / "not testable"
    note: str = ""


def points(diff: Paired) -> tuple[float, float, float]:
    """``(mean, lo, hi)`` of a difference of rates times 100 (percentage points)."""
    return 100 * float(diff.mean), 100 * float(diff.lo), 100 * float(diff.hi)


def ladder(whole: bool, some: bool) -> str:
    """The verdict ladder: the whole claim holds, some of it, or none."""
    if whole:
        return REPRODUCED
    return PARTLY if some else NOT_REPRODUCED


def tally(ok: int, total: int) -> str:
    """Verdict of a claim made of ``total`` parts of which ``ok`` hold."""
    return ladder(ok == total, ok > 0)


def combine(holds: int, fails: int, total: int) -> str:
    """Verdict of a claim of ``total`` parts, ``holds`` of which hold and ``fails``
    fail on their 95% intervals (the rest are undecided): "reproduced" when all hold,
    "partly" when some do, "not reproduced" when none does and some fail, "undecided"
    when none is decided either way."""
    if holds == total:
        return REPRODUCED
    if holds:
        return PARTLY
    return NOT_REPRODUCED if fails else UNDECIDED


def at_most(mean, lo, hi, bound, name: str) -> tuple[bool | None, str]:
    """Whether a quantity whose 95% interval is ``[lo, hi]`` is at most ``bound``:
    True when the whole interval is at or below it, False when the whole interval is
    above it, None (undecided) otherwise; with the reason when undecided, e.g.
    ``"CI [0, 0.793] contains delta=0.1"``."""
    if not (np.isfinite(lo) and np.isfinite(hi)):
        return None, f"no interval around {mean:.4g} ({name}={bound:g})"
    if hi <= bound:
        return True, ""
    if lo > bound:
        return False, ""
    return None, f"CI [{lo:.3g}, {hi:.3g}] contains {name}={bound:g}"


def undecided_note(note: str, reasons) -> str:
    """``note`` followed by why the claim is undecided (the reasons given)."""
    reasons = [r for r in reasons if r]
    if not reasons:
        return note
    why = "undecided: " + "; ".join(reasons) + f"; {MORE}"
    return f"{note}; {why}" if note else why


def gate(claims: list, reps: int) -> list:
    """With fewer than :data:`MIN_REPS` replications nothing can be decided: every
    verdict other than "not testable" becomes "undecided" (in place; returned)."""
    if reps >= MIN_REPS:
        return claims
    for c in claims:
        if c.verdict not in (NOT_TESTABLE, UNDECIDED):  # undecided ones say why
            c.verdict = UNDECIDED
            c.note = undecided_note(c.note, [f"{reps} replication(s), no interval"])
    return claims


def beats(values: dict, winner: str, losers) -> tuple[dict, int, int]:
    """``winner`` vs each loser present in ``values`` (label -> per-replication [R]).

    Returns ``({loser: Paired(winner - loser)}, #significantly lower,
    #significantly higher)``.
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


def comparable(diff: Paired, tol: float, scale: float = 1.0) -> str:
    """'comparable': the 95% CI of ``diff * scale`` inside ``+-tol`` (reproduced),
    wholly outside it (not reproduced), else (or with no CI) undecided."""
    lo, hi = (scale * float(x) for x in (diff.lo, diff.hi))
    if not (np.isfinite(lo) and np.isfinite(hi)):
        return UNDECIDED
    if -tol <= lo and hi <= tol:
        return REPRODUCED
    return NOT_REPRODUCED if lo > tol or hi < -tol else UNDECIDED


def rate(x) -> tuple[float, float, float]:
    """Rate of 0/1 outcomes ``x [R]`` and its Wilson 95% interval."""
    p, lo, hi = stats.wilson_ci(x)
    return float(p), float(lo), float(hi)


def fmt_ci(mean: float, lo: float, hi: float, digits: int = 4) -> str:
    """``"mean [lo, hi]"`` at ``digits`` significant digits; a table prints its column
    at one precision (:class:`experiments._write.Interval`)."""
    return _write.Interval(mean, lo, hi, digits)


def fmt_rate(x, digits: int = 3) -> str:
    """``rate [lo, hi]`` of 0/1 outcomes ``x [R]``."""
    return fmt_ci(*rate(x), digits)


def fmt_mean(x, digits: int = 4) -> str:
    """``mean [lo, hi]`` (normal 95% interval) of ``x [R]``."""
    m, lo, hi = stats.mean_ci(x)
    return fmt_ci(float(m), float(lo), float(hi), digits)


def fmt_pct(x) -> str:
    """Error % of 0/1 outcomes ``x [R]`` with its Wilson 95% interval."""
    p, lo, hi = (100 * v for v in rate(x))
    return f"{p:.1f}% [{lo:.1f}, {hi:.1f}]"


def fmt_points(diff: Paired) -> str:
    """A paired difference of rates in percentage points with its 95% CI."""
    d, lo, hi = points(diff)
    return f"{d:+.1f} [{lo:+.1f}, {hi:+.1f}]"


# ------------------------------------------------------------ claims on 0/1 outcomes
# ``finals``: label -> 0/1 outcomes at the final time [R] (e.g. error at T); numbers
# are printed in percentage points.
def _open(diffs: dict, winner: str) -> list[str]:
    """Why the paired differences that contain 0 decide nothing (for the note)."""
    return [
        f"{winner}-{k} CI [{points(d)[1]:+.1f}, {points(d)[2]:+.1f}] points contains 0"
        for k, d in diffs.items()
        if d.sign == 0
    ]


def rate_beats(finals: dict, winner: str, losers, text: str) -> Claim:
    """``winner``'s rate is significantly below each of ``losers``; undecided when
    no difference is significant either way."""
    diffs, ok, worse = beats(finals, winner, losers)
    parts = [f"{winner}-{k} {fmt_points(d)}" for k, d in diffs.items()]
    ours = f"error at T, paired difference in points: {'; '.join(parts)}"
    note = f"{ok}/{len(losers)} significantly lower (95% CI below 0)"
    verdict = combine(ok, worse, len(losers))
    if verdict == UNDECIDED:
        note = undecided_note(note, _open(diffs, winner))
    return Claim(text, ours, verdict, note)


def rate_lowest(finals: dict, winner: str, text: str) -> Claim:
    """``winner`` has the lowest rate, significantly below every other; undecided
    when no difference is significant either way."""
    low, sig = lowest(finals, winner)
    ranking = sorted(finals.items(), key=lambda kv: kv[1].mean())
    ours = "error at T: " + ", ".join(f"{k} {100 * v.mean():.1f}%" for k, v in ranking)
    ours += f"; {winner} significantly lower than: " + (", ".join(sig) or "none")
    others = [k for k in finals if k != winner]
    diffs = {k: paired(finals[winner], finals[k]) for k in others}
    worse = sum(d.sign > 0 for d in diffs.values())
    verdict = combine(len(sig), worse, len(others))
    note = "lowest mean" if low else "not the lowest mean"
    if verdict == UNDECIDED:
        note = undecided_note(note, _open(diffs, winner))
    return Claim(text, ours, verdict, note)


def rate_comparable(finals: dict, a: str, b: str, text: str, tol: float) -> Claim:
    """|a - b| within ``tol`` points, decided on the 95% CI (:func:`comparable`)."""
    d = paired(finals[a], finals[b])
    ours = f"{a}-{b} at T: {fmt_points(d)} points"
    note = f"'comparable' read as: 95% CI of the difference inside +-{tol:g} points"
    verdict = comparable(d, tol, 100)
    if verdict == UNDECIDED:
        _, lo, hi = points(d)
        why = f"CI [{lo:+.1f}, {hi:+.1f}] points contains the band edge +-{tol:g}"
        note = undecided_note(note, [why])
    return Claim(text, ours, verdict, note)


def rate_not_worse(finals: dict, a: str, b: str, text: str) -> Claim:
    """a's rate is not above b's: the 95% CI of a - b at or below 0 (reproduced),
    wholly above 0 (not reproduced), else undecided."""
    d = paired(finals[a], finals[b])
    holds, why = at_most(*points(d), 0.0, f"{a}-{b} (points)")
    verdict = {True: REPRODUCED, False: NOT_REPRODUCED, None: UNDECIDED}[holds]
    note = {
        REPRODUCED: f"{a} at or below {b} (95% CI of {a}-{b} at or below 0)",
        NOT_REPRODUCED: f"{a} significantly above {b}",
        UNDECIDED: undecided_note(f"{a} not significantly above {b}", [why]),
    }[verdict]
    return Claim(text, f"{a}-{b} at T: {fmt_points(d)} points", verdict, note)
