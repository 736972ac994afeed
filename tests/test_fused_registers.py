"""What keeps the fused kernel's registers down (benchmarks/notes_fused_registers.md):
its program has no [K, K] one-hot forms where a cheaper exact form exists, and no
operation the Triton compiler fails on; a policy the kernel cannot hold without
spilling is refused before tracing, with its reason."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax

import jbandits
from jbandits.analysis import metrics
from jbandits.core.execution import Execution
from jbandits.sim.fused import driver, lane, lowering, safe

# interpret-mode fused programs run in a process of their own (see .ci/run)
pytestmark = pytest.mark.fused


def _shapes(jaxpr) -> set:
    """Every value shape in ``jaxpr`` and its sub-programs."""
    out = set()
    for eqn in jaxpr.eqns:
        out.update(tuple(getattr(v.aval, "shape", ())) for v in eqn.outvars)
        for sub in jax.extend.core.jaxprs_in_params(eqn.params):
            out |= _shapes(sub)
    return out


@pytest.mark.parametrize("dtype", [np.uint32, np.int32, np.int16, np.uint8, np.int8])
def test_population_count_is_bit_arithmetic(dtype):
    info = np.iinfo(dtype)
    rng = np.random.default_rng(1)
    x = rng.integers(info.min, info.max, 500, endpoint=True).astype(dtype)
    x[:3] = [info.min, info.max, 0]
    f = safe.kernel_safe(lax.population_count)
    np.testing.assert_array_equal(f(jnp.asarray(x)), lax.population_count(x))
    prims = {e.primitive.name for e in jax.make_jaxpr(f)(x).jaxpr.eqns}
    assert "population_count" not in prims, prims


def _first_of(a, b):
    take_a = (a[0] < b[0]) | ((a[0] == b[0]) & (a[1] < b[1]))
    return jnp.where(take_a, a[0], b[0]), jnp.where(take_a, a[1], b[1])


def test_pad_within_powers_of_two_is_one_select():
    """A variadic reduce over 10 arms pads them to 16: in the padded evaluation that
    is a select, not a [16, 16] placement; the values are the reduce's."""

    def first_min(x):
        ids = lax.iota(jnp.int32, x.shape[0])
        return lax.reduce(
            (x, ids),
            (jnp.asarray(jnp.inf, x.dtype), jnp.asarray(x.shape[0], jnp.int32)),
            lambda a, b: _first_of(a, b),
            (0,),
        )

    x = jnp.asarray([0.5, 0.2, 0.9, 0.2, 0.7, 0.3, 0.8, 0.1, 0.6, 0.1], jnp.float32)
    closed = jax.make_jaxpr(safe.kernel_safe(first_min))(x)
    got = safe.evaluate_padded(closed.jaxpr, closed.consts, [safe.pad_array(x)])
    assert got[0][()] == x[7] and int(got[1][()]) == 7  # the first of the tied minima
    padded = jax.make_jaxpr(
        lambda y: safe.evaluate_padded(closed.jaxpr, closed.consts, [y])
    )(safe.pad_array(x))
    assert (16, 16) not in _shapes(padded.jaxpr) and (16, 10) not in _shapes(
        closed.jaxpr
    )


K = 16  # arms of the kernel programs below (their statistics tables: [8, K])


def _kernel_jaxpr(policy, params, metric, block=4):
    spec = driver.Spec(
        build=lambda hp, ex: policy,
        execution=None,
        bandit=jbandits.envs.bernoulli(np.linspace(0.1, 0.9, K))[0],
        horizon=32,
        num_checkpoints=2,
        metric=metric,
        permute=True,
        segment=None,
        shared=(),
        fold=True,
        block=block,
        lowering=lowering.Lowering("interpret"),
    )
    n = block
    lanes = jax.tree_util.tree_map(
        lambda x: jnp.broadcast_to(x, (n, *jnp.shape(x))), params
    )
    args = (
        jnp.zeros((n,), jnp.int32),  # hp (unused by the closed-over policy)
        lanes,
        jnp.zeros((n, 2), jnp.uint32),
        jnp.arange(n, dtype=jnp.int32),
        jnp.full((n,), 32, jnp.int32),
        jnp.full((n,), 32, jnp.int32),
    )
    jaxpr = jax.make_jaxpr(driver.program(spec))(*args).jaxpr
    (body,) = safe.kernel_bodies(jaxpr)
    return body


def test_read_outs_in_policy_numbering_have_no_arm_by_arm_forms():
    """A per-arm output (thresholding labels) scored by a built-in metric is read in
    policy numbering: the kernel holds no [block, K, K] renumbering; a metric of
    its own is read in bandit numbering, which needs it."""
    _, params = jbandits.envs.bernoulli(np.linspace(0.1, 0.9, K))
    policy = jbandits.make("uniform", num_arms=K, threshold=0.5)
    built_in = _kernel_jaxpr(policy, params, metrics.thresholding(0.5))
    assert (4, K, K) not in _shapes(built_in)

    def own(out, means, mask):
        return {"first": out[0].astype(jnp.float32)}  # reads an arm by its number

    assert not lane.read_in_policy_numbering(lane.Spec(*[None] * 5, own, *[None] * 6))
    assert (4, K, K) in _shapes(_kernel_jaxpr(policy, params, own))


