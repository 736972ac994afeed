"""Writing an experiment's result folder: results.npz, meta.json, figure.png and
table.md (the claims and final-values tables in Markdown), and publishing the folder
only once it is complete (:func:`experiments._core.execute`)."""

from __future__ import annotations

import json
import os
import platform
import shutil
import sys
import time
import uuid
from dataclasses import asdict
from typing import TYPE_CHECKING

import jax
import numpy as np

import jbandits
from jbandits.analysis.plotting import plot_panels

if TYPE_CHECKING:  # _core imports this module
    from experiments._core import Config, Experiment


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


def publish(tmp: str, final: str) -> None:
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


def run_into(exp: Experiment, cfg: Config, out: str) -> float:
    """Run ``exp`` and write its four files into ``out``; returns the run time (s)."""
    print(
        f"[{exp.name}] start: {exp.title} (quick={cfg.quick}, reps="
        f"{'default' if cfg.reps is None else cfg.reps}, seed={cfg.seed})",
        file=sys.stderr,
    )
    t0 = time.perf_counter()
    outcome = exp.run(cfg)
    seconds = time.perf_counter() - t0
    if cfg.reps is not None:  # the experiments' own numbers are >= 2
        from experiments import _claims  # imports _core, which imports this module

        _claims.gate(outcome.claims, cfg.reps)
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
