"""The tuning benchmark's statistical verdict (benchmarks/tuning_report.py, issue 64
item 3) on hand-made rows: each number checked here is computed by hand from the
rule it states."""

import math

import numpy as np
import pytest

from benchmarks import tuning_report as tr


def test_a_hit_is_a_ratio_not_above_1_02_by_more_than_two_paired_se():
    ratios = [1.00, 1.05, 1.05, 1.30, 1.02]
    ses = [0.00, 0.01, 0.02, 0.20, 0.00]
    # 1.05 - 0.02 = 1.03 > 1.02 (miss); 1.05 - 0.04 = 1.01 (hit); 1.30 - 0.40 (hit)
    assert tr.run_hits(ratios, ses).tolist() == [True, False, True, True, True]
    with pytest.raises(ValueError, match="differ in shape"):
        tr.run_hits([1.0, 1.0], [0.1])


def test_the_hit_rate_lower_end_is_wilsons():
    h, n, rate, lo = tr.hit_rate([1] * 10)
    z = 1.959963984540054
    wilson = (1 + z * z / 20 - z * math.sqrt(z * z / 400)) / (1 + z * z / 10)
    assert (h, n, rate) == (10, 10, 1.0) and lo == pytest.approx(wilson, abs=1e-12)
    assert lo == pytest.approx(0.7225, abs=1e-4)  # 10/10: the 95 % lower end
    h, n, rate, lo = tr.hit_rate([1] * 9 + [0])
    assert (h, n, rate) == (9, 10, 0.9) and lo == pytest.approx(0.5958, abs=1e-4)


def test_behind_counts_differences_above_two_paired_se_and_any_excess_at_zero_se():
    diffs = [0.05, 0.05, -0.20, 0.001, 0.0]
    ses = [0.02, 0.03, 0.01, 0.0, 0.0]
    # 2.5 SE (behind), 1.67 SE (not), ahead, a sure excess at SE 0 (behind), a tie
    assert tr.behind(diffs, ses) == 2


def test_the_log_ratio_is_the_paired_mean_of_the_logs_with_its_interval():
    a, b = np.array([1.10, 1.00, 1.30]), np.array([1.00, 1.00, 1.00])
    p = tr.log_ratio(a, b)
    logs = np.log(a / b)
    se = logs.std(ddof=1) / math.sqrt(3)
    assert p.mean == pytest.approx(logs.mean()) and p.se == pytest.approx(se)
    assert p.hi == pytest.approx(logs.mean() + 1.959963984540054 * se)
    with pytest.raises(ValueError, match="two or more"):
        tr.log_ratio([1.0], [1.0])


def _row(method, ratios, se, vs=None):
    return {"method": method, "fraction": 1.0, "ratios": ratios, "se": se,
            "vs_grid": vs}  # fmt: skip


def test_a_task_fails_on_a_run_above_1_25_or_a_log_ratio_bound_above_0_02():
    grid = _row("grid", [1.0] * 4, [0.01] * 4)
    close = _row("tune", [1.0, 1.01, 0.99, 1.0], [0.01] * 4, [[0.0, 0.01]] * 4)
    rerun = _row("grid-b", [1.0] * 4, [0.01] * 4, [[0.03, 0.01]] + [[0.0, 0.01]] * 3)
    v = tr.task_verdict({"tune": close, "grid": grid, "grid-b": rerun})
    assert v["ok"] and (v["hits"], v["runs"], v["above"]) == (4, 4, 0)
    assert (v["behind"], v["behind_rerun"]) == (0, 1)
    # one run at 1.30: a miss above 1.25, the task fails
    far = _row("tune", [1.0, 1.0, 1.0, 1.30], [0.01] * 4)
    v = tr.task_verdict({"tune": far, "grid": grid})
    assert not v["ok"] and v["above"] == 1 and v["hits"] == 3
    assert v["behind"] is None and v["behind_rerun"] is None  # not recorded
    # every run 3 % behind the grid (within 1.25): the log-ratio bound fails it
    lag = _row("tune", [1.03, 1.031, 1.029, 1.03], [0.001] * 4)
    v = tr.task_verdict({"tune": lag, "grid": grid})
    assert v["log"].hi > tr.LOG_UPPER and not v["ok"] and v["above"] == 0


def test_the_pooled_rate_counts_every_run_of_every_task():
    a = {"hits": 9, "runs": 10}
    b = {"hits": 10, "runs": 10}
    h, n, rate, lo = tr.pooled([a, b])
    assert (h, n, rate) == (19, 20, 0.95)
    assert lo == pytest.approx(tr.hit_rate([1] * 19 + [0])[3])
    assert lo < 0.95
