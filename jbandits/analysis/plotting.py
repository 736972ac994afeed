"""Matplotlib figures with 95% confidence bands.

A figure of an experiment sets the paper's own algorithm apart (``highlight``): its
curves are drawn thick, in a colour no other series uses, above the others, and its
legend entries come first in bold; the other curves (baselines) are thinner and
slightly transparent. The shaded bands are 95% confidence intervals, and the legend
says so.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.patches import Patch

# Ten distinct colours (matplotlib's tab10) crossed with four line styles: up to 40
# series get distinct (colour, linestyle) pairs; series 11-20 repeat the colours of
# 1-10 with dashes, and so on. Beyond 40 markers are added as a third cue.
COLORS = tuple(plt.get_cmap("tab10").colors)
LINESTYLES = ("-", "--", ":", "-.")
MARKERS = ("o", "s", "^", "v", "D", "x", "+", "*")
# The paper's own algorithm(s): crimson, then black, never used by a baseline, which
# draw from the other nine colours of tab10 when something is highlighted.
HIGHLIGHT_COLORS = ("#c8102e", "#111111")
HIGHLIGHT_WIDTH, BASELINE_WIDTH, PLAIN_WIDTH = 2.8, 1.2, 1.4
BASELINE_ALPHA = 0.8
BAND_LABEL = "shaded: 95 % CI"


def _cycle(i: int, colors) -> dict:
    nc, ns = len(colors), len(LINESTYLES)
    return {
        "color": colors[i % nc],
        "linestyle": LINESTYLES[(i // nc) % ns],
        "marker": None if i < nc * ns else MARKERS[(i // (nc * ns) - 1) % len(MARKERS)],
    }


def series_styles(labels, highlight=()) -> dict[str, dict]:
    """A distinct style per label: ``{label: {"color", "linestyle", "marker", "lw",
    "alpha", "zorder", "highlight"}}``.

    Without ``highlight`` the first 10 labels get 10 distinct solid colours
    (tab10); then colour and line style are combined so that no two of the first 40
    labels share both; after that a marker is added as well. Labels in
    ``highlight`` (the paper's own algorithm) get the colours of
    :data:`HIGHLIGHT_COLORS` (then line styles) and a thick line on top; the others
    cycle through the nine remaining tab10 colours, thinner and slightly transparent.
    """
    labels = list(dict.fromkeys(labels))
    marked = [label for label in labels if label in set(highlight)]
    others = [label for label in labels if label not in set(highlight)]
    styles = {}
    for i, label in enumerate(marked):
        style = _cycle(i, HIGHLIGHT_COLORS)
        styles[label] = style | {"lw": HIGHLIGHT_WIDTH, "alpha": 1.0, "zorder": 4}
    palette = COLORS
    if marked:  # red is the highlight's: the baselines use the other nine colours
        palette = tuple(c for i, c in enumerate(COLORS) if i != 3)
    for i, label in enumerate(others):
        base = {"lw": BASELINE_WIDTH, "alpha": BASELINE_ALPHA} if marked else {}
        styles[label] = (
            _cycle(i, palette) | {"lw": PLAIN_WIDTH, "alpha": 1.0, "zorder": 2} | base
        )
    for label in labels:
        styles[label]["highlight"] = label in marked
    return {label: styles[label] for label in labels}


def _draw(ax, panel: dict, styles: dict, handles: dict) -> bool:
    """Draw one panel's curves and bands; whether it drew a band."""
    banded = False
    for label, c in panel["curves"].items():
        x = np.asarray(c["x"], float)
        style = styles[label]
        (line,) = ax.plot(
            x,
            c["mean"],
            label=label,
            lw=style["lw"],
            alpha=style["alpha"],
            zorder=style["zorder"],
            color=style["color"],
            linestyle=style["linestyle"],
            marker=style["marker"],
            markersize=3,
        )
        handles.setdefault(label, line)
        if "lo" in c and "hi" in c:
            band = 0.25 if style["highlight"] else 0.15 if any_marked(styles) else 0.2
            ax.fill_between(
                x,
                c["lo"],
                c["hi"],
                color=style["color"],
                alpha=band,
                lw=0,
                zorder=style["zorder"] - 1,
            )
            banded = True
    ax.set_title(panel.get("title", ""))
    ax.set_xlabel(panel.get("xlabel", ""))
    ax.set_ylabel(panel.get("ylabel", ""))
    if panel.get("logx"):
        ax.set_xscale("log")
    if panel.get("logy"):
        ax.set_yscale("log")
    ax.grid(alpha=0.3)
    return banded


def any_marked(styles: dict) -> bool:
    """Whether some series of :func:`series_styles` is highlighted."""
    return any(s["highlight"] for s in styles.values())


def _legend(fig, handles: dict, styles: dict, banded: bool, ncols: int) -> None:
    """One legend below the axes: highlighted series first (bold), then the others,
    then what the shaded bands are."""
    order = sorted(handles, key=lambda label: not styles[label]["highlight"])
    items = [(handles[label], label) for label in order]
    if banded:
        items.append((Patch(color="0.55", alpha=0.35, lw=0), BAND_LABEL))
    # as many legend columns as the longest label lets fit across the figure
    # (an entry at font size 8: ~0.45 in of line and gap + ~0.065 in a character)
    entry = 0.45 + 0.065 * max(len(label) for _, label in items)
    fit = max(1, int(fig.get_figwidth() // entry))
    legend = fig.legend(
        [h for h, _ in items],
        [label for _, label in items],
        loc="outside lower center",
        ncol=min(len(items), max(3, 2 * ncols), fit),
        fontsize=8,
        frameon=False,
    )
    for text in legend.get_texts():
        if text.get_text() in styles and styles[text.get_text()]["highlight"]:
            text.set_fontweight("bold")


def plot_panels(
    panels: list[dict],
    path: str,
    *,
    ncols: int | None = None,
    suptitle: str | None = None,
    format: str | None = None,
    highlight=(),
) -> str:
    """One subplot per panel and one shared legend below them.

    Each panel is ``{"title", "xlabel", "ylabel", "curves": {label: {"x", "mean", "lo",
    "hi"}}, "logx": bool, "logy": bool}``; bands are drawn between ``lo`` and ``hi``
    (NaNs skipped) and named "95 % CI" in the legend (give ``lo``/``hi`` only for
    95 % intervals). A label has the same style in every panel
    (:func:`series_styles` over the labels of all panels, in order of first
    appearance), and the legend sits below the axes so that it hides no curve.
    ``highlight``: the labels of the paper's own algorithm(s), drawn thick in a colour
    of their own and listed first; labels not in the figure are ignored. ``format``
    (e.g. ``"png"``) is the file format when ``path`` does not end with it
    (matplotlib's ``savefig``). Only the drawing depends on ``highlight``.
    """
    n = len(panels)
    ncols = ncols or min(n, 3) or 1
    nrows = max(int(np.ceil(n / ncols)), 1)
    labels = [label for p in panels for label in p["curves"]]
    styles = series_styles(labels, highlight)
    fig, axes = plt.subplots(
        nrows,
        ncols,
        figsize=(5.2 * ncols, 3.9 * nrows),
        squeeze=False,
        layout="constrained",
    )
    handles: dict = {}
    banded = False
    for ax, panel in zip(axes.flat, panels, strict=False):
        banded = _draw(ax, panel, styles, handles) or banded
    for ax in list(axes.flat)[n:]:
        ax.set_visible(False)
    if handles:
        _legend(fig, handles, styles, banded, ncols)
    if suptitle:
        fig.suptitle(suptitle)
    # "tight": the saved image holds the whole legend, however long its labels
    fig.savefig(path, dpi=120, format=format, bbox_inches="tight")
    plt.close(fig)
    return path
