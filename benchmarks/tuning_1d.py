"""One-parameter designs for :func:`jbandits.tuning.tune`, measured against the records
of :mod:`benchmarks.tuning_tasks` (issue 53): every one-parameter task, ten seeds, the
records' references and equal-simulation grid picks, each design's pick and theirs
re-evaluated on the records' evaluation replications (key 7).

    python -m benchmarks.tuning_1d benchmarks/tuning_runs/one10.json \
        --designs tune,zoom,zoom-v,zoom3 [--only "APT;MOSS"] [--eval 2000]

Designs (budget S = the record's one-parameter budget, R replications per point):

* ``tune``: :func:`tune`'s defaults (reproduces the records' ``tune`` rows);
  ``tune:k=v;k=v``: with those ``Search`` options;
* ``zoom``: a 5-point grid on ``S / 2`` common replications, then 5 points at half its
  spacing centred on its best point (inside the box) on fresh common replications; the
  second stage's lowest mean;
* ``zoom-v``: ``zoom``, then the vertex of the parabola through the second stage's
  lowest point and its neighbours (clipped to them) where it is convex;
* ``zoom3``: three such stages of 5 points (spacing 0.2, 0.1, 0.05), a third of ``S``
  each;
* ``rec:M``: the record's own pick of method ``M`` (no tuning run; any dimension);
* ``grid@off``: the records' equal-simulation grid (its points and replications)
  shifted by ``off`` in normalised units (clipped to the box): is a grid's lead where
  one of its points sits on a narrow optimum a property of grids or of that placement?

Per design: hits (ratio - 2 SE <= 1.02), the plain <= 1.02 count, median and worst
ratio, and ``behind``: seeds where it is worse than the grid's pick by more than 2
paired SE of the evaluation.
"""

from __future__ import annotations

import argparse

import jax
import numpy as np

from benchmarks.tuning_tasks import TASK_SETS, Size, _grid_pick, hits
from benchmarks.tuning_verdict import eval_key, merge, score
from jbandits.analysis import stats
from jbandits.tuning import ES, Report, Search, Space, tune


def _window(center: float, h: float, n: int = 5) -> np.ndarray:
    """``n`` points ``h`` apart centred on ``center``, shifted inside [0, 1]."""
    half = h * (n - 1) / 2
    lo = min(max(center - half, 0.0), 1.0 - 2 * half)
    return (lo + h * np.arange(n))[:, None]


def _stage(obj, space, z, key, reps, chunk):
    per = obj.losses(space.batch_from_z(z), key, reps, chunk=chunk)
    m = per.mean(1)
    return np.where(np.isfinite(m), m, np.inf), per.size


def _vertex3(z, means, i):
    """Vertex of the parabola through point ``i`` and its neighbours, within them."""
    if i == 0 or i == len(z) - 1:
        return z[i]
    x, y = z[i - 1 : i + 2, 0], means[i - 1 : i + 2]
    curv = y[0] - 2 * y[1] + y[2]
    if not np.isfinite(curv) or curv <= 0:
        return z[i]
    h = x[1] - x[0]
    return np.array([x[1] + float(np.clip(0.5 * h * (y[0] - y[2]) / curv, -h, h))])


