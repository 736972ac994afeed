"""Issue 53's two comparisons that the per-task table of :mod:`benchmarks.tuning_tasks`
does not print, read from its ``--out`` JSON files:

* **against the equal-simulation grid** (held-out acceptance: no run of ``tune`` worse
  than the grid by more than 2 paired SE): per seed, ``tune``'s pick and the grid's are
  re-evaluated on the run's evaluation replications (key 7, ``--eval``), which
  reproduces their ratios exactly (a point's losses do not depend on the points run
  beside it), and the paired difference (tune - grid) / reference with its SE is
  printed; ``behind`` counts the seeds where it exceeds 2 SE;
* **against TPE** (multi-parameter acceptance): the share of runs with a lower or equal
  loss and the paired mean of log(tune / TPE) over them with its 95 % CI (both ratios
  are to the same reference on the same replications).

    python -m benchmarks.tuning_verdict dev10.json heldout10.json --eval 2000
    python -m benchmarks.tuning_verdict heldout10.json --grid   # also the grid check
"""

from __future__ import annotations

import argparse
import json
import math

import jax
import numpy as np

from benchmarks.tuning_tasks import TASK_SETS, Size, hits
from jbandits.analysis import stats
from jbandits.tuning import Space


def _task(name):
    return {t.name: t for t in TASK_SETS["all"]()}[name]


def _final_rows(rec: dict) -> tuple[dict, float]:
    """A task record's rows by ``(method, fraction)`` and its largest fraction."""
    rows = {(r["method"], r["fraction"]): r for r in rec["rows"]}
    return rows, max(f for (_, f) in rows)


def score(per: np.ndarray, j: int, base: int | None = None):
    """Row ``j`` against row 0 (the reference): its ratio, the ratio's paired SE, and
    (with ``base``) whether it is worse than row ``base`` by more than 2 paired SE
    (:attr:`jbandits.analysis.stats.Paired.z` > 2; with a zero SE: any excess)."""
    ref = per[0].mean()
    se = stats.paired(per[j], per[0]).se / ref
    late = None if base is None else stats.paired(per[j], per[base]).z > 2
    return float(per[j].mean() / ref), se, late


def log_ratio_ci(logs) -> dict:
    """The mean of paired log-ratios, its SE and 95 % CI (NaN without two runs)."""
    x = np.asarray(logs, np.float64)
    if not x.size:
        return {"runs": 0, "mean": math.nan, "se": math.nan, "ci": (math.nan,) * 2}
    p = stats.paired(x)
    return {"runs": x.size, "mean": p.mean, "se": p.se, "ci": (p.lo, p.hi)}


def versus_grid(
    name: str,
    rec: dict,
    eval_reps: int,
    method: str = "tune",
    key: int = 7,
) -> list:
    """``[(diff, se)]`` per seed: (method - grid) / the reference's loss, paired, on
    the evaluation replications of ``key`` (the runs': 7)."""
    task = _task(name)
    rows, frac = _final_rows(rec)
    mine, grid = rows[(method, frac)]["picks"], rows[("grid", frac)]["picks"]
    obj, space = task.objective(Size().budget_scale), Space(task.space)
    chunk = 2 * space.dim * Size().reps  # run_task's chunk at the runs' R = 100
    out = []
    for (th_m, _), (th_g, _) in zip(mine, grid, strict=True):
        z = np.stack([space.to_z(t) for t in (rec["reference"], th_m, th_g)])
        per = obj.per_rep(
            obj.run(space.batch_from_z(z), jax.random.key(key), eval_reps, chunk=chunk)
        )
        ref = per[0].mean()
        d = stats.paired(per[1], per[2])
        out.append((d.mean / ref, d.se / ref))
    return out


def merge(paths) -> dict:
    """The records of several ``--out`` files, one per task, their rows united (a
    later file's row for the same method and fraction replaces an earlier one)."""
    out: dict = {}
    for path in paths:
        with open(path) as f:
            for name, rec in json.load(f).items():
                if name not in out:
                    out[name] = dict(rec, rows=list(rec["rows"]))
                    continue
                have = {
                    (r["method"], r["fraction"]): i
                    for i, r in enumerate(out[name]["rows"])
                }
                for r in rec["rows"]:
                    i = have.get((r["method"], r["fraction"]))
                    if i is None:
                        out[name]["rows"].append(r)
                    else:
                        out[name]["rows"][i] = r
    return out


def eval_key(seed: int, key: int, per_seed: bool):
    """The evaluation replications of a seed: the runs' one set (``key``) for every
    seed, or with ``per_seed`` a set of its own (``fold_in(key, seed)``), so that
    the ten runs are independent trials of the verdict."""
    k = jax.random.key(key)
    return jax.random.fold_in(k, seed) if per_seed else k


