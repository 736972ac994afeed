"""The tuner: estimators, search spaces, compile-once runs, errors, NaN handling,
the option groups and the spellings removed in 0.2.0 (Python errors since 0.3.0)."""

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest
from compile_log import count_compiles

import jbandits
from jbandits import tuning as tune
from jbandits.tuning import ES, PG, Box, Logit, LogSpace, Objective, Report, Search

MEANS = np.array([0.3, 0.45, 0.55, 0.7])
BANDIT, PARAMS = jbandits.envs.bernoulli(MEANS)
METRIC = jbandits.analysis.metrics.thresholding(0.5)
# one small setting shared by the tests below, so that its program compiles once
SPACE = {"epsilon": LogSpace(0.01, 1.0)}
SETTING = dict(budget=40, fixed={"threshold": 0.5}, loss="misclassified", metric=METRIC)
OBJECTIVE = Objective("apt", BANDIT, PARAMS, **SETTING)
SEARCH = Search(num_reps=8, simulations=80)  # 5-point grid (40), 2 steps of 16


def test_es_gradient_of_a_quadratic_is_unbiased():
    target = jnp.array([1.0, -2.0])
    loss = lambda th, key: jnp.sum((th - target) ** 2)
    theta = jnp.array([0.5, 0.5])
    grads = jax.vmap(
        lambda k: tune.es_value_and_grad(loss, theta, k, sigma=0.1, num_pairs=4)[1]
    )(jax.random.split(jax.random.key(0), 2000))
    exact = 2 * (theta - target)
    se = grads.std(0) / np.sqrt(grads.shape[0])
    assert np.all(np.abs(grads.mean(0) - exact) <= 5 * se + 1e-6)


def test_es_accepts_a_pytree_theta():
    """A dict theta gives the same estimate as the flat vector [a, b0, b1]."""
    loss = lambda th, key: (th["a"] - 1.0) ** 2 + jnp.sum((th["b"] + 2.0) ** 2)
    flat_loss = lambda v, key: loss({"a": v[0], "b": v[1:]}, key)
    theta = {"a": jnp.asarray(0.0), "b": jnp.zeros(2)}
    key = jax.random.key(1)
    value, grad = tune.es_value_and_grad(loss, theta, key, sigma=0.1, num_pairs=4)
    value_f, grad_f = tune.es_value_and_grad(
        flat_loss, jnp.zeros(3), key, sigma=0.1, num_pairs=4
    )
    assert set(grad) == {"a", "b"} and grad["b"].shape == (2,)
    np.testing.assert_allclose(grad["a"], grad_f[0], rtol=1e-6)
    np.testing.assert_allclose(grad["b"], grad_f[1:], rtol=1e-6)
    assert float(value) == float(value_f) == pytest.approx(9.0)


def test_minimize_runs_and_rejects_nan_start():
    loss = lambda th, key: jnp.sum((th - 1.0) ** 2)
    theta, hist = tune.minimize(
        loss, jnp.zeros(2), optax.sgd(0.2), num_steps=15, key=jax.random.key(0)
    )
    assert hist[-1] < hist[0] and np.all(np.abs(np.asarray(theta) - 1.0) < 0.3)
    with pytest.raises(ValueError, match="finite"):
        tune.minimize(
            loss,
            jnp.array([jnp.nan, 0.0]),
            optax.sgd(0.1),
            num_steps=2,
            key=jax.random.key(0),
        )


def test_minimize_rejects_non_finite_steps():
    loss = lambda th, key: jnp.where(th[0] > 0.5, jnp.nan, jnp.sum((th - 1.0) ** 2))
    theta, hist = tune.minimize(
        loss, jnp.zeros(1), optax.sgd(0.2), num_steps=10, key=jax.random.key(0)
    )
    assert np.all(np.isfinite(np.asarray(theta)))


