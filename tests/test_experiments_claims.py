"""The experiments' claims module (paired differences, verdict ladder), the oracle
tunings of ``jbandits.analysis.oracles`` and ``Problem.bandit()``: host-side, no compilation."""

import math

import numpy as np
import pytest

import jbandits
from experiments import _claims as C
from jbandits.analysis import oracles, stats
from jbandits.envs import problems


def test_paired_difference_and_interval():
    a, b = np.array([1.0, 2.0, 3.0, 4.0]), np.zeros(4)
    d = C.paired(a, b)
    se = np.std([1, 2, 3, 4], ddof=1) / 2
    assert d.mean == 2.5 and d.se == pytest.approx(se, rel=1e-15)
    assert C.Z == jbandits.analysis.stats.Z95  # never the rounded 1.96
    assert d.lo == 2.5 - C.Z * d.se and d.hi == 2.5 + C.Z * d.se
    assert d.z == pytest.approx(2.5 / se) and d.higher and not d.lower
    assert C.points(d) == (250.0, 100 * d.lo, 100 * d.hi)
    # vectorised over checkpoints [R, C]
    v = C.paired(np.c_[a, -a], np.zeros((4, 2)))
    np.testing.assert_array_equal(v.lower, [False, True])


def test_zero_standard_error():
    same = C.paired(np.ones(5), np.ones(5))
    assert same.z == 0.0 and not same.lower and not same.higher
    sure = C.paired(np.zeros(5), np.ones(5))  # every replication 1 lower
    assert sure.z == -math.inf and sure.lower and sure.hi < 0


def _diff(mean: float, se: float) -> stats.Paired:
    """A difference with its 95% interval, as :func:`C.paired` returns it."""
    return stats.Paired(mean, se, mean - C.Z * se, mean + C.Z * se)


def test_significance_uses_z95():
    # z just above 1.96 * (1 - 1e-5): significant with Z95 = 1.95996..., not with 1.96
    d = _diff(1.9599999, 1.0)
    assert d.higher and not _diff(1.9599, 1.0).higher


def test_verdict_ladder():
    assert C.ladder(True, False) == C.REPRODUCED
    assert C.ladder(False, True) == C.PARTLY
    assert C.ladder(False, False) == C.NOT_REPRODUCED
    assert [C.tally(k, 3) for k in (3, 2, 0)] == [
        "reproduced",
        "partly",
        "not reproduced",
    ]
    assert set(C.VERDICTS) == {
        "reproduced",
        "partly",
        "not reproduced",
        "undecided",
        "not testable",
    }
    # parts decided on their intervals: none decided either way -> undecided
    assert C.combine(2, 0, 2) == C.REPRODUCED and C.combine(1, 1, 2) == C.PARTLY
    assert C.combine(0, 1, 2) == C.NOT_REPRODUCED and C.combine(0, 0, 2) == C.UNDECIDED


def test_beats_lowest_comparable():
    rng = np.random.default_rng(0)
    z = rng.normal(size=400)
    values = {"A": z, "B": z + 1.0, "C": z - 1.0, "D": z + 1e-3 * rng.normal(size=400)}
    diffs, wins, losses = C.beats(values, "A", ["B", "C", "D", "missing"])
    assert list(diffs) == ["B", "C", "D"] and (wins, losses) == (1, 1)
    assert diffs["B"].mean == pytest.approx(-1.0)
    low, sig = C.lowest(values, "C")
    assert low and sig == ["A", "B", "D"]
    low, sig = C.lowest(values, "A")
    assert not low and sig == ["B"]
    # |A - D| ~ 1e-3: inside +-0.5 points (scale 100) with its CI; A - B = -1 is not
    assert C.comparable(diffs["D"], 0.5, scale=100) == C.REPRODUCED
    assert C.comparable(diffs["B"], 50, scale=100) == C.NOT_REPRODUCED
    # the CI [-1.56, 2.36] points contains the band edge 0.5: undecided (was
    # "partly" on the mean alone); wholly outside the band: not reproduced
    assert C.comparable(_diff(0.004, 0.01), 0.5, scale=100) == C.UNDECIDED
    assert C.comparable(_diff(0.04, 0.01), 0.5, scale=100) == C.NOT_REPRODUCED


def test_rate_claims_and_formats():
    err = {"A": np.r_[np.zeros(90), np.ones(10)], "B": np.ones(100)}
    assert C.fmt_pct(err["A"]).startswith("10.0% [")
    assert C.rate_beats(err, "A", ["B"], "t").verdict == C.REPRODUCED
    assert C.rate_lowest(err, "B", "t").verdict == C.NOT_REPRODUCED
    claim = C.rate_not_worse(err, "B", "A", "t")
    assert claim.verdict == C.NOT_REPRODUCED and claim.ours.startswith(
        "B-A at T: +90.0"
    )


def test_problem_bandit():
    bandit, params = problems.lsa_setup(1).bandit()
    assert bandit.name == "bernoulli"
    np.testing.assert_allclose(params.means, problems.lsa_setup(1).means, rtol=1e-7)
    p = problems.eucbv_experiment(2)
    bandit, params = p.bandit()
    assert bandit.name == "gaussian"
    np.testing.assert_allclose(params.stds, p.stds, rtol=1e-7)


