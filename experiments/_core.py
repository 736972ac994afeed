"""Experiment registry, result files and claims tables (no library logic here)."""

from __future__ import annotations

import numbers
import os
import shutil
import sys
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import NamedTuple

import jax
import numpy as np

import jbandits
from experiments import _claims, _write
from jbandits.analysis import stats

# Seeds below 2^22: experiments key their runs with ``jax.random.key(seed * 1000 +
# number)``, which keeps 32 bits without x64, so larger seeds would wrap onto others.
SEED_LIMIT = 2**22


def check_reps(reps) -> int | None:
    """``reps``: None (the experiment's own number) or an integer >= 1."""
    return stats.count("reps", reps, 1, none=True)


def check_seed(seed) -> int:
    """``seed``: an integer with 0 <= seed < :data:`SEED_LIMIT`."""
    if (
        isinstance(seed, bool)
        or not isinstance(seed, numbers.Integral)
        or not 0 <= seed < SEED_LIMIT
    ):
        raise ValueError(
            f"seed must be an integer in [0, {SEED_LIMIT - 1}] (2^22 - 1), got {seed!r}"
        )
    return int(seed)


@dataclass
class Config:
    name: str
    quick: bool = False
    reps: int | None = None
    seed: int = 0
    out: str = "results"
    extra: dict = field(default_factory=dict)

    def __post_init__(self):
        self.reps, self.seed = check_reps(self.reps), check_seed(self.seed)

    def num_reps(self, full: int, quick: int) -> int:
        return self.reps if self.reps is not None else (quick if self.quick else full)


@dataclass
class Outcome:
    panels: list  # see jbandits.analysis.plotting.plot_panels
    table: list  # rows (dicts) of final values
    claims: list  # [experiments._claims.Claim]
    arrays: dict = field(default_factory=dict)  # raw arrays saved to results.npz
    notes: list = field(default_factory=list)  # free-text lines for the report


@dataclass
class Experiment:
    name: str
    title: str
    source: str
    run: Callable[[Config], Outcome]
    # rough wall time of the full and quick versions on a laptop-class CPU, shown by
    # ``python -m experiments list`` (e.g. "full ~5 min, quick ~1 min"; "" = unknown)
    estimate: str = ""
    # labels of the paper's own algorithm(s): drawn to stand out in the figure
    # (jbandits.analysis.plotting.plot_panels(highlight=...)); the others are baselines
    highlight: tuple = ()


EXPERIMENTS: dict[str, Experiment] = {}


def register(exp: Experiment) -> Experiment:
    if exp.name in EXPERIMENTS:
        raise ValueError(f"duplicate experiment {exp.name!r}")
    EXPERIMENTS[exp.name] = exp
    return exp


class Algo(NamedTuple):
    """One algorithm of an experiment: a registered policy and its arguments.

    ``static`` arguments (variants, posteriors, ...) fix the compiled program; ``hp``
    are numbers the runner traces (scalars, or per-cell arrays). ``paper``: named or
    plotted by the paper (other rows are library defaults or readings we add).
    ``permute``: relabel the arms at random per replication.
    """

    label: str
    name: str
    static: dict = {}  # never mutated: a shared default
    hp: dict = {}
    paper: bool = True
    permute: bool = True

    def policy(self, **fixed) -> jbandits.Policy:
        """Registered policy ``name`` with ``fixed`` and ``static`` arguments and the
        numbers ``hp`` (:func:`jbandits.make`).

        Algorithms with the same name and static arguments share one compiled program
        (per process) whatever their label and numbers.
        """
        return jbandits.make(self.name, **fixed, **self.static, **self.hp)


def key(seed: int, stream: int):
    """Replication keys of one run of an experiment: ``fold_in(key(seed), stream)``."""
    return jax.random.fold_in(jax.random.key(seed), stream)


# ------------------------------------------------------------------ shared helpers
def curve(x, values, *, binary: bool = False, transform=None) -> dict:
    """Mean and 95% CI over replications (axis 0) of ``values [R, C]``."""
    ci = stats.wilson_ci if binary else stats.mean_ci
    mean, lo, hi = ci(values, axis=0)
    if transform is not None:
        with np.errstate(divide="ignore", invalid="ignore"):
            mean, lo, hi = (
                transform(mean),
                transform(np.maximum(lo, 1e-300)),
                transform(hi),
            )
    return {"x": np.asarray(x), "mean": mean, "lo": lo, "hi": hi}


def panel(title: str, xlabel: str, ylabel: str, curves: dict) -> dict:
    """One panel of :func:`jbandits.analysis.plotting.plot_panels` (curves from :func:`curve`)."""
    return {"title": title, "xlabel": xlabel, "ylabel": ylabel, "curves": curves}


def error_panel(title: str, t, err: dict) -> dict:
    """A panel of error % vs time step: Wilson 95% bands of 0/1 ``err[label] [R, C]``."""
    pct = lambda x: 100 * x  # noqa: E731
    curves = {k: curve(t, v, binary=True, transform=pct) for k, v in err.items()}
    return panel(title, "time step t", "error %", curves)


def output_dir(cfg: Config) -> str:
    """``OUT/NAME[-quick][-repsR][-seedS]``: reps and seed appear when not default."""
    name = cfg.name + ("-quick" if cfg.quick else "")
    if cfg.reps is not None:
        name += f"-reps{cfg.reps}"
    if cfg.seed != 0:
        name += f"-seed{cfg.seed}"
    return os.path.join(cfg.out, name)


def execute(cfg: Config) -> str:
    """Run one experiment, write results.npz, meta.json, figure.png and table.md.

    The files are written into a hidden temporary folder beside the destination
    (``OUT/.NAME.partial-XXXXXXXX``) that is renamed to :func:`output_dir` only once
    all of them are complete; on any error (or ``SystemExit`` from the experiment)
    the temporary folder is removed and an older complete folder is left untouched.
    Returns the destination folder.
    """
    if cfg.name not in EXPERIMENTS:
        raise SystemExit(
            f"unknown experiment {cfg.name!r}; known: {sorted(EXPERIMENTS)}"
        )
    exp = EXPERIMENTS[cfg.name]
    out = output_dir(cfg)
    os.makedirs(cfg.out, exist_ok=True)
    tmp = os.path.join(
        cfg.out, f".{os.path.basename(out)}.partial-{uuid.uuid4().hex[:8]}"
    )
    os.mkdir(tmp)
    try:
        seconds = _write.run_into(exp, cfg, tmp, _claims.gate)
        _write.publish(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    print(
        f"[{exp.name}] done in {seconds:.1f} s: wrote {out}/ "
        "(figure.png, table.md, meta.json, results.npz)",
        file=sys.stderr,
    )
    return out
