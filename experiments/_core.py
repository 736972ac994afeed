"""Experiment registry, result files and claims tables (no library logic here)."""

from __future__ import annotations

import json
import os
import platform
import shutil
import sys
import time
import uuid
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import NamedTuple

import jax
import numpy as np

import jbandits
from jbandits import runner
from jbandits.plotting import plot_panels


@dataclass
class Config:
    name: str
    quick: bool = False
    reps: int | None = None
    seed: int = 0
    out: str = "results"
    extra: dict = field(default_factory=dict)

    def num_reps(self, full: int, quick: int) -> int:
        return self.reps if self.reps is not None else (quick if self.quick else full)


@dataclass
class Claim:
    claim: str  # what the paper says
    ours: str  # our number(s)
    verdict: str  # "reproduced" / "not reproduced" / "partly" / "not testable"
    note: str = ""


@dataclass
class Outcome:
    panels: list  # see jbandits.plotting.plot_panels
    table: list  # rows (dicts) of final values
    claims: list  # [Claim]
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

    def source(self, **fixed) -> runner.Source:
        """The runner's policy source: ``make(name, **fixed, **static, **hp)``.

        Algorithms with the same name and static arguments share one compiled program
        (per process) whatever their label.
        """
        static = {**fixed, **self.static, "name": self.name}
        return runner.Source(_make, tuple(sorted(static.items())), _make, self.label)


def _make(name: str, **kwargs):
    return jbandits.make(name, **kwargs)


def key(seed: int, stream: int):
    """Replication keys of one run of an experiment: ``fold_in(key(seed), stream)``."""
    return jax.random.fold_in(jax.random.key(seed), stream)


# ------------------------------------------------------------------ shared helpers
def curve(x, values, *, binary: bool = False, transform=None) -> dict:
    """Mean and 95% CI over replications (axis 0) of ``values [R, C]``."""
    ci = jbandits.metrics.binomial_ci if binary else jbandits.metrics.mean_ci
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
    """One panel of :func:`jbandits.plotting.plot_panels` (curves from :func:`curve`)."""
    return {"title": title, "xlabel": xlabel, "ylabel": ylabel, "curves": curves}


def error_panel(title: str, t, err: dict) -> dict:
    """A panel of error % vs time step: Wilson 95% bands of 0/1 ``err[label] [R, C]``."""
    pct = lambda x: 100 * x  # noqa: E731
    curves = {k: curve(t, v, binary=True, transform=pct) for k, v in err.items()}
    return panel(title, "time step t", "error %", curves)


def markdown_table(rows: list[dict]) -> str:
    if not rows:
        return ""
    cols = list(rows[0])
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    lines += ["| " + " | ".join(str(r.get(c, "")) for c in cols) + " |" for r in rows]
    return "\n".join(lines)


def device_summary(devices=None) -> str:
    """``"2 x cpu"`` / ``"1 x gpu (NVIDIA H100 80GB HBM3)"``: count and kind of devices."""
    devices = jax.devices() if devices is None else devices
    groups: dict[str, int] = {}
    for d in devices:
        kind = d.platform
        if getattr(d, "device_kind", kind).lower() != kind.lower():
            kind = f"{kind} ({d.device_kind})"
        groups[kind] = groups.get(kind, 0) + 1
    return ", ".join(f"{n} x {kind}" for kind, n in groups.items())


def versions() -> dict:
    devices = jax.devices()
    return {
        "jbandits": jbandits.__version__,
        "jax": jax.__version__,
        "numpy": np.__version__,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "device_count": len(devices),
        "device_kind": device_summary(devices),
        "devices": [str(d) for d in devices],
    }


def output_dir(cfg: Config) -> str:
    """``OUT/NAME[-quick][-repsR][-seedS]``: reps and seed appear when not default."""
    name = cfg.name + ("-quick" if cfg.quick else "")
    if cfg.reps is not None:
        name += f"-reps{cfg.reps}"
    if cfg.seed != 0:
        name += f"-seed{cfg.seed}"
    return os.path.join(cfg.out, name)


def command_line(cfg: Config) -> str:
    """The ``python -m experiments run ...`` line that reproduces ``cfg``."""
    cmd = f"python -m experiments run {cfg.name}"
    if cfg.quick:
        cmd += " --quick"
    if cfg.reps is not None:
        cmd += f" --reps {cfg.reps}"
    if cfg.seed != 0:
        cmd += f" --seed {cfg.seed}"
    return cmd


def _publish(tmp: str, final: str) -> None:
    """Move the complete folder ``tmp`` to ``final``, replacing an older ``final``.

    The older folder is renamed aside first (a directory cannot be renamed onto a
    non-empty one) and removed once the new one is in place; if that rename fails
    the older one is put back.
    """
    old = None
    if os.path.lexists(final):
        parent, base = os.path.split(final)
        old = os.path.join(parent, f".{base}.old-{uuid.uuid4().hex[:8]}")
        os.replace(final, old)
    try:
        os.replace(tmp, final)
    except BaseException:
        if old is not None:
            os.replace(old, final)
        raise
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


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
        seconds = _run_into(exp, cfg, tmp)
        _publish(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    print(
        f"[{exp.name}] done in {seconds:.1f} s: wrote {out}/ "
        "(figure.png, table.md, meta.json, results.npz)",
        file=sys.stderr,
    )
    return out


def _run_into(exp: Experiment, cfg: Config, out: str) -> float:
    """Run ``exp`` and write its four files into ``out``; returns the run time (s)."""
    print(
        f"[{exp.name}] start: {exp.title} (quick={cfg.quick}, reps="
        f"{'default' if cfg.reps is None else cfg.reps}, seed={cfg.seed})",
        file=sys.stderr,
    )
    t0 = time.perf_counter()
    outcome = exp.run(cfg)
    seconds = time.perf_counter() - t0
    np.savez_compressed(os.path.join(out, "results.npz"), **outcome.arrays)
    meta = {
        "experiment": exp.name,
        "title": exp.title,
        "source": exp.source,
        "config": asdict(cfg),
        "command": command_line(cfg),
        "seconds": round(seconds, 2),
        "versions": versions(),
    }
    with open(os.path.join(out, "meta.json"), "w") as f:
        json.dump(meta, f, indent=2, default=str)
    plot_panels(outcome.panels, os.path.join(out, "figure.png"), suptitle=exp.title)
    claims = [asdict(c) for c in outcome.claims]
    lines = [
        f"# {exp.title}",
        "",
        f"Source: {exp.source}. Run: `{command_line(cfg)}` ({seconds:.1f} s, "
        f"{meta['versions']['device_kind']}).",
        "",
        "![figure](figure.png)",
        "",
        "## Claims",
        "",
        markdown_table(claims),
        "",
        "## Final values",
        "",
        markdown_table(outcome.table),
    ]
    if outcome.notes:
        lines += ["", "## Notes", ""] + [f"- {n}" for n in outcome.notes]
    with open(os.path.join(out, "table.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    return seconds
