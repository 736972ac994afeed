"""The gallery pages (docs/generate.py): the runtime comes from the result's meta.json,
the figure is full width with a link to the full-size image, and a page without
results says how to produce them."""

from __future__ import annotations

import importlib.util
import json
import pathlib

import pytest

DOCS = pathlib.Path(__file__).resolve().parents[1] / "docs"


@pytest.fixture
def generate(tmp_path, monkeypatch):
    spec = importlib.util.spec_from_file_location("docs_generate", DOCS / "generate.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    monkeypatch.setattr(module, "ROOT", tmp_path)
    return module


class _Exp:
    name, title, source, estimate = "demo", "A demo", "Someone et al., Venue 2020", ""


def _result(root: pathlib.Path, seconds: float) -> None:
    d = root / "results" / "demo-quick"
    d.mkdir(parents=True)
    (d / "figure.png").write_bytes(b"png")
    (d / "table.md").write_text("# t\n\n## Claims\n\n| a |\n|---|\n| 1 |\n")
    meta = {"seconds": seconds, "versions": {"device_kind": "2 x cpu"}}
    (d / "meta.json").write_text(json.dumps(meta))


def test_runtime_and_full_width_figure_from_the_result(generate, tmp_path):
    _result(tmp_path, 134.08)
    assert generate._runtime("demo") == "2.2 min (quick, 2 x cpu)"
    out = tmp_path / "gallery"
    out.mkdir()
    page = generate._experiment_page(_Exp(), None, [], out)
    assert "```{container} full-width" in page
    assert "{download}`Open the full-size image <_figures/demo.png>`" in page
    assert "Wall time of the run shown: 2.2 min (quick, 2 x cpu)." in page
    assert (out / "_figures" / "demo.png").exists()


def test_a_page_without_results_says_how_to_produce_them(generate, tmp_path):
    assert generate._runtime("demo") == "not run for this build"
    page = generate._experiment_page(_Exp(), None, [], tmp_path)
    assert "python -m experiments run demo --quick" in page
    assert "no `results/` folder" in page
