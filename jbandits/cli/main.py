"""``jbandits sweep CONFIG.toml``: a declarative sweep -> resumable store + figure.

A config file names the policies with their hyper-parameter grids, the instances (an
instance generator over a list of K, or explicit means), the budgets, replications
and the metric; see ``examples/sweep.toml``::

    name = "apt-vs-lsa"
    bandit = "bernoulli"          # a family's name; "gaussian" takes `std`
    imports = ["my_family.py"]    # optional: modules that register families/policies
    seed = 0
    reps = 200
    budgets = [100, 1000, 10000]
    checkpoints = 1
    metric = { kind = "thresholding", threshold = 0.5 }
    check_model = true            # optional: false runs a fixed-confidence policy on
                                  # rewards its reward model does not fit

    [instances]
    K = [2, 10, 100]
    generator = "uniform"         # means ~ U(low, high) per K (seeded), or "linear"
    low = 0.1
    high = 0.9

    [[policies]]
    name = "apt"
    threshold = 0.5
    epsilon = [0.0, 0.05, 0.1]    # a list is a grid axis

``bandit`` names a registered reward family (:func:`jbandits.envs.family_names`:
"bernoulli", "gaussian", or one of your own registered with
:func:`jbandits.envs.register_family` in a module that ``imports`` lists: a module
name, or a ``.py`` file relative to the config's folder).

The file is checked against :data:`jbandits.cli.config.SCHEMA` before anything runs: an unknown key (a
typo) or a value of the wrong type is a one-line error (exit status 2) that names it.

The run writes ``OUT/NAME/`` : the store (``manifest.json``, ``cells.parquet``,
``g*/part-*.parquet``), ``summary.csv`` (mean and 95% CI per cell and checkpoint) and
``figure.png`` (final metric against budget, one panel per K, one curve per policy and
hyper-parameter point). Started again with the same config, it recomputes nothing
that finished; compiled programs are kept in a persistent cache (see
``--no-compile-cache``). Ctrl-C stops the run between two writes (exit status 130).
"""

from __future__ import annotations

import argparse
import contextlib
import math
import os
import signal
import sys
import threading
import time

from jbandits.cli.interrupt import install as _install_interrupt  # noqa: E402

if __name__ == "__main__":  # python -m jbandits.cli.main: from the imports on
    _install_interrupt()

import numpy as np  # noqa: E402

from jbandits.cli.config import (  # noqa: E402, F401  (the schema, re-exported)
    LABELS,
    METRICS,
    SCHEMA,
    ConfigError,
    ImportInterrupted,
    Name,
    check,
    load,
)
from jbandits.sim import compile_cache as _compile_cache  # noqa: E402


# --------------------------------------------------------------------------- run
def _instances(cfg: dict, bandit: str) -> list[tuple]:
    """``(bandit, params)`` of each instance of the config, family ``bandit``."""
    from jbandits.envs import families

    inst = cfg["instances"]
    rng = np.random.default_rng(inst.get("seed", 0))
    if "means" in inst:
        all_means = [np.asarray(m, float) for m in inst["means"]]
    else:
        low, high = float(inst.get("low", 0.1)), float(inst.get("high", 0.9))
        if inst.get("generator", "uniform") == "uniform":
            all_means = [rng.uniform(low, high, k) for k in inst["K"]]
        else:
            all_means = [np.linspace(low, high, k) for k in inst["K"]]
    options = {"std": float(inst["std"])} if "std" in inst else {}
    out = []
    for i, means in enumerate(all_means):
        try:
            out.append(families.make_family(bandit, means, **options))
        except ValueError as err:
            where = f"means[{i}]" if "means" in inst else f"K = {len(means)}"
            raise ConfigError(f"instances ({where}): {err}") from None
    return out


def _metric(cfg: dict):
    from jbandits.analysis import metrics

    spec = dict(cfg.get("metric", {"kind": "regret"}))
    kind = spec.pop("kind")
    if kind == "regret":
        return None, "regret"
    try:
        return getattr(metrics, kind)(**spec), "error"
    except ValueError as err:
        raise ConfigError(f"metric: {err}") from None


def _fmt(value) -> str:
    """A hyper-parameter value in a curve label (distinct values, distinct text)."""
    if isinstance(value, (bool, np.bool_, str)):
        return str(value)
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    value = float(value)
    short = format(value, "g")
    return short if float(short) == value else repr(value)


