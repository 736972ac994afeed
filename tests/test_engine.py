"""Engine: traced budgets, checkpoints, padding, sweeps compile once, statistics."""

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from compile_log import count_compiles
from scipy import stats

import jbandits
from jbandits.analysis import metrics
from jbandits.sim import engine


def test_sweep_compiles_once_over_alpha_budget_and_padded_k():
    """8 alpha x 4 budgets x 3 K values (padded to 8 arms) -> one compilation."""
    rng = np.random.default_rng(0)
    instances = []
    for k in (3, 5, 7):
        _, p = jbandits.envs.bernoulli(rng.uniform(0.1, 0.9, k))
        instances.append(jbandits.envs.pad_arms(p, 8))
    params = jbandits.envs.stack_instances(instances)
    bandit = jbandits.envs.BERNOULLI

    def make_policy(alpha, budget):
        del budget
        return jbandits.lsa(8, threshold=0.5, alpha=alpha)

    grid = jbandits.product_grid(
        alpha=np.linspace(0.5, 4.0, 8), budget=[40, 60, 80, 100]
    )
    with count_compiles() as compiles:
        res = jbandits.sweep(
            make_policy,
            bandit,
            params,
            jax.random.key(0),
            grid=grid,
            num_reps=16,
            horizon=100,
            num_checkpoints=4,
            metric=metrics.thresholding(0.5),
        )
    assert compiles.count == 1
    assert res.metrics["error"].shape == (32, 3, 16, 4)
    # budgets are honoured per grid point, padded arms never pulled
    np.testing.assert_array_equal(res.num_pulls[:, 0, 0], grid["budget"])
    assert (res.pulls[:, 0, :, 3:] == 0).all() and (res.pulls[:, 1, :, 5:] == 0).all()


def test_checkpoints_equal_runs_stopped_at_that_budget():
    bandit, params = jbandits.envs.bernoulli([0.3, 0.45, 0.5, 0.6, 0.7])
    policy = jbandits.apt(5, threshold=0.5, epsilon=0.05)
    metric = metrics.thresholding(0.5)
    key = jax.random.key(7)

    @jax.jit  # one compilation for every stopping budget (the budget is traced)
    def stopped_at(budget):
        return jbandits.run(
            policy, bandit, params, key, budget=budget, horizon=120, metric=metric
        )

    full = jbandits.run(
        policy,
        bandit,
        params,
        key,
        budget=120,
        horizon=120,
        num_checkpoints=4,
        metric=metric,
    )
    np.testing.assert_array_equal(full.times, [30, 60, 90, 120])
    for c, t in enumerate(np.asarray(full.times)):
        part = stopped_at(int(t))
        assert float(part.metrics["misclassified"][-1]) == float(
            full.metrics["misclassified"][c]
        )
        np.testing.assert_allclose(part.regret[-1], full.regret[c], rtol=1e-6)


def test_budget_past_horizon_steps_are_noops():
    bandit, params = jbandits.envs.bernoulli([0.2, 0.8, 0.5])
    res = jbandits.run(
        jbandits.uniform(3),
        bandit,
        params,
        jax.random.key(0),
        budget=10,
        horizon=16,
        record_arms=True,
    )
    arms = np.asarray(res.arms)
    assert (arms[:10] == np.arange(10) % 3).all() and (arms[10:] == -1).all()
    assert int(res.num_pulls) == 10 and not bool(res.stopped)


def test_reward_stack_is_common_across_policies():
    """The j-th reward of arm i depends only on (key, i, j): two policies see the same."""
    bandit, params = jbandits.envs.gaussian([0.0, 1.0, 2.0], [1.0, 1.0, 1.0])
    key = jax.random.key(3)
    _, _, key_env, _ = jbandits.sim.replication.split_key(key)
    direct = [
        [float(bandit.sample(params, key_env, i, j)) for j in range(4)]
        for i in range(3)
    ]
    res = jbandits.run(jbandits.uniform(3), bandit, params, key, budget=12, horizon=12)
    # round robin pulls each arm 4 times: total reward equals the stack's sum
    np.testing.assert_allclose(float(res.reward[-1]), np.sum(direct), rtol=1e-5)


def test_pseudo_regret_of_round_robin_is_exact():
    means = np.array([0.1, 0.4, 0.9, 0.6])
    bandit, params = jbandits.envs.bernoulli(means)
    res = jbandits.run(
        jbandits.uniform(4), bandit, params, jax.random.key(0), budget=10, horizon=10
    )
    pulls = np.array([3, 3, 2, 2])
    np.testing.assert_allclose(
        float(res.regret[-1]), np.sum(pulls * (0.9 - means)), rtol=1e-6
    )


def test_permutation_maps_outputs_back():
    bandit, params = jbandits.envs.bernoulli([0.05, 0.95, 0.1, 0.9])
    res = jbandits.simulate(
        jbandits.uniform(4, threshold=0.5),
        bandit,
        params,
        jax.random.key(1),
        budget=400,
        num_reps=20,
        permute=True,
    )
    assert (res.output == np.array([False, True, False, True])).mean() > 0.95