def test_spaces_round_trip_and_validate():
    for p in (Box(-1.0, 3.0), LogSpace(0.01, 100.0), Logit(0.0, 1.0)):
        x = np.array([p.lo + 0.3 * (p.hi - p.lo), p.lo + 0.9 * (p.hi - p.lo)])
        np.testing.assert_allclose(p.from_z(p.to_z(x)), x, rtol=1e-9)
        z = np.array([0.2, 0.7])
        h = 1e-6
        np.testing.assert_allclose(
            p.dtheta_dz(z), (p.from_z(z + h) - p.from_z(z - h)) / (2 * h), rtol=1e-5
        )
    with pytest.raises(ValueError, match="lo < hi"):
        Box(1.0, 1.0)
    with pytest.raises(ValueError, match="lo must be > 0"):
        LogSpace(0.0, 1.0)
    with pytest.raises(ValueError, match="finite"):
        Box(0.0, float("nan"))
    with pytest.raises(ValueError, match="Box, LogSpace or Logit"):
        tune.Space({"a": (0.0, 1.0)})


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: tune.tune(OBJECTIVE, {"alpah": LogSpace(0.1, 2.0)}), "no tunable"),
        (
            lambda: tune.tune(
                OBJECTIVE, SPACE, search=Search(start={"epsilon": np.nan})
            ),
            "finite",
        ),
        (
            lambda: tune.tune(OBJECTIVE, SPACE, search=Search(start={"epsilon": 5.0})),
            "outside its range",
        ),
        (lambda: tune.tune(OBJECTIVE, {}), "non-empty dict"),
        (lambda: tune.tune(OBJECTIVE, SPACE, estimator=Search()), "estimator must"),
        (lambda: tune.tune(OBJECTIVE, SPACE, estimator="newton"), "estimator must"),
        (lambda: tune.tune(OBJECTIVE, SPACE, search=ES()), "search must"),
        (
            lambda: Objective("apt", BANDIT, PARAMS, budget=40, loss="misclassifed"),
            "unknown loss",
        ),
        (lambda: Search(num_reps=1), "num_reps"),
        (lambda: Search(simulations=0), "simulations"),
        (lambda: ES(sigma=0.7), "sigma"),
        (lambda: ES(sigma_decay=0), "sigma_decay"),
        (lambda: ES(sigma_decay=-1.0), "sigma_decay"),
        (lambda: ES(sigma_decay=float("nan")), "sigma_decay"),
        (lambda: ES(sigma_decay=True), "sigma_decay"),
    ],
)
def test_tune_errors_name_the_problem(call, match):
    with pytest.raises(ValueError, match=match):
        call()


@pytest.mark.slow  # 6-30 s on a 2-core machine: CI runs it in the slow step
def test_tune_compiles_once_and_reports():
    jbandits.sim.runner.clear_cache()
    with count_compiles() as first:
        res = tune.tune(
            OBJECTIVE, SPACE, search=SEARCH, report=Report(evaluate=16), key=1
        )
    assert first.count == 1  # grid, steps and evaluation share one program
    assert res.simulations <= SEARCH.simulations
    assert 0.01 <= res.theta["epsilon"] <= 1.0
    assert res.init[0].shape == (5, 1) and res.init[1].shape == (5,)
    assert set(res.evaluation.rows) == {"tuned", "start", "grid"}
    mean, lo, hi = res.evaluation.paired["tuned - start"]
    assert lo <= mean <= hi
    for step in res.path:
        assert step.grad.shape == (1,) and step.grad_se.shape == (1,)
    with count_compiles() as again:  # new starting points, new keys, new budgets
        for i, eps in enumerate((0.02, 0.5)):
            start = dataclasses.replace(SEARCH, start={"epsilon": eps})
            tune.tune(OBJECTIVE, SPACE, search=start, key=i)
        two = dataclasses.replace(SEARCH, start=[{"epsilon": 0.02}, {"epsilon": 0.5}])
        tune.tune(OBJECTIVE, SPACE, search=two, estimator=ES(crn=True), key=3)
        out = tune.tune_budgets(OBJECTIVE, SPACE, budgets=[24, 40], search=SEARCH)
    assert again.count == 0
    assert set(out) == {24, 40}


def test_grid_tune_finds_the_minimum_of_its_own_estimates():
    g = tune.grid_tune(
        "apt",
        BANDIT,
        PARAMS,
        points=4,
        num_reps=8,
        chunk=16,
        space=SPACE,
        **{k: SETTING[k] for k in ("budget", "fixed", "loss", "metric")},
    )
    assert g.loss.shape == (4,) and g.simulations == 32
    assert g.theta["epsilon"] == pytest.approx(
        float(g.thetas["epsilon"][np.argmin(g.loss)])
    )


def test_non_finite_estimates_are_rejected_and_theta_stays_finite():
    nan_loss = lambda res: np.full(res.regret.shape[:2], np.nan)
    res = tune.tune(
        Objective("apt", BANDIT, PARAMS, **{**SETTING, "loss": nan_loss}),
        SPACE,
        search=dataclasses.replace(SEARCH, start={"epsilon": 0.1}, simulations=48),
    )
    assert res.rejected == len(res.path) == 3
    assert res.theta["epsilon"] == pytest.approx(0.1)


