"""``python -m experiments list`` / ``python -m experiments run NAME... [options]``.

Run ``python -m experiments run --help`` for the options. Exit status: 0 when every
experiment wrote its folder, 1 when some failed (e.g. missing MovieLens data; the
others still run), 2 on a usage error (unknown name, bad option value).
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import os
import pkgutil
import shutil
import sys
import time

# Expose every CPU core as a JAX host device before JAX starts, so that
# jbandits.simulate shards replications over the cores (DESIGN §1 "Engine").
if "XLA_FLAGS" not in os.environ:
    os.environ["XLA_FLAGS"] = f"--xla_force_host_platform_device_count={os.cpu_count()}"

import jax  # noqa: E402  (after XLA_FLAGS)

import experiments  # noqa: E402
from experiments import _core  # noqa: E402
from jbandits import runner  # noqa: E402

DATA_ENV = "JBANDITS_DATA"  # read by jbandits.envs.movielens.find_file
PROGRESS_ENV = "JBANDITS_PROGRESS"  # "0": the runner shows no progress bars
CACHE_ENV = "JBANDITS_COMPILE_CACHE"  # "0": no persistent compilation cache
OFF = ("0", "false", "no", "off")


def _load_all() -> None:
    for info in pkgutil.iter_modules(experiments.__path__):
        if not info.name.startswith("_"):
            importlib.import_module(f"experiments.{info.name}")


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected a positive integer, got {text!r}"
        ) from None
    if value < 1:
        raise argparse.ArgumentTypeError(
            f"must be a positive integer (>= 1), got {value}"
        )
    return value


def _existing_path(text: str) -> str:
    if not os.path.exists(text):
        raise argparse.ArgumentTypeError(f"no such file or directory: {text!r}")
    return os.path.abspath(text)


def compile_cache_dir() -> str:
    """``$XDG_CACHE_HOME/jbandits/jax`` (``~/.cache/jbandits/jax`` by default)."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(
        os.path.expanduser("~"), ".cache"
    )
    return os.path.join(base, "jbandits", "jax")


def enable_compile_cache(path: str | None = None) -> str:
    """Cache every compiled XLA program on disk so that a re-run skips compilation."""
    path = path or compile_cache_dir()
    jax.config.update("jax_compilation_cache_dir", path)
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0)
    jax.config.update("jax_persistent_cache_min_entry_size_bytes", -1)
    return path


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m experiments",
        description="Paper reproductions: run experiments and write their result "
        "folders (results.npz, meta.json, figure.png, table.md).",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser(
        "list",
        help="list experiments with a rough runtime estimate of the quick run",
        description="List the experiments: name, rough runtime ('?' = not "
        "estimated yet) and title.",
    )
    run = sub.add_parser(
        "run",
        help="run experiments by name ('all' for every one)",
        description="Run experiments; each writes OUT/NAME[-quick][-repsR][-seedS]/ "
        "once complete. Names are checked before anything runs. Exit status 1 if "
        "some experiment failed (the others still run), 2 on a usage error.",
    )
    run.add_argument(
        "names",
        nargs="+",
        metavar="NAME",
        help="experiment names (see 'python -m experiments list'), or 'all'",
    )
    run.add_argument(
        "--quick",
        action="store_true",
        help="small CI-sized version (fewer replications, shorter horizons); the "
        "folder name gets '-quick'",
    )
    run.add_argument(
        "--reps",
        type=_positive_int,
        default=None,
        metavar="R",
        help="number of replications (positive integer; default: the experiment's "
        "own, which depends on --quick); the folder name gets '-repsR'",
    )
    run.add_argument(
        "--seed",
        type=int,
        default=0,
        metavar="S",
        help="random seed of the run (default 0); a non-zero seed adds '-seedS' to "
        "the folder name",
    )
    run.add_argument(
        "--out",
        default="results",
        metavar="DIR",
        help="parent folder of the result folders (default: results)",
    )
    run.add_argument(
        "--data",
        type=_existing_path,
        default=None,
        metavar="PATH",
        help=f"MovieLens ratings file (ratings.dat / u.data) or a folder holding "
        f"one, for the MovieLens experiments (sets ${DATA_ENV}; default: "
        f"${DATA_ENV}, else shared/data/movielens beside the repository)",
    )
    run.add_argument(
        "--quiet",
        action="store_true",
        help=f"no progress bars (sets {PROGRESS_ENV}=0); the one-line start/finish "
        "messages are still printed",
    )
    run.add_argument(
        "--no-compile-cache",
        dest="compile_cache",
        action="store_false",
        help="do not use the persistent XLA compilation cache (default: on, in "
        f"$XDG_CACHE_HOME/jbandits/jax or ~/.cache/jbandits/jax; {CACHE_ENV}=0 "
        "turns it off too)",
    )
    run.add_argument(
        "--no-resume",
        dest="resume",
        action="store_false",
        help="do not keep finished chunks in OUT/.resume/NAME/ (default: kept while "
        "the experiment runs, so that running the same command again after an "
        "interruption recomputes only unfinished chunks, bit-identical; removed once "
        "the results are written; needs pyarrow: pip install 'jbandits[sweeps]')",
    )
    parser.run_parser = run  # for usage errors found after parsing (unknown names)
    return parser


