"""The engine's initial carry varies with the lane, so that JAX batches each of its
nested loops once (engine.lane_varying)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jbandits
from benchmarks import hlo
from jbandits.sim import engine, runner


def test_lane_varying_keeps_every_value():
    carry = {
        "f": jnp.asarray([-0.0, 0.0, np.nan, np.inf, -1.5], jnp.float32),
        "i": jnp.asarray([0, -3, 7], jnp.int32),
        "b": jnp.asarray([True, False]),
        "k": jax.random.key(3),
    }
    lanes = jnp.asarray([5, 9], jnp.int32)
    out = jax.vmap(lambda b: engine.lane_varying(carry, b >= 0))(lanes)
    for name in ("f", "i", "b"):
        want = np.broadcast_to(np.asarray(carry[name]), (2, *carry[name].shape))
        np.testing.assert_array_equal(np.asarray(out[name]), want)
    assert np.signbit(np.asarray(out["f"][:, 0])).all()  # -0.0 stays -0.0
    np.testing.assert_array_equal(  # keys pass through (vmap broadcasts them)
        jax.random.key_data(out["k"]), np.stack([jax.random.key_data(carry["k"])] * 2)
    )


def _batching_calls(monkeypatch, vary: bool, trace) -> int:
    """Calls of JAX's jaxpr batching while ``trace()`` runs, with
    :func:`engine.lane_varying` (``vary``) or without it."""
    from jax._src.interpreters import batching

    inner = getattr(batching, "_batch_jaxpr_axes", None)
    if inner is None:
        pytest.skip("this JAX has no batching._batch_jaxpr_axes to count")
    calls = []

    def counted(*args, **kwargs):
        calls.append(1)
        return inner(*args, **kwargs)

    monkeypatch.setattr(batching, "_batch_jaxpr_axes", counted)
    if not vary:
        monkeypatch.setattr(engine, "lane_varying", lambda carry, lane: carry)
    trace()
    return len(calls)


def _fewer_with_varying_carry(monkeypatch, trace) -> tuple[int, int]:
    """(calls with the varying carry, calls without)."""
    with monkeypatch.context() as m:
        without = _batching_calls(m, False, trace)
    with monkeypatch.context() as m:
        once = _batching_calls(m, True, trace)
    print(f"batching passes: {once} with the varying carry, {without} without")
    return once, without


BANDIT, PARAMS = jbandits.envs.bernoulli(np.linspace(0.1, 0.9, 7))


def test_the_engine_loops_are_batched_once(monkeypatch):
    """The runner's APT program (its budget varies with the lane)."""
    policy = jbandits.make("apt", num_arms=7, threshold=0.5, epsilon=0.05)

    def trace():
        fn, args = hlo.engine_program(policy, BANDIT, PARAMS, budget=50, lanes=4)
        fn.trace(*args)
        runner.clear_cache()

    once, without = _fewer_with_varying_carry(monkeypatch, trace)
    # measured: 27 calls with the varying carry, 57 without (JAX 0.10.2)
    assert once < 0.7 * without, (once, without)


def test_a_user_vmap_over_keys_is_batched_once(monkeypatch):
    """A user's ``vmap`` of :func:`jbandits.run` over keys alone (the budget a Python
    int, so only the key varies with the lane)."""
    policy = jbandits.make("sequential_halving", num_arms=7, budget=60)

    def one(key):
        return jbandits.run(policy, BANDIT, PARAMS, key, budget=60, horizon=60)

    def trace():
        jax.jit(jax.vmap(one)).trace(jax.random.split(jax.random.key(0), 4))

    once, without = _fewer_with_varying_carry(monkeypatch, trace)
    # measured: 11 calls with the varying carry, 29 without (JAX 0.10.2)
    assert once < 0.7 * without, (once, without)
