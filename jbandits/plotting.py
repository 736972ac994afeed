"""Matplotlib figures with 95% confidence bands."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np


def plot_panels(
    panels: list[dict],
    path: str,
    *,
    ncols: int | None = None,
    suptitle: str | None = None,
) -> str:
    """One subplot per panel.

    Each panel is ``{"title", "xlabel", "ylabel", "curves": {label: {"x", "mean", "lo",
    "hi"}}, "logy": bool}``; bands are drawn between ``lo`` and ``hi`` (NaNs skipped).
    """
    n = len(panels)
    ncols = ncols or min(n, 3)
    nrows = int(np.ceil(n / ncols))
    fig, axes = plt.subplots(
        nrows, ncols, figsize=(5.2 * ncols, 3.9 * nrows), squeeze=False
    )
    for ax, panel in zip(axes.flat, panels, strict=False):
        for label, c in panel["curves"].items():
            x = np.asarray(c["x"], float)
            (line,) = ax.plot(x, c["mean"], label=label, lw=1.4)
            if "lo" in c and "hi" in c:
                ax.fill_between(
                    x, c["lo"], c["hi"], color=line.get_color(), alpha=0.2, lw=0
                )
        ax.set_title(panel.get("title", ""))
        ax.set_xlabel(panel.get("xlabel", ""))
        ax.set_ylabel(panel.get("ylabel", ""))
        if panel.get("logy"):
            ax.set_yscale("log")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7, ncol=2)
    for ax in list(axes.flat)[n:]:
        ax.set_visible(False)
    if suptitle:
        fig.suptitle(suptitle)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path
