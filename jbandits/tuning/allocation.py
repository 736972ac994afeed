"""Noise-aware allocation of simulations on common random numbers.

Two procedures that spend replications where they decide (:func:`jbandits.tuning.tune`
for two or more parameters):

* :func:`halve`: successive halving of a set of points (Karnin, Koren and Somekh,
  ICML 2013; Jamieson and Talwalkar, AISTATS 2016). Each round runs a fresh block of
  replications, common to every surviving point, and keeps the better half by the
  mean over *all* the blocks the survivors share, so each comparison is paired on
  every replication the two points have in common; the survivors' replications double
  from round to round while the round's simulations stay about equal.
* :func:`race`: a race between a few candidates (Maron and Moore, NIPS 1993): blocks
  of fresh common replications; after each block a candidate whose paired difference
  to the leader exceeds ``z_drop`` standard errors is dropped, and the remaining
  simulations go to the survivors. The lowest mean among the survivors wins.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import jax
import numpy as np

from jbandits.analysis.stats import paired, standard_error

HALVING_POINTS = {2: 11}  # points per axis of the halved grid (3 or more: 6)
# the coarser grid where the finer one's first round would give every point fewer
# than HALVING_FIRST_REPS replications (issue 53: the finer grid put Bayes-UCB's
# narrow valley within reach at the benchmark's budget, 20^2 x 100 / 4 simulations,
# 6 a point; at 2 a point it did no better, EUCBV at 2000 and 4000 simulations:
# notes_tuning_tasks.md, "Issue 53: the fix"); every budget 8 x 8 accepted still runs
HALVING_FALLBACK = {2: 8}  # 3 or more: 5
HALVING_FIRST_REPS = 6
HALVING_KEEP = 2  # survivors of the halving (they enter the final race)
HALVING_SHARE = 0.6  # share of the simulations after the race's reserve; ES: the rest
TIE_KEY = 64  # fold_in(key, TIE_KEY): the halving's order among equal means
RACE_BLOCKS = 4
RACE_Z = 2.0


def halving_points(dim: int) -> int:
    return HALVING_POINTS.get(dim, 6)


def halving_share(dim: int) -> float:
    return HALVING_SHARE


def halving_design(dim: int, simulations: int, select: float, keep: int):
    """``(points per axis, why)`` of the halved grid for ``dim`` >= 2 parameters:
    :data:`HALVING_POINTS` where the first round of its halving gives every point
    :data:`HALVING_FIRST_REPS` replications, else :data:`HALVING_FALLBACK`."""
    fine = halving_points(dim)
    available = simulations - int(select * simulations)
    first = first_round_reps(fine**dim, int(halving_share(dim) * available), keep)
    axes = " x ".join([str(fine)] * dim)
    if first >= HALVING_FIRST_REPS:
        return fine, f"{axes} (the default for {dim} parameters)"
    coarse = HALVING_FALLBACK.get(dim, 5)
    return coarse, (
        f"{' x '.join([str(coarse)] * dim)}: at simulations={simulations} the first "
        f"halving round of the default {axes} grid would give each point {first} "
        f"replications (fewer than {HALVING_FIRST_REPS})"
    )


def first_round_reps(points: int, budget: int, keep: int) -> int:
    """Replications per point of :func:`halve`'s first round (before its minimum
    of 2)."""
    return budget // halving_rounds(points, keep) // points


def halving_rounds(points: int, keep: int) -> int:
    """:func:`halve`'s number of rounds: ``ceil(log2(points / keep))``, at least 1."""
    return max(1, math.ceil(math.log2(max(points / max(keep, 1), 1.0))))


