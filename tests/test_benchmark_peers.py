"""The benchmark's cached-index peers (benchmarks/throughput.py) pull exactly the arms
of the peers that recompute APT's index every step: same draws, same labels."""

import numpy as np
import pytest

from benchmarks import throughput as tp


def test_cached_lockstep_equals_recomputed():
    means, stds = tp.apt_instance(10)
    a = tp.apt_lockstep(means, stds, 400, 64, seed=3)
    b = tp.apt_lockstep(means, stds, 400, 64, seed=3, cached=True)
    np.testing.assert_array_equal(a, b)
    assert 0 < a.mean() < 1


def test_cached_numba_equals_recomputed():
    pytest.importorskip("numba")
    means, stds = tp.apt_instance(10)
    full, cached = tp.make_numba(parallel=False)
    args = (means, stds, 400, tp.TAU, tp.EPS, 16, 5)
    np.testing.assert_array_equal(full(*args), cached(*args))
