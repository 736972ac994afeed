"""Claim rules of the cumulative-regret experiments of Mukherjee et al. (EUCBV, arXiv
1711.03591 v1, Sec. 5), shared by ``eucbv-expt1..4`` (:mod:`experiments.eucbv`).

Each rule reads final regrets (``finals[label]``: one value per replication, the same
reward stacks for every algorithm) and returns :class:`experiments._claims.Claim` rows
with the verdict of :func:`experiments._claims.ladder`. A claim about EUCBV gives one
row per EUCBV variant; the literal Algorithm 1 ("EUCBV") comes first.
"""

from __future__ import annotations

import math

from experiments import _claims as C
from experiments import _regret as R
from experiments._claims import Claim

PULLS = " [elim_count='pulls' variant]"
FIG1B = ("EUCBV", "MOSS", "OCUCB", "UCB1", "TS", "UCB-Improved", "BU", "KL-UCB-Gauss")


def _suffix(label: str) -> str:
    return "" if label == "EUCBV" else PULLS


def _eucbvs(finals: dict) -> list[str]:
    return [label for label in R.EUCBV if label in finals]


def beats(finals: dict, label: str, others: list[str]) -> tuple[str, str]:
    """'label has lower regret than each of others' -> (ours text, verdict)."""
    diffs, wins, losses = C.beats(finals, label, others)
    parts = [
        f"{k} {finals[k].mean():.0f} (diff {d.mean:+.0f} +- {C.Z * d.se:.0f}, "
        f"{'<' if d.lower else ('>' if d.higher else '~')})"
        for k, d in diffs.items()
    ]
    if not parts:
        return "not run", C.NOT_TESTABLE
    # a claim over several baselines fails if EUCBV is significantly worse than one;
    # with no difference significant either way it is undecided
    if wins == 0 and losses == 0:
        verdict = C.UNDECIDED
    else:
        verdict = C.ladder(wins == len(parts), wins > 0 and losses == 0)
    ours = f"{label} {finals[label].mean():.0f}; vs " + "; ".join(parts)
    return ours, verdict


def eucbv_claims(text: str, finals: dict, others: list[str], note: str = "") -> list:
    """One row per EUCBV variant (the literal "round" is the paper's algorithm)."""
    rows = []
    for label in _eucbvs(finals):
        ours, verdict = beats(finals, label, others)
        why = ["every paired difference's CI contains 0 (~)"]
        rows.append(
            Claim(
                text + _suffix(label),
                ours,
                verdict,
                C.undecided_note(note, why) if verdict == C.UNDECIDED else note,
            )
        )
    return rows


def elimination_claim(results: dict) -> Claim:
    parts = []
    for label in R.EUCBV:
        if label in results and "optimal_active" in results[label]:
            r = results[label]
            lost = int((~r["optimal_active"][:, -1].astype(bool)).sum())
            active = r["num_active"][:, -1].mean()
            parts.append(
                f"{label}: optimal arm eliminated in {lost}/{r['regret'].shape[0]} "
                f"runs, {active:.1f} arms active at T"
            )
    return Claim(
        "(diagnostic, no paper claim) EUCBV's elimination at this horizon",
        "; ".join(parts) or "EUCBV not run",
        "not testable",
    )


def slightly_better_than_ts(finals: dict) -> list:
    rows = []
    for label in _eucbvs(finals) if "TS" in finals else ():
        d = C.paired(finals[label], finals["TS"])
        rel = d.mean / max(finals["TS"].mean(), 1e-12)
        ours = (
            f"{label} {finals[label].mean():.0f} vs TS {finals['TS'].mean():.0f}: "
            f"diff {d.mean:+.0f} +- {C.Z * d.se:.0f} ({100 * rel:+.0f}% of TS)"
        )
        text = "EUCBV is only slightly better than TS" + _suffix(label)
        verdict = C.ladder(d.z < 0 and abs(rel) <= 0.25, False)
        note = "read as: EUCBV's mean below TS's by at most 25% of TS"
        rows.append(Claim(text, ours, verdict, note))
    return rows


