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
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from jbandits.analysis import stats

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


# a categorical panel ("kind": "categorical"): one group of boxes per named category
BOX_NOTE = "box: quartiles, median; whiskers: 5-95 %"
MEAN_NOTE = "mean [95 % CI]"
MARK_SYMBOLS = ("D", "*", "P", "X")


def _categorical_labels(panel: dict) -> list:
    return [*panel["samples"], *panel.get("marks", {}), *panel.get("refs", {})]


def _draw_categorical(ax, panel: dict, styles: dict, handles: dict, bold=()) -> list:
    """Draw a categorical panel; the legend's explanatory entries it needs.

    ``{"kind": "categorical", "title", "ylabel", "categories": [name],
    "samples": {series: [values [R] or None per category]}, "marks": {name: [value or
    NaN per category]}, "refs": {name: value}, "logy": bool}``: per category one box
    per series (quartiles, median, whiskers at the 5th and 95th percentiles, no
    outliers) with its mean and 95 % CI (normal) as a black dot and bar, then one
    marker per mark (e.g. a paper's printed value) beside them; each ref is a dashed
    horizontal line (e.g. a lower bound). The categories are the tick labels (those
    in ``bold``, the paper's own algorithms, in bold).
    """
    cats = list(panel["categories"])
    samples, marks = panel["samples"], panel.get("marks", {})
    marks = {k: v for k, v in marks.items() if np.isfinite(np.asarray(v, float)).any()}
    slots = len(samples) + (1 if marks else 0)
    width = 0.8 / max(slots, 1)
    offset = lambda j: (j - (slots - 1) / 2) * width  # noqa: E731
    x = np.arange(len(cats), dtype=float)
    drew_mean = False
    for j, (name, per_cat) in enumerate(samples.items()):
        color = styles[name]["color"]
        for i, vals in enumerate(per_cat):
            v = np.asarray([] if vals is None else vals, float)
            v = v[np.isfinite(v)]
            if v.size == 0:
                continue
            pos = x[i] + offset(j)
            ax.boxplot(
                [v], positions=[pos], widths=0.8 * width, whis=(5, 95),
                showfliers=False, patch_artist=True, manage_ticks=False,
                boxprops={"facecolor": color, "alpha": 0.45, "edgecolor": color},
                medianprops={"color": color, "lw": 1.6},
                whiskerprops={"color": color}, capprops={"color": color},
            )  # fmt: skip
            mean = v.mean()
            half = stats.Z95 * stats.standard_error(v, single=0.0)
            ax.errorbar(pos, mean, yerr=half, fmt="o", color="k", ms=3.5,
                        capsize=2, lw=1, zorder=5)  # fmt: skip
            drew_mean = True
        handles.setdefault(name, Patch(facecolor=color, edgecolor=color, alpha=0.45))
    for k, (name, per_cat) in enumerate(marks.items()):
        vals = np.asarray(per_cat, float)
        (m,) = ax.plot(
            x + offset(slots - 1), vals, linestyle="none",
            marker=MARK_SYMBOLS[k % len(MARK_SYMBOLS)], ms=7,
            color=styles[name]["color"], markeredgecolor="k", zorder=6,
        )  # fmt: skip
        handles.setdefault(name, m)
    for k, (name, value) in enumerate(panel.get("refs", {}).items()):
        line = ax.axhline(value, color=styles[name]["color"], lw=1.3, zorder=1,
                          linestyle=("--", ":", "-.")[k % 3])  # fmt: skip
        handles.setdefault(name, line)
    ax.set_xticks(x)
    long = max((len(c) for c in cats), default=0) > 6
    ax.set_xticklabels(
        cats, rotation=25 if long else 0, ha="right" if long else "center",
        rotation_mode="anchor",
    )  # fmt: skip
    for tick in ax.get_xticklabels():
        if tick.get_text() in set(bold):
            tick.set_fontweight("bold")
    ax.set_xlim(-0.5, len(cats) - 0.5)
    ax.set_title(panel.get("title", ""))
    ax.set_ylabel(panel.get("ylabel", ""))
    if panel.get("logy"):
        ax.set_yscale("log")
    ax.grid(alpha=0.3, axis="y")
    notes = []
    if samples:
        notes.append((Patch(facecolor="0.8", edgecolor="0.4"), BOX_NOTE))
    if drew_mean:
        mean = Line2D([], [], color="k", marker="o", ms=3.5, lw=1)
        notes.append((mean, MEAN_NOTE))
    return notes


def any_marked(styles: dict) -> bool:
    """Whether some series of :func:`series_styles` is highlighted."""
    return any(s["highlight"] for s in styles.values())


def _legend(
    fig, handles: dict, styles: dict, banded: bool, ncols: int, notes=()
) -> None:
    """One legend below the axes: highlighted series first (bold), then the others,
    then what the shaded bands (and ``notes``: ``(handle, text)``) are."""
    order = sorted(handles, key=lambda label: not styles[label]["highlight"])
    items = [(handles[label], label) for label in order]
    if banded:
        items.append((Patch(color="0.55", alpha=0.35, lw=0), BAND_LABEL))
    items += list(notes)
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
    95 % intervals). A panel ``{"kind": "categorical", ...}`` draws distributions
    per named category instead (:func:`_draw_categorical`). A label has the same
    style in every panel
    (:func:`series_styles` over the labels of all panels, in order of first
    appearance), and the legend sits below the axes so that it hides no curve.
    ``highlight``: the labels of the paper's own algorithm(s), drawn thick in a colour
    of their own and listed first; labels not in the figure are ignored. ``format``
    (e.g. ``"png"``) is the file format when ``path`` does not end with it
    (matplotlib's ``savefig``). Only the drawing depends on ``highlight``.
    """
    n = len(panels)
    ncols = ncols or (2 if n == 4 else min(n, 3)) or 1  # 4 panels: 2 x 2, none empty
    nrows = max(int(np.ceil(n / ncols)), 1)
    labels = [
        label
        for p in panels
        for label in (
            _categorical_labels(p) if p.get("kind") == "categorical" else p["curves"]
        )
    ]
    styles = series_styles(labels, highlight)
    fig, axes = plt.subplots(
        nrows,
        ncols,
        figsize=(5.2 * ncols, 3.9 * nrows),
        squeeze=False,
        layout="constrained",
    )
    handles: dict = {}
    banded, notes = False, {}
    for ax, panel in zip(axes.flat, panels, strict=False):
        if panel.get("kind") == "categorical":
            drawn = _draw_categorical(ax, panel, styles, handles, highlight)
            notes |= {text: h for h, text in drawn}
        else:
            banded = _draw(ax, panel, styles, handles) or banded
    for ax in list(axes.flat)[n:]:
        ax.set_visible(False)
    if handles:
        notes = [(h, text) for text, h in notes.items()]
        _legend(fig, handles, styles, banded, ncols, notes)
    if suptitle:
        fig.suptitle(suptitle)
    # "tight": the saved image holds the whole legend, however long its labels
    fig.savefig(path, dpi=120, format=format, bbox_inches="tight")
    plt.close(fig)
    return path
