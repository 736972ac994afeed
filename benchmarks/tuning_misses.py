"""Why ``tune``'s multi-parameter default misses on two tasks (issue 53, item 3):
benchmarks/notes_tuning_tasks.md, "Issue 53". Small runs, full horizons, run 6's
references; every pick is evaluated with the reference on fresh replications (key 7,
as :mod:`benchmarks.tuning_tasks`).

    python -m benchmarks.tuning_misses race "Bayes-UCB" --seeds 0-9 --eval 1000
    python -m benchmarks.tuning_misses path "UCB-V (c, zeta, b)" --seeds 5,9 --eval 4000
    python -m benchmarks.tuning_misses gridmap "Bayes-UCB" --eval 400
    python -m benchmarks.tuning_misses designs "Bayes-UCB;OptKG" --seeds 0-9 \\
        --designs lattice,union,grid11

``race``: per seed the final comparison's candidates (halving survivors, ES averages,
best evaluated) with the race's means and their evaluated ratios; ``path``: the ES
path against the true loss; ``gridmap``: the halving's 8 x 8 grid as ratios;
``designs``: the halving's design replaced (``grid8``: the 8 x 8 / 5 x 5 x 5 grid
before issue 53; ``lattice``: a Korobov lattice of as many
points, every axis with distinct values; ``union``: grid and lattice; ``grid11``: 11 x
11, or 6 x 6 x 6, with the ES step of the 8 x 8 grid (0.25 / 8: as measured before the
11 x 11 grid became the default); ``prefer``: the product grid, and the race keeps the halving's best
point unless beaten by 2 paired SE in the blocks before the last; ``prefer2``: unless
the race's winner beats it by 2 paired SE over every block), everything else the
defaults.
"""

from __future__ import annotations

import argparse

import jax
import numpy as np

from benchmarks.tuning_tasks import tasks
from jbandits.analysis import stats
from jbandits.tuning import Report, Search, Space, allocation, tune

REFS = {  # run 6's references (notes_tuning_tasks.md)
    "UCB-V (c, zeta) (prior)": {"c": 0.143, "zeta": 0.2},
    "EUCBV (rho, psi)": {"psi": 0.0518, "rho": 1.16},
    "UCB-V (c, zeta, b)": {"b": 4.22, "c": 0.25, "zeta": 0.0398},
    "OC-UCB (alpha, psi)": {"alpha": 0.373, "psi": 1.19},
    "Bayes-UCB (c, noise_var) (prior)": {"c": 4.64, "noise_var": 0.181},
    "OptKG (prior_a, prior_b)": {"prior_a": 20.0, "prior_b": 20.0},
    "UGapE-b (a, epsilon) (oracle)": {"a": 1.93, "epsilon": 0.0},
    "GapE-V (a, b)": {"a": 0.518, "b": 1.93},
}
LATTICE = {2: (64, 19), 3: (125, 17)}  # (points, Korobov generator)
_GRID = Space.grid


_RACE, _POINTS = allocation.race, allocation.halving_points


def _old_points(dim: int) -> int:
    """The halving's points per axis before issue 53 (16, 8 x 8, 5 beyond)."""
    return {1: 16, 2: 8}.get(dim, 5)


def _preferring(*args, prefer=None, **kw):
    """The race with ``prefer="start"``: the halving's best point wins unless a
    candidate beats it by 2 paired SE (item 2's safeguard, measured)."""
    return _RACE(*args, prefer=prefer or "start", **kw)


def _preferring_final(*args, prefer=None, detail=None, **kw):
    """The race, then the start wins unless the winner beats it by 2 paired SE on
    every replication they share, the last block included."""
    gaps = {} if detail is None else detail
    winner, stats, used = _RACE(*args, prefer=prefer, detail=gaps, **kw)
    gap = gaps.get("start")
    if prefer is None and gap is not None and gap[0] <= allocation.RACE_Z * gap[1]:
        winner = "start"
    return winner, stats, used


def korobov(n: int, d: int, g: int) -> np.ndarray:
    """Rank-1 lattice ``((i (1, g, g^2, ...)) mod n + 0.5) / n`` (cell centres)."""
    gen = np.array([pow(g, k, n) for k in range(d)])
    return ((np.arange(n)[:, None] * gen[None]) % n + 0.5) / n


def design(kind: str):
    def grid(self, n):
        if self.dim not in LATTICE or n != allocation.halving_points(self.dim):
            return _GRID(self, n)
        lat = korobov(LATTICE[self.dim][0], self.dim, LATTICE[self.dim][1])
        if kind == "lattice":
            return lat
        if kind == "union":
            return np.vstack([_GRID(self, n), lat])
        if kind == "grid11":
            return _GRID(self, 11 if self.dim == 2 else 6)
        return _GRID(self, n)

    return grid