def halving_spend(points: int, budget: int, keep: int) -> int:
    """Simulations :func:`halve` spends on ``points`` points within ``budget``
    (more than ``budget`` only where a round cannot give each survivor 2
    replications): the same rounds and survivor counts, without running them."""
    rounds = halving_rounds(points, keep)
    per_round, alive, spent = budget // rounds, points, 0
    for _ in range(rounds):
        spent += max(2, per_round // alive) * alive
        alive = min(alive, max(keep, math.ceil(alive / 2)))
    return spent


def _means(per: np.ndarray) -> np.ndarray:
    m = per.mean(1)
    return np.where(np.isfinite(m), m, np.inf)


@dataclass
class Halved:
    """What :func:`halve` found.

    Attributes:
      order: indices of the survivors into the input points, best first.
      means: ``[G]`` each point's mean loss over the replications it received.
      reps: ``[G]`` how many replications each point received.
      first: ``[G, r0]`` the first round's losses (every point, common replications).
      rounds: ``[(points, replications per point)]`` of each round.
      simulations: simulations spent.
    """

    order: np.ndarray
    means: np.ndarray
    reps: np.ndarray
    first: np.ndarray
    rounds: list
    simulations: int


def halve(objective, space, z, key, budget: int, *, keep: int, chunk: int) -> Halved:
    """Successive halving of the points ``z [G, d]`` within ``budget`` simulations.

    ``ceil(log2(G / keep))`` rounds; round ``k`` runs ``budget // rounds //
    survivors`` (at least 2) replications of every survivor on a fresh block of
    common replications (key ``fold_in(key, k)``) and keeps the ``ceil(n / 2)``
    (at least ``keep``) with the lowest mean over all the blocks they share (equal
    means in a random order of ``key``, never by index). Spends at
    most ``budget`` simulations when ``budget >= 2 * G * rounds``.
    """
    z = np.asarray(z, np.float64)
    g = len(z)
    rounds = halving_rounds(g, keep)
    per_round = budget // rounds
    alive = np.arange(g)
    acc = np.zeros((g, 0))  # the survivors' losses on every block they share
    got = np.zeros(g, np.int64)
    total = np.zeros(g, np.float64)
    log, spent, first = [], 0, None
    # equal means (a 0/1 loss on few replications: often all 0) are ordered at
    # random, not by index: the index order kept one end of the box (issue 64)
    tie = np.asarray(jax.random.permutation(jax.random.fold_in(key, TIE_KEY), g))
    for k in range(rounds):
        reps = max(2, per_round // len(alive))
        per = objective.losses(
            space.batch_from_z(z[alive]), jax.random.fold_in(key, k), reps, chunk=chunk
        )
        first = per if first is None else first
        spent += per.size
        log.append((len(alive), reps))
        got[alive] += reps
        total[alive] += per.sum(1)
        acc = np.concatenate([acc, per], axis=1)
        best = np.lexsort((tie[alive], _means(acc)))  # ties: a random order
        best = best[: max(keep, math.ceil(len(alive) / 2))]
        acc, alive = acc[best], alive[best]
    with np.errstate(invalid="ignore", divide="ignore"):
        means = np.where(got > 0, total / np.maximum(got, 1), np.nan)
    return Halved(alive, means, got, first, log, spent)


def race(
    objective,
    space,
    named: dict,
    key,
    budget: int,
    *,
    chunk: int,
    blocks: int = RACE_BLOCKS,
    z_drop: float = RACE_Z,
    prefer: str | None = None,
    detail: dict | None = None,
):
    """A race between named points ``{name: z [d]}`` within ``budget`` simulations.

    Returns ``(winner's name, {name: (mean loss, replications)}, simulations)``. In
    ``blocks`` blocks of fresh common replications (block ``b``: key ``fold_in(key,
    b)``), each block's replications per survivor being the remaining budget shared
    evenly over the remaining blocks and survivors; after each block but the last, a
    survivor whose paired mean difference to the leader (on every replication they
    share) exceeds ``z_drop`` standard errors is dropped. The winner is the survivor
    with the lowest mean, except that a ``prefer``-red candidate still among the
    survivors after the last block wins (the race could not separate it from the
    leader: the caller has a reason to trust it beyond its own mean); the race stops early when one survivor is left. A
    ``detail`` dict receives ``{name: (mean - leader's mean, paired SE)}`` of the
    survivors after the last block, on every replication they share.
    """
    names = list(named)
    z = np.stack([np.asarray(named[n], np.float64) for n in names])
    alive = list(range(len(names)))
    per: dict[int, list] = {i: [] for i in alive}
    spent = 0
    for b in range(blocks):
        if len(alive) < 2 and b > 0:
            break
        reps = (budget - spent) // ((blocks - b) * len(alive))
        if reps < 2:
            break
        out = objective.losses(
            space.batch_from_z(z[alive]), jax.random.fold_in(key, b), reps, chunk=chunk
        )
        spent += out.size
        for row, i in enumerate(alive):
            per[i].append(out[row])
        if b == blocks - 1 or len(alive) < 2:
            break
        x = np.stack([np.concatenate(per[i]) for i in alive])  # shared replications
        mean = _means(x)
        lead = int(np.argmin(mean))
        diff = x - x[lead]
        se = standard_error(diff, axis=1)
        gap = mean - mean[lead]
        drop = (gap > z_drop * se) & (gap > 0)
        alive = [i for i, d in zip(alive, drop, strict=True) if not d]
    stats = {
        names[i]: (float(np.concatenate(per[i]).mean()), sum(len(p) for p in per[i]))
        for i in per
        if per[i]
    }
    if not alive or not stats:
        return names[0], stats, spent
    final = [names[i] for i in alive if per[i]]
    if detail is not None:
        detail.update(_gaps({n: np.concatenate(per[names.index(n)]) for n in final}))
    if prefer is not None and prefer in final and len(final) > 1:
        return prefer, stats, spent
    mean = {n: stats[n][0] for n in final}
    winner = min(final, key=lambda n: mean[n] if math.isfinite(mean[n]) else math.inf)
    return winner, stats, spent


def _gaps(losses: dict) -> dict:
    """``{name: (mean - the lowest mean, paired SE of the difference)}`` over the
    replications every candidate shares."""
    n = min(len(x) for x in losses.values())
    x = {k: v[:n] for k, v in losses.items()}
    lead = min(x, key=lambda k: x[k].mean() if np.isfinite(x[k].mean()) else np.inf)
    out = {}
    for k, v in x.items():
        d = paired(v, x[lead])
        out[k] = (d.mean, d.se)
    return out
