"""Lanes that refill from a queue (jbandits.sim.runner.refill): every replication's
result is exactly the plain program's, in every field; the comparison fails when a
replication gets another's key; the report counts lane-steps and useful pulls; which
runs refill; the program widths; a store resumes."""

import jax
import numpy as np
import pytest

import jbandits
from jbandits.analysis import metrics
from jbandits.sim import runner
from jbandits.sim.runner import refill
from jbandits.sim.runner.work import Work

EASY = (0.7, 0.5, 0.4, 0.3)
TIED = (0.6, 0.6, 0.4, 0.3)  # two best arms: KL-Racing cannot stop, runs to the cap


def _work(reps=6):
    """KL-Racing on a stack of 5 instances (one tied) x ``reps`` replications, cells
    with different caps: stopping times from tens to the cap."""
    means = np.array([EASY, TIED, EASY, (0.8, 0.3, 0.3, 0.2), EASY])
    bandit, params = jbandits.envs.bernoulli(means)
    budget = np.array([3000, 1500, 800, 3000, 3000])
    lanes = runner.Lanes(
        hp={"delta": np.array([0.1, 0.1, 0.05, 0.1, 0.2])}, params=params,
        instance=np.arange(5), budget=budget,
        keys=runner.instance_keys(jax.random.key(7), 5), num_reps=reps,
        horizon=np.full(5, 3000),
    )  # fmt: skip
    source = runner.registered("kl_racing", {"num_arms": 4, "family": "bernoulli"})
    opts = runner.Options(metric=metrics.identification(), return_state=True)
    return source, bandit, lanes, opts


def _run(refill_on, batch=8, report=None):
    source, bandit, lanes, opts = _work()
    return runner.execute(
        source, bandit, lanes, opts, batch_size=batch, refill=refill_on,
        progress=False, report=report,
    )  # fmt: skip


def _same(a: dict, b: dict) -> list:
    """The fields where ``a`` and ``b`` differ (every result field compared)."""
    assert sorted(a) == sorted(b)
    return [k for k in a if not k.startswith("_") and not np.array_equal(a[k], b[k])]


@pytest.fixture(scope="module")
def plain():
    report = runner.Report()
    return _run(False, report=report), report


def test_refilled_lanes_give_the_plain_programs_results_in_every_field(
    plain, monkeypatch
):
    """Every lane moves to the narrowest program that holds the live ones (no
    compilation is waited for): widths 8, 2 and 1 all run."""
    monkeypatch.setattr(refill, "COMPILE_WEIGHT", 0.0)
    report = runner.Report()
    got = _run(True, report=report)
    want, _ = plain
    assert "state.0" in got and "metric.error" in got and "pulls" in got
    assert _same(got, want) == []
    stops = got["num_pulls"]
    assert stops.min() < 200 and not got["stopped"][1].any()  # tied: at its cap
    assert report.extra["refill"]["widths"] == [8, 2, 1]


def test_the_comparison_fails_when_two_replications_swap_keys(plain, monkeypatch):
    """Lanes 0 and 1 of the work (replications 0 and 1 of the first cell in run
    order, the one of the smallest budget) get each other's replication index, hence
    each other's key: their results differ from the plain program's, so the test
    above can fail."""
    gather = Work.gather

    def swapped(self, lane_ids):
        h, p, k, rep, b, hz = gather(self, lane_ids)
        rep = np.where(lane_ids == 0, 1, np.where(lane_ids == 1, 0, rep))
        return h, p, k, rep.astype(np.int32), b, hz

    monkeypatch.setattr(Work, "gather", swapped)
    got = _run(True)
    assert "pulls" in _same(got, plain[0])
    cell = int(np.argmin(_work()[2].budget))
    np.testing.assert_array_equal(got["pulls"][cell, 0], plain[0]["pulls"][cell, 1])
    np.testing.assert_array_equal(got["pulls"][cell, 1], plain[0]["pulls"][cell, 0])
    got["pulls"][cell, :2] = got["pulls"][cell, 1::-1]
    assert "pulls" not in _same(got, plain[0])


def test_the_report_counts_lane_steps_and_useful_pulls(plain):
    report = runner.Report()
    got = _run(True, report=report)
    useful = int(got["num_pulls"].sum())
    assert report.pulls == useful == plain[1].pulls
    assert useful <= report.lane_steps_executed < plain[1].lane_steps_executed
    # refilled: most lane-steps pull (the plain chunks wait for their tied lanes)
    assert useful / report.lane_steps_executed > 0.7
    assert useful / plain[1].lane_steps_executed < 0.6