def _setup(name):
    task = next(t for t in tasks() if t.name.lower().startswith(name.lower()))
    obj, space = task.objective(1.0), Space(task.space)
    d = space.dim
    return (
        task,
        obj,
        space,
        Search(simulations=20**d * 100 // 4, num_reps=100),
        2 * d * 100,
    )


def _evaluate(obj, space, ref, points, reps, chunk):
    z = np.stack([space.to_z(ref)] + [space.to_z(p) for p in points])
    per = obj.losses(space.batch_from_z(z), jax.random.key(7), reps, chunk=chunk)
    ev = per.mean(1)
    se = stats.paired(per[1:], per[0], axis=1).se / ev[0]
    return ev[1:] / ev[0], se


def _fmt(th) -> str:
    return "(" + ", ".join(f"{k}={float(v):.3g}" for k, v in sorted(th.items())) + ")"


def race(name, seeds, reps):
    task, obj, space, search, chunk = _setup(name)
    for seed in seeds:
        res = tune(
            obj, task.space, search=search, report=Report(confidence=0), key=seed
        )
        cands = res.extra.get("race") or {}
        ratio, se = _evaluate(
            obj, space, REFS[task.name], [t for t, _ in cands.values()], reps, chunk
        )
        print(
            f"seed {seed}: theta {_fmt(res.theta)} race reps {res.extra.get('race_reps')}"
        )
        gaps = res.extra.get("race_gaps") or {}
        print("   survivors (gap to the lowest, paired SE): " + ", ".join(
            f"{n} {g:+.4g} +- {e:.3g}" for n, (g, e) in gaps.items()))  # fmt: skip
        for i, (n, (theta, mean)) in enumerate(cands.items()):
            print(f"   {n:16s} {_fmt(theta):44s} race mean {mean:9.4f}  "
                  f"ratio {ratio[i]:.4f} +- {se[i]:.4f}", flush=True)  # fmt: skip


def path(name, seeds, reps, every=20):
    task, obj, space, search, chunk = _setup(name)
    for seed in seeds:
        res = tune(
            obj, task.space, search=search, report=Report(confidence=0), key=seed
        )
        idx = [*range(0, len(res.path), every), len(res.path) - 1]
        pts = [res.start] + [res.path[i].theta for i in idx] + [res.theta]
        ratio, se = _evaluate(obj, space, REFS[task.name], pts, reps, chunk)
        labels = ["start"] + [f"step {i}" for i in idx] + ["result"]
        crn = [None] + [res.path[i].loss for i in idx] + [None]
        print(f"seed {seed}")
        for j, lab in enumerate(labels):
            v = "" if crn[j] is None else f"CRN loss {crn[j]:8.3f}"
            print(f"  {lab:9s} {_fmt(pts[j]):40s} {v:18s} ratio {ratio[j]:.4f} "
                  f"+- {se[j]:.4f}", flush=True)  # fmt: skip


def gridmap(name, reps):
    task, obj, space, _, chunk = _setup(name)
    z = space.grid(allocation.halving_points(2))
    ratio, _ = _evaluate(obj, space, REFS[task.name], [space.from_z(p) for p in z],
                         reps, chunk)  # fmt: skip
    a, b = sorted(task.space)
    cols = sorted(set(z[:, 0]))
    print(f"rows {b}, columns {a}: " + " ".join(
        f"{space.from_z(np.array([c, 0.5]))[a]:.3g}" for c in cols))  # fmt: skip
    for r in sorted(set(z[:, 1])):
        row = ratio[np.isclose(z[:, 1], r)]
        lab = space.from_z(np.array([0.5, r]))[b]
        print(f"{lab:7.3g} " + " ".join(f"{x:6.3f}" for x in row))


def designs(names, seeds, reps, kinds):
    kinds = ["grid", *kinds]
    for task in tasks():
        if task.name not in REFS or not any(
            n.lower() in task.name.lower() for n in names
        ):
            continue
        _, obj, space, search, chunk = _setup(task.name)
        rows = {k: [] for k in kinds}
        for seed in seeds:
            picks = []
            for k in kinds:
                Space.grid = design(k)
                if k == "prefer":  # the race keeps the halving's best point
                    allocation.race = _preferring
                if k == "prefer2":  # the same, judged after the last block
                    allocation.race = _preferring_final
                if k in ("grid8", "grid11"):  # grid11: the old step 0.25 / 8
                    allocation.halving_points = _old_points
                try:
                    res = tune(obj, task.space, search=search,
                               report=Report(confidence=0), key=seed)  # fmt: skip
                finally:
                    Space.grid, allocation.race = _GRID, _RACE
                    allocation.halving_points = _POINTS
                picks.append(res.theta)
            ratio, se = _evaluate(obj, space, REFS[task.name], picks, reps, chunk)
            for i, k in enumerate(kinds):
                rows[k].append((ratio[i], se[i]))
            print(f"{task.name:34s} seed {seed}: " + "  ".join(
                f"{k} {ratio[i]:.4f}+-{se[i]:.4f}" for i, k in enumerate(kinds)),
                flush=True)  # fmt: skip
        for k, r in rows.items():
            r = np.array(r)
            print(f"  {k:8s} hits {int((r[:, 0] - 2 * r[:, 1] <= 1.02).sum())}/{len(r)}"
                  f"  <=1.02 {int((r[:, 0] <= 1.02).sum())}/{len(r)}"
                  f"  med {np.median(r[:, 0]):.4f}  worst {r[:, 0].max():.4f}")  # fmt: skip


def _seeds(text: str) -> list[int]:
    if "-" in text:
        lo, hi = text.split("-")
        return list(range(int(lo), int(hi) + 1))
    return [int(s) for s in text.split(",")]


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("what", choices=["race", "path", "gridmap", "designs"])
    ap.add_argument("task", help="task name prefix (designs: substrings, ;-separated)")
    ap.add_argument("--seeds", default="0-4")
    ap.add_argument("--eval", type=int, default=2000)
    ap.add_argument("--designs", default="lattice,union,grid11")
    args = ap.parse_args(argv)
    seeds = _seeds(args.seeds)
    if args.what == "race":
        race(args.task, seeds, args.eval)
    elif args.what == "path":
        path(args.task, seeds, args.eval)
    elif args.what == "gridmap":
        gridmap(args.task, args.eval)
    else:
        kinds = args.designs.split(",") if args.designs else []  # "": defaults only
        designs(args.task.split(";"), seeds, args.eval, kinds)


if __name__ == "__main__":
    main()
