"""jbandits.policies.blocks.sampling: Beta draws by Marsaglia-Tsang gammas in three stages."""

import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.stats

from jbandits.policies.blocks import sampling as _sampling

# shape 1 (exponential path), small shapes (most rejections), large and lopsided ones
A = np.array([1.0, 1.0, 2.0, 3.0, 2.0, 50.0, 7.0, 1000.0], np.float32)
B = np.array([1.0, 9.0, 1.0, 5.0, 2.0, 30.0, 300.0, 20.0], np.float32)
N = 20_000


def _draws(**stages):
    keys = jax.random.split(jax.random.key(20261123), N)
    fn = jax.jit(jax.vmap(lambda k: _sampling.beta(k, A, B, **stages)))
    return np.asarray(fn(keys), np.float64)


@pytest.fixture(scope="module")
def default_draws():
    return _draws()


def _ks(x, a, b):
    return scipy.stats.kstest(x, scipy.stats.beta(a, b).cdf).statistic


def test_law_is_beta(default_draws):
    # KS statistic below its 0.1 % critical value 1.95 / sqrt(n) for every (a, b)
    crit = 1.95 / np.sqrt(N)
    for j, (a, b) in enumerate(zip(A, B, strict=True)):
        assert _ks(default_draws[:, j], a, b) < crit, (a, b)
        mean = a / (a + b)
        var = a * b / ((a + b) ** 2 * (a + b + 1))
        assert abs(default_draws[:, j].mean() - mean) < 4 * np.sqrt(var / N), (a, b)
    # the statistic has the power to see a shape off by one at these sizes
    assert _ks(default_draws[:, 2], A[2] + 1, B[2]) > 3 * crit


def test_arms_are_independent(default_draws):
    corr = np.corrcoef(default_draws.T)
    off = corr[~np.eye(len(A), dtype=bool)]
    assert np.max(np.abs(off)) < 4 / np.sqrt(N)


@pytest.mark.parametrize(
    "stages",
    [
        dict(tries=1, slots=0),  # every rejection goes to the while loop
        dict(tries=3, slots=0, retries=0),
        dict(tries=1, slots=8, retries=6),  # every rejection handled by the slots
    ],
)
def test_draws_do_not_depend_on_the_stages(default_draws, stages):
    # the same first accepted try wins; only rounding may differ between kernels
    np.testing.assert_allclose(_draws(**stages), default_draws, rtol=2e-6)


def test_lanes_axis_gives_the_same_draws():
    keys = jax.random.split(jax.random.key(7), 256)

    def lanes(keys):
        return jax.vmap(
            lambda k: _sampling.beta(k, A, B, lanes="lanes"), axis_name="lanes"
        )(keys)

    plain = jax.jit(jax.vmap(lambda k: _sampling.beta(k, A, B)))(keys)
    np.testing.assert_allclose(np.asarray(jax.jit(lanes)(keys)), plain, rtol=2e-6)


def test_shapes_below_one_give_nan():
    out = jax.jit(_sampling.beta)(
        jax.random.key(0), jnp.array([0.5, 2.0, jnp.nan]), 2.0
    )
    assert np.isnan(out[0]) and np.isnan(out[2]) and 0.0 < out[1] < 1.0


def test_try_draws_are_normal_and_uniform():
    x, u = _sampling.try_draws(jax.random.key(1), 3, jnp.arange(N), jnp.float32)
    assert scipy.stats.kstest(np.asarray(x), "norm").statistic < 1.95 / np.sqrt(N)
    assert scipy.stats.kstest(np.asarray(u), "uniform").statistic < 1.95 / np.sqrt(N)
    assert np.corrcoef(np.asarray(x), np.asarray(u))[0, 1] < 4 / np.sqrt(N)


@pytest.mark.parametrize("lanes", [1, 50, 10_000])
@pytest.mark.parametrize("n", [1, 5, 20, 100, 1000])
def test_default_stages_bound_the_stage_three_rate(n, lanes):
    # slots: the least s (<= 2 n) with P(Poisson(P_NAN n) > s) <= STAGE3_RATE / 2 per
    # batch of lanes; retries: the least r with lanes P_NAN n P_REJECT^r within it
    s, r = _sampling.default_stages(n, lanes)
    budget = _sampling.STAGE3_RATE / 2.0
    tail = scipy.stats.poisson(_sampling.P_NAN * n).sf
    assert 1 <= s <= 2 * n  # NaN gammas per lane: 2 per entry at most
    assert s == 2 * n or lanes * tail(s) <= budget
    assert s == 1 or lanes * tail(s - 1) > budget
    fail = lanes * _sampling.P_NAN * n * _sampling.P_REJECT ** np.arange(r - 1, r + 1)
    assert fail[1] <= budget and (r == 1 or fail[0] > budget)