@pytest.mark.parametrize(
    "bad",
    [
        dict(kind="mean", value=[0.2, 1.3], match="means"),
        dict(kind="budget", value=3, match="budget"),
        dict(kind="threshold", value=float("nan"), match="threshold"),
        dict(kind="epsilon", value=-0.1, match="epsilon"),
        dict(kind="alpha", value=0.0, match="alpha"),
        dict(kind="std", value=-1.0, match="stds"),
        dict(kind="k", value=[0.5], match="K >= 2"),
        dict(kind="shape", value=None, match="stds"),
        dict(kind="nan_mean", value=[0.2, float("nan")], match="means"),
        dict(kind="num_arms", value=2.5, match="num_arms"),
    ],
)
def test_bad_input_raises_value_error_naming_the_argument(bad):
    kind, value = bad["kind"], bad["value"]
    with pytest.raises(ValueError, match=bad["match"]):
        if kind in ("mean", "k", "nan_mean"):
            jbandits.envs.bernoulli(value)
        elif kind == "budget":
            bandit, params = jbandits.envs.bernoulli([0.1, 0.5, 0.7, 0.9])
            jbandits.simulate(
                jbandits.apt(4, threshold=0.5),
                bandit,
                params,
                jax.random.key(0),
                budget=value,
                num_reps=2,
            )
        elif kind == "threshold":
            jbandits.apt(4, threshold=value)
        elif kind == "epsilon":
            jbandits.apt(4, threshold=0.5, epsilon=value)
        elif kind == "alpha":
            jbandits.lsa(4, threshold=0.5, alpha=value)
        elif kind == "std":
            jbandits.envs.gaussian([0.0, 1.0], [1.0, value])
        elif kind == "shape":
            jbandits.envs.gaussian([0.0, 1.0, 2.0], [1.0, 1.0])
        elif kind == "num_arms":
            jbandits.apt(value, threshold=0.5)


def test_replay_budget_beyond_table_is_refused():
    bandit, params = jbandits.envs.replay(np.zeros((3, 5)))
    with pytest.raises(ValueError, match="budget"):
        jbandits.simulate(
            jbandits.uniform(3),
            bandit,
            params,
            jax.random.key(0),
            budget=20,
            num_reps=1,
        )


def test_simulate_batches_and_chunks_agree():
    bandit, params = jbandits.envs.bernoulli([0.3, 0.45, 0.55, 0.7])
    policy = jbandits.apt(4, threshold=0.5)
    kw = dict(budget=40, num_reps=10, metric=metrics.thresholding(0.5))
    whole = jbandits.simulate(policy, bandit, params, jax.random.key(0), **kw)
    parts = jbandits.simulate(
        policy, bandit, params, jax.random.key(0), batch_size=4, **kw
    )
    np.testing.assert_array_equal(whole.output, parts.output)
    np.testing.assert_array_equal(whole.pulls, parts.pulls)


def _uniform_two_arm_error(p0, p1, budget, tau):
    """Exact P(error) of round robin on two Bernoulli arms (labels mean >= tau)."""
    n0, n1 = math.ceil(budget / 2), budget // 2
    ok0 = (
        stats.binom.cdf(math.ceil(tau * n0) - 1, n0, p0)
        if p0 < tau
        else stats.binom.sf(math.ceil(tau * n0) - 1, n0, p0)
    )
    ok1 = (
        stats.binom.cdf(math.ceil(tau * n1) - 1, n1, p1)
        if p1 < tau
        else stats.binom.sf(math.ceil(tau * n1) - 1, n1, p1)
    )
    return 1.0 - ok0 * ok1


def test_uniform_error_rate_matches_closed_form():
    p0, p1, budget, tau, reps = 0.4, 0.6, 31, 0.5, 20_000
    bandit, params = jbandits.envs.bernoulli([p0, p1])
    res = jbandits.simulate(
        jbandits.uniform(2, threshold=tau),
        bandit,
        params,
        jax.random.key(11),
        budget=budget,
        num_reps=reps,
        metric=metrics.thresholding(tau),
        permute=False,  # the closed form gives arm 0 the odd pull
    )
    p = _uniform_two_arm_error(p0, p1, budget, tau)
    se = math.sqrt(p * (1 - p) / reps)
    assert abs(res.metrics["error"][:, -1].mean() - p) <= 4 * se


def test_ua_pull_counts_are_multinomial():
    reps, budget = 4000, 30
    bandit, params = jbandits.envs.bernoulli([0.1, 0.2, 0.3])
    res = jbandits.simulate(
        jbandits.ua(3, threshold=0.5),
        bandit,
        params,
        jax.random.key(5),
        budget=budget,
        num_reps=reps,
    )
    frac = res.pulls[:, 0].mean() / budget
    se = math.sqrt((1 / 3) * (2 / 3) / budget / reps)
    assert abs(frac - 1 / 3) <= 4 * se
    assert jnp.all(res.pulls.sum(-1) == budget)


def test_return_state_gives_the_final_policy_state():
    bandit, params = jbandits.envs.bernoulli([0.2, 0.8, 0.5])
    res = jbandits.simulate(
        jbandits.uniform(3),
        bandit,
        params,
        jax.random.key(0),
        budget=9,
        num_reps=2,
        return_state=True,
        permute=False,
    )
    np.testing.assert_array_equal(res.state.stats.counts, [[3, 3, 3], [3, 3, 3]])
    np.testing.assert_array_equal(res.perm, [[0, 1, 2], [0, 1, 2]])
    assert (
        jbandits.simulate(
            jbandits.uniform(3), bandit, params, jax.random.key(0), budget=9, num_reps=2
        ).state
        is None
    )


def test_compiler_options_leave_out_flags_this_jaxlib_rejects():
    # older jaxlibs reject unknown XLA flags at compile time; the runner's options
    # must only contain flags that compile here
    assert not engine._known_option("xla_cpu_no_such_flag_for_jbandits", True)
    for name, value in engine.compiler_options().items():
        assert engine._known_option(name, value)
