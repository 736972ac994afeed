"""Hardening round 4 (issue 65), class 8: a corrupted digest in a store's manifest is
reported as the manifest's damage (naming manifest.json), not as a damaged part; a
well-formed digest that disagrees with an intact part names both."""

import json
import shutil

import jax
import numpy as np
import pytest

import jbandits
from jbandits.analysis import metrics
from jbandits.analysis.store import StoreDamaged

K, BUDGET, REPS, CHUNK = 3, 20, 64, 32  # 2 chunks


def _run(path):
    bandit, params = jbandits.envs.bernoulli(np.linspace(0.2, 0.8, K))
    res = jbandits.simulate(
        jbandits.make("apt", num_arms=K, threshold=0.5, epsilon=0.05),
        bandit,
        params,
        jax.random.key(5),
        budget=BUDGET,
        num_reps=REPS,
        batch_size=CHUNK,
        metric=metrics.thresholding(0.5),
        progress=False,
        store=path,
    )
    return np.asarray(res.pulls)


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    path = tmp_path_factory.mktemp("store") / "s"
    return path, _run(path)


@pytest.fixture
def copy(written, tmp_path):
    path, pulls = written
    shutil.copytree(path, tmp_path / "s")
    return tmp_path / "s", pulls


def _set_digest(path, value):
    manifest = json.loads((path / "manifest.json").read_text())
    manifest["parts"]["g0"]["00001"] = value
    (path / "manifest.json").write_text(json.dumps(manifest))


@pytest.mark.parametrize("value", ["", "zz" * 32, "ab" * 31, "AB" * 32, "0" * 65])
def test_a_malformed_digest_in_the_manifest_is_the_manifests_damage(copy, value):
    path, _ = copy
    _set_digest(path, value)
    with pytest.raises(StoreDamaged, match="not SHA-256 digests") as err:
        _run(path)
    assert str(path / "manifest.json") in str(err.value)
    assert "store part" not in str(err.value)


def test_a_well_formed_digest_that_differs_names_the_manifest_and_the_part(copy):
    path, pulls = copy
    part = path / "g0" / "part-00001.parquet"
    _set_digest(path, "0" * 64)
    with pytest.raises(StoreDamaged) as err:
        _run(path)
    text = str(err.value)
    assert str(path / "manifest.json") in text and f"store part {part} " in text
    assert "reads as chunk 1 of g0" in text
    part.unlink()  # the way forward the message gives: the chunk and its record anew
    np.testing.assert_array_equal(_run(path), pulls)
