"""Matplotlib figures with 95% confidence bands."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

# Ten distinct colours (matplotlib's tab10) crossed with four line styles: up to 40
# series get distinct (colour, linestyle) pairs; series 11-20 repeat the colours of
# 1-10 with dashes, and so on. Beyond 40 markers are added as a third cue.
COLORS = tuple(plt.get_cmap("tab10").colors)
LINESTYLES = ("-", "--", ":", "-.")
MARKERS = ("o", "s", "^", "v", "D", "x", "+", "*")


def series_styles(labels) -> dict[str, dict]:
    """A distinct line style per label: ``{label: {"color", "linestyle", "marker"}}``.

    The first 10 labels get 10 distinct solid colours; then colour and line style
    are combined so that no two of the first 40 labels share both; after that a
    marker is added as well.
    """
    styles = {}
    for i, label in enumerate(dict.fromkeys(labels)):
        nc, ns = len(COLORS), len(LINESTYLES)
        styles[label] = {
            "color": COLORS[i % nc],
            "linestyle": LINESTYLES[(i // nc) % ns],
            "marker": None
            if i < nc * ns
            else MARKERS[(i // (nc * ns) - 1) % len(MARKERS)],
        }
    return styles


def plot_panels(
    panels: list[dict],
    path: str,
    *,
    ncols: int | None = None,
    suptitle: str | None = None,
    format: str | None = None,
) -> str:
    """One subplot per panel and one shared legend below them.

    Each panel is ``{"title", "xlabel", "ylabel", "curves": {label: {"x", "mean", "lo",
    "hi"}}, "logx": bool, "logy": bool}``; bands are drawn between ``lo`` and ``hi`` (NaNs skipped).
    A label has the same style in every panel (:func:`series_styles` over the labels
    of all panels, in order of first appearance), and the legend sits below the
    axes so that it hides no curve. ``format`` (e.g. ``"png"``) is the file format
    when ``path`` does not end with it (matplotlib's ``savefig``).
    """
    n = len(panels)
    ncols = ncols or min(n, 3) or 1
    nrows = max(int(np.ceil(n / ncols)), 1)
    styles = series_styles(label for p in panels for label in p["curves"])
    fig, axes = plt.subplots(
        nrows,
        ncols,
        figsize=(5.2 * ncols, 3.9 * nrows),
        squeeze=False,
        layout="constrained",
    )
    handles = {}
    for ax, panel in zip(axes.flat, panels, strict=False):
        for label, c in panel["curves"].items():
            x = np.asarray(c["x"], float)
            style = styles[label]
            (line,) = ax.plot(
                x,
                c["mean"],
                label=label,
                lw=1.4,
                color=style["color"],
                linestyle=style["linestyle"],
                marker=style["marker"],
                markersize=3,
            )
            handles.setdefault(label, line)
            if "lo" in c and "hi" in c:
                ax.fill_between(
                    x, c["lo"], c["hi"], color=style["color"], alpha=0.2, lw=0
                )
        ax.set_title(panel.get("title", ""))
        ax.set_xlabel(panel.get("xlabel", ""))
        ax.set_ylabel(panel.get("ylabel", ""))
        if panel.get("logx"):
            ax.set_xscale("log")
        if panel.get("logy"):
            ax.set_yscale("log")
        ax.grid(alpha=0.3)
    for ax in list(axes.flat)[n:]:
        ax.set_visible(False)
    if handles:
        # as many legend columns as the longest label lets fit across the figure
        # (an entry at font size 8: ~0.45 in of line and gap + ~0.065 in a character)
        entry = 0.45 + 0.065 * max(len(label) for label in handles)
        fit = max(1, int(fig.get_figwidth() // entry))
        fig.legend(
            list(handles.values()),
            list(handles),
            loc="outside lower center",
            ncol=min(len(handles), max(3, 2 * ncols), fit),
            fontsize=8,
            frameon=False,
        )
    if suptitle:
        fig.suptitle(suptitle)
    # "tight": the saved image holds the whole legend, however long its labels
    fig.savefig(path, dpi=120, format=format, bbox_inches="tight")
    plt.close(fig)
    return path