def reevaluate(name: str, rec: dict, eval_reps: int, key: int = 7, per_seed=False):
    """``{method: (ratios [S], se [S], behind grid [S] or None)}``: every recorded
    pick and the reference re-run on the evaluation replications
    (:func:`eval_key`); ratio = loss / the reference's, ``se`` its paired SE,
    ``behind``: worse than the grid's pick by more than 2 paired SE."""
    task = _task(name)
    rows, frac = _final_rows(rec)
    methods = [m for (m, f) in rows if f == frac and rows[(m, f)].get("picks")]
    obj, space = task.objective(Size().budget_scale), Space(task.space)
    chunk = 2 * space.dim * Size().reps
    seeds = rec.get("seeds") or list(range(len(rows[(methods[0], frac)]["picks"])))
    out = {m: ([], [], []) for m in methods}
    for i, seed in enumerate(seeds):
        pts = [rec["reference"]] + [rows[(m, frac)]["picks"][i][0] for m in methods]
        z = np.stack([space.to_z(t) for t in pts])
        per = obj.per_rep(
            obj.run(space.batch_from_z(z), eval_key(seed, key, per_seed), eval_reps,
                    chunk=chunk)
        )  # fmt: skip
        g = 1 + methods.index("grid") if "grid" in methods else None
        for j, m in enumerate(methods, start=1):
            ratio, se, late = score(per, j, g)
            out[m][0].append(ratio)
            out[m][1].append(se)
            if g is not None:
                out[m][2].append(bool(late))
    return {m: tuple(np.asarray(v) for v in out[m]) for m in methods}


def table(records: dict, eval_reps: int, key: int = 7, per_seed=False) -> dict:
    """Print and return the per-task verdict of every method from the re-evaluation
    (hits, <= 1.02, median, worst, behind the grid) and the TPE comparison over the
    tasks of two or more parameters."""
    print(f"{'task':50s} {'method':7s} hits  <=1.02  median  worst  behind grid")
    res, logs, wins = {}, [], 0
    for name, rec in records.items():
        ev = reevaluate(name, rec, eval_reps, key, per_seed)
        res[name] = ev
        for m, (r, se, behind) in ev.items():
            n = len(r)
            b = f"{int(behind.sum())}/{n}" if m != "grid" and behind.size else ""
            print(
                f"{name:50s} {m:7s} {hits(r, se):2d}/{n}  "
                f"{int((r <= 1.02).sum()):2d}/{n}  {np.median(r):.3f}  {r.max():.3f}  {b}",
                flush=True,
            )
        if rec["d"] >= 2 and "tpe" in ev and "tune" in ev:
            logs.extend(np.log(ev["tune"][0] / ev["tpe"][0]))
            wins += int((ev["tune"][0] <= ev["tpe"][0]).sum())
    t = log_ratio_ci(logs)
    if t["runs"] > 1:
        print(
            f"vs TPE, two or more parameters: {wins}/{t['runs']} runs lower or equal "
            f"({wins / t['runs']:.0%}); mean log(tune / TPE) {t['mean']:+.4f} (SE "
            f"{t['se']:.4f}, 95 % CI [{t['ci'][0]:+.4f}, {t['ci'][1]:+.4f}])"
        )
    return res


def versus_tpe(records: dict, method: str = "tune", dims=(2, 3)) -> dict:
    """Wins (loss <= TPE's) and the paired mean log(method / TPE) with its 95 % CI
    over every seed of the tasks of dimension in ``dims``."""
    logs, wins = [], 0
    for rec in records.values():
        if rec["d"] not in dims:
            continue
        rows, frac = _final_rows(rec)
        if ("tpe", frac) not in rows or (method, frac) not in rows:
            continue
        a = np.asarray(rows[(method, frac)]["ratios"])
        b = np.asarray(rows[("tpe", frac)]["ratios"])
        logs.extend(np.log(a / b))
        wins += int((a <= b).sum())
    return {**log_ratio_ci(logs), "wins": wins}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="+")
    ap.add_argument("--eval", type=int, default=2000, help="the run's --eval")
    ap.add_argument("--grid", action="store_true", help="also the check vs the grid")
    ap.add_argument("--method", default="tune", help="the method checked vs the grid")
    ap.add_argument("--key", type=int, default=7, help="evaluation key (the runs': 7)")
    ap.add_argument(
        "--table", action="store_true",
        help="re-evaluate every recorded pick: the per-task verdict of every method",
    )  # fmt: skip
    ap.add_argument(
        "--per-seed", action="store_true",
        help="each seed on evaluation replications of its own (fold_in(key, seed))",
    )  # fmt: skip
    args = ap.parse_args(argv)
    if args.table:
        table(merge(args.files), args.eval, args.key, args.per_seed)
        return
    records = {}
    for path in args.files:
        with open(path) as f:
            records.update(json.load(f))
    t = versus_tpe(records)
    print(
        f"vs TPE, two or more parameters: {t['wins']}/{t['runs']} runs with a lower or "
        f"equal loss ({t['wins'] / max(1, t['runs']):.0%}); mean log(tune / TPE) "
        f"{t['mean']:+.4f} (SE {t['se']:.4f}, 95 % CI [{t['ci'][0]:+.4f}, "
        f"{t['ci'][1]:+.4f}])"
    )
    if not args.grid:
        return
    print(f"\n{'task':50s} behind  worst ({args.method} - grid) / ref in SE")
    for name, rec in records.items():
        rows, frac = _final_rows(rec)
        if (args.method, frac) not in rows:
            continue
        vg = versus_grid(name, rec, args.eval, args.method, args.key)
        z = [stats.z_score(d, se) for d, se in vg]
        worst = int(np.argmax(z))
        print(
            f"{name:50s} {sum(v > 2 for v in z):2d}/{len(z):<3d} "
            f"{vg[worst][0]:+.4f} +- {vg[worst][1]:.4f} ({z[worst]:+.1f} SE)",
            flush=True,
        )


if __name__ == "__main__":
    main()
