"""Pooling by regression (Search(pool=True), one parameter): the weighted local
quadratic (exact on a quadratic, per-block offsets, weights, fallbacks), the race's
preferred candidate, and tune's use of the fit."""

import jax
import numpy as np
import pytest
from test_tune import OBJECTIVE  # APT on 4 arms, T = 40: compiled once
from test_tune_allocation import SPACE, Z16, Paired

import jbandits
from jbandits.tuning import ES, LogSpace, Report, Search, allocation
from jbandits.tuning.pooling import fit_min

X = np.linspace(0.05, 0.95, 10)


def quad(x, centre=0.37, curv=3.0, level=1.0):
    return level + curv * (np.asarray(x) - centre) ** 2


def test_the_fit_is_exact_on_a_quadratic():
    assert fit_min(X, quad(X)) == pytest.approx(0.37, abs=1e-9)
    # the kernel starts at the lowest mean (0.35) and is re-centred: any start works
    assert fit_min(X, quad(X, centre=0.81)) == pytest.approx(0.81, abs=1e-9)
    # weights do not move the vertex of an exact quadratic
    w = np.arange(1, 11)
    assert fit_min(X, quad(X), w) == pytest.approx(0.37, abs=1e-9)


def test_each_block_gets_its_own_offset():
    """Two blocks of replications with a common shift of +5 in the second (its
    points 0.45..0.95): the offsets absorb the shift; one block would not."""
    blocks = (X > 0.4).astype(int)
    y = quad(X) + 5.0 * blocks
    assert fit_min(X, y, blocks=blocks) == pytest.approx(0.37, abs=1e-9)
    assert abs(fit_min(X, y) - 0.37) > 0.05


def test_the_weights_are_respected():
    """A point raised by 0.2 pulls the vertex away from itself the more it
    weighs; with weight 0 it is ignored."""
    y = quad(X)
    y[4] += 0.2  # x = 0.45, right of the centre 0.37
    w = np.ones(10)
    w0, w1, w9 = w.copy(), w.copy(), w.copy()
    w0[4], w9[4] = 0.0, 9.0
    v0, v1, v9 = fit_min(X, y, w0), fit_min(X, y, w1), fit_min(X, y, w9)
    assert v0 == pytest.approx(0.37, abs=1e-9)
    assert v9 < v1 < v0 - 1e-3


def test_the_fit_falls_back_when_concave_or_degenerate():
    assert fit_min(X, -quad(X)) is None  # concave
    assert fit_min(X[:2], quad(X[:2])) is None  # two points
    assert fit_min(np.r_[X[:2], X[:2]], np.ones(4)) is None  # two distinct points
    y = quad(X)
    y[3] = np.nan
    assert fit_min(X, y) is None
    # linear (monotone) losses: no curvature, no vertex
    assert fit_min(X, 1.0 - X) is None
    # a vertex beyond the points is clipped to their span
    assert fit_min(X, quad(X, centre=1.5)) == pytest.approx(X.max())
    with pytest.raises(ValueError, match="one length"):
        fit_min(X, quad(X)[:-1])


def test_the_fit_beats_the_lowest_mean_under_common_noise():
    """Means of 16 points on common replications (common noise sd 10) whose own
    noise (sd 0.05 / sqrt(20) per mean) hides the optimum's neighbours from each
    other; the optimum 7/16 lies between two grid points (1/32 from each): the
    lowest mean is at least 1/32 off, the fit lands within 1/64 in most draws."""
    obj = Paired(centre=7 / 16, common=10.0, own=0.05)
    err_min, err_fit = [], []
    for seed in range(20):
        per = obj.losses({"a": Z16[:, 0]}, jax.random.key(seed), 20, chunk=1)
        m = per.mean(1)
        err_min.append(abs(Z16[np.argmin(m), 0] - 7 / 16))
        err_fit.append(abs(fit_min(Z16[:, 0], m, np.full(16, 20)) - 7 / 16))
    assert np.median(err_fit) < 0.5 * np.median(err_min)
    assert np.mean(np.array(err_fit) < 1 / 64) > 0.5


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


def test_tune_picks_the_pooled_fit_of_the_grid_and_its_crn_steps():
    space = {"epsilon": LogSpace(0.01, 1.0)}
    report = Report(confidence=0)
    search = Search(num_reps=8, simulations=120, init_points=5, pool=True)
    res = jbandits.tuning.tune(OBJECTIVE, space, search=search, report=report, key=2)
    pool = res.extra["pool"]
    # 5 grid points + 2 points per ES step, all on the grid's 8 replications
    assert pool["points"] == 5 + 2 * len(res.path) == 15
    assert pool["z"] is not None and res.extra["z"][0] == pool["z"][0]
    assert res.simulations <= 120
    # without pool (ES on common replications as pool sets it) the pick is the
    # averaged iterate: another point
    crn = ES(crn=True)
    plain = jbandits.tuning.tune(
        OBJECTIVE, space, search=Search(num_reps=8, simulations=120, init_points=5),
        estimator=crn, report=report, key=2,
    )  # fmt: skip
    assert "pool" not in plain.extra and plain.extra["z"][0] != pool["z"][0]
    assert [s.theta for s in plain.path] == [s.theta for s in res.path]
    # a fit that is not convex (key 1 here) falls back to the averaged iterate
    res1 = jbandits.tuning.tune(OBJECTIVE, space, search=search, report=report, key=1)
    plain1 = jbandits.tuning.tune(
        OBJECTIVE, space, search=Search(num_reps=8, simulations=120, init_points=5),
        estimator=crn, report=report, key=1,
    )  # fmt: skip
    assert res1.extra["pool"]["z"] is None and res1.theta == plain1.theta
    # two parameters: pool is ignored
    assert not search.pool_for(2) and search.pool_for(1)


def test_tune_with_halving_races_the_pooled_fit_and_keeps_it_if_it_survives():
    space = {"epsilon": LogSpace(0.01, 1.0)}
    search = Search(num_reps=8, simulations=600, allocation="halving", pool=True)
    res = jbandits.tuning.tune(
        OBJECTIVE, space, search=search, report=Report(confidence=0), key=2
    )
    # every cell of the three rounds (16 + 8 + 4) enters the fit
    assert res.extra["pool"]["points"] == 28
    reps, race = res.extra["race_reps"], res.extra["race"]
    # no candidate was dropped (30 replications each), and the fit won although
    # another candidate had the lower mean on the race's replications
    assert set(reps.values()) == {30} and "pooled fit" in reps
    assert race["pooled fit"][1] > min(m for _, m in race.values())
    assert res.extra["z"][0] == res.extra["pool"]["z"][0]
