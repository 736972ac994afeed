"""The experiments' figures set the paper's algorithm apart and name their bands; the
tables print each column's numbers at one precision."""

from __future__ import annotations

import re

import matplotlib
import numpy as np

from experiments import _claims, _write
from jbandits.analysis import plotting


def _figure(tmp_path, monkeypatch, highlight):
    figures = []
    monkeypatch.setattr(plotting.plt, "close", figures.append)
    x = np.linspace(1.0, 10.0, 20)
    curves = {
        name: {"x": x, "mean": np.sin(x + i), "lo": np.sin(x + i) - 0.1}
        | {"hi": np.sin(x + i) + 0.1}
        for i, name in enumerate(["UA", "APT", "LSA", "CSAR"])
    }
    plotting.plot_panels(
        [{"title": "p", "curves": curves}], str(tmp_path / "f.png"), highlight=highlight
    )
    (fig,) = figures
    return fig


def test_the_papers_algorithm_stands_out_and_the_bands_are_named(tmp_path, monkeypatch):
    fig = _figure(tmp_path, monkeypatch, highlight=("LSA", "not in the figure"))
    lines = {line.get_label(): line for line in fig.axes[0].get_lines()}
    lsa, others = lines.pop("LSA"), lines.values()
    assert all(lsa.get_linewidth() > 2 * o.get_linewidth() for o in others)
    assert all(lsa.get_zorder() > o.get_zorder() for o in others)
    colour = matplotlib.colors.to_hex(lsa.get_color())
    assert colour not in {matplotlib.colors.to_hex(o.get_color()) for o in others}
    (legend,) = fig.legends
    texts = [t.get_text() for t in legend.get_texts()]
    assert texts[0] == "LSA" and legend.get_texts()[0].get_fontweight() == "bold"
    assert any("95 % CI" in t for t in texts)
    assert sorted(texts[1:4]) == ["APT", "CSAR", "UA"]


def test_without_highlight_every_series_is_drawn_alike(tmp_path, monkeypatch):
    fig = _figure(tmp_path, monkeypatch, highlight=())
    widths = {line.get_linewidth() for line in fig.axes[0].get_lines()}
    assert len(widths) == 1
    texts = [t.get_text() for t in fig.legends[0].get_texts()]
    assert texts[:4] == ["UA", "APT", "LSA", "CSAR"]


def _decimals(text: str) -> set[int]:
    return {len(m) for m in re.findall(r"\d+\.(\d+)", text)} or {0}


def test_one_precision_per_table_column():
    rows = [
        {"a": _claims.fmt_ci(3844.2, 3751.0, 3937.5), "d": 0.1, "n": 3000},
        {"a": _claims.fmt_ci(12912.3, 12389.0, 13420.4), "d": 0.001, "n": 300},
        {"a": _claims.fmt_ci(37.25, 30.5, 44.0), "d": 0.01, "n": 30},
    ]
    table = _write.markdown_table(rows).splitlines()[2:]
    cells = [[c.strip() for c in line.strip("|").split("|")] for line in table]
    for col in range(3):
        assert len(set().union(*[_decimals(r[col]) for r in cells])) == 1, cells
    assert (
        cells[2][0] == "37.2 [30.5, 44.0]" and cells[0][0] == "3844.2 [3751.0, 3937.5]"
    )
    assert [r[1] for r in cells] == ["0.100", "0.001", "0.010"]
    assert [r[2] for r in cells] == ["3000", "300", "30"]
    # the text of an interval is unchanged where it is used outside a table
    assert (
        str(_claims.fmt_ci(12912.3, 12389.0, 13420.4))
        == "1.291e+04 [1.239e+04, 1.342e+04]"
    )


def _fake_run(algo, family, means, key, reps, cap, sigma=1.0, **_):
    """Runs of ``algo`` without running it: log-normal stopping times whose scale
    depends on the label, every run stopped on the best arm (the figure only)."""
    from experiments import _fc

    means = np.asarray(means, float)
    rng = np.random.default_rng(len(algo.label) * 7 + means.size)
    stop = np.round(rng.lognormal(np.log(400 + 50 * len(algo.label)), 0.4, reps))
    best = np.full(reps, int(np.argmax(means)))
    pulls = np.tile(stop[:, None] / means.size, (1, means.size))
    return _fc.Runs(stop, np.ones(reps, bool), best, np.zeros(reps, bool), pulls)


def test_fixed_confidence_figures_name_their_algorithms(tmp_path, monkeypatch):
    """gk16-table1, shang-fig1 and fws-bai draw one named tick per algorithm (its
    stopping-time distribution: boxes) and no empty axes."""
    from experiments import _core, _fc, fws, gk16, shang

    monkeypatch.setattr(_fc, "run", _fake_run)
    figures = []
    monkeypatch.setattr(plotting.plt, "close", figures.append)
    for module in (gk16, shang, fws):
        outcome = module.run(_core.Config(name="x", quick=True, reps=8))
        plotting.plot_panels(outcome.panels, str(tmp_path / "f.png"))
        fig = figures.pop()
        axes = fig.get_axes()
        assert axes and all(ax.get_visible() for ax in axes), module.__name__
        assert len(axes) == len(outcome.panels), module.__name__
        for ax in axes:
            ticks = [t.get_text() for t in ax.get_xticklabels()]
            assert ticks == list(module.LABELS), (module.__name__, ticks)
            assert len(ax.patches) >= len(module.LABELS)  # a box per algorithm
        texts = [t.get_text() for t in fig.legends[0].get_texts()]
        assert plotting.BOX_NOTE in texts and plotting.MEAN_NOTE in texts
