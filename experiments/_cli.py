"""The argument parser of ``python -m experiments`` (:mod:`experiments.__main__`,
which sets ``XLA_FLAGS`` before this module imports JAX) and the compilation-cache
helpers it shares with ``jbandits sweep`` (:mod:`jbandits.sim.compile_cache`)."""

from __future__ import annotations

import argparse
import os

from experiments import _core
from jbandits.sim.compile_cache import (  # noqa: F401  (re-exported)
    CACHE_ENV,
    OFF,
    compile_cache_dir,
    enable_compile_cache,
)

DATA_ENV = "JBANDITS_DATA"  # read by jbandits.envs.movielens.find_file
PROGRESS_ENV = "JBANDITS_PROGRESS"  # "0": the runner shows no progress bars


def _integer(text: str, what: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}") from None


def _positive_int(text: str) -> int:
    value = _integer(text, "an integer >= 1")
    try:
        return _core.check_reps(value)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _seed(text: str) -> int:
    value = _integer(text, f"an integer in [0, {_core.SEED_LIMIT - 1}]")
    try:
        return _core.check_seed(value)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _existing_path(text: str) -> str:
    if not os.path.exists(text):
        raise argparse.ArgumentTypeError(f"no such file or directory: {text!r}")
    return os.path.abspath(text)


class Parser(argparse.ArgumentParser):
    """An argument parser whose usage errors are one line on stderr (exit code 2)."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
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
        type=_seed,
        default=0,
        metavar="S",
        help=f"random seed of the run, an integer in [0, {_core.SEED_LIMIT - 1}] "
        "(default 0); a non-zero seed adds '-seedS' to the folder name",
    )
    run.add_argument(
        "--out",
        default="results",
        metavar="DIR",
        help="parent folder of the result folders, created if missing (default: "
        "results)",
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