def test_bayes_objective_over_a_prior_of_instances():
    prior = lambda k: jbandits.envs.bernoulli(
        jax.random.uniform(k, (4,), minval=0.1, maxval=0.9)
    )[1]
    obj = tune.Objective(
        "apt",
        BANDIT,
        prior,
        budget=40,
        loss="misclassified",
        metric=METRIC,
        fixed={"threshold": 0.5},
    )
    inst = obj.instances(jax.random.key(0), 8)
    assert inst.means.shape == (8, 4)
    assert np.all((inst.means >= 0.1) & (inst.means <= 0.9))
    per = obj.losses({"epsilon": np.array([0.05, 0.5])}, jax.random.key(0), 8, chunk=16)
    assert per.shape == (2, 8) and np.all(np.isfinite(per))


def test_env_constructors_accept_traced_means():
    f = jax.jit(lambda m: jbandits.envs.bernoulli(m)[1].means)
    np.testing.assert_array_equal(f(jnp.array([0.2, 0.6])), jnp.array([0.2, 0.6]))
    g = jax.jit(lambda m, s: jbandits.envs.gaussian(m, s)[1].stds)
    np.testing.assert_array_equal(g(jnp.array([0.2, 0.6]), 0.5), [0.5, 0.5])
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        jbandits.envs.bernoulli([0.2, 1.5])  # concrete values are still checked


def test_grad_through_a_trajectory_raises_and_points_to_the_tuner():
    def final_loss(eps):
        policy = jbandits.apt(4, threshold=0.5, epsilon=eps)
        res = jbandits.run(
            policy,
            BANDIT,
            PARAMS,
            jax.random.key(0),
            budget=20,
            horizon=20,
            metric=METRIC,
        )
        return res.metrics["misclassified"][-1]

    assert np.isfinite(float(final_loss(0.1)))  # the forward pass is untouched
    for transform in (jax.grad, lambda f: jax.jit(jax.grad(f))):
        with pytest.raises(tune.TrajectoryGradientError, match="jbandits.tuning.tune"):
            transform(final_loss)(0.1)

    def regret_in_means(means):  # derivatives in the instance are not blocked
        bandit, params = jbandits.envs.bernoulli(means)
        policy = jbandits.apt(4, threshold=0.5, epsilon=0.1)
        return jbandits.run(
            policy, bandit, params, jax.random.key(0), budget=20, horizon=20
        ).regret[-1]

    _, tangent = jax.jvp(regret_in_means, (jnp.asarray(MEANS),), (jnp.ones(4) / 4,))
    assert np.isfinite(float(tangent))


@pytest.mark.slow  # 8-10 s on a 2-core machine: CI runs it in the slow step
def test_softmax_relaxation_at_low_temperature_is_the_hard_policy():
    bandit, params = jbandits.envs.gaussian(MEANS, 0.3)  # no exact ties
    hard = jbandits.lsa(4, threshold=0.5, alpha=1.0)
    soft = tune.relaxed_policy(
        4, name="lsa", temperature=1e-7, tuned=("alpha",), threshold=0.5, alpha=1.0
    )
    run = lambda p, k: (
        jbandits.run(p, bandit, params, k, budget=30, horizon=30, record_arms=True).arms
    )
    keys = jax.random.split(jax.random.key(3), 4)
    a = jax.vmap(lambda k: run(hard, k))(keys)
    b = jax.vmap(lambda k: run(soft, k))(keys)
    np.testing.assert_array_equal(a, b)


def test_pg_estimator_runs_and_rejects_non_index_policies():
    res = tune.tune(
        OBJECTIVE,
        SPACE,
        search=dataclasses.replace(SEARCH, start={"epsilon": 0.1}, simulations=16),
        estimator=PG(temperature=0.5),
    )
    assert len(res.path) == 2 and np.isfinite(res.path[0].grad).all()
    with pytest.raises(ValueError, match="index policy"):
        tune.tune(
            Objective("augucb", BANDIT, PARAMS, **SETTING),
            {"rho": Box(0.1, 1.0)},
            search=SEARCH,
            estimator=PG(),
        )


@pytest.mark.slow  # statistical: the PG estimate matches finite differences
def test_pg_gradient_matches_finite_differences_of_the_relaxed_loss():
    space = tune.Space({"epsilon": Box(0.0, 1.0)})
    obj = tune.Objective(
        "apt",
        BANDIT,
        PARAMS,
        budget=30,
        loss="misclassified",
        metric=METRIC,
        fixed={"threshold": 0.5},
    )
    from jbandits.tuning.tuner import _relaxed_copy

    pg = _relaxed_copy(obj, space, 0.3)
    z, n, h = np.array([0.6]), 100_000, 0.1
    g = tune.pg_gradient(pg, space, z, jax.random.key(0), num_reps=n, chunk=n)
    per = pg.losses(
        {"epsilon": np.array([z[0] + h, z[0] - h])},
        jax.random.key(1),
        n,
        chunk=n,
        return_state=True,
    )
    fd = (per[0] - per[1]) / (2 * h)
    fd_se = fd.std() / np.sqrt(n)
    assert fd.mean() > 4 * fd_se  # the slope is clearly positive here
    assert abs(g[2][0] - fd.mean()) < 3 * np.hypot(g[3][0], fd_se)


