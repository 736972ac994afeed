"""jbandits.analysis.fixed_confidence: stopping-time summaries and delta-correctness
verdicts, against hand computations."""

from __future__ import annotations

import math

import numpy as np
import pytest

from jbandits.analysis import fixed_confidence as fc


def wilson(k: int, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    """Wilson's score interval written out (JASA 1927)."""
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return (0.0 if k == 0 else centre - half), (1.0 if k == n else centre + half)


def test_summary_by_hand():
    pulls = np.array([10, 20, 30, 40, 100])
    recommended = np.array([0, 0, 1, 0, 2])
    stopped = np.array([True, True, True, True, False])
    s = fc.summarize_stopping(pulls, recommended, 0, stopped, delta=0.1, t_star=12.5)
    assert s.runs == 5 and s.capped == 1
    assert s.mean == 40.0
    assert s.se == pytest.approx(np.std(pulls, ddof=1) / math.sqrt(5), rel=1e-15)
    assert s.quantiles == {0.1: 14.0, 0.5: 30.0, 0.9: 76.0}
    # the capped run recommends arm 2 at the cap: an error, with the one of run 3
    assert s.errors == 2 and s.error_rate == 0.4
    assert s.error_ci == pytest.approx(wilson(2, 5), rel=1e-12)
    assert s.t_star == 12.5
    assert s.lower_bound == pytest.approx(12.5 * 0.8 * math.log(9.0), rel=1e-15)
    assert s.t_star_log == pytest.approx(12.5 * math.log(10.0), rel=1e-15)


def test_summary_per_run_best_arm_and_no_t_star():
    """Arms permuted per run: best_arm is a vector; without T* the bounds are None."""
    s = fc.summarize_stopping(
        [5.0, 7.0, 9.0], [2, 0, 1], np.array([2, 1, 1]), np.ones(3, bool), delta=0.05
    )
    assert s.errors == 1 and s.capped == 0 and s.mean == 7.0
    assert s.t_star is None and s.lower_bound is None and s.t_star_log is None
    one = fc.summarize_stopping([5], [0], 0, [True], delta=0.05)
    assert one.se == 0.0 and one.errors == 0 and one.error_ci == (0.0, wilson(0, 1)[1])


def test_kl_delta_and_the_lower_bound_facts():
    """GK16 Theorem 1: kl(delta, 1 - delta) ~ log(1/delta), >= log(1/(2.4 delta))."""
    for delta in (0.3, 0.1, 0.01, 1e-4, 1e-8):
        value = fc.kl_delta(delta)
        direct = delta * math.log(delta / (1 - delta)) + (1 - delta) * math.log(
            (1 - delta) / delta
        )
        assert value == pytest.approx(direct, rel=1e-12)
        assert value >= math.log(1 / (2.4 * delta))
    assert fc.kl_delta(1e-8) / math.log(1e8) == pytest.approx(1.0, abs=1e-7)


def test_delta_correct_against_wilson_by_hand():
    for errors, runs, delta in [
        (0, 35, 0.1),
        (0, 34, 0.1),
        (5, 1000, 0.01),
        (4, 1000, 0.01),
        (30, 3000, 0.01),
        (280, 3000, 0.1),
        (0, 1, 0.5),
    ]:
        high = wilson(errors, runs)[1]
        assert fc.delta_correct(errors, runs, delta) == (high <= delta), (errors, runs)
    assert fc.delta_correct(0, 35, 0.1) and not fc.delta_correct(0, 34, 0.1)
    # a wider interval (z = 3) needs more runs
    assert not fc.delta_correct(0, 35, 0.1, z=3.0) and fc.delta_correct(
        0, 81, 0.1, z=3.0
    )


def test_delta_correct_threshold_in_runs():
    """With no error the bound is z^2 / (n + z^2): the verdict turns at n >= 9 z^2."""
    z = 1.959963984540054
    first = next(n for n in range(1, 100) if fc.delta_correct(0, n, 0.1))
    assert first == math.ceil(9 * z * z)


def test_errors_are_refused():
    ok = dict(num_pulls=[1, 2], recommended=[0, 0], best_arm=0, stopped=[True, True])
    with pytest.raises(ValueError, match="delta"):
        fc.summarize_stopping(**ok, delta=1.0)
    with pytest.raises(ValueError, match="delta"):
        fc.summarize_stopping(**ok, delta=float("nan"))
    with pytest.raises(ValueError, match="t_star"):
        fc.summarize_stopping(**ok, delta=0.1, t_star=-1.0)
    with pytest.raises(ValueError, match="runs"):
        fc.summarize_stopping(**{**ok, "recommended": [0, 0, 0]}, delta=0.1)
    with pytest.raises(ValueError, match="bool"):
        fc.summarize_stopping(**{**ok, "stopped": [1, 1]}, delta=0.1)
    with pytest.raises(ValueError, match="integers"):
        fc.summarize_stopping(**{**ok, "recommended": [0.5, 0]}, delta=0.1)
    with pytest.raises(ValueError, match="finite"):
        fc.summarize_stopping(**{**ok, "num_pulls": [1, np.nan]}, delta=0.1)
    with pytest.raises(ValueError, match="no run"):
        fc.summarize_stopping([], [], 0, np.zeros(0, bool), delta=0.1)
    with pytest.raises(ValueError, match="1-D"):
        fc.summarize_stopping([[1, 2]], [[0, 0]], 0, [[True, True]], delta=0.1)
    for args in [(3, 2, 0.1), (-1, 2, 0.1), (0, 0, 0.1), (1.5, 3, 0.1), (0, 3, 0.0)]:
        with pytest.raises(ValueError):
            fc.delta_correct(*args)
    with pytest.raises(ValueError, match="z"):
        fc.delta_correct(0, 10, 0.1, z=0.0)


def test_float_arrays_from_the_engine_are_accepted():
    """The engine's outputs come as float32 pull counts and int32 arms."""
    s = fc.summarize_stopping(
        np.array([3.0, 4.0], np.float32),
        np.array([1, 1], np.int32),
        np.int32(1),
        np.array([True, False]),
        delta=0.2,
    )
    assert (s.mean, s.errors, s.capped) == (3.5, 0, 1)
