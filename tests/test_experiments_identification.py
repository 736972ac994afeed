"""Smoke tests of the best-arm-identification experiments (tiny settings, tmp output)."""

import os

import numpy as np
import pytest

from experiments import (  # noqa: F401  (registers the experiments)
    _core,
    shvar,
    shvar_movielens,
    ugape,
)


def _run(tmp_path, name, **extra):
    cfg = _core.Config(
        name=name, quick=True, reps=extra.pop("reps", 8), out=str(tmp_path), extra=extra
    )
    out = _core.execute(cfg)
    assert os.path.isfile(os.path.join(out, "table.md"))
    assert os.path.isfile(os.path.join(out, "figure.png"))
    return out


def test_fig2_tiny(tmp_path):
    _run(
        tmp_path,
        "shvar-fig2",
        num_arms=8,
        budgets=(48, 96),
        algorithms=("Unif", "GapE", "SHVar"),
    )


@pytest.mark.slow  # 6-30 s on a 2-core machine: CI runs it in the slow step
def test_fig3_tiny(tmp_path):
    _run(
        tmp_path,
        "shvar-fig3",
        arms=(4, 6, 8),
        budget=96,
        algorithms=("SHAdaVar", "VBR*"),
    )


@pytest.mark.slow  # ~13 s of CPU; fig2/fig3 cover the path
def test_fig5_tiny_synthetic_data(tmp_path):
    rng = np.random.default_rng(0)
    lines = [
        f"{u}\t{m}\t{rng.integers(1, 6)}\t0"
        for u in range(1, 31)
        for m in range(1, 41)
        if rng.random() < 0.5
    ]
    path = tmp_path / "u.data"
    path.write_text("\n".join(lines) + "\n")
    _run(
        tmp_path,
        "shvar-fig5",
        data=str(path),
        num_arms=8,
        budgets=(48, 96),
        algorithms=("GapE-V", "SH"),
    )


def test_fig5_missing_data_exits_cleanly(tmp_path, capsys):
    with pytest.raises(SystemExit) as info:
        _run(tmp_path, "shvar-fig5", data=str(tmp_path / "nowhere"))
    assert info.value.code == 0
    assert "grouplens.org" in capsys.readouterr().out


@pytest.mark.slow  # ~45 s of CPU; CI runs it in the slow step
def test_ugape_tiny(tmp_path):
    _run(tmp_path, "ugape-budget", budgets=(40, 60), settings=((1, 0.05), (3, 0.0)))
    _run(tmp_path, "ugape-confidence", deltas=(0.5,), horizon=300, ms=(3,))
