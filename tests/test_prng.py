"""jbandits.core.prng computes exactly what jax.random computes, bit for bit."""

import jax
import jax.extend as jex
import jax.numpy as jnp
import numpy as np
import pytest

from jbandits.core import prng as _prng
from jbandits.envs import common as _common

N = 4096


def _draws(mod):
    def one(key, data):
        return (
            jax.random.key_data(mod.fold_in(key, data)),
            jax.random.key_data(mod.split(key, 3)),
            jax.random.key_data(mod.split(key)),
            mod.uniform(key),
            mod.uniform(key, (7,), minval=-2.0, maxval=3.0),
            mod.normal(key),
            mod.normal(key, (3,)),
        )

    return jax.jit(jax.vmap(one))


@pytest.fixture(scope="module")
def inputs():
    keys = jax.random.split(jax.random.key(20261122), N)
    data = jnp.asarray(
        np.random.default_rng(0)
        .integers(0, 2**32, N, dtype=np.uint64)
        .astype(np.uint32)
    )
    return keys, data


def test_same_bits_as_jax_random(inputs):
    ours = _draws(_prng)(*inputs)
    theirs = _draws(jax.random)(*inputs)
    for a, b in zip(ours, theirs, strict=True):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


def test_reward_stack_key_is_two_fold_ins(inputs):
    """MovieLens' reward key (it needs a key for randint)."""
    keys, data = inputs
    arms = data % 1000

    def ref(k, a, j):
        return jax.random.normal(jax.random.fold_in(jax.random.fold_in(k, a), j))

    def ours(k, a, j):
        return _prng.normal(_common.stack_key(k, a, j))

    pulls = data // 7
    np.testing.assert_array_equal(
        np.asarray(jax.jit(jax.vmap(ours))(keys, arms, pulls)),
        np.asarray(jax.jit(jax.vmap(ref))(keys, arms, pulls)),
    )


def test_reward_bits_are_one_threefry_hash_of_arm_and_pull(inputs):
    """The j-th reward of arm i: threefry2x32(key, counter (i, j)), words xor-folded,
    mapped to floats as jax.random maps its bits (checked against JAX's own hash)."""
    keys, data = inputs
    arms, pulls = data % 1000, data // 7

    def ref(k, a, j):
        o = jex.random.threefry_2x32(jax.random.key_data(k), jnp.stack([a, j]))
        return o[0] ^ o[1]

    bits = jax.jit(jax.vmap(ref))(keys, arms, pulls)
    ours = jax.jit(jax.vmap(_prng.counter_bits))(keys, arms, pulls)
    np.testing.assert_array_equal(np.asarray(ours), np.asarray(bits))
    for fn, conv in (
        (_common.reward_uniform, _prng.unit_from_bits),
        (_common.reward_normal, _prng.normal_from_bits),
    ):
        got = jax.jit(jax.vmap(lambda k, a, j, fn=fn: fn(k, a, j, jnp.float32)))(
            keys, arms, pulls
        )
        np.testing.assert_array_equal(
            np.asarray(got), np.asarray(conv(bits, jnp.float32))
        )


def test_reward_stack_is_uniform_and_independent_across_arms_and_pulls():
    """2^16 uniforms of a grid of (arm, pull) counters under one key: Kolmogorov-
    Smirnov distance below 1.9 / sqrt(n) (P < 2e-3 under uniformity), and the
    correlation with the arm-swapped grid within 5 standard errors (sd 1/sqrt(n))."""
    key = jax.random.key(3)
    a, j = jnp.meshgrid(jnp.arange(256), jnp.arange(256), indexing="ij")
    a, j = a.ravel(), j.ravel()
    draw = jax.vmap(lambda x, y: _common.reward_uniform(key, x, y, jnp.float32))
    w, v = np.asarray(draw(a, j)), np.asarray(draw(j, a))
    n = w.size
    ks = np.max(np.abs(np.sort(w) - (np.arange(n) + 0.5) / n))
    assert ks < 1.9 / np.sqrt(n)
    assert abs(np.corrcoef(v, w)[0, 1]) < 5 / np.sqrt(n)


def test_reward_bits_float64_and_other_keys():
    key = jax.random.key(4)
    with jax.enable_x64(True):
        b = _prng.counter_bits(key, 3, 9, jnp.float64)
        o = jex.random.threefry_2x32(
            jax.random.key_data(key), jnp.asarray([3, 9], jnp.uint32)
        )
        assert b.dtype == jnp.uint64
        assert int(b) == (int(o[0]) << 32) | int(o[1])
        assert _common.reward_normal(key, 3, 9, jnp.float64).dtype == jnp.float64
    rbg = jax.random.key(1, impl="rbg")
    want = jax.random.bits(jax.random.fold_in(jax.random.fold_in(rbg, 3), 9))
    assert int(_prng.counter_bits(rbg, 3, 9)) == int(want)


def test_float64_bits():
    with jax.enable_x64(True):
        keys = jax.random.split(jax.random.key(5), 256)
        for fn in ("uniform", "normal"):
            a = jax.vmap(lambda k, fn=fn: getattr(_prng, fn)(k, (2,), jnp.float64))(
                keys
            )
            b = jax.vmap(
                lambda k, fn=fn: getattr(jax.random, fn)(k, (2,), jnp.float64)
            )(keys)
            assert a.dtype == jnp.float64
            np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


def test_other_key_implementations_fall_back():
    key = jax.random.key(1, impl="rbg")
    np.testing.assert_array_equal(
        np.asarray(_prng.normal(key, (3,))), np.asarray(jax.random.normal(key, (3,)))
    )
    np.testing.assert_array_equal(
        jax.random.key_data(_prng.fold_in(key, 4)),
        jax.random.key_data(jax.random.fold_in(key, 4)),
    )
