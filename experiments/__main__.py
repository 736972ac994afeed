"""``python -m experiments run NAME [--quick] [--reps R] [--out DIR] [--seed S]``."""

from __future__ import annotations

import argparse
import importlib
import os
import pkgutil

# Expose every CPU core as a JAX host device before JAX starts, so that
# jbandits.simulate shards replications over the cores (DESIGN §1 "Engine").
if "XLA_FLAGS" not in os.environ:
    os.environ["XLA_FLAGS"] = f"--xla_force_host_platform_device_count={os.cpu_count()}"

import experiments
from experiments import _core


def _load_all() -> None:
    for info in pkgutil.iter_modules(experiments.__path__):
        if not info.name.startswith("_"):
            importlib.import_module(f"experiments.{info.name}")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(prog="python -m experiments")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("list", help="list experiments")
    run = sub.add_parser("run", help="run experiments by name ('all' for every one)")
    run.add_argument("names", nargs="+")
    run.add_argument("--quick", action="store_true", help="small CI-sized version")
    run.add_argument("--reps", type=int, default=None, help="replications (override)")
    run.add_argument("--seed", type=int, default=0)
    run.add_argument("--out", default="results")
    args = parser.parse_args(argv)
    _load_all()
    if args.command == "list":
        for name, exp in sorted(_core.EXPERIMENTS.items()):
            print(f"{name:28s} {exp.title}")
        return
    names = sorted(_core.EXPERIMENTS) if args.names == ["all"] else args.names
    for name in names:
        _core.execute(
            _core.Config(
                name=name,
                quick=args.quick,
                reps=args.reps,
                seed=args.seed,
                out=args.out,
            )
        )


if __name__ == "__main__":
    main()
