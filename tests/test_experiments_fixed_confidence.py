"""The fixed-confidence reproductions (gk16-table1, shang-fig1, russo-exp1): their
claim rules on made-up numbers, and tiny runs end to end (tmp output)."""

import os

import numpy as np
import pytest

from experiments import _claims as C
from experiments import _core, _fc, gk16, russo, shang  # noqa: F401  (registers)


# ------------------------------------------------------------------ claim rules
def test_against_table_uses_both_standard_errors():
    rng = np.random.default_rng(0)
    x = rng.normal(1000.0, 100.0, 400)  # SE ~ 5: band 1.96 sqrt(2) 5 ~ 13.9
    m, se = _fc.mean_se(x)
    band = C.Z * np.sqrt(2.0) * se
    assert _fc.against_table(x, m + 0.9 * band)[0] is True
    assert _fc.against_table(x, m - 1.1 * band)[0] is False
    assert _fc.against_table(x[:1], m)[0] is None  # one run: no SE


def test_against_plot_overlaps_the_reading_band():
    x = np.array([90.0, 110.0] * 50)  # mean 100, CI about +-2
    assert _fc.against_plot(x, 104.0, 3.0)[0] is True
    assert _fc.against_plot(x, 110.0, 3.0)[0] is False
    assert _fc.against_plot(x, 96.0, 3.0)[0] is True
    assert _fc.against_plot(x, 90.0, 3.0)[0] is False


def test_below_claim_verdicts():
    rng = np.random.default_rng(1)
    a = rng.normal(100, 10, 500)
    stops = {("i", "a"): a, ("i", "b"): a + 5, ("i", "c"): a + rng.normal(0, 10, 500)}
    assert _fc.below_claim("t", stops, [("i", "a", "b")]).verdict == C.REPRODUCED
    assert _fc.below_claim("t", stops, [("i", "b", "a")]).verdict == C.NOT_REPRODUCED
    both = _fc.below_claim("t", stops, [("i", "a", "b"), ("i", "b", "a")])
    assert both.verdict == C.PARTLY
    undecided = _fc.below_claim("t", stops, [("i", "a", "c")])
    assert undecided.verdict == C.UNDECIDED and "contains 0" in undecided.note
    assert _fc.below_claim("t", stops, []).verdict == C.NOT_TESTABLE


def test_error_claim_counts_capped_runs_as_errors():
    runs = _fc.Runs(
        stop=np.full(100, 50.0),
        stopped=np.r_[np.ones(90, bool), np.zeros(10, bool)],
        recommended=np.zeros(100, int),
        error=np.r_[np.zeros(90, bool), np.ones(10, bool)],
        pulls=np.ones((100, 2)),
    )
    assert _fc.row(runs)["capped"] == "10/100"
    claim = _fc.error_claim("t", {"x": runs.error}, 0.01)
    assert claim.verdict == C.NOT_REPRODUCED
    assert _fc.error_claim("t", {"x": np.zeros(1000)}, 0.01).verdict == C.REPRODUCED


def test_recommended_arm_of_a_set_output():
    out = np.array([[False, True, False], [False, False, False]])
    np.testing.assert_array_equal(_fc.recommended_arm(out), [1, -1])
    np.testing.assert_array_equal(_fc.recommended_arm(np.array([2, 0])), [2, 0])


def test_gk16_weights_claim_matches_the_caption():
    oracle = {inst: gk16._oracle(means) for inst, means in gk16.INSTANCES}
    assert gk16._weights_claim(oracle).verdict == C.REPRODUCED
    t1 = oracle["mu1"][0]
    assert 989 < t1 < 991  # T*(mu1), by the host oracle


def test_shang_legends_but_the_mu2_bernoulli_n_star():
    stars = {p[0]: shang._n_star(p[1], p[2]) for p in shang.PANELS}
    claim = shang._legend_claim(stars, shang.PANELS)
    assert claim.verdict == C.PARTLY  # 3 of 4 panels; the spec's 41.28 vs 78.41
    assert "78.41" in claim.ours


