"""The noise floor of the tuning benchmark: could any selector reach ratio <= 1.02?

    python -m benchmarks.tuning_floor --only "thompson;lsa;ucb-e a;gape-v (a, b)"

For each task of :mod:`benchmarks.tuning_tasks` (horizon x ``--scale``):

1. the benchmark's reference at R = ``--ref-reps`` (the fine grid with 10x the
   method's simulations, its 5 lowest points re-run on 2000 replications; the same
   function and keys as the benchmark, so the same point);
2. the ``--top`` lowest points of that fine grid (and the reference) are evaluated
   on the benchmark's evaluation replications (key 7, ``--eval`` of them): their
   ratio to the reference *as the benchmark measures it*;
3. and on an independent pool of ``--pool`` replications (key 123), from which an
   *oracle selector* is simulated ``--draws`` times: it knows which fine-grid points
   are best (by the ratio of step 2) and spends the method's simulations (1/2 of
   20 x R for one parameter, 1/4 of 20^2 x R for two) evenly on the ``k`` best of
   them, on common replications (one bootstrap draw of replication indices, shared by
   the ``k`` points), and picks the lowest mean. The table gives how often its pick
   has ratio <= 1.02 (k = 2, 3, 5, and every evaluated point within 5%), the number
   and span of the points within 2%, and the paired standard error, relative to
   the reference's loss, of the difference between the reference and the worst
   point within 2% (and within 5%) at half the method's simulations each: the
   smallest noise with which a selector of two points could compare them; and the
   paired standard error of the benchmark's own measurement of that 2% point's
   ratio (``--eval`` replications): the noise in "ratio <= 1.02" itself.

If even the oracle selector misses 1.02 in more than 10% of draws, the criterion is
a limit of the statistics at that budget, not of the tuner.
"""

from __future__ import annotations

import argparse
import time

import jax
import numpy as np

from benchmarks.tuning_tasks import Size, _fine_points, reference, tasks
from jbandits.analysis import stats
from jbandits.tuning import Space


