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

The file is checked against :data:`SCHEMA` before anything runs: an unknown key (a
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
import difflib
import inspect
import math
import os
import signal
import sys
import threading
import time

import numpy as np

try:  # Python >= 3.11
    import tomllib
except ModuleNotFoundError:  # pragma: no cover
    import tomli as tomllib

from jbandits import _compile_cache

METRICS = ("thresholding", "identification", "top_m", "regret")
# metric kind -> (required keys, optional keys) of the metric table besides `kind`
METRIC_ARGS = {
    "thresholding": (("threshold",), ("epsilon",)),
    "identification": ((), ()),
    "top_m": (("m",), ("epsilon",)),
    "regret": ((), ()),
}
# policy arguments the sweep sets itself, per cell
SET_BY_SWEEP = {"num_arms": "K of each instance", "budget": "each of `budgets`"}
LABELS = ("policy", "K", "instance", "budget")  # cell labels that are not hyper-params


class ConfigError(ValueError):
    """A sweep config that does not match :data:`SCHEMA` (one line)."""


# ------------------------------------------------------------------------- schema
class Int:
    """An integer (not a bool) in ``[minimum, maximum]``."""

    def __init__(self, minimum=None, maximum=None):
        self.minimum, self.maximum = minimum, maximum
        self.what = "an integer"
        if maximum is not None:
            self.what += f" in [{minimum}, {maximum}]"
        elif minimum is not None:
            self.what += f" >= {minimum}"

    def check(self, value, where):
        ok = isinstance(value, int) and not isinstance(value, bool)
        ok = ok and (self.minimum is None or value >= self.minimum)
        if not ok or (self.maximum is not None and value > self.maximum):
            raise ConfigError(f"{where} must be {self.what}, got {value!r}")


class Number:
    """A finite number (int or float, not a bool), optionally ``> 0``."""

    def __init__(self, positive=False):
        self.positive = positive
        self.what = "a positive number" if positive else "a finite number"

    def check(self, value, where):
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        ok = ok and math.isfinite(value) and (value > 0 or not self.positive)
        if not ok:
            raise ConfigError(f"{where} must be {self.what}, got {value!r}")


class Choice:
    """One of a few strings."""

    def __init__(self, *options):
        self.options = options
        self.what = "one of " + ", ".join(repr(o) for o in options)

    def check(self, value, where):
        if not isinstance(value, str) or value not in self.options:
            close = difflib.get_close_matches(str(value), self.options, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise ConfigError(f"{where} must be {self.what}, got {value!r}{hint}")


class Name:
    """A result folder name: one path component, nothing that leaves ``--out``."""

    what = (
        "one folder name (no '/' or '\\', not starting with '.', at most 128 "
        "characters)"
    )

    def check(self, value, where):
        ok = isinstance(value, str) and 0 < len(value) <= 128
        ok = ok and not value.startswith(".") and value.strip() == value
        if not ok or any(c in value for c in "/\\") or not value.isprintable():
            raise ConfigError(f"{where} must be {self.what}, got {value!r}")


class ListOf:
    """A non-empty list of ``item``s."""

    def __init__(self, item, what):
        self.item, self.what = item, what

    def check(self, value, where):
        if not isinstance(value, list) or not value:
            raise ConfigError(f"{where} must be {self.what}, got {value!r}")
        for i, v in enumerate(value):
            self.item.check(v, f"{where}[{i}]")


class Table:
    """A TOML table with known keys (each with its spec) and required ones."""

    def __init__(self, fields, required=(), example=""):
        self.fields, self.required = fields, required
        self.what = "a table" + (f" (e.g. {example})" if example else "")

    def check(self, value, where):
        if not isinstance(value, dict):
            raise ConfigError(
                f"{where or 'the config'} must be {self.what}, got {value!r}"
            )
        for key in value:
            if key not in self.fields:
                raise ConfigError(_unknown(key, self.fields, where))
        for key in self.required:
            if key not in value:
                raise ConfigError(f"missing {_join(where, key)!r}")
        for key, spec in self.fields.items():
            if key in value:
                spec.check(value[key], _join(where, key))


class Policy:
    """``name`` (a registered policy) and its keyword arguments: a scalar, or a
    non-empty list of scalars (a grid axis), for each argument its factory takes."""

    what = 'a table with a policy `name` and its hyper-parameters (e.g. name = "apt")'
    SCALARS = (bool, int, float, str)

    def check(self, value, where):
        import jbandits

        if not isinstance(value, dict):
            raise ConfigError(f"{where} must be {self.what}, got {value!r}")
        name = value.get("name")
        if name not in jbandits.names():
            close = difflib.get_close_matches(str(name), jbandits.names(), n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise ConfigError(
                f"{where}.name must be a registered policy{hint}, got {name!r}; "
                f"known: {', '.join(jbandits.names())}"
            )
        params = inspect.signature(jbandits.registry.raw_factory(name)).parameters
        takes_any = any(p.kind is p.VAR_KEYWORD for p in params.values())
        known = [p for p in params if p not in SET_BY_SWEEP]
        for key, v in value.items():
            if key == "name":
                continue
            here = f"{where}.{key} ({name})"
            if key in SET_BY_SWEEP:
                raise ConfigError(
                    f"{here}: {key} is set by the sweep ({SET_BY_SWEEP[key]}); "
                    "remove it"
                )
            if key not in params and not takes_any:
                raise ConfigError(
                    _unknown(key, known, f"{where} ({name})", "hyper-parameter")
                )
            axis = v if isinstance(v, list) else [v]
            if not axis or not all(isinstance(x, self.SCALARS) for x in axis):
                raise ConfigError(
                    f"{here} must be a number, a bool, a string or a non-empty list "
                    f"of them (a grid axis), got {v!r}"
                )


METRIC = Table(
    {
        "kind": Choice(*METRICS),
        "threshold": Number(),
        "epsilon": Number(),
        "m": Int(minimum=1),
    },
    required=("kind",),
    example='{ kind = "thresholding", threshold = 0.5 }',
)
INSTANCES = Table(
    {
        "K": ListOf(Int(minimum=2), "a non-empty list of integers >= 2"),
        "means": ListOf(
            ListOf(Number(), "a list of numbers (one mean per arm)"),
            "a non-empty list of lists of means",
        ),
        "generator": Choice("uniform", "linear"),
        "low": Number(),
        "high": Number(),
        "seed": Int(minimum=0),
        "std": Number(positive=True),
    },
    example="[instances] with K = [4, 10] or means = [[0.1, 0.9]]",
)
SCHEMA = Table(
    {
        "name": Name(),
        "bandit": Choice("bernoulli", "gaussian"),
        "seed": Int(minimum=0, maximum=2**32 - 1),
        "reps": Int(minimum=1),
        "budgets": ListOf(Int(minimum=1), "a non-empty list of integers >= 1"),
        "checkpoints": Int(minimum=1),
        "metric": METRIC,
        "instances": INSTANCES,
        "policies": ListOf(Policy(), "a non-empty list of [[policies]] tables"),
    },
    required=("name", "budgets", "reps", "instances", "policies"),
)
"""The keys a sweep config may hold, each with its type; see :func:`check`."""


def _join(where: str, key: str) -> str:
    return f"{where}.{key}" if where else key


def _unknown(key, known, where, noun="key") -> str:
    close = difflib.get_close_matches(str(key), list(known), n=1, cutoff=0.6)
    hint = f"did you mean {close[0]!r}? " if close else ""
    place = f" in {where}" if where else ""
    return f"unknown {noun} {key!r}{place} ({hint}known: {', '.join(map(str, known))})"


def check(cfg: dict) -> dict:
    """Check a parsed config against :data:`SCHEMA` and the rules between keys;
    ConfigError (one line) on the first problem. Returns ``cfg``."""
    SCHEMA.check(cfg, "")
    inst = cfg["instances"]
    if ("K" in inst) == ("means" in inst):
        raise ConfigError("instances: give either K (with a generator) or means")
    if "means" in inst:
        extra = [k for k in ("generator", "low", "high", "seed") if k in inst]
        if extra:
            raise ConfigError(f"instances.{extra[0]} applies to instances.K, not means")
    if inst.get("low", 0.1) > inst.get("high", 0.9):
        raise ConfigError(
            f"instances.low ({inst.get('low', 0.1)}) must be <= instances.high "
            f"({inst.get('high', 0.9)})"
        )
    if "std" in inst and cfg.get("bandit", "bernoulli") != "gaussian":
        raise ConfigError('instances.std applies to bandit = "gaussian" only')
    metric = cfg.get("metric", {"kind": "regret"})
    required, optional = METRIC_ARGS[metric["kind"]]
    for key in metric:
        if key != "kind" and key not in required + optional:
            takes = ", ".join(required + optional) or "nothing else"
            raise ConfigError(
                f"metric.{key} does not apply to kind = {metric['kind']!r} "
                f"(it takes {takes})"
            )
    for key in required:
        if key not in metric:
            raise ConfigError(f"metric.{key} is required for kind = {metric['kind']!r}")
    seen = {}
    for i, entry in enumerate(cfg["policies"]):
        tag = repr(sorted(entry.items()))
        if tag in seen:
            raise ConfigError(f"policies[{i}] repeats policies[{seen[tag]}]")
        seen[tag] = i
    return cfg


def load(path: str) -> dict:
    """Read and check a sweep config (TOML); ConfigError (one line) if it is bad."""
    try:
        with open(path, "rb") as f:
            cfg = tomllib.load(f)
    except FileNotFoundError:
        raise ConfigError(f"config file {path!r} not found") from None
    except IsADirectoryError:
        raise ConfigError(f"config {path!r} is a folder, not a TOML file") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as err:
        raise ConfigError(f"config {path}: not valid TOML: {err}") from None
    try:
        return check(cfg)
    except ConfigError as err:
        raise ConfigError(f"config {path}: {err}") from None


# --------------------------------------------------------------------------- run
def _instances(cfg: dict, bandit: str):
    import jbandits

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
    out = []
    for i, means in enumerate(all_means):
        try:
            if bandit == "bernoulli":
                out.append(jbandits.envs.bernoulli(means)[1])
            else:
                std = float(inst.get("std", 1.0))
                stds = np.full(means.shape, std)
                out.append(jbandits.envs.gaussian(means, stds)[1])
        except ValueError as err:
            where = f"means[{i}]" if "means" in inst else f"K = {len(means)}"
            raise ConfigError(f"instances ({where}): {err}") from None
    return out


def _metric(cfg: dict):
    from jbandits import metrics

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
    from jbandits import plotting, store

    check(cfg)
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
        policies.append((entry.pop("name"), entry))
    folder = result_folder(out, cfg["name"])
    t0 = time.perf_counter()
    res = jbandits.sweep_grid(
        policies,
        bandit,
        _instances(cfg, bandit_name),
        jax.random.key(cfg.get("seed", 0)),
        budgets=cfg["budgets"],
        num_reps=reps if reps is not None else cfg["reps"],
        num_checkpoints=cfg.get("checkpoints", 1),
        metric=metric,
        store=folder,
        progress=progress,
    )
    table = res.summary()
    store.write_atomic(
        os.path.join(folder, "summary.csv"),
        lambda tmp: table.to_csv(tmp, index=False),
    )
    store.write_atomic(
        os.path.join(folder, "figure.png"),
        lambda tmp: plotting.plot_panels(
            panels(res, table, headline), tmp, suptitle=cfg["name"], format="png"
        ),
    )
    seconds = time.perf_counter() - t0
    print(
        f"[{cfg['name']}] {len(res.cells)} cells x {res.values['times'].shape[1]} reps "
        f"in {seconds:.1f} s (no-op lane-steps {100 * res.report.noop_fraction:.1f}%, "
        f"{res.report.chunks_skipped} chunks resumed); wrote {folder}/summary.csv, "
        f"figure.png",
        file=sys.stderr,
    )
    return res, folder


def result_folder(out: str, name: str) -> str:
    """``out/name``, checked: ConfigError if ``out`` or it is a file."""
    Name().check(name, "name")
    folder = os.path.join(out, name)
    for path, what in ((out, "--out"), (folder, "the sweep's folder")):
        if os.path.exists(path) and not os.path.isdir(path):
            raise ConfigError(f"{what} {path!r} is a file, not a folder")
    return folder


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
    finishes first (:func:`jbandits.store.when_idle`), so the store holds only whole
    chunks and the run resumes from them."""
    from jbandits import store

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
    parser = argparse.ArgumentParser(
        prog="jbandits", description=__doc__.split("\n")[0]
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
    from jbandits.store import StoreMismatch

    try:
        cfg = load(args.config)
        folder = result_folder(args.out, cfg["name"])
    except ConfigError as err:
        return _error(err)
    if _compile_cache.wanted(args.compile_cache):
        _compile_cache.enable_compile_cache()
    with _stop_on_interrupt(folder):
        try:
            run_sweep(
                cfg, args.out, reps=args.reps, progress=False if args.quiet else None
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
