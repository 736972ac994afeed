"""Noise-aware allocation (tune's default for two or more parameters): successive halving of the
grid and the final race, on a synthetic objective whose replications share a large
common noise (only paired comparisons can see the optimum) and on a real one."""

import dataclasses

import jax
import numpy as np
import pytest
from test_tune import MEANS, OBJECTIVE  # APT on 4 arms, T = 40: compiled once

import jbandits
from jbandits.tuning import LogSpace, Objective, Report, Search, allocation
from jbandits.tuning.space import Box, Space
from jbandits.tuning.tuner import _describe, _design

SPACE = Space({"a": Box(0.0, 1.0)})
Z16 = SPACE.grid(16)  # cell centres (i + 0.5) / 16
BEST = 5  # the optimum sits on grid point 5


class Paired:
    """``(a - a*)^2`` plus a replication's common noise (sd ``common``, the same for
    every point of a call) and a small own noise; records each call's shape."""

    def __init__(self, centre=float(Z16[BEST, 0]), common=10.0, own=0.002):
        self.centre, self.common, self.own, self.calls = centre, common, own, []

    def losses(self, theta, key, num_reps, *, chunk):
        a = np.asarray(theta["a"], np.float64)
        seed = [int(x) for x in np.asarray(jax.random.key_data(key)).ravel()]
        rng = np.random.default_rng(seed)
        shared = self.common * rng.normal(size=num_reps)
        own = self.own * rng.normal(size=(len(a), num_reps))
        self.calls.append((len(a), num_reps))
        return (a[:, None] - self.centre) ** 2 + shared[None] + own


def test_halving_keeps_the_point_with_the_lowest_paired_mean():
    obj = Paired()
    h = allocation.halve(obj, SPACE, Z16, jax.random.key(0), 960, keep=2, chunk=1)
    # unpaired means (different replications per point) would be decided by the
    # common noise (sd 10 against gaps of 0.004): the paired ones find the optimum
    assert h.order[0] == BEST and set(h.order) == {BEST, BEST + 1}
    assert h.first.shape == (16, 20)


def test_halving_spends_the_replications_it_states():
    obj = Paired()
    h = allocation.halve(obj, SPACE, Z16, jax.random.key(1), 960, keep=2, chunk=1)
    # 3 rounds of 960 // 3 = 320 simulations: 16 x 20, 8 x 40, 4 x 80
    assert h.rounds == [(16, 20), (8, 40), (4, 80)] == obj.calls
    assert h.simulations == 3 * 320 <= 960
    assert sorted(np.unique(h.reps)) == [20, 60, 140]
    assert h.reps[h.order].tolist() == [140, 140]
    assert int(h.reps.sum()) == h.simulations


def test_race_drops_a_clearly_worse_candidate_and_spends_the_rest_on_the_others():
    obj = Paired(own=0.03)  # "near" is 0.004 worse: within 2 paired SE for a while
    named = {"bad": Z16[15], "good": Z16[BEST], "near": Z16[BEST + 1]}
    winner, stats, spent = allocation.race(
        obj, SPACE, named, jax.random.key(2), 1200, chunk=1
    )
    # block 0: 1200 // (4 * 3) = 100 each; "bad" (0.36 worse) is dropped after it;
    # block 1: 900 // (3 * 2) = 150 each for the two left, and so on
    assert obj.calls[:2] == [(3, 100), (2, 150)]
    assert stats["bad"][1] == 100 and stats["good"][1] >= 250
    assert spent == sum(p * r for p, r in obj.calls) <= 1200
    # the winner is the survivor with the lowest mean (on their shared replications)
    survivors = [n for n in stats if stats[n][1] == stats["good"][1]]
    assert winner == min(survivors, key=lambda n: stats[n][0]) == "good"
    gaps = {}  # the survivors' paired gaps to the lowest mean, with their SE
    again = allocation.race(
        Paired(own=0.03), SPACE, named, jax.random.key(2), 1200, chunk=1, detail=gaps
    )
    assert again[0] == winner and gaps["good"] == (0.0, 0.0) and "bad" not in gaps
    one = {}  # a single block: nothing dropped, every candidate's gap
    _, stats1, _ = allocation.race(
        Paired(own=0.03), SPACE, named, jax.random.key(2), 300, chunk=1, blocks=1,
        detail=one,
    )  # fmt: skip
    assert set(one) == set(named) and one["good"] == (0.0, 0.0)
    assert one["bad"][0] == pytest.approx(stats1["bad"][0] - stats1["good"][0])
    assert one["bad"][0] > 10 * one["bad"][1] > 0  # 0.36 worse, own noise 0.03