def much_worse(finals: dict, ref: str, worse: list[str]) -> list:
    rows = []
    for lab in worse if ref in finals else ():
        if lab not in finals:
            continue
        d = C.paired(finals[lab], finals[ref])
        ratio = finals[lab].mean() / max(finals[ref].mean(), 1e-12)
        ours = (
            f"{lab} {finals[lab].mean():.0f} vs {ref} {finals[ref].mean():.0f} "
            f"(ratio {ratio:.2f}, diff {d.mean:+.0f} +- {C.Z * d.se:.0f})"
        )
        verdict = C.ladder(d.higher and ratio >= 1.5, False)
        note = "read as: significantly higher and at least 1.5x"
        rows.append(Claim(f"{lab} performs much worse than {ref}", ours, verdict, note))
    return rows


def worst_of_all(finals: dict) -> list:
    if "ME" not in finals:
        return []
    others = {k: v.mean() for k, v in finals.items() if k != "ME"}
    worst = max(others, key=others.get) if others else None
    ok = worst is not None and finals["ME"].mean() > others[worst]
    ours = f"ME {finals['ME'].mean():.0f}; next worst {worst} {others.get(worst, math.nan):.0f}"
    text = "Median Elimination is extremely weak (worst of all)"
    return [Claim(text, ours, C.ladder(ok, False))]


def magnitude(finals: dict) -> list:
    plotted = [lab for lab in FIG1B if lab in finals]
    if not plotted:
        return []
    top = max(finals[lab].mean() for lab in plotted)
    listed = ", ".join(f"{lab} {finals[lab].mean():.0f}" for lab in plotted)
    return [
        Claim(
            "The order of magnitude of the y-axis (cumulative regret) is 10^4",
            f"largest plotted final mean regret {top:.0f} ({listed})",
            C.ladder(1e4 <= top < 1e5, False),
            "plotted = the paper's Fig. 1(b) list (ME not plotted)",
        )
    ]


def very_poor(finals: dict) -> list:
    rows = []
    plotted = [lab for lab in ("EUCBV", "TS", "MOSS", "OCUCB") if lab in finals]
    for lab in ("UCB-V", "KL-UCB-Gauss", "BU") if plotted else ():
        if lab not in finals:
            continue
        n_worse = sum(bool(C.paired(finals[lab], finals[p]).higher) for p in plotted)
        ours = f"{lab} {finals[lab].mean():.0f}; significantly worse than {n_worse}/{len(plotted)} of "
        ours += ", ".join(f"{p} {finals[p].mean():.0f}" for p in plotted)
        text = f"{lab} performs very poorly compared to the plotted algorithms"
        rows.append(Claim(text, ours, C.tally(n_worse, len(plotted))))
    return rows


def growth_claim(results: dict, label: str, arms: tuple, others: list) -> Claim:
    """EUCBV's regret grows less with K than each of ``others`` (paired per K)."""
    e, lo_k, hi_k = results[label]["final"], arms[0], arms[-1]
    parts, all_k, growth_ok = [], 0, 0
    for other in others:
        o = results[other]["final"]
        lower = sum(bool(C.paired(e[k]["regret"], o[k]["regret"]).lower) for k in arms)
        d_hi = C.paired(e[hi_k]["regret"], o[hi_k]["regret"])
        d_lo = C.paired(e[lo_k]["regret"], o[lo_k]["regret"])
        g = d_hi.mean - d_lo.mean  # growth difference (independent K instances)
        g_se = math.hypot(d_hi.se, d_lo.se)
        all_k += lower == len(arms)
        growth_ok += g < -C.Z * g_se
        parts.append(
            f"vs {other}: lower at {lower}/{len(arms)} K; growth "
            f"K={lo_k}->{hi_k} diff {g:+.0f} +- {C.Z * g_se:.0f}"
        )
    n = len(others)
    verdict = C.ladder(all_k == n and growth_ok == n, all_k > 0 or growth_ok > 0)
    growth = e[hi_k]["regret"].mean() - e[lo_k]["regret"].mean()
    text = "The growth of regret with K for EUCBV is much lower than for TS, OCUCB and MOSS"
    return Claim(
        text + _suffix(label),
        f"{label} growth {growth:+.0f}; " + "; ".join(parts),
        verdict,
        "growth = regret(K_max) - regret(K_min), paired per K",
    )
