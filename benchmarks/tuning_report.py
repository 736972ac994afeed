"""The statistical verdict of the tuning benchmark (issue 64, item 3), from the rows
of :mod:`benchmarks.tuning_tasks` (its ``--out`` records or a run in progress).

Per run (one seed of one task), against the fine grid's reference on the same
evaluation replications:

* **hit**: the ratio is not above ``1.02`` by more than 2 paired SE of the
  evaluation, ``ratio - 2 se <= 1.02`` (issue 53's rule);
* **behind the grid**: ``(loss - grid's loss) / reference > 2`` paired SE of that
  difference (with a zero SE: any excess), counted for ``tune`` and for the grid's
  own rerun on other replication keys (``grid-b``), which says how often a pick is
  behind the grid by noise alone.

Per task over its seeds: the hit count and its rate's 95 % Wilson interval (lower
end), the worst ratio and the runs above 1.25, the two ``behind`` counts and the
paired mean of ``log(tune / grid)`` (both ratios share the reference and the
replications, so this is log(tune's loss / grid's loss)) with its 95 % CI; over all
tasks the pooled hit rate with its Wilson lower end. Intervals:
:mod:`jbandits.analysis.stats`.
"""

from __future__ import annotations

import math

import numpy as np

from jbandits.analysis import stats

TOL, Z = 1.02, 2.0  # a hit: ratio - Z se <= TOL
WORST = 1.25  # no run above this ratio
LOG_UPPER = 0.02  # per task: the upper 95 % bound of mean log(tune / grid)


def run_hits(ratios, ses, tol: float = TOL, z: float = Z) -> np.ndarray:
    """``[S]`` bools: the runs whose ratio is not above ``tol`` by more than ``z``
    paired SE (``ratio - z se <= tol``)."""
    r, se = np.asarray(ratios, np.float64), np.asarray(ses, np.float64)
    if r.shape != se.shape:
        raise ValueError(f"ratios {r.shape} and SEs {se.shape} differ in shape")
    return r - z * se <= tol


def hit_rate(hits) -> tuple[int, int, float, float]:
    """``(hits, runs, rate, 95 % Wilson lower end)`` of 0/1 outcomes."""
    h = np.asarray(hits, np.float64).reshape(-1)
    if not h.size:
        return 0, 0, math.nan, math.nan
    rate, lo, _ = stats.wilson_ci(h)
    return int(h.sum()), int(h.size), float(rate), float(lo)


def behind(diffs, ses, z: float = Z) -> int:
    """Runs whose paired difference to the grid exceeds ``z`` SE (a zero SE: any
    positive difference; :func:`jbandits.analysis.stats.z_score`)."""
    return int((np.atleast_1d(stats.z_score(diffs, ses)) > z).sum())


def log_ratio(a, b) -> stats.Paired:
    """The paired mean of ``log(a / b)`` over runs, with its 95 % CI."""
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    if a.shape != b.shape or a.size < 2:
        raise ValueError(f"need two or more paired runs, got {a.shape} and {b.shape}")
    return stats.paired(np.log(a / b))


def task_verdict(rows: dict, method: str = "tune") -> dict:
    """The verdict of ``method`` on one task from ``{method name: row}`` (a row:
    ``ratios``, ``se`` and, where the grid ran beside it, ``vs_grid``: ``[[diff,
    se]]`` per seed): hits, their Wilson lower end, the worst ratio, runs above
    :data:`WORST`, ``behind`` for the method and for ``grid-b`` (None where not
    recorded), the log-ratio to the grid (None without a grid row) and ``ok``
    for the per-task rules (log-ratio upper bound <= :data:`LOG_UPPER`, no run above
    :data:`WORST`)."""
    row = rows[method]
    r = np.asarray(row["ratios"], np.float64)
    h, n, rate, lo = hit_rate(run_hits(r, row["se"]))
    out = {
        "hits": h, "runs": n, "rate": rate, "rate_lo": lo, "worst": float(r.max()),
        "above": int((r > WORST).sum()), "behind": None, "behind_rerun": None,
        "log": None,
    }  # fmt: skip
    for key, name in (("behind", method), ("behind_rerun", "grid-b")):
        vg = rows.get(name, {}).get("vs_grid")
        if vg:
            d, se = np.asarray(vg, np.float64).T
            out[key] = behind(d, se)
    if "grid" in rows and n >= 2:
        out["log"] = log_ratio(r, rows["grid"]["ratios"])
    upper_ok = out["log"] is None or out["log"].hi <= LOG_UPPER
    out["ok"] = bool(upper_ok and out["above"] == 0)
    return out


def pooled(verdicts: list[dict]) -> tuple[int, int, float, float]:
    """The hit rate over every run of every task, with its Wilson lower end."""
    outcomes = [1] * sum(v["hits"] for v in verdicts)
    outcomes += [0] * sum(v["runs"] - v["hits"] for v in verdicts)
    return hit_rate(outcomes)


def _count(v, key) -> str:
    return "-" if v[key] is None else f"{v[key]}/{v['runs']}"


def print_report(records: dict, frac: float, method: str = "tune") -> list:
    """Print the verdict of ``method`` per task of ``records`` (``{task: record}``
    of :mod:`benchmarks.tuning_tasks`) at budget fraction ``frac``, then the
    pooled hit rate; returns the per-task verdicts."""
    print(
        f"\nstatistical verdict ({method}; hit: ratio - 2 SE <= {TOL}; behind: > 2 "
        f"paired SE behind the grid; log: mean log({method} / grid), 95 % CI)"
    )
    print(
        f"{'task':50s} {'hits':>6s} {'rate lo':>7s} {'worst':>6s} {'>1.25':>5s} "
        f"{'behind':>7s} {'grid-b':>7s}  {'log(tune / grid) [95 % CI]':28s} ok"
    )
    out = []
    for name, rec in records.items():
        rows = {r["method"]: r for r in rec["rows"] if r["fraction"] == frac}
        if method not in rows or rows[method].get("se") is None:
            continue
        v = task_verdict(rows, method)
        out.append(v)
        lg = v["log"]
        text = "-" if lg is None else f"{lg.mean:+.4f} [{lg.lo:+.4f}, {lg.hi:+.4f}]"
        print(
            f"{name[:50]:50s} {v['hits']:3d}/{v['runs']:<2d} {v['rate_lo']:7.3f} "
            f"{v['worst']:6.3f} {v['above']:5d} {_count(v, 'behind'):>7s} "
            f"{_count(v, 'behind_rerun'):>7s}  {text:28s} "
            f"{'yes' if v['ok'] else 'NO'}",
            flush=True,
        )
    if out:
        h, n, rate, lo = pooled(out)
        print(f"pooled: {h}/{n} hits, rate {rate:.3f}, 95 % Wilson lower end {lo:.3f}")
    return out


def main(argv=None) -> None:
    """``python -m benchmarks.tuning_report FILE...``: the verdict of the records
    (merged by task, :func:`benchmarks.tuning_verdict.merge`) at their largest
    budget fraction; no simulation (``behind`` needs records with ``vs_grid``)."""
    import argparse

    from benchmarks.tuning_verdict import merge

    ap = argparse.ArgumentParser(description=main.__doc__.splitlines()[0])
    ap.add_argument("files", nargs="+")
    ap.add_argument("--method", default="tune")
    args = ap.parse_args(argv)
    records = merge(args.files)
    frac = max(r["fraction"] for rec in records.values() for r in rec["rows"])
    print_report(records, frac, args.method)


if __name__ == "__main__":
    main()
