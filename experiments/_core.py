"""Experiment registry, result files and claims tables (no library logic here)."""

from __future__ import annotations

import json
import math
import os
import platform
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field

import jax
import numpy as np

import jbandits
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


EXPERIMENTS: dict[str, Experiment] = {}


def register(exp: Experiment) -> Experiment:
    if exp.name in EXPERIMENTS:
        raise ValueError(f"duplicate experiment {exp.name!r}")
    EXPERIMENTS[exp.name] = exp
    return exp


# ------------------------------------------------------------------ shared helpers
def paired(a: np.ndarray, b: np.ndarray) -> tuple[float, float]:
    """Mean of a - b and its standard error (paired over replications, axis 0)."""
    d = np.asarray(a, float) - np.asarray(b, float)
    n = d.shape[0]
    return d.mean(0), d.std(0, ddof=1) / math.sqrt(n)


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


def fmt_ci(mean: float, lo: float, hi: float, digits: int = 4) -> str:
    return f"{mean:.{digits}g} [{lo:.{digits}g}, {hi:.{digits}g}]"


def markdown_table(rows: list[dict]) -> str:
    if not rows:
        return ""
    cols = list(rows[0])
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    lines += ["| " + " | ".join(str(r.get(c, "")) for c in cols) + " |" for r in rows]
    return "\n".join(lines)


def versions() -> dict:
    return {
        "jbandits": jbandits.__version__,
        "jax": jax.__version__,
        "numpy": np.__version__,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "devices": [str(d) for d in jax.devices()],
    }


def execute(cfg: Config) -> str:
    """Run one experiment, write results.npz, meta.json, figure.png and table.md."""
    if cfg.name not in EXPERIMENTS:
        raise SystemExit(
            f"unknown experiment {cfg.name!r}; known: {sorted(EXPERIMENTS)}"
        )
    exp = EXPERIMENTS[cfg.name]
    out = os.path.join(cfg.out, exp.name + ("-quick" if cfg.quick else ""))
    os.makedirs(out, exist_ok=True)
    print(f"[{exp.name}] {exp.title} (quick={cfg.quick})", file=sys.stderr)
    t0 = time.perf_counter()
    outcome = exp.run(cfg)
    seconds = time.perf_counter() - t0
    np.savez_compressed(os.path.join(out, "results.npz"), **outcome.arrays)
    meta = {
        "experiment": exp.name,
        "title": exp.title,
        "source": exp.source,
        "config": asdict(cfg),
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
        f"Source: {exp.source}. Run: `python -m experiments run "
        f"{exp.name}{' --quick' if cfg.quick else ''}` ({seconds:.1f} s, "
        f"{meta['versions']['devices'][0]}).",
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
    print(
        f"[{exp.name}] wrote {out}/figure.png and {out}/table.md in {seconds:.1f} s",
        file=sys.stderr,
    )
    return out