def test_which_runs_refill():
    kl = runner.registered("kl_racing", {"num_arms": 4})
    assert refill.stops(kl) and refill.stops(runner.registered("ugapec", {"m": 1}))
    assert not refill.stops(runner.registered("ucb1", {}))
    assert not refill.stops(runner.source_of(lambda: None)[0])
    opts = runner.Options()
    assert refill.applies(kl, opts, None) and not refill.applies(kl, opts, False)
    assert not refill.applies(kl, runner.Options(num_checkpoints=2), None)
    assert not refill.applies(kl, runner.Options(record_arms=True, horizon=9), True)
    fused = runner.Options(execution=jbandits.Execution(backend="fused"))
    assert not refill.applies(kl, fused, None)  # the fused kernel runs whole chunks
    assert refill.applies(runner.registered("ucb1", {}), opts, True)


def test_program_widths():
    assert refill.widths(400, 2) == [400, 100, 26, 8, 2]
    assert refill.widths(32, 2) == [32, 8, 2]
    assert refill.widths(8, 1) == [8, 2, 1]
    assert refill.widths(2, 2) == [2]


def test_a_store_resumes_refilled_lanes(tmp_path, plain):
    pytest.importorskip("pyarrow")
    from jbandits.analysis.store import Store

    source, bandit, lanes, opts = _work()
    opts = runner.Options(metric=metrics.identification())
    call = dict(batch_size=8, refill=True, progress=False)
    first = runner.Report()
    got = runner.execute(
        source, bandit, lanes, opts, store=Store(str(tmp_path / "s")), report=first,
        **call,
    )  # fmt: skip
    again = runner.Report()
    read = runner.execute(
        source, bandit, lanes, opts, store=Store(str(tmp_path / "s")), report=again,
        **call,
    )  # fmt: skip
    assert first.chunks == 4 and again.chunks == 0 and again.chunks_skipped == 4
    assert _same(read, got) == []
    assert _same(got, {k: v for k, v in plain[0].items() if k in got}) == []


def _tail_lanes(width: int, live: int) -> refill._Lanes:
    lanes = refill._Lanes(width)
    lanes.slot[:live] = np.arange(live)
    return lanes


def test_a_tail_narrows_once_past_and_expected_savings_pay_a_compilation():
    """The tail rule (refill._Tail.after) on made-up CPU times: width 400 compiled
    in 4 s; a call of 1 s and 1000 steps leaves 99 lanes live. Its empty lanes cost
    0.75 s, under a compilation, so the rule of the waste so far stays at 400; with
    the lanes expected to run 10 000 steps more, width 100 saves 0.75 s +
    1 ms x 10 000 x 300 / 400 = 8.25 s and is compiled. Expected to run only 100
    steps more, it stays; a second tail of the same program then adds its own
    saving to the first one's: 0.75 + 0.75 + 1 ms x 4000 x 300 / 400 = 4.5 > 4."""
    ladder = refill.widths(400, 2)
    tail = refill._Tail(ladder, {"saved": {}, 400: 4.0})
    assert tail.after(_tail_lanes(400, 99), 1.0, 1000, 10_000) == 100
    costs = {"saved": {}, 400: 4.0}
    after = refill._Tail(ladder, costs).after
    assert after(_tail_lanes(400, 99), 1.0, 1000, 100) == 400
    assert costs["saved"][100] == pytest.approx(0.75)
    assert after(_tail_lanes(400, 99), 1.0, 1000, 4000) == 100


def test_a_tail_moves_to_the_narrowest_width_that_pays():
    """One lane live in a program of 400: width 2 saves the most (398 of 400 lanes)
    and is taken at once, skipping 100, 26 and 8; a width already compiled costs
    nothing and is taken whatever the saving."""
    ladder = refill.widths(400, 2)
    tail = refill._Tail(ladder, {"saved": {}, 400: 4.0})
    assert tail.after(_tail_lanes(400, 1), 1.0, 1000, 5000) == 2
    costs = {"saved": {}, 400: 4.0, 8: 3.0}
    assert refill._Tail(ladder, costs).after(_tail_lanes(400, 1), 0.1, 1000, 10) == 8
    assert refill._Tail(ladder, costs).after(_tail_lanes(400, 0), 1.0, 1000, 0) == 400