def _names(parser: argparse.ArgumentParser, requested: list[str]) -> list[str]:
    """Expand 'all', drop duplicates, and reject unknown names before anything runs."""
    known = sorted(_core.EXPERIMENTS)
    names: list[str] = []
    for name in requested:
        for n in known if name == "all" else [name]:
            if n not in names:
                names.append(n)
    unknown = [n for n in names if n not in _core.EXPERIMENTS]
    if unknown:
        parser.error(
            f"unknown experiment(s): {', '.join(unknown)}. Known: {', '.join(known)} "
            "(or 'all')"
        )
    return names


# Wall seconds of each ``--quick`` run, measured on 2 CPU cores shared with other
# work (load ~15, so upper bounds; one run each, 2026-11-22, persistent compile cache
# cold except for the AugUCB experiments, which share their programs).
QUICK_SECONDS = {
    "augucb-ablation": 135, "augucb-expt1": 8, "augucb-expt2": 10,
    "augucb-expt3": 10, "augucb-expt4": 8, "augucb-expt5": 8, "augucb-expt6": 4,
    "eucbv-expt1": 72, "eucbv-expt2": 157, "eucbv-expt3": 105, "eucbv-expt4": 13,
    "lsa-fig1": 994, "shvar-fig2": 153, "shvar-fig2-parity": 55, "shvar-fig3": 182,
    "shvar-fig5": 272, "shvar-fig6": 212, "ugape-budget": 220, "ugape-confidence": 49,
}  # fmt: skip


def estimate(name: str, exp) -> str:
    """A rough runtime of the quick run (``exp.estimate`` if the experiment sets one)."""
    if exp.estimate:
        return exp.estimate
    sec = QUICK_SECONDS.get(name)
    if sec is None:
        return "?"
    return f"<{max(1, -(-sec // 60))} min quick"


def _list() -> None:
    rows = sorted(_core.EXPERIMENTS.items())
    width = max([len(n) for n, _ in rows] + [4])
    est = max([len(estimate(n, e)) for n, e in rows] + [7])
    print(f"{'name':{width}s}  {'runtime':{est}s}  title")
    for name, exp in rows:
        print(f"{name:{width}s}  {estimate(name, exp):{est}s}  {exp.title}")
    print(
        "(runtime: wall time of --quick measured on 2 CPU cores under load ~15, an "
        "upper bound; AugUCB runs with their programs in the compile cache; "
        "full-size runtimes are not measured yet)"
    )


def _has_pyarrow() -> bool:
    return importlib.util.find_spec("pyarrow") is not None


def _execute(cfg: _core.Config, resume: bool) -> str:
    """Run one experiment; with ``resume`` its finished chunks are kept in
    ``OUT/.resume/<folder name>/`` until the results are written."""
    if not resume:
        return _core.execute(cfg)
    partial = os.path.join(cfg.out, ".resume", os.path.basename(_core.output_dir(cfg)))
    if os.path.isdir(partial):
        print(f"[{cfg.name}] resuming from {partial}", file=sys.stderr)
    with runner.resumable(partial):
        out = _core.execute(cfg)
    shutil.rmtree(partial, ignore_errors=True)
    return out


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    _load_all()
    if args.command == "list":
        _list()
        return 0
    names = _names(parser.run_parser, args.names)

    if args.quiet:
        os.environ[PROGRESS_ENV] = "0"
    if args.data is not None:
        os.environ[DATA_ENV] = args.data
    if args.compile_cache and os.environ.get(CACHE_ENV, "1").lower() not in OFF:
        cache = enable_compile_cache()
        print(f"[experiments] compilation cache: {cache}", file=sys.stderr)

    resume = args.resume and _has_pyarrow()
    if args.resume and not resume:
        print(
            "[experiments] resume off (no pyarrow): pip install 'jbandits[sweeps]'",
            file=sys.stderr,
        )
    done, failed = [], []
    t0 = time.perf_counter()
    for name in names:
        cfg = _core.Config(
            name=name, quick=args.quick, reps=args.reps, seed=args.seed, out=args.out
        )
        if args.data is not None:
            cfg.extra["data"] = args.data
        try:
            done.append(_execute(cfg, resume))
            continue
        except FileNotFoundError as exc:
            # MovieLens loaders raise this (with download instructions) without data
            why = f"missing input data: {exc}"
        except SystemExit as exc:
            # an experiment that exits instead of raising (experiments.shvar_movielens
            # does so, with code 0, when the MovieLens data are missing; its message is
            # above)
            why = (
                f"the experiment stopped (SystemExit({exc.code!r})) without writing "
                "results; see its message above (missing MovieLens data?)"
            )
        failed.append((name, why))
        print(f"[{name}] FAILED: {why}", file=sys.stderr)

    total = time.perf_counter() - t0
    print(
        f"[experiments] {len(done)} of {len(names)} done in {total:.1f} s",
        file=sys.stderr,
    )
    if not failed:
        return 0
    lines = [f"error: {len(failed)} of {len(names)} experiment(s) failed:"]
    lines += [f"  {name}: {why}" for name, why in failed]
    lines.append(
        f"No folder was written for them. For MovieLens data pass --data PATH or set "
        f"{DATA_ENV} (download from https://grouplens.org/datasets/movielens/)."
    )
    print("\n".join(lines), file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