def test_oracles_by_hand():
    # Delta = |mu - tau| = (0.3, 0.2): H1 = 1/0.09 + 1/0.04
    h1 = 1 / 0.09 + 1 / 0.04
    a = oracles.ucbe_oracle_a([0.2, 0.7], threshold=0.5, budget=100)
    assert a == pytest.approx(98 / h1, rel=1e-12)
    assert oracles.ucbe_oracle_a(
        [0.2, 0.7], threshold=0.5, budget=100, exponent=-1
    ) == pytest.approx(a / 4, rel=1e-12)
    # BAI gaps of (0.5, 0.4, 0.3): (0.1, 0.1, 0.2)
    assert oracles.ucb_e_oracle_a([0.5, 0.4, 0.3], 100) == pytest.approx(
        97 / (100 + 100 + 25), rel=1e-12
    )
    b = oracles.reward_range([0.5, 0.4], [0.1, 0.2], 100)
    assert b == pytest.approx(0.4 + 0.2 * math.sqrt(math.log(100)), rel=1e-12)
    with pytest.raises(ValueError, match="complexity"):
        oracles.ucb_e_oracle_a([0.5, 0.5, 0.3], 100)  # tied best arms: H1 infinite


# ------------------------------------------------- verdicts need intervals (issue 38/7)
def test_one_replication_decides_nothing():
    """With one replication there is no standard error: no difference is
    significant (it was a 'sure difference', z = +-inf) and every rule says undecided."""
    one = {"A": np.zeros(1), "B": np.ones(1)}
    d = C.paired(one["A"], one["B"])
    assert math.isnan(d.se) and math.isnan(d.z) and d.sign == 0
    assert not d.lower and not d.higher
    assert C.rate_beats(one, "A", ["B"], "t").verdict == C.UNDECIDED
    assert C.rate_lowest(one, "A", "t").verdict == C.UNDECIDED
    assert C.rate_not_worse(one, "A", "B", "t").verdict == C.UNDECIDED
    assert C.rate_comparable(one, "A", "A", "t", 5.0).verdict == C.UNDECIDED


def test_interval_containing_the_bound_is_undecided():
    # a Wilson CI [0, 0.793] (one run, no error) contains delta = 0.1
    holds, why = C.at_most(*C.rate(np.zeros(1)), 0.1, "delta")
    assert holds is None and why == "CI [0, 0.793] contains delta=0.1"
    assert C.at_most(*C.rate(np.zeros(200)), 0.1, "delta") == (True, "")
    assert C.at_most(*C.rate(np.ones(200)), 0.1, "delta") == (False, "")
    # "A not worse than B": the CI of A - B at or below 0 decides it, not the mean
    rng = np.random.default_rng(1)
    a, b = (rng.random(100) < 0.3).astype(float), (rng.random(100) < 0.32).astype(float)
    claim = C.rate_not_worse({"A": a, "B": b}, "A", "B", "t")
    assert C.paired(a, b).mean <= 0 < C.paired(a, b).hi  # mean below, CI straddles 0
    assert claim.verdict == C.UNDECIDED and "more reps needed" in claim.note
    same = {"A": a, "B": a.copy()}  # identical outcomes: the CI is [0, 0]
    assert C.rate_not_worse(same, "A", "B", "t").verdict == C.REPRODUCED


def test_gate_marks_single_replication_runs_undecided():
    claims = [
        C.Claim("c", "o", C.REPRODUCED),
        C.Claim("c", "o", C.NOT_TESTABLE, "n"),
        C.Claim("c", "o", C.UNDECIDED, "undecided: CI [0, 1] contains 0.5"),
    ]
    verdicts = [C.REPRODUCED, C.NOT_TESTABLE, C.UNDECIDED]
    assert [c.verdict for c in C.gate(claims, 2)] == verdicts
    verdicts[0] = C.UNDECIDED
    assert [c.verdict for c in C.gate(claims, 1)] == verdicts
    assert claims[0].note.startswith("undecided: 1 replication(s)")
    assert claims[2].note == "undecided: CI [0, 1] contains 0.5"  # said once


def test_ugape_confidence_claim_needs_enough_replications():
    """``ugape-confidence --quick --reps 1``: one run without error at each delta is
    no evidence that P(error) <= delta (it said "reproduced")."""
    from experiments import ugape

    deltas = np.array([0.5, 0.1])
    claim = ugape.claim_confidence(1, deltas, np.zeros((2, 1), bool))
    assert claim.verdict == C.UNDECIDED
    assert "CI [0, 0.793] contains delta=0.1; more reps needed" in claim.note
    # enough runs without error decide it; a significant excess refutes it
    assert ugape.claim_confidence(1, deltas, np.zeros((2, 100), bool)).verdict == (
        C.REPRODUCED
    )
    err = np.zeros((2, 100), bool)
    err[1, :40] = True  # 40% errors at delta = 0.1: CI [0.31, 0.50]
    assert ugape.claim_confidence(1, deltas, err).verdict == C.NOT_REPRODUCED