@pytest.mark.slow  # statistical / full size: run by `pytest -m slow`
def test_tuning_apt_epsilon_reduces_error():
    """Start APT at a poor eps = 1.0 on a two-group instance; the tuner lowers it."""
    means = np.r_[np.full(3, 0.45), np.full(3, 0.55)]
    bandit, params = jbandits.envs.bernoulli(means)
    res = tune.tune(
        Objective(
            "apt",
            bandit,
            params,
            budget=300,
            fixed={"threshold": 0.5},
            loss="misclassified",
            metric=jbandits.analysis.metrics.thresholding(0.5),
        ),
        {"epsilon": LogSpace(0.001, 1.0)},
        search=Search(start={"epsilon": 1.0}, simulations=3000, num_reps=100),
        report=Report(evaluate=2000),
        key=1,
    )
    assert res.theta["epsilon"] < 1.0
    mean, lo, hi = res.evaluation.paired["tuned - start"]
    assert hi < 0


def test_space_grid_takes_a_whole_number_of_points():
    space = tune.Space({"a": Box(0.0, 1.0)})
    for bad in (2.5, 0, True):  # never rounded (int(2.5) would give 2 points)
        with pytest.raises(ValueError, match="points_per_dim must be an integer >= 1"):
            space.grid(bad)


def test_parabolic_refinement_finds_the_vertex_between_grid_points():
    from jbandits.tuning.grid import _parabolic

    z = tune.Space({"a": Box(0.0, 1.0)}).grid(5)  # 0.1, 0.3, ..., 0.9
    means = (z[:, 0] - 0.37) ** 2
    np.testing.assert_allclose(_parabolic(z, means, 1, 5), [0.37])
    np.testing.assert_allclose(_parabolic(z, means, 0, 5), [0.1])  # no left neighbour
    flat = np.zeros(5)  # no curvature: stay on the grid point
    np.testing.assert_allclose(_parabolic(z, flat, 2, 5), [0.5])


def test_a_search_stops_after_max_steps_steps():
    """The descent ends at options.MAX_STEPS (100) steps however many simulations
    are left (``stopped`` says "max_steps"), else when the next step does not fit."""
    flat = lambda res: np.ones(res.regret.shape[:2])
    objective = Objective("apt", BANDIT, PARAMS, **{**SETTING, "loss": flat})
    search = dataclasses.replace(SEARCH, simulations=10_000, start={"epsilon": 0.1})
    res = tune.tune(objective, SPACE, search=search)
    assert res.stopped == "max_steps" and len(res.path) == 100
    assert res.simulations == 100 * 16
    res = tune.tune(
        objective, SPACE, search=dataclasses.replace(search, simulations=70)
    )
    assert res.stopped == "budget" and len(res.path) == 4


def test_final_comparison_picks_the_lowest_candidate_within_the_budget():
    """Two parameters from a start: the averaged iterate, the start and the best
    evaluated point are compared on fresh common replications (equal shares of 0.2
    of the simulations); the lowest mean is returned, a candidate equal to an
    earlier one runs once, under the earlier name."""
    ucbv = Objective("ucbv", BANDIT, PARAMS, budget=40)
    two = {"c": Box(0.0, 2.0), "zeta": Box(0.2, 2.5)}
    search = Search(num_reps=8, simulations=400, start={"c": 1.0, "zeta": 1.0})
    res = tune.tune(ucbv, two, search=search, key=2)
    race = res.extra["race"]
    assert race is not None and "average 0" in race and len(race) >= 2
    assert set(race) <= {"average 0", "start", "best evaluated"}
    thetas = [tuple(theta.values()) for theta, _ in race.values()]
    assert len(set(thetas)) == len(thetas)
    best = min(race, key=lambda n: race[n][1])
    assert res.theta == race[best][0]
    assert res.simulations <= search.simulations
    assert res.method["final"] == "equal shares"