def test_default_stages_grow_with_the_lanes():
    few, many = _sampling.default_stages(100, 50), _sampling.default_stages(100, 2000)
    assert few == (9, 3) and many[0] > few[0] and many[1] > few[1]


def test_the_sampler_reads_the_lanes_of_the_given_axis():
    seen = []
    stages = _sampling.default_stages

    def spy(n, lanes=1):
        seen.append(lanes)
        return stages(n, lanes)

    keys = jax.random.split(jax.random.key(0), 7)
    try:
        _sampling.default_stages = spy
        jax.vmap(lambda k: _sampling.beta(k, A, B, lanes="lanes"), axis_name="lanes")(
            keys
        )
        jax.vmap(lambda k: _sampling.beta(k, A, B))(keys)
    finally:
        _sampling.default_stages = stages
    assert seen == [7, 1]


@pytest.mark.parametrize("lanes", [2, 50, 10_000])
@pytest.mark.parametrize("n", [1, 20, 100])
def test_pool_size_bounds_the_stage_three_rate(n, lanes):
    # the least q (<= 2 n lanes) with P(Poisson(P_NAN_MAX n lanes) > q) <= STAGE3_RATE
    # / 2, rounded up to a multiple of 8
    s = _sampling.pool_size(n, lanes)
    budget = _sampling.STAGE3_RATE / 2.0
    tail = scipy.stats.poisson(_sampling.P_NAN_MAX * n * lanes).sf
    q = 1
    while tail(q) > budget and q < 2 * n * lanes:
        q += 1
    assert s == -(-q // 8) * 8
    # pooled slots are fewer than per-lane ones beyond a few lanes
    assert lanes < 50 or s < lanes * _sampling.default_stages(n, lanes)[0] / 1.5


def _lane_draws(keys, a, b, **stages):
    def lanes(keys):
        return jax.vmap(
            lambda k: _sampling.beta(k, a, b, lanes="lanes", **stages),
            axis_name="lanes",
        )(keys)

    return np.asarray(jax.jit(lanes)(keys), np.float64)


@pytest.mark.parametrize("pool", [None, 1, 3])
def test_pooled_stage_two_gives_the_per_lane_draws(pool):
    # under a recorded axis stage 2 is pooled over the lanes (a small pool leaves
    # the rest to stage 3); the draws are those of per-lane slots and of no axis
    keys = jax.random.split(jax.random.key(11), 300)
    a = np.tile(np.array([2.0, 3.0, 2.0, 1.0, 40.0], np.float32), 4)
    b = np.tile(np.array([2.0, 1.0, 5.0, 7.0, 2.0], np.float32), 4)
    pooled = _lane_draws(keys, a, b, pool=pool)
    per_lane = _lane_draws(keys, a, b, pool=0)
    plain = np.asarray(jax.jit(jax.vmap(lambda k: _sampling.beta(k, a, b)))(keys))
    assert not np.isnan(pooled).any()
    np.testing.assert_allclose(pooled, per_lane, rtol=2e-6)
    np.testing.assert_allclose(pooled, plain, rtol=2e-6)
    # stage 1 left NaN gammas in some lanes, so the pool had work to do
    assert np.isnan(_stage_one(keys, a, b)).sum() > 3


def test_pooled_stage_two_runs_once_per_batch():
    # its tries are computed on [pool] arrays, not per lane: the jaxpr's gammas of
    # stage 2 carry no lane axis (all_gather makes them the same for every lane)
    keys = jax.random.split(jax.random.key(0), 50)

    def lanes(keys):
        return jax.vmap(
            lambda k: _sampling.beta(k, A, B, lanes="lanes"), axis_name="lanes"
        )(keys)

    text = str(jax.make_jaxpr(lanes)(keys))
    size = _sampling.pool_size(A.size, 50)
    assert "all_gather" not in text  # batched away: the gathered arrays are inputs
    # normals of stage 2's tries (the retries too) on the pool, none per lane
    assert len(re.findall(rf"f32\[{size}\] = erf_inv", text)) >= 2
    assert not re.findall(rf"f32\[50,{size}\] = erf_inv", text)


def _stage_one(keys, a, b):
    """Stage 1's gammas ``[lanes, 2 n]`` (G_a then G_b; NaN where try 0 rejected)."""
    alpha = np.concatenate([a, b])
    e = jnp.arange(alpha.size)
    fn = jax.jit(jax.vmap(lambda k: _sampling._gammas(k, alpha, e, 0, 1)))
    return np.asarray(fn(keys))


def test_stage_one_leaves_fewer_nan_gammas_than_the_slots_assume():
    # over shapes from 1 to 1000 (the small ones reject most), stage 1 leaves fewer
    # than P_NAN NaN gammas per entry: the rate default_stages is sized for
    keys = jax.random.split(jax.random.key(3), N)
    rate = np.isnan(_stage_one(keys, A, B)).sum() / (N * len(A))
    assert 0.002 < rate < _sampling.P_NAN
