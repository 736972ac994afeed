"""Rules for PRNG keys: threefry data, ``fold_in`` / ``split`` / ``random_bits`` by
the straight-line hash of :mod:`jbandits.core.prng`."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
from jax import lax

from jbandits.core import prng as _prng
from jbandits.sim.fused.safe.core import NotKernelSafe, _check_impl, _Key, _rule
from jbandits.sim.fused.safe.onehot import _col


@_rule("random_wrap")
def _wrap(eqn, data):
    _check_impl(eqn.outvars[0].aval)
    return _Key(data)


@_rule("random_unwrap")
def _unwrap(eqn, key):
    return key.data


def _pair(a, b):
    """``stack([a, b], axis=-1)`` as a select on a new axis of size 2."""
    a, b = jnp.asarray(a), jnp.asarray(b)
    shape = (*a.shape, 2)
    first = lax.broadcasted_iota(jnp.int32, shape, a.ndim) == 0
    return jnp.where(first, a[..., None], b[..., None])


def _words(key: _Key):
    d = key.data
    if d.shape != (2,):
        raise NotKernelSafe(f"a batch of PRNG keys {d.shape[:-1]} in a kernel")
    return _col(d, 0), _col(d, 1)


@_rule("random_fold_in")
def _fold_in(eqn, key, msg):
    k1, k2 = _words(key)
    msg = jnp.asarray(msg).astype(jnp.uint32)
    o1, o2 = _prng.threefry2x32(k1, k2, jnp.zeros((), jnp.uint32), msg)
    return _Key(_pair(o1, o2))


@_rule("random_split")
def _split(eqn, key):
    k1, k2 = _words(key)
    shape = tuple(eqn.params["shape"])
    size = int(np.prod(shape))
    lo = lax.iota(jnp.uint32, size)
    o1, o2 = _prng.threefry2x32(k1, k2, jnp.zeros((size,), jnp.uint32), lo)
    return _Key(_pair(o1, o2).reshape((*shape, 2)))


@_rule("random_bits")
def _random_bits(eqn, key):
    k1, k2 = _words(key)
    shape = tuple(eqn.params["shape"])
    width = eqn.params["bit_width"]
    if width != 32:
        raise NotKernelSafe(f"random_bits of {width} bits")
    size = int(np.prod(shape))
    lo = lax.iota(jnp.uint32, size).reshape(shape)
    o1, o2 = _prng.threefry2x32(k1, k2, jnp.zeros(shape, jnp.uint32), lo)
    return o1 ^ o2


@_rule("threefry2x32")
def _threefry(eqn, k1, k2, x1, x2):
    return list(_prng.threefry2x32(k1, k2, x1, x2))