def test_the_result_is_the_average_of_the_second_half_of_the_iterates():
    """Polyak-Ruppert: from a start (no final comparison for one parameter), three
    steps give the iterates z0..z3 and theta is the mean of z2 and z3."""
    search = Search(num_reps=8, simulations=48, start={"epsilon": 0.1})
    res = tune.tune(OBJECTIVE, SPACE, search=search, key=4)
    assert len(res.path) == 3 and all(step.accepted for step in res.path)
    space = tune.Space(SPACE)
    z = [space.to_z(step.theta) for step in res.path[1:]]
    assert res.theta["epsilon"] == pytest.approx(space.from_z(np.mean(z, 0))["epsilon"])
    assert res.theta["epsilon"] != pytest.approx(res.path[-1].theta["epsilon"])


def test_the_spellings_before_0_2_0_are_python_errors_since_0_3_0():
    """The old forms are no longer recognised (jbandits.tuning.removed is gone):
    Python's own TypeError names the keyword or the argument count."""
    cases = [
        (lambda: tune.tune("apt", BANDIT, instance=PARAMS, space=SPACE), "'instance'"),
        (lambda: tune.tune(OBJECTIVE, SPACE, simulations=80), "'simulations'"),
        (lambda: tune.tune(OBJECTIVE, SPACE, budget=40), "'budget'"),
        (
            lambda: tune.tune_budgets(OBJECTIVE, SPACE, budgets=[24], budget=40),
            "'budget'",
        ),
        (lambda: tune.tune_budgets("apt", BANDIT, PARAMS, budgets=[24]), "positional"),
    ]
    for call, says in cases:
        with pytest.raises(TypeError, match=says) as caught:
            call()
        assert "removed" not in str(caught.value)
    with pytest.raises(ValueError, match=r"estimator must be ES\(...\) or PG"):
        tune.tune(OBJECTIVE, SPACE, estimator="pg")


@pytest.mark.parametrize(
    "param", [LogSpace(0.1, 10.0), LogSpace(0.01, 100.0), LogSpace(1e-3, 1000.0),
              LogSpace(1.01, 10.0), Box(0.1, 0.7), Box(-3.3, 0.3)],
)  # fmt: skip
def test_the_box_edges_map_back_into_the_space(param):
    """z = 0 and 1 give exactly lo and hi, which the space takes back: LogSpace(0.1,
    10).from_z(1) was 10.000000000000005, so a pick on the upper edge (seen in the
    held-out benchmark, UGapE-b (a, b)) made Space.to_z raise."""
    space = tune.Space({"p": param})
    for z, edge in ((0.0, param.lo), (1.0, param.hi)):
        theta = space.from_z(np.array([z]))
        assert theta["p"] == edge
        assert space.to_z(theta)[0] == pytest.approx(z)


@pytest.mark.filterwarnings("ignore::jbandits.tuning.TuningWarning")
def test_the_smoothing_shrinks_step_by_step_for_one_parameter(monkeypatch):
    """ES.sigma_decay: step i smooths with sigma / (1 + i / sigma_decay); by default
    5 for one parameter, constant (inf) for two; math.inf keeps sigma at every step."""
    from jbandits.tuning import estimators

    seen = []
    real = estimators.es_gradient

    def spy(*args, sigma, **kw):
        seen.append(sigma)
        return real(*args, sigma=sigma, **kw)

    monkeypatch.setattr(estimators, "es_gradient", spy)
    search = Search(num_reps=8, simulations=64, start={"epsilon": 0.1})  # 4 steps

    def sigmas(space, estimator=None, objective=OBJECTIVE, start=None):
        estimator = ES() if estimator is None else estimator
        seen.clear()
        s = search  # two parameters: 4 steps of 32 besides the 0.2 reserve
        if start is not None:
            s = dataclasses.replace(search, start=start, simulations=160)
        tune.tune(objective, space, search=s, estimator=estimator, key=0)
        return list(seen)

    assert ES().resolved(1).sigma_decay == 5.0
    assert ES().resolved(2).sigma_decay == np.inf
    np.testing.assert_allclose(sigmas(SPACE), [0.1 / (1 + i / 5) for i in range(4)])
    assert sigmas(SPACE, ES(sigma_decay=np.inf)) == [0.1] * 4
    np.testing.assert_allclose(
        sigmas(SPACE, ES(sigma=0.2, sigma_decay=1)), [0.2 / (1 + i) for i in range(4)]
    )
    ucbv = Objective("ucbv", BANDIT, PARAMS, budget=40)
    two = {"c": Box(0.0, 2.0), "zeta": Box(0.2, 2.5)}
    assert sigmas(two, objective=ucbv, start={"c": 1.0, "zeta": 1.0}) == [0.05] * 4