def _is_null(value) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def panels(res, table, headline: str) -> list[dict]:
    """Figure panels of a sweep: the ``headline`` value at the last checkpoint against
    the budget, one panel per K (per instance when several share a K), one curve per
    policy and hyper-parameter point (labelled with every hyper-parameter it has)."""
    hp_cols = list(dict.fromkeys(k for c in res.cells for k in c if k not in LABELS))
    last = table[table["checkpoint"] == table["checkpoint"].max()].copy()
    last["_label"] = [
        " ".join(
            [row["policy"]]
            + [f"{c}={_fmt(row[c])}" for c in hp_cols if not _is_null(row[c])]
        )
        for _, row in last.iterrows()
    ]
    per_k = last.groupby("K")["instance"].nunique()
    out = []
    for (k, n), rows in last.groupby(["K", "instance"]):
        curves = {}
        for label, curve in rows.groupby("_label", sort=False):
            curve = curve.sort_values("budget")
            curves[label] = {
                "x": curve["budget"].to_numpy(),
                "mean": curve[headline].to_numpy(),
                "lo": curve[headline + "_lo"].to_numpy(),
                "hi": curve[headline + "_hi"].to_numpy(),
            }
        title = f"K = {k}" if per_k[k] == 1 else f"K = {k}, instance {n}"
        out.append(
            {
                "title": title,
                "xlabel": "budget",
                "ylabel": headline,
                "curves": curves,
                "logx": True,
            }
        )
    return out


def run_sweep(cfg: dict, out: str, *, reps: int | None = None, progress=None):
    """Run a config (checked with :func:`check`); returns the
    :class:`jbandits.SweepResult` and its folder ``out/name``."""
    import jax

    import jbandits

    check(cfg)
    instances = _instances(cfg, cfg.get("bandit", "bernoulli"))
    metric, headline = _metric(cfg)
    folder = result_folder(out, cfg["name"])
    t0 = time.perf_counter()
    res = jbandits.sweep_grid(
        [
            (e["name"], {k: v for k, v in e.items() if k != "name"})
            for e in cfg["policies"]
        ],
        instances[0][0],  # the family's Bandit
        [params for _, params in instances],
        jax.random.key(cfg.get("seed", 0)),
        budgets=cfg["budgets"],
        num_reps=reps if reps is not None else cfg["reps"],
        num_checkpoints=cfg.get("checkpoints", 1),
        metric=metric,
        store=folder,
        progress=progress,
        check_model=cfg.get("check_model", True),
    )
    _write_outputs(res, folder, cfg["name"], headline)
    seconds = time.perf_counter() - t0
    print(
        f"[{cfg['name']}] {len(res.cells)} cells x {res.values['times'].shape[1]} reps "
        f"in {seconds:.1f} s (no-op lane-steps {100 * res.report.noop_fraction:.1f}%, "
        f"{res.report.chunks_skipped} chunks resumed); wrote {folder}/summary.csv, "
        f"figure.png",
        file=sys.stderr,
    )
    return res, folder


def _write_outputs(res, folder: str, name: str, headline: str) -> None:
    """``summary.csv`` and ``figure.png`` of a finished sweep, each written
    atomically (a reader never sees half a file)."""
    from jbandits.analysis import plotting, store

    table = res.summary()
    store.write_atomic(
        os.path.join(folder, "summary.csv"),
        lambda tmp: table.to_csv(tmp, index=False),
    )
    store.write_atomic(
        os.path.join(folder, "figure.png"),
        lambda tmp: plotting.plot_panels(
            panels(res, table, headline), tmp, suptitle=name, format="png"
        ),
    )


def result_folder(out: str, name: str) -> str:
    """``out/name``, checked: ConfigError if ``out`` or it is a file, if it is a
    symbolic link, or if it is a folder with files that is not a results store (no
    ``manifest.json``): the sweep writes only into a new or empty folder or into a
    store, which it resumes if it holds the same work (else it is refused)."""
    Name().check(name, "name")
    folder = os.path.join(out, name)
    for path, what in ((out, "--out"), (folder, "the sweep's folder")):
        if os.path.exists(path) and not os.path.isdir(path):
            raise ConfigError(f"{what} {path!r} is a file, not a folder")
    way = "pass another --out or change `name`"
    if os.path.islink(folder):
        raise ConfigError(
            f"the sweep's folder {folder!r} is a symbolic link: the sweep writes only "
            f"into a folder of its own; {way}"
        )
    if os.path.isdir(folder) and os.listdir(folder) and not _is_store(folder):
        raise ConfigError(
            f"the sweep's folder {folder!r} exists and is not a results store (no "
            f"manifest.json of a store): its files would be overwritten; {way}, or "
            "move that folder away"
        )
    return folder