def zoom(obj, space, sims, reps, key, chunk, stages=2, vertex=False):
    """The zoom designs (module docstring)."""
    per_stage = sims // stages
    r = max(2, per_stage // 5)
    z = space.grid(5)
    h = 0.2
    spent, best = 0, z[0]
    for s in range(stages):
        if s:
            h /= 2
            z = _window(float(best[0]), h)
        means, used = _stage(obj, space, z, jax.random.fold_in(key, 1000 + s), r, chunk)
        spent += used
        i = int(np.argmin(means))
        best = z[i]
    if vertex:
        best = _vertex3(z, means, i)
    return space.from_z(np.clip(best, 0, 1)), spent


def _options(design: str) -> dict:
    """``tune:num_reps=50;simulations=900`` -> ``{"num_reps": 50, "simulations": 900}``."""
    if ":" not in design:
        return {}
    out = {}
    for kv in design.split(":", 1)[1].split(";"):
        k, v = kv.split("=")
        for cast in (int, float, str):  # "inf" is a float, "grid" a string
            try:
                out[k] = cast(v)
                break
            except ValueError:
                continue
    return out


DESIGNS = {
    "zoom": dict(stages=2),
    "zoom-v": dict(stages=2, vertex=True),
    "zoom3": dict(stages=3),
    "zoom3-v": dict(stages=3, vertex=True),
}


def curves(records: dict, tasks: dict, spec: str, only: str | None) -> None:
    """Each one-parameter task's mean loss at ``n`` points of z in [lo, hi] on
    ``reps`` common replications of ``key`` (default 123, 4000), as ratios to the
    record's reference on the same replications, with the paired SE of each
    difference to it."""
    lo, hi, n, *rest = spec.split(",")
    key, reps = (int(rest[0]), int(rest[1])) if rest else (123, 4000)
    for name, rec in records.items():
        if rec["d"] != 1 or (
            only and not any(s.lower() in name.lower() for s in only.split(";"))
        ):
            continue
        task = tasks[name]
        obj, space = task.objective(1.0), Space(task.space)
        z_ref = space.to_z(rec["reference"])
        z = np.concatenate(
            [z_ref[None], np.linspace(float(lo), float(hi), int(n))[:, None]]
        )
        per = obj.losses(space.batch_from_z(z), jax.random.key(key), reps, chunk=200)
        m = per.mean(1)
        se = stats.paired(per, per[0], axis=1).se / m[0]
        print(f"{name} (key {key}, {reps} replications; ratio to the reference, z = "
              f"{float(z_ref[0]):.4f})")  # fmt: skip
        cells = zip(z[1:, 0], m[1:] / m[0], se[1:], strict=True)
        print(" ".join(f"{a:.4f}:{b:.3f}({c:.3f})" for a, b, c in cells))


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="+")
    ap.add_argument("--designs", default="tune,zoom,zoom-v,zoom3")
    ap.add_argument("--only", default=None)
    ap.add_argument("--eval", type=int, default=2000)
    ap.add_argument("--per-seed", action="store_true", help="evaluation key per seed")
    ap.add_argument("--versus", default=None, help="behind this design, not the grid")
    ap.add_argument(
        "--curve", default=None,
        help='"lo,hi,n[,key,reps]": the loss at n points of z in [lo, hi] instead',
    )  # fmt: skip
    args = ap.parse_args(argv)
    records = merge(args.files)
    tasks = {t.name: t for t in TASK_SETS["all"]()}
    if args.curve:
        return curves(records, tasks, args.curve, args.only)
    designs = args.designs.split(",")
    reps = Size().reps
    for name, rec in records.items():
        if rec["d"] != 1 and any(not d.startswith(("rec:", "grid@")) for d in designs):
            continue  # the tuner's designs here are one-parameter ones
        if args.only and not any(
            s.lower() in name.lower() for s in args.only.split(";")
        ):
            continue
        task = tasks[name]
        obj, space = task.objective(1.0), Space(task.space)
        dim = rec["d"]
        chunk = 2 * dim * reps
        sims = int(20**dim * reps * (0.5 if dim == 1 else 0.25))  # run_task's budget
        n_grid = max(2, int((sims // reps) ** (1.0 / dim) + 1e-9))
        rows = {(r["method"], r["fraction"]): r for r in rec["rows"]}
        grid = rows[("grid", 1.0)]["picks"]
        ratios = {d: [] for d in designs}
        ses = {d: [] for d in designs}
        behind = {d: 0 for d in designs}
        for i, seed in enumerate(rec["seeds"]):
            picks = {}
            for d in designs:
                if d.startswith("rec:"):  # the record's own pick of that method
                    picks[d] = rows[(d[4:], 1.0)]["picks"][i][0]
                elif d.startswith("tune"):
                    opts = _options(d)
                    opts.setdefault("num_reps", reps)
                    es = {
                        k: opts.pop(k)
                        for k in ("sigma", "num_pairs", "sigma_decay")
                        if k in opts
                    }
                    res = tune(obj, task.space,
                               search=Search(**{"simulations": sims, **opts}),
                               estimator=ES(**es),
                               report=Report(confidence=0), key=seed)  # fmt: skip
                    picks[d] = res.theta
                elif d.startswith("grid@"):  # the equal-simulation grid, shifted
                    picks[d] = _grid_pick(obj, space, n_grid, reps,
                                          jax.random.key(20_000 + seed), chunk,
                                          offset=float(d.split("@")[1]))  # fmt: skip
                else:
                    picks[d], _ = zoom(obj, space, sims, reps,
                                       jax.random.key(50_000 + seed), chunk,
                                       **DESIGNS[d])  # fmt: skip
            base = picks[args.versus] if args.versus else grid[i][0]
            pts = [rec["reference"], base, *picks.values()]
            z = np.stack([space.to_z(t) for t in pts])
            per = obj.per_rep(
                obj.run(
                    space.batch_from_z(z),
                    eval_key(seed, 7, args.per_seed),
                    args.eval,
                    chunk=chunk,
                )
            )
            for j, d in enumerate(designs, start=2):
                ratio, se, late = score(per, j, base=1)
                ratios[d].append(ratio)
                ses[d].append(se)
                behind[d] += int(late)
        print(name, flush=True)
        for d in designs:
            r, s = np.asarray(ratios[d]), np.asarray(ses[d])
            print(
                f"  {d:10s} hits {hits(r, s):2d}/{len(r)}  "
                f"<=1.02 {int((r <= 1.02).sum()):2d}  med {np.median(r):.3f}  "
                f"worst {r.max():.3f}  behind {args.versus or 'grid'} {behind[d]}/{len(r)}  "
                f"[{' '.join(f'{x:.3f}' for x in r)}]",
                flush=True,
            )


if __name__ == "__main__":
    main()