def test_tune_with_halving_accounts_for_its_simulations():
    bandit, params = jbandits.envs.bernoulli(MEANS)
    obj = Objective("ucbv", bandit, params, budget=30)
    space = {"c": jbandits.tuning.Box(0.0, 2.0), "zeta": jbandits.tuning.Box(0.2, 2.5)}
    search = Search(num_reps=4, simulations=800)
    res = jbandits.tuning.tune(obj, space, search=search, report=Report(confidence=0))
    halving = res.extra["halving"]
    # an 8 x 8 grid halved 64 -> 32 -> 16 -> 8 -> 4 -> 2 on 0.6 of what the race's
    # reserve (0.2 x 800) leaves: 384 over 5 rounds, at least 2 replications a point
    assert [n for n, _ in halving["rounds"]] == [64, 32, 16, 8, 4]
    assert [r for _, r in halving["rounds"]] == [2, 2, 4, 9, 19]
    assert halving["simulations"] == sum(n * r for n, r in halving["rounds"]) == 404
    race = res.extra["race"]
    assert race is not None and res.theta in [t for t, _ in race.values()]
    race_sims = sum(res.extra["race_reps"].values())
    es_sims = 2 * 2 * 4 * len(res.path)
    assert res.simulations == 404 + es_sims + race_sims <= 800
    # the start is a point of the last round (the most replications)
    z8 = Space(space).grid(8)
    start = int(np.argmin(np.abs(z8 - res.extra["z_start"]).sum(1)))
    assert len(res.init[1]) == 64 and halving["reps"][start] == 2 + 2 + 4 + 9 + 19


def test_the_search_follows_the_dimension_and_a_given_start_skips_the_grid():
    default = Search()  # halving for two or more parameters (the benchmark's choice)
    assert not default.halving_for(1) and default.halving_for(2)
    assert default.select_for(1) == 0.0 and default.select_for(2) == 0.2
    assert _design(default, 1, 0.0)[0] == 5
    assert _design(Search(simulations=20_000), 2, 0.2)[0] == 11
    assert _design(Search(simulations=40_000), 3, 0.2)[0] == 6
    started = dataclasses.replace(default, start={"epsilon": 0.1})
    assert not started.halving_for(2) and _design(started, 2, 0.2)[0] == 0


def test_two_parameters_default_to_halving_one_parameter_to_the_grid():
    bandit, params = jbandits.envs.bernoulli(MEANS)
    obj = Objective("ucbv", bandit, params, budget=30)
    space = {"c": jbandits.tuning.Box(0.0, 2.0), "zeta": jbandits.tuning.Box(0.2, 2.5)}
    report = Report(confidence=0)
    small = dict(num_reps=4, simulations=800)
    default = jbandits.tuning.tune(obj, space, search=Search(**small), report=report)
    assert "halving" in default.extra
    assert default.extra["halving"]["rounds"][0][0] == 64  # an 8 x 8 grid (small)
    assert default.method["design"] == "8 x 8"
    assert default.method["allocation"] == "halving"
    assert "default for 2 parameters" in default.method["why"]["allocation"]
    one = jbandits.tuning.tune(
        OBJECTIVE,
        {"epsilon": LogSpace(0.01, 1.0)},
        search=Search(num_reps=8, simulations=80),
        report=report,
    )
    assert "halving" not in one.extra and len(one.init[1]) == 5