def floor_task(task, size, reps_list, top, pool, draws, rng):
    obj = task.objective(size.budget_scale)
    space = Space(task.space)
    d = space.dim
    share = 0.5 if d == 1 else 0.25
    chunk = 2 * d * size.reps
    sims_ref = int(20**d * size.reps * share)
    theta_ref, _ = reference(obj, space, sims_ref, size, chunk)
    # the fine grid again (same keys as reference(): the same means) for its top
    axis = np.linspace(0.0, 1.0, _fine_points(d))
    mesh = np.meshgrid(*([axis] * d), indexing="ij")
    z_f = np.stack([m.reshape(-1) for m in mesh], axis=-1)
    reps_f = max(2, int(size.fine * sims_ref) // len(z_f))
    mean_f = obj.losses(
        space.batch_from_z(z_f), jax.random.key(99), reps_f, chunk=chunk
    ).mean(1)
    order = np.argsort(np.where(np.isfinite(mean_f), mean_f, np.inf))[:top]
    z_ref = space.to_z(theta_ref)
    z = np.concatenate([z_ref[None], z_f[order]])
    z = z[np.unique(np.round(z, 9), axis=0, return_index=True)[1]]
    ev = obj.losses(
        space.batch_from_z(z), jax.random.key(7), size.eval_reps, chunk=chunk
    )
    i_ref = int(np.argmin(np.max(np.abs(z - z_ref), axis=1)))
    ratio = ev.mean(1) / ev[i_ref].mean()
    eval_se = stats.paired(ev, ev[i_ref], axis=1).se / ev[i_ref].mean()
    per = obj.losses(space.batch_from_z(z), jax.random.key(123), pool, chunk=chunk)
    ranked = np.argsort(ratio)
    within2 = np.flatnonzero(ratio <= 1.02)
    within5 = np.flatnonzero(ratio <= 1.05)
    span2 = (z[within2].min(0), z[within2].max(0))
    rows = []
    for reps in reps_list:
        budget = int(20**d * reps * share)
        out = {"R": reps, "budget": budget}
        sets = {f"k={k}": ranked[:k] for k in (2, 3, 5)}
        sets["5%"] = within5 if len(within5) >= 2 else ranked[:2]
        for name, idx in sets.items():
            r = max(2, budget // len(idx))
            hits = 0
            for _ in range(draws):
                take = rng.integers(0, pool, size=r)
                pick = idx[int(np.argmin(per[idx][:, take].mean(1)))]
                hits += ratio[pick] <= 1.02
            out[name] = hits / draws
        lref = per[i_ref].mean()
        for name, pts in (("se2", within2), ("se5", within5)):
            worst = pts[int(np.argmax(ratio[pts]))]
            sd = (per[worst] - per[i_ref]).std(ddof=1)
            out[name] = (float(ratio[worst]), float(sd / np.sqrt(budget // 2) / lref))
        rows.append(out)
    return {
        "reference": theta_ref,
        "points": len(z),
        "within2": len(within2),
        "within5": len(within5),
        "span2": [float(x) for x in np.ravel(span2)],
        "eval_se": float(eval_se[within2[int(np.argmax(ratio[within2]))]]),
        "rows": rows,
    }


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", default="thompson;lsa;ucb-e a;gape-v (a, b)")
    ap.add_argument("--reps", default="100,50", help="the methods' R values")
    ap.add_argument("--ref-reps", type=int, default=100, help="R of the reference")
    ap.add_argument("--eval", type=int, default=2000)
    ap.add_argument("--pool", type=int, default=2000)
    ap.add_argument("--top", type=int, default=10)
    ap.add_argument("--draws", type=int, default=4000)
    ap.add_argument("--scale", type=float, default=0.3)
    args = ap.parse_args(argv)
    size = Size(
        reps=args.ref_reps, eval_reps=args.eval, fine=10.0, budget_scale=args.scale
    )
    reps_list = [int(r) for r in args.reps.split(",")]
    rng = np.random.default_rng(0)
    print(f"jax {jax.__version__}; {size}; pool {args.pool}; draws {args.draws}")
    print(
        f"{'task':28s} {'R':>4s} {'sims':>6s} {'n<=2%':>5s} {'span z':>13s} "
        f"{'k=2':>5s} {'k=3':>5s} {'k=5':>5s} {'<=5%':>5s} "
        f"{'worst<=2%: ratio, SE':>20s} {'worst<=5%: ratio, SE':>20s} {'evalSE':>6s}"
    )
    for task in tasks():
        if not any(
            p.strip().lower() in task.name.lower() for p in args.only.split(";")
        ):
            continue
        t0 = time.perf_counter()
        rec = floor_task(task, size, reps_list, args.top, args.pool, args.draws, rng)
        span = rec["span2"]
        span_s = f"{span[0]:.2f}-{span[1]:.2f}" if len(span) == 2 else "2-d"
        for row in rec["rows"]:
            print(
                f"{task.name[:28]:28s} {row['R']:4d} {row['budget']:6d} "
                f"{rec['within2']:2d}/{rec['points']:<2d} {span_s:>13s} "
                f"{row['k=2']:5.2f} {row['k=3']:5.2f} {row['k=5']:5.2f} "
                f"{row['5%']:5.2f} "
                f"{row['se2'][0]:9.3f} {row['se2'][1]:9.4f}  "
                f"{row['se5'][0]:9.3f} {row['se5'][1]:9.4f}  {rec['eval_se']:6.4f}",
                flush=True,
            )
        ref = ", ".join(f"{k}={v:.3g}" for k, v in rec["reference"].items())
        print(f"  [reference {ref}; {time.perf_counter() - t0:.0f} s]", flush=True)


if __name__ == "__main__":
    main()
