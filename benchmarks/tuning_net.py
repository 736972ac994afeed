"""The default budget on the held-out valleys (issue 64, item 2): ``tune`` with
``Search(simulations=S)`` (default 4000, as a new user calls it) against a plain
10 x 10 grid of the same simulations (``S / 100`` common replications per point), on
tasks of :mod:`benchmarks.tuning_tasks` whose reference a ``--out`` record holds.

    python -m benchmarks.tuning_net RECORD.json --only "curved valley" --seeds 0-4

Per seed: both picks and the record's reference on ``--eval`` fresh replications of
their own (``fold_in(key(7), seed)``); ratio = loss / the reference's, its paired
SE, and (tune - grid) / reference with its paired SE; per task the paired mean
log(tune / grid) over the seeds with its 95 % CI
(:func:`jbandits.analysis.stats.paired`).
"""

from __future__ import annotations

import argparse
import json

import jax
import numpy as np

from benchmarks.tuning_tasks import TASK_SETS, _grid_pick
from jbandits.analysis import stats
from jbandits.tuning import Report, Search, Space, tune


def _seeds(text: str) -> list[int]:
    lo, _, hi = text.partition("-")
    return list(range(int(lo), int(hi or lo) + 1))


def run(task, reference, seeds, sims, eval_reps, points=10):
    """``[(ratio tune, se, ratio grid, se, (tune - grid) / ref, se)]`` per seed."""
    obj, space = task.objective(), Space(task.space)
    chunk = 2 * space.dim * 100
    reps_g = max(2, sims // points**space.dim)
    rows = []
    for seed in seeds:
        res = tune(
            obj, task.space, search=Search(simulations=sims),
            report=Report(confidence=0), key=seed,
        )  # fmt: skip
        grid = _grid_pick(
            obj, space, points, reps_g, jax.random.key(20_000 + seed), chunk
        )
        z = np.stack([space.to_z(t) for t in (reference, res.theta, grid)])
        per = obj.per_rep(
            obj.run(space.batch_from_z(z), jax.random.fold_in(jax.random.key(7), seed),
                    eval_reps, chunk=chunk)
        )  # fmt: skip
        ref = per[0].mean()
        st, sg = stats.paired(per[1], per[0]), stats.paired(per[2], per[0])
        d = stats.paired(per[1], per[2])
        rows.append(
            (per[1].mean() / ref, st.se / ref, per[2].mean() / ref, sg.se / ref,
             d.mean / ref, d.se / ref)
        )  # fmt: skip
        print(
            f"  seed {seed}: tune {rows[-1][0]:.3f} +- {rows[-1][1]:.3f}  grid "
            f"{rows[-1][2]:.3f} +- {rows[-1][3]:.3f}  (tune - grid)/ref "
            f"{rows[-1][4]:+.3f} +- {rows[-1][5]:.3f}",
            flush=True,
        )
    return rows


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("record")
    ap.add_argument("--only", default=None, help="name substrings separated by ;")
    ap.add_argument("--seeds", default="0-4")
    ap.add_argument("--sims", type=int, default=4000)
    ap.add_argument("--eval", type=int, default=4000)
    args = ap.parse_args(argv)
    with open(args.record) as f:
        record = json.load(f)
    for task in TASK_SETS["all"]():
        if task.name not in record or len(task.space) < 2:
            continue
        if args.only and not any(
            p.strip().lower() in task.name.lower() for p in args.only.split(";")
        ):
            continue
        print(task.name, flush=True)
        rows = np.asarray(
            run(task, record[task.name]["reference"], _seeds(args.seeds), args.sims,
                args.eval)
        )  # fmt: skip
        lr = stats.paired(np.log(rows[:, 0] / rows[:, 2]))
        print(
            f"  max tune {rows[:, 0].max():.3f}, grid {rows[:, 2].max():.3f}; mean "
            f"log(tune / grid) {lr.mean:+.4f} [{lr.lo:+.4f}, {lr.hi:+.4f}]; tune "
            f"behind grid > 2 SE: {int((rows[:, 4] > 2 * rows[:, 5]).sum())}/"
            f"{len(rows)}",
            flush=True,
        )


if __name__ == "__main__":
    main()
