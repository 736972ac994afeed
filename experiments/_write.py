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

import jax
import numpy as np

import jbandits
from jbandits.analysis.plotting import plot_panels


class Interval(str):
    """``"mean [lo, hi]"`` as text (what :mod:`experiments._claims` formats) that keeps
    its three numbers, so that :func:`markdown_table` can print a whole column at one
    precision."""

    values: tuple[float, float, float]

    def __new__(cls, mean: float, lo: float, hi: float, digits: int = 4):
        text = f"{mean:.{digits}g} [{lo:.{digits}g}, {hi:.{digits}g}]"
        out = super().__new__(cls, text)
        out.values = (float(mean), float(lo), float(hi))
        return out


SIGNIFICANT, MAX_DECIMALS = 3, 5  # the column's smallest value keeps 3 digits


def _float_decimals(x: float) -> int:
    """Decimals that print ``x`` as its 4 significant digits show it."""
    text = f"{x:.4g}"
    if "e" in text:
        return max(0, -int(text.split("e")[1]) + 3)
    return len(text.split(".")[1]) if "." in text else 0


def column_decimals(cells: list) -> int | None:
    """One number of decimals for a column's numbers: :class:`Interval` cells keep
    :data:`SIGNIFICANT` digits in their smallest non-zero mean, float cells the
    decimals their 4 significant digits need (both at most :data:`MAX_DECIMALS`);
    None when the column has neither (text and integers print as they are)."""
    means = [abs(c.values[0]) for c in cells if isinstance(c, Interval)]
    floats = [c for c in cells if isinstance(c, float) and np.isfinite(c)]
    if not means and not floats:
        return None
    decimals = [_float_decimals(x) for x in floats]
    nonzero = [m for m in means if m > 0 and np.isfinite(m)]
    if nonzero:
        decimals.append(SIGNIFICANT - 1 - int(np.floor(np.log10(min(nonzero)))))
    return int(min(max(decimals + [0]), MAX_DECIMALS))


def _cell(value, decimals: int | None) -> str:
    if decimals is None:
        return str(value)
    if isinstance(value, Interval):
        m, lo, hi = value.values
        return f"{m:.{decimals}f} [{lo:.{decimals}f}, {hi:.{decimals}f}]"
    if isinstance(value, float) and np.isfinite(value):
        return f"{value:.{decimals}f}"
    return str(value)


def markdown_table(rows: list[dict]) -> str:
    """A Markdown table of ``rows`` (the first row's keys are the columns); numbers of
    one column (:class:`Interval`, float) are printed with one number of decimals
    (:func:`column_decimals`)."""
    if not rows:
        return ""
    cols = list(rows[0])
    decimals = {c: column_decimals([r.get(c) for r in rows]) for c in cols}
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    lines += [
        "| " + " | ".join(_cell(r.get(c, ""), decimals[c]) for c in cols) + " |"
        for r in rows
    ]
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


def command_line(cfg) -> str:
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


def run_into(exp, cfg, out: str, gate) -> float:
    """Run ``exp`` (an ``experiments._core.Experiment``) under ``cfg`` (its
    ``Config``) and write its four files into ``out``; returns the run time (s).
    ``gate(claims, reps)`` (:func:`experiments._claims.gate`) reads the claims again
    when ``cfg.reps`` overrides the experiment's own number of replications."""
    print(
        f"[{exp.name}] start: {exp.title} (quick={cfg.quick}, reps="
        f"{'default' if cfg.reps is None else cfg.reps}, seed={cfg.seed})",
        file=sys.stderr,
    )
    t0 = time.perf_counter()
    outcome = exp.run(cfg)
    seconds = time.perf_counter() - t0
    if cfg.reps is not None:  # the experiments' own numbers are >= 2
        gate(outcome.claims, cfg.reps)
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
    plot_panels(
        outcome.panels,
        os.path.join(out, "figure.png"),
        suptitle=exp.title,
        highlight=exp.highlight,
    )
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