# ------------------------------------------------------------- runs in rounds
@pytest.mark.slow  # ~8 s: two programs
def test_runs_are_those_of_one_call_at_the_cap():
    """_fc.run (lanes that refill from a queue, 32 per program here for 40
    replications): the same stopping times, recommendations and pull counts as
    jbandits.simulate on a stack of copies at the cap (Chernoff-Racing on GK16's mu2,
    whose stopping times reach 10-50 times the median)."""
    import jax

    import jbandits

    means, reps, cap = np.array([0.3, 0.21, 0.2, 0.19, 0.18]), 40, 20_000
    algo = _core.Algo("CR", "chernoff_racing", {"family": "bernoulli"}, {"delta": 0.1})
    key = jax.random.key(3)
    runs = _fc.run(algo, "bernoulli", means, key, reps, cap)
    bandit, params = jbandits.envs.bernoulli(np.broadcast_to(means, (reps, 5)))
    res = jbandits.simulate(
        jbandits.make("chernoff_racing", num_arms=5, family="bernoulli", delta=0.1),
        bandit, params, key, budget=cap, num_reps=1, metric=None, progress=False,
    )  # fmt: skip
    np.testing.assert_array_equal(runs.stop, np.asarray(res.num_pulls).reshape(-1))
    np.testing.assert_array_equal(runs.stopped, np.asarray(res.stopped).reshape(-1))
    np.testing.assert_array_equal(runs.recommended, np.asarray(res.output).reshape(-1))
    np.testing.assert_array_equal(runs.pulls, np.asarray(res.pulls).reshape(reps, 5))
    assert runs.stop.max() > 2 * np.median(runs.stop)  # lanes refilled, then narrowed


def test_gk16_chernoff_racing_runs_in_the_papers_order_and_the_others_relabelled():
    """Chernoff-Racing keeps the arms in the paper's order (the authors' 2016 code
    drops the lowest index among tied worst arms); every other row, and the
    '(random ties)' Chernoff-Racing row at the full 3000 runs, relabels them."""
    jobs = gk16._jobs(gk16.LABELS, 3000, 300)
    seen = {}
    for thr, label, name, static, n, paper in jobs:
        algo = gk16._algo(label, name, static, thr)
        seen[thr, label] = (algo.permute, n, paper)
    assert seen["practical", "Chernoff-Racing"] == (False, 3000, "Chernoff-Racing")
    assert seen["delta_correct", "Chernoff-Racing"][0] is False
    assert seen["practical", "Chernoff-Racing (rate at t)"] == (
        False, 300, "Chernoff-Racing"
    )  # fmt: skip
    assert seen["practical", "Chernoff-Racing (random ties)"] == (
        True, 3000, "Chernoff-Racing"
    )  # fmt: skip
    others = [k for k in seen if not k[1].startswith("Chernoff-Racing")]
    assert len(others) == 10 and all(seen[k][0] is True for k in others)


# ------------------------------------------------------------------ tiny runs
def _run(tmp_path, name, **extra):
    cfg = _core.Config(
        name=name, quick=True, reps=extra.pop("reps", 6), out=str(tmp_path), extra=extra
    )
    out = _core.execute(cfg)
    for f in ("table.md", "figure.png", "results.npz", "meta.json"):
        assert os.path.isfile(os.path.join(out, f)), f
    return out, np.load(os.path.join(out, "results.npz"))


@pytest.mark.slow  # compiles five programs
def test_gk16_tiny(tmp_path):
    out, arrays = _run(
        tmp_path, "gk16-table1", dc_reps=3, cap=20_000,
        algorithms=("Chernoff-Racing", "KL-LUCB"),
    )  # fmt: skip
    stop = arrays["mu1/practical/KL-LUCB/stop"]
    assert stop.shape == (6,) and np.all(stop > 4)
    dc = arrays["mu1/delta_correct/KL-LUCB/stop"]  # KK13's rate: ~5x, capped here
    assert dc.shape == (3,) and dc.max() == 20_000
    assert arrays["mu1/delta_correct/KL-LUCB/error"].all()  # capped runs are errors
    assert "mu2/practical/Chernoff-Racing (rate at t)/stop" in arrays
    with open(os.path.join(out, "table.md")) as f:
        text = f.read()
    assert "T* kl(delta,1-delta)" in text and "| 3/3 |" in text  # capped: 3/3


@pytest.mark.slow
def test_shang_tiny(tmp_path):
    _, arrays = _run(
        tmp_path, "shang-fig1", cap=20_000, panels=("mu1 Bernoulli",),
        algorithms=("T3C", "Uniform", "UGapE"),
    )  # fmt: skip
    assert arrays["mu1 Bernoulli/T3C/stop"].shape == (6,)
    np.testing.assert_allclose(
        arrays["mu1 Bernoulli/n_star"], [80.51, 84.91], atol=0.01
    )


@pytest.mark.slow
def test_russo_tiny(tmp_path):
    _, arrays = _run(tmp_path, "russo-exp1", confidences=(0.95,), algorithms=("TTTS",))
    pulls = arrays["c0.95/TTTS/pulls"]
    assert pulls.shape == (6, 5)
    np.testing.assert_array_equal(pulls.sum(-1), arrays["c0.95/TTTS/stop"])
