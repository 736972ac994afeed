"""``jbandits sweep CONFIG.toml``: a declarative sweep -> resumable store + figure.

A config file names the policies with their hyper-parameter grids, the instances (an
instance generator over a list of K, or explicit means), the budgets, replications
and the metric; see ``examples/sweep.toml``::

    name = "apt-vs-lsa"
    bandit = "bernoulli"          # or "gaussian" (then give `std`)
    seed = 0
    reps = 200
    budgets = [100, 1000, 10000]
    checkpoints = 1
    metric = { kind = "thresholding", threshold = 0.5 }

    [instances]
    K = [2, 10, 100]
    generator = "uniform"         # means ~ U(low, high) per K (seeded), or "linear"
    low = 0.1
    high = 0.9

    [[policies]]
    name = "apt"
    threshold = 0.5
    epsilon = [0.0, 0.05, 0.1]    # a list is a grid axis

The run writes ``OUT/NAME/`` : the store (``manifest.json``, ``cells.parquet``,
``g*/part-*.parquet``), ``summary.csv`` (mean and 95% CI per cell and checkpoint) and
``figure.png`` (final metric against budget, one panel per K). Started again with the
same config, it recomputes nothing that finished.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

try:  # Python >= 3.11
    import tomllib
except ModuleNotFoundError:  # pragma: no cover
    import tomli as tomllib

METRICS = ("thresholding", "identification", "top_m", "regret")


def _instances(cfg: dict, bandit: str):
    import jbandits

    inst = cfg.get("instances")
    if not isinstance(inst, dict):
        raise SystemExit("config: [instances] table is missing")
    rng = np.random.default_rng(int(inst.get("seed", 0)))
    if "means" in inst:
        all_means = [np.asarray(m, float) for m in inst["means"]]
    else:
        ks = inst.get("K")
        if not isinstance(ks, list) or not all(
            isinstance(k, int) and k >= 2 for k in ks
        ):
            raise SystemExit("config: instances.K must be a list of integers >= 2")
        low, high = float(inst.get("low", 0.1)), float(inst.get("high", 0.9))
        gen = inst.get("generator", "uniform")
        if gen == "uniform":
            all_means = [rng.uniform(low, high, k) for k in ks]
        elif gen == "linear":
            all_means = [np.linspace(low, high, k) for k in ks]
        else:
            raise SystemExit(f"config: unknown generator {gen!r} (uniform, linear)")
    out = []
    for means in all_means:
        if bandit == "bernoulli":
            out.append(jbandits.envs.bernoulli(means)[1])
        else:
            std = float(inst.get("std", 1.0))
            out.append(jbandits.envs.gaussian(means, np.full(means.shape, std))[1])
    return out


def _metric(cfg: dict):
    from jbandits import metrics

    spec = dict(cfg.get("metric", {"kind": "regret"}))
    kind = spec.pop("kind", None)
    if kind not in METRICS:
        raise SystemExit(f"config: metric.kind must be one of {METRICS}, got {kind!r}")
    if kind == "regret":
        return None, "regret"
    return getattr(metrics, kind)(**spec), "error"


def load(path: str) -> dict:
    """Read and check a sweep config (TOML)."""
    with open(path, "rb") as f:
        cfg = tomllib.load(f)
    for field in ("name", "budgets", "reps", "policies"):
        if field not in cfg:
            raise SystemExit(f"config {path}: missing {field!r}")
    if cfg.get("bandit", "bernoulli") not in ("bernoulli", "gaussian"):
        raise SystemExit("config: bandit must be 'bernoulli' or 'gaussian'")
    return cfg


def run_sweep(cfg: dict, out: str, *, reps: int | None = None, progress=None):
    """Run a loaded config; returns the :class:`jbandits.SweepResult` and its folder."""
    import jax

    import jbandits
    from jbandits.plotting import plot_panels

    bandit_name = cfg.get("bandit", "bernoulli")
    bandit = (
        jbandits.envs.BERNOULLI
        if bandit_name == "bernoulli"
        else jbandits.envs.GAUSSIAN
    )
    metric, headline = _metric(cfg)
    policies = []
    for entry in cfg["policies"]:
        entry = dict(entry)
        name = entry.pop("name", None)
        if name not in jbandits.names():
            raise SystemExit(
                f"config: unknown policy {name!r}; known: {jbandits.names()}"
            )
        policies.append((name, entry))
    folder = os.path.join(out, cfg["name"])
    t0 = time.perf_counter()
    res = jbandits.sweep_grid(
        policies,
        bandit,
        _instances(cfg, bandit_name),
        jax.random.key(int(cfg.get("seed", 0))),
        budgets=cfg["budgets"],
        num_reps=int(reps if reps is not None else cfg["reps"]),
        num_checkpoints=int(cfg.get("checkpoints", 1)),
        metric=metric,
        store=folder,
        progress=progress,
    )
    table = res.summary()
    table.to_csv(os.path.join(folder, "summary.csv"), index=False)
    last = table[table["checkpoint"] == table["checkpoint"].max()]
    hp_cols = [
        c
        for c in last.columns
        if c
        not in {"policy", "K", "instance", "budget", "horizon", "checkpoint", "time"}
        and not c.endswith(("_lo", "_hi"))
        and c
        not in {
            "error",
            "regret",
            "reward",
            "num_pulls",
            "stopped",
            "misclassified",
            "simple_regret",
        }
    ]
    panels = []
    for k, by_k in last.groupby("K"):
        curves = {}
        for keys, rows in by_k.groupby(["policy", *hp_cols], dropna=False):
            keys = keys if isinstance(keys, tuple) else (keys,)
            label = keys[0] + "".join(
                f" {c}={v:g}"
                for c, v in zip(hp_cols, keys[1:], strict=True)
                if isinstance(v, float) and not np.isnan(v)
            )
            rows = rows.sort_values("budget")
            curves[label] = {
                "x": rows["budget"].to_numpy(),
                "mean": rows[headline].to_numpy(),
                "lo": rows[headline + "_lo"].to_numpy(),
                "hi": rows[headline + "_hi"].to_numpy(),
            }
        panels.append(
            {
                "title": f"K = {k}",
                "xlabel": "budget",
                "ylabel": headline,
                "curves": curves,
                "logx": True,
            }
        )
    plot_panels(panels, os.path.join(folder, "figure.png"), suptitle=cfg["name"])
    seconds = time.perf_counter() - t0
    print(
        f"[{cfg['name']}] {len(res.cells)} cells x {res.values['times'].shape[1]} reps "
        f"in {seconds:.1f} s (no-op lane-steps {100 * res.report.noop_fraction:.1f}%, "
        f"{res.report.chunks_skipped} chunks resumed); wrote {folder}/summary.csv, "
        f"figure.png",
        file=sys.stderr,
    )
    return res, folder


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="jbandits", description=__doc__.split("\n")[0]
    )
    sub = parser.add_subparsers(dest="command", required=True)
    sw = sub.add_parser("sweep", help="run a sweep described in a TOML config file")
    sw.add_argument("config", help="path of the sweep config (TOML)")
    sw.add_argument("--out", default="results", help="parent folder of the results")
    sw.add_argument("--reps", type=int, default=None, help="override the config's reps")
    sw.add_argument("--quiet", action="store_true", help="no progress bars")
    sub.add_parser("list", help="list the registered policies")
    args = parser.parse_args(argv)
    if args.command == "list":
        import jbandits

        print("\n".join(jbandits.names()))
        return 0
    if args.reps is not None and args.reps < 1:
        parser.error("--reps must be >= 1")
    cfg = load(args.config)
    run_sweep(cfg, args.out, reps=args.reps, progress=False if args.quiet else None)
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
