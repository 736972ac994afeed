"""``python -m experiments list`` / ``python -m experiments run NAME... [options]``.

Run ``python -m experiments run --help`` for the options. Exit status: 0 when every
experiment wrote its folder, 1 when some failed (e.g. missing MovieLens data; the
others still run), 2 on a usage error (unknown name, bad option value).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import importlib.util
import os
import pkgutil
import shutil
import signal
import sys
import time

# Expose every CPU core as a JAX host device before JAX starts, so that
# jbandits.simulate shards replications over the cores (DESIGN §1 "Engine").
if "XLA_FLAGS" not in os.environ:
    os.environ["XLA_FLAGS"] = f"--xla_force_host_platform_device_count={os.cpu_count()}"

from jbandits.cli import interrupt as _interrupt  # noqa: E402  (standard library only)

if __name__ == "__main__":  # Ctrl-C during the imports below: one line, status 130
    _interrupt.install("experiments")


import experiments  # noqa: E402
from experiments import _core  # noqa: E402
from experiments._cli import (  # noqa: E402, F401  (re-exported)
    CACHE_ENV,
    DATA_ENV,
    OFF,
    PROGRESS_ENV,
    build_parser,
    compile_cache_dir,
    enable_compile_cache,
)
from jbandits.sim import runner  # noqa: E402


def _load_all() -> None:
    for info in pkgutil.iter_modules(experiments.__path__):
        if not info.name.startswith("_"):
            importlib.import_module(f"experiments.{info.name}")


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


# Wall seconds of each ``--quick`` run (meta.json), measured on 2026-12-02 in one
# process running docs/gallery-quick.txt (lsa-fig1 first), persistent compile cache
# cold at the start, on 2 CPU cores shared with other work (load 8-12): 17.1 min for
# the 19. Those in REUSED ran after an experiment that had compiled their programs
# (alone with a cold cache augucb-expt6 took 54 s).
QUICK_SECONDS = {
    "augucb-ablation": 116, "augucb-expt1": 2, "augucb-expt2": 2,
    "augucb-expt3": 2, "augucb-expt4": 2, "augucb-expt5": 2, "augucb-expt6": 1,
    "eucbv-expt1": 121, "eucbv-expt2": 98, "eucbv-expt3": 62, "eucbv-expt4": 0.3,
    "lsa-fig1": 134, "shvar-fig2": 66, "shvar-fig2-parity": 15, "shvar-fig3": 68,
    "shvar-fig5": 80, "shvar-fig6": 111, "ugape-budget": 100, "ugape-confidence": 30,
}  # fmt: skip
REUSED = {f"augucb-expt{i}" for i in range(1, 7)} | {"eucbv-expt4"}


def estimate(name: str, exp) -> str:
    """The measured wall time of the quick run (``exp.estimate`` if the experiment
    sets one); ``*``: measured with its programs already compiled."""
    if exp.estimate:
        return exp.estimate
    sec = QUICK_SECONDS.get(name)
    if sec is None:
        return "?"
    text = f"{sec:.0f} s quick" if sec >= 1 else "<1 s quick"
    return text + ("*" if name in REUSED else "")


def _list() -> None:
    rows = sorted(_core.EXPERIMENTS.items())
    width = max([len(n) for n, _ in rows] + [4])
    est = max([len(estimate(n, e)) for n, e in rows] + [7])
    print(f"{'name':{width}s}  {'runtime':{est}s}  title")
    for name, exp in rows:
        print(f"{name:{width}s}  {estimate(name, exp):{est}s}  {exp.title}")
    print(
        "(runtime: wall time of --quick measured on 2 shared CPU cores at load 8-12, "
        "all quick runs in one process with a cold compile cache; * = its programs "
        "were compiled by an experiment before it: alone and cold about a minute; "
        'full-size wall and CPU times: experiments/REPORT.md, "Full-size runs")'
    )


def _has_pyarrow() -> bool:
    return importlib.util.find_spec("pyarrow") is not None


class UsageError(Exception):
    """A bad input found while running (one line, exit status 2)."""


def _out_folder(parser: argparse.ArgumentParser, out: str) -> None:
    """Create ``--out`` before anything runs, or a one-line usage error naming it."""
    if not out:
        parser.error("argument --out: expected a folder, got ''")
    if os.path.exists(out) and not os.path.isdir(out):
        parser.error(
            f"argument --out: {out!r} is a file, not a folder; give a folder (created "
            "if missing)"
        )
    try:
        os.makedirs(out, exist_ok=True)
    except OSError as exc:
        parser.error(f"argument --out: cannot create the folder {out!r}: {exc}")
    if not os.access(out, os.W_OK | os.X_OK):
        parser.error(f"argument --out: the folder {out!r} is not writable")


def _execute(cfg: _core.Config, resume: bool) -> str:
    """Run one experiment; with ``resume`` its finished chunks are kept in
    ``OUT/.resume/<folder name>/`` until the results are written."""
    if not resume:
        return _core.execute(cfg)
    partial = os.path.join(cfg.out, ".resume", os.path.basename(_core.output_dir(cfg)))
    for path in (os.path.dirname(partial), partial):
        if os.path.exists(path) and not os.path.isdir(path):
            raise UsageError(
                f"argument --out: {path} (where {cfg.name} keeps its finished chunks) "
                "is a file, not a folder; delete it, or use another --out, or "
                "--no-resume"
            )
    if os.path.isdir(partial):
        print(f"[{cfg.name}] resuming from {partial}", file=sys.stderr)
    try:
        with runner.resumable(partial):
            out = _core.execute(cfg)
    except ValueError as exc:
        if partial not in str(exc):
            raise
        # a results store in the resume folder that holds other work
        raise UsageError(
            f"argument --out: {exc} (under the resume folder {partial}); delete that "
            "folder, or use another --out, or --no-resume"
        ) from None
    shutil.rmtree(partial, ignore_errors=True)
    with contextlib.suppress(OSError):  # the parent too, once no other run uses it
        os.rmdir(os.path.dirname(partial))
    return out


def main(argv=None) -> int:
    """The command line; Ctrl-C at any point is one line and status 130: before the
    run (the imports, the experiments' modules), and inside it (finished chunks
    kept)."""
    previous = _interrupt.install("experiments")
    try:
        return _main(argv, run_handler=previous is not None)
    finally:
        if previous is not None:
            signal.signal(signal.SIGINT, previous)


def _main(argv, run_handler: bool) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    _load_all()
    if args.command == "list":
        _list()
        return 0
    names = _names(parser.run_parser, args.names)
    _out_folder(parser.run_parser, args.out)

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
    t0 = time.perf_counter()
    if run_handler:  # the run's own: KeyboardInterrupt, caught below
        signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        done, failed = _run_all(args, names, resume)
    except UsageError as exc:
        print(f"{parser.run_parser.prog}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        kept = f"; finished chunks are kept in {os.path.join(args.out, '.resume')}"
        print(
            "[experiments] interrupted (Ctrl-C): no result folder was written for the "
            "unfinished experiment"
            + (kept + ", run the same command to resume" if resume else ""),
            file=sys.stderr,
        )
        return 130
    total = time.perf_counter() - t0
    print(
        f"[experiments] {len(done)} of {len(names)} done in {total:.1f} s",
        file=sys.stderr,
    )
    if not failed:
        return 0
    lines = [f"error: {len(failed)} of {len(names)} experiment(s) failed:"]
    lines += [f"  {name}: {why}" for name, why in failed]
    lines.append("No folder was written for them.")
    if any(why.startswith(("missing input", "the experiment")) for _, why in failed):
        lines[-1] += (
            f" For MovieLens data pass --data PATH or set {DATA_ENV} (download from "
            "https://grouplens.org/datasets/movielens/)."
        )
    print("\n".join(lines), file=sys.stderr)
    return 1


def _run_all(args, names: list[str], resume: bool) -> tuple[list, list]:
    """Run the experiments in turn: (folders written, [(name, why failed)])."""
    done, failed = [], []
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
        except MemoryError as exc:  # the runner's estimate, before it allocates
            why = f"not enough memory: {exc}" if str(exc) else "out of memory"
        except ValueError as exc:
            if args.data is None or args.data not in str(exc):
                raise
            # the MovieLens loaders name the file they cannot parse
            why = f"bad input data (--data {args.data}): {exc}"
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
    return done, failed


if __name__ == "__main__":
    sys.exit(main())