def test_metric_of_its_own_fused_equals_xla():
    """The bandit-numbered read-out (a metric outside lane.RENUMBERABLE) still gives
    the XLA backend's values."""
    bandit, params = jbandits.envs.bernoulli(
        np.asarray([0.2, 0.7, 0.4, 0.6, 0.5]),
        arm_mask=np.asarray([1, 1, 1, 1, 0], bool),
    )
    policy = jbandits.make("apt", num_arms=5, threshold=0.5, epsilon=0.05)

    def own(out, means, mask):  # not invariant under renumbering the arms
        return {"first_two": (out[0] + 2 * out[1]).astype(jnp.float32)}

    runs = [
        jbandits.simulate(
            policy,
            bandit,
            params,
            jax.random.key(3),
            budget=40,
            num_reps=6,
            num_checkpoints=3,
            metric=own,
            progress=False,
            execution=Execution(backend=b),
        )  # fmt: skip
        for b in ("xla", "fused")
    ]
    for a, b in zip(runs[0].metrics.values(), runs[1].metrics.values(), strict=True):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    np.testing.assert_array_equal(runs[0].pulls, runs[1].pulls)


def test_batched_switch_selects_on_booleans():
    """A ``switch`` under the kernel's vmap is a ``select_n`` on an int32 index, which
    Triton refuses (``arith.select`` takes an i1 condition): the padded evaluation
    writes it as selects on booleans, with the same values."""

    def f(i, x):
        return lax.switch(i, [lambda v: v + 1.0, lambda v: v * 2.0, jnp.sin], x)

    i = jnp.asarray([0, 1, 2, 1], jnp.int32)
    x = jnp.asarray([0.5, 1.5, 2.5, 3.5], jnp.float32)
    closed = jax.make_jaxpr(jax.vmap(f))(i, x)
    assert any(
        e.primitive.name == "select_n" and e.invars[0].aval.dtype == jnp.int32
        for e in closed.jaxpr.eqns
    )
    run = jax.make_jaxpr(
        lambda a, b: safe.evaluate_padded(closed.jaxpr, closed.consts, [a, b])
    )(i, x)
    whiches = [
        e.invars[0].aval.dtype for e in run.jaxpr.eqns if e.primitive.name == "select_n"
    ]
    assert whiches and all(w == jnp.bool_ for w in whiches), whiches
    got = safe.evaluate_padded(closed.jaxpr, closed.consts, [i, x])[0]
    np.testing.assert_array_equal(got, jax.vmap(f)(i, x))


@pytest.mark.parametrize(
    "method", [lax.RoundingMethod.AWAY_FROM_ZERO, lax.RoundingMethod.TO_NEAREST_EVEN]
)
def test_round_from_floor(method):
    """``round`` (no Triton rule; Track-and-Stop uses it) rewritten from ``floor``:
    the same values and signs, halves, -0.0, infinities and NaN included."""
    rng = np.random.default_rng(2)
    x = np.concatenate(
        [
            rng.normal(0, 10, 500),
            np.arange(-4, 4, 0.5),
            [0.49999997, -0.49999997, -0.3, -0.0, np.inf, -np.inf, np.nan, 8388607.5],
        ]
    ).astype(np.float32)
    f = safe.kernel_safe(lambda v: lax.round(v, method))
    got, want = np.asarray(f(jnp.asarray(x))), np.asarray(lax.round(x, method))
    assert np.array_equal(got, want, equal_nan=True)
    assert np.array_equal(np.signbit(got), np.signbit(want))
    assert "round" not in {e.primitive.name for e in jax.make_jaxpr(f)(x).jaxpr.eqns}


def test_refused_policies_run_on_xla_with_the_reason(monkeypatch):
    """On a GPU a policy of :data:`refused.REFUSED` is not traced for the kernel: the
    runner's program is the XLA one, and the warning says why."""
    from jbandits.sim.fused import backend, refused
    from jbandits.sim.runner import programs

    name = "uniform"
    assert refused.reason(name, "triton") and not refused.reason(name, "interpret")
    assert refused.reason("thompson", "triton")  # Beta, the default posterior
    assert not refused.reason("thompson", "triton", {"posterior": "gauss"})
    monkeypatch.setattr(backend, "_platform", lambda: "gpu")
    programs.clear_cache()
    bandit, params = jbandits.envs.bernoulli(np.asarray([0.2, 0.6, 0.4]))
    policy = jbandits.make(name, num_arms=3, threshold=0.5)
    traced = []
    monkeypatch.setattr(driver, "program", lambda spec: traced.append(spec))
    with pytest.warns(RuntimeWarning, match="refused for GPUs"):
        jbandits.simulate(
            policy, bandit, params, jax.random.key(0), budget=12, num_reps=2,
            progress=False, execution=Execution(backend="fused"),
        )  # fmt: skip
    assert not traced
    programs.clear_cache()


def test_on_a_gpu_only_policies_measured_spill_free_are_accepted():
    """An allow-list: a registered policy that was never measured spill-free for an
    H100 (Track-and-Stop, EB-TC, ...) is refused with the reason; the measured ones
    are accepted; a policy of one's own (not registered) is compiled as asked."""
    from jbandits.sim.fused import refused

    for name in jbandits.names():
        why = refused.reason(name, "triton")
        accepted = name in refused.SPILL_FREE and not refused.SPILL_FREE[name][0]
        assert (why is None) == accepted, (name, why)
        assert refused.reason(name, "interpret") is None
    assert "not yet measured spill-free" in refused.reason("track_and_stop", "triton")
    assert "spill stores" in refused.reason("uniform", "triton")
    assert refused.reason(None, "triton") is None
    assert refused.reason("my_own_unregistered_policy", "triton") is None