def test_a_budget_below_the_finer_grid_falls_back_to_8_x_8_and_says_so():
    # 11 x 11 where its first halving round gives each point 6 replications (9074
    # simulations at select 0.2, share 0.6), else 8 x 8 as before issue 53: every
    # budget that ran before runs as it ran (8 x 8 needs 359)
    bandit, params = jbandits.envs.bernoulli(MEANS)
    obj = Objective("ucbv", bandit, params, budget=30)
    space = {"c": jbandits.tuning.Box(0.0, 2.0), "zeta": jbandits.tuning.Box(0.2, 2.5)}
    report = Report(confidence=0)
    small = jbandits.tuning.tune(
        obj, space, search=Search(num_reps=4, simulations=500), report=report
    )
    assert small.extra["halving"]["rounds"][0][0] == 64 and small.simulations <= 500
    assert small.method["design"] == "8 x 8"
    assert "first halving round" in small.method["why"]["design"]
    assert "method: halving (starting grid 8 x 8)" in str(small)
    big = jbandits.tuning.tune(
        obj, space, search=Search(num_reps=4, simulations=9074), report=report
    )
    assert big.extra["halving"]["rounds"][0] == (121, 6) and big.simulations <= 9074
    assert big.method["design"] == "11 x 11"
    for sims, dim, n in ((9073, 2, 8), (9074, 2, 11), (18898, 3, 5), (18899, 3, 6)):
        assert _design(Search(simulations=sims), dim, 0.2)[0] == n
    with pytest.raises(ValueError, match="simulations >= 359"):  # as before
        jbandits.tuning.tune(
            obj, space, search=Search(num_reps=4, simulations=358), report=report
        )


def test_the_result_says_which_allocation_and_estimator_ran_and_why():
    from jbandits.tuning import ES, PG

    def described(search, estimator, dim):
        select = search.select_for(dim)
        grid = _design(search, dim, select)
        est = estimator.resolved(dim) if isinstance(estimator, ES) else estimator
        return _describe(search, est, dim, select, grid)

    one = described(Search(), ES(), 1)
    assert (one["allocation"], one["design"], one["final"]) == ("grid", "5", "none")
    assert "default for one parameter" in one["why"]["allocation"]
    assert one["estimator"] == "ES(sigma=0.1, num_pairs=1, crn=False, sigma_decay=5)"
    assert one["why"]["estimator"] == "the default (any policy)"
    three = described(Search(simulations=200_000), ES(sigma=0.2), 3)
    assert three["design"] == "6 x 6 x 6" and three["final"] == "race"
    assert three["estimator"].startswith("ES(sigma=0.2, num_pairs=3")
    assert three["why"]["estimator"].startswith("given")
    pg = described(Search(start={"a": 0.5}), PG(temperature=0.5), 1)
    assert (pg["allocation"], pg["design"]) == ("start", "none")
    assert pg["estimator"] == "PG(temperature=0.5)"
    start2 = described(Search(start={"a": 0.5, "b": 0.5}), ES(), 2)
    assert start2["design"] == "none" and start2["final"] == "equal shares"
    assert start2["allocation"] == "start"


def test_the_race_keeps_a_preferred_survivor_but_not_a_dropped_one():
    """Own noise sd 0.5: "near" (0.004 worse than "good") cannot be separated from
    it in 1200 simulations, "bad" (0.39 worse) is dropped after the first block."""
    named = {"bad": Z16[15], "good": Z16[5], "near": Z16[6]}
    key = jax.random.key(2)
    won, stats, _ = allocation.race(Paired(own=0.5), SPACE, named, key, 1200, chunk=1)
    assert stats["near"][1] == stats["good"][1] == 100 + 3 * 150
    lower = min(("good", "near"), key=lambda n: stats[n][0])
    assert won == lower  # without a preference: the lower mean
    other = ({"good", "near"} - {lower}).pop()
    won, _, _ = allocation.race(
        Paired(own=0.5), SPACE, named, key, 1200, chunk=1, prefer=other
    )
    assert won == other  # a surviving preferred candidate wins
    won, stats, _ = allocation.race(
        Paired(own=0.5), SPACE, named, key, 1200, chunk=1, prefer="bad"
    )
    assert stats["bad"][1] == 100 and won == lower  # dropped after one block


class Flat:
    """Every point loses 0 on every replication (a low-loss task on few
    replications): every mean ties."""

    def losses(self, theta, key, num_reps, *, chunk):
        return np.zeros((len(np.asarray(theta["a"])), num_reps))


def test_halving_orders_equal_means_at_random_not_by_index():
    kept = [
        tuple(sorted(allocation.halve(
            Flat(), SPACE, Z16, jax.random.key(k), 960, keep=2, chunk=1
        ).order.tolist()))
        for k in range(6)
    ]  # fmt: skip
    # index order kept points 0 and 1 (one end of the box) on every key
    assert len(set(kept)) > 1 and kept.count((0, 1)) <= 1
    again = allocation.halve(
        Flat(), SPACE, Z16, jax.random.key(3), 960, keep=2, chunk=1
    )
    assert tuple(sorted(again.order.tolist())) == kept[3]  # the key decides
