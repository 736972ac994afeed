"""jbandits._prng computes exactly what jax.random computes, bit for bit."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jbandits import _prng
from jbandits.envs import _common

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