def _is_store(folder: str) -> bool:
    """Whether ``folder`` has a manifest.json that a results store wrote (a JSON
    object with a fingerprint; whether the rest is whole is the store's check)."""
    import json

    path = os.path.join(folder, "manifest.json")
    if os.path.islink(path) or not os.path.isfile(path):
        return False
    try:
        with open(path, "rb") as f:
            manifest = json.loads(f.read().decode("utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return False
    return isinstance(manifest, dict) and "fingerprint" in manifest


# -------------------------------------------------------------------------- main
def _error(message) -> int:
    text = " ".join(str(message).split("\n"))
    print(f"jbandits sweep: error: {text}", file=sys.stderr)
    return 2


@contextlib.contextmanager
def _stop_on_interrupt(folder: str):
    """Ctrl-C ends the process at once with exit status 130, one line on stderr and
    no exception unwinding through JAX (a KeyboardInterrupt raised inside XLA
    compilation could crash the interpreter): a chunk or manifest write in progress
    finishes first (:func:`jbandits.analysis.store.when_idle`), so the store holds only whole
    chunks and the run resumes from them."""
    from jbandits.analysis import store

    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop():
        sys.stdout.flush()
        sys.stderr.write(
            f"\njbandits sweep: interrupted; finished chunks are kept in {folder} "
            "(run the same command again to resume)\n"
        )
        sys.stderr.flush()
        os._exit(130)

    previous = signal.signal(signal.SIGINT, lambda *_: store.when_idle(stop))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def main(argv=None) -> int:
    """The command line; exit status 0, 2 (bad config or option) or 130 (Ctrl-C,
    at any point: before the run too)."""
    previous = _install_interrupt()  # None outside the main thread: nothing changed
    try:
        return _main(argv)
    finally:
        if previous is not None:
            signal.signal(signal.SIGINT, previous)


def _main(argv) -> int:
    parser = argparse.ArgumentParser(
        prog="jbandits",
        description="jbandits sweep CONFIG.toml: a declarative sweep -> resumable "
        "store + figure.",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    sw = sub.add_parser(
        "sweep",
        help="run a sweep described in a TOML config file",
        description="Run the sweep of a TOML config file into OUT/NAME/ (store, "
        "summary.csv, figure.png); exit status 2 on a bad config or option, 130 on "
        "Ctrl-C (finished chunks are kept: run the same command again to resume).",
    )
    sw.add_argument("config", help="path of the sweep config (TOML)")
    sw.add_argument("--out", default="results", help="parent folder of the results")
    sw.add_argument("--reps", type=int, default=None, help="override the config's reps")
    sw.add_argument("--quiet", action="store_true", help="no progress bars")
    sw.add_argument(
        "--no-compile-cache",
        dest="compile_cache",
        action="store_false",
        help="do not use the persistent XLA compilation cache (default: on, in "
        f"$XDG_CACHE_HOME/jbandits/jax or ~/.cache/jbandits/jax; "
        f"{_compile_cache.CACHE_ENV}=0 turns it off too)",
    )
    sub.add_parser("list", help="list the registered policies")
    args = parser.parse_args(argv)
    if args.command == "list":
        import jbandits

        print("\n".join(jbandits.names()))
        return 0
    if args.reps is not None and args.reps < 1:
        parser.error("--reps must be >= 1")
    from jbandits.analysis.store import StoreCodeChanged, StoreMismatch

    try:
        cfg = load(args.config)
        folder = result_folder(args.out, cfg["name"])
    except ImportInterrupted as err:
        print(f"jbandits sweep: interrupted: {err}", file=sys.stderr)
        return 130
    except ConfigError as err:
        return _error(err)
    if _compile_cache.wanted(args.compile_cache):
        _compile_cache.enable_compile_cache()
    with _stop_on_interrupt(folder):
        try:
            run_sweep(
                cfg, args.out, reps=args.reps, progress=False if args.quiet else None
            )
        except StoreCodeChanged as err:
            return _error(
                f"{folder} holds results of other code: the code of "
                f"{', '.join(err.changed)} changed since they were computed (or it "
                "is other code under the same name); pass another --out, change "
                "`name`, or delete that folder to recompute them"
            )
        except StoreMismatch:
            return _error(
                f"{folder} holds the results of other work (another config, or "
                "--reps, under the same name); pass another --out, change `name`, "
                "or delete that folder"
            )
        except OSError as err:
            return _error(f"cannot write the results under --out {args.out!r}: {err}")
        except (ValueError, TypeError) as err:
            return _error(err)
        except KeyboardInterrupt:
            print("\njbandits sweep: interrupted", file=sys.stderr)
            return 130
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
