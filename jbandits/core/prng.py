"""The random numbers of ``jax.random`` for threefry keys, computed with fewer kernels.

Threefry-2x32 with 20 rounds (Salmon, Moraes, Dror, Shaw, "Parallel random numbers:
as easy as 1, 2, 3", SC 2011, section 4) is JAX's default counter-based hash. On CPU,
JAX lowers each hash as a rolled 5-trip ``while`` loop, so one scalar reward (two
``fold_in`` calls and one draw: three hashes) costs three loops of ~20 thunks per
trip. The functions here compute the same hash written out in straight-line
``uint32`` arithmetic, which XLA fuses with its consumer into a single kernel.

Every function returns bit for bit what the ``jax.random`` function it names returns
for a threefry2x32 key with ``jax_threefry_partitionable`` on (the default since JAX
0.5); ``tests/test_prng.py`` checks this on many keys. For any other key
implementation or configuration they call ``jax.random`` itself.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from jbandits.core.types import Array, ArrayLike, Key

_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))
_PARITY = np.uint32(0x1BD11BDA)


def threefry2x32(k1: Array, k2: Array, x1: Array, x2: Array) -> tuple[Array, Array]:
    """Threefry-2x32, 20 rounds, of the counter ``(x1, x2)`` under key ``(k1, k2)``."""
    ks = (k1, k2, k1 ^ k2 ^ _PARITY)
    x1 = x1 + ks[0]
    x2 = x2 + ks[1]
    for i in range(5):
        for r in _ROTATIONS[i % 2]:
            x1 = x1 + x2
            x2 = ((x2 << np.uint32(r)) | (x2 >> np.uint32(32 - r))) ^ x1
        x1 = x1 + ks[(i + 1) % 3]
        x2 = x2 + ks[(i + 2) % 3] + np.uint32(i + 1)
    return x1, x2


def _fast(key: Key) -> bool:
    return (
        jax.config.jax_threefry_partitionable
        and jnp.issubdtype(key.dtype, jax.dtypes.prng_key)
        and str(jax.random.key_impl(key)) == "threefry2x32"
    )


def fold_in(key: Key, data: ArrayLike) -> Key:
    """``jax.random.fold_in(key, data)`` for a scalar ``data``."""
    if not _fast(key) or key.shape:
        return jax.random.fold_in(key, data)
    kd = jax.random.key_data(key)
    data = jnp.asarray(data).astype(jnp.uint32)
    o1, o2 = threefry2x32(kd[0], kd[1], jnp.zeros((), jnp.uint32), data)
    return jax.random.wrap_key_data(jnp.stack([o1, o2]), impl=jax.random.key_impl(key))


def split(key: Key, num: int = 2) -> Key:
    """``jax.random.split(key, num)``: ``num`` keys ``[num]``."""
    if not _fast(key) or key.shape:
        return jax.random.split(key, num)
    kd = jax.random.key_data(key)
    lo = lax.iota(jnp.uint32, num)
    o1, o2 = threefry2x32(kd[0], kd[1], jnp.zeros((num,), jnp.uint32), lo)
    return jax.random.wrap_key_data(
        jnp.stack([o1, o2], axis=-1), impl=jax.random.key_impl(key)
    )


def _fold(o1: Array, o2: Array, width: int) -> Array:
    """The two hash words as ``jax.random.bits`` returns them: ``o1 ^ o2`` for 32
    bits, ``o1 << 32 | o2`` for 64."""
    if width == 32:
        return o1 ^ o2
    return (o1.astype(jnp.uint64) << np.uint64(32)) | o2.astype(jnp.uint64)


def _bits(key: Key, shape: tuple[int, ...], width: int) -> Array:
    kd = jax.random.key_data(key)
    size = int(np.prod(shape))
    lo = lax.iota(jnp.uint32, size).reshape(shape)
    o1, o2 = threefry2x32(kd[0], kd[1], jnp.zeros(shape, jnp.uint32), lo)
    return _fold(o1, o2, width)


def bits(key: Key, shape: tuple[int, ...] = (), dtype=jnp.uint32) -> Array:
    """``jax.random.bits(key, shape, dtype)``; the straight-line hash for ``uint32``."""
    shape = tuple(shape)
    if not _fast(key) or key.shape or jnp.dtype(dtype) != jnp.dtype(jnp.uint32):
        return jax.random.bits(key, shape, dtype)
    return _bits(key, shape, 32)


def counter_bits(key: Key, c1: ArrayLike, c2: ArrayLike, dtype=jnp.float32) -> Array:
    """Raw bits of the counter ``(c1, c2)`` under ``key``: one threefry2x32 hash.

    The two output words are folded the way :func:`jax.random.bits` folds them:
    ``o1 ^ o2`` for 32 bits (``dtype`` float32), ``o1 << 32 | o2`` for 64 (float64).
    Counter-based use proper (Salmon et al. 2011, section 2): distinct counters give
    independent-looking outputs, so ``(arm, pull index)`` addresses one reward. For a
    key that is not threefry2x32 (or without ``jax_threefry_partitionable``) the bits
    are ``jax.random.bits(fold_in(fold_in(key, c1), c2))``: another stream, still a
    pure function of ``(key, c1, c2)``.
    """
    width = jnp.finfo(dtype).bits
    if not _fast(key) or key.shape:
        k = jax.random.fold_in(jax.random.fold_in(key, c1), c2)
        return jax.random.bits(k, (), jnp.uint32 if width == 32 else jnp.uint64)
    kd = jax.random.key_data(key)
    o1, o2 = threefry2x32(
        kd[0],
        kd[1],
        jnp.asarray(c1).astype(jnp.uint32),
        jnp.asarray(c2).astype(jnp.uint32),
    )
    return _fold(o1, o2, width)


def unit_from_bits(bits: Array, dtype, minval=0.0, maxval=1.0) -> Array:
    """Floats in ``[minval, maxval)`` from raw ``bits`` (uint32 for float32, uint64 for
    float64) the way ``jax.random.uniform`` maps them: the top mantissa bits under
    exponent 0 give ``[1, 2)``, minus 1, scaled and clamped at ``minval``."""
    finfo = jnp.finfo(dtype)
    nbits, nmant = finfo.bits, finfo.nmant
    udtype = jnp.uint32 if nbits == 32 else jnp.uint64
    one = np.array(1.0, dtype).view(udtype)
    floats = lax.bitcast_convert_type(
        (bits >> udtype(nbits - nmant)) | one, dtype
    ) - jnp.array(1.0, dtype)
    lo = jnp.asarray(minval, dtype)
    hi = jnp.asarray(maxval, dtype)
    return lax.max(lo, floats * (hi - lo) + lo)


def normal_from_bits(bits: Array, dtype) -> Array:
    """Standard normals from raw ``bits`` the way ``jax.random.normal`` maps them:
    ``sqrt(2) erfinv(u)`` with ``u`` uniform on ``(-1, 1)``."""
    lo = np.nextafter(np.array(-1.0, dtype), np.array(0.0, dtype), dtype=dtype)
    u = unit_from_bits(bits, dtype, lo, np.array(1.0, dtype))
    return lax.mul(np.array(np.sqrt(2), dtype), lax.erf_inv(u))


def _unit(key: Key, shape, dtype, minval, maxval) -> Array:
    """``jax.random.uniform(key, shape, dtype, minval, maxval)`` for float32/64."""
    return unit_from_bits(
        _bits(key, shape, jnp.finfo(dtype).bits), dtype, minval, maxval
    )


def _supported(key: Key, dtype) -> bool:
    return (
        _fast(key)
        and not key.shape
        and jnp.dtype(dtype)
        in (
            jnp.dtype(jnp.float32),
            jnp.dtype(jnp.float64),
        )
    )


def uniform(
    key: Key, shape: tuple[int, ...] = (), dtype=float, minval=0.0, maxval=1.0
) -> Array:
    """``jax.random.uniform(key, shape, dtype, minval, maxval)`` (scalar bounds)."""
    dtype = jnp.dtype(jax.dtypes.canonicalize_dtype(dtype))
    shape = tuple(shape)
    if not _supported(key, dtype) or np.ndim(minval) or np.ndim(maxval):
        return jax.random.uniform(key, shape, dtype, minval, maxval)
    return _unit(key, shape, dtype, minval, maxval)


def normal(key: Key, shape: tuple[int, ...] = (), dtype=float) -> Array:
    """``jax.random.normal(key, shape, dtype)``: ``sqrt(2) erfinv(u)``, u in (-1, 1)."""
    dtype = jnp.dtype(jax.dtypes.canonicalize_dtype(dtype))
    shape = tuple(shape)
    if not _supported(key, dtype):
        return jax.random.normal(key, shape, dtype)
    return normal_from_bits(_bits(key, shape, jnp.finfo(dtype).bits), dtype)


KEY_FORMS = (
    "one PRNG key: jax.random.key(seed) (a typed key, shape ()) or "
    "jax.random.PRNGKey(seed) (uint32, shape (2,)), of JAX's default threefry2x32 "
    "implementation"
)
"""The key forms every entry point accepts (:func:`one_key`)."""


def _described(key) -> str:
    dtype = getattr(key, "dtype", None)
    if dtype is None:
        return f"{type(key).__name__} {key!r}"[:80]
    shape = tuple(getattr(key, "shape", ()))
    if jnp.issubdtype(dtype, jax.dtypes.prng_key):
        impl = str(jax.random.key_impl(key))
        return f"a typed key of implementation {impl}, shape {shape}"
    return f"an array of {np.dtype(dtype).name}, shape {shape}"


def one_key(key, name: str = "key", forms: str = KEY_FORMS) -> Key:
    """``key`` as one typed threefry2x32 key (shape ()): a typed key as it is, legacy
    uint32 ``[2]`` data wrapped (the same random numbers: both are the key's data).
    Anything else is refused with one message (:data:`KEY_FORMS`): an int, None, a
    list, int32 or float arrays, a batch of keys, another implementation (``rbg``:
    the entry points derive every lane's key from threefry key data). Tracers are
    checked by shape and dtype only. ``forms``: what the message says is taken (an
    entry point that also takes something else, e.g. tuning's int seeds)."""
    dtype = getattr(key, "dtype", None)
    if dtype is not None and not isinstance(key, (list, tuple)):
        shape = tuple(getattr(key, "shape", ()))
        if jnp.issubdtype(dtype, jax.dtypes.prng_key):
            impl = str(jax.random.key_impl(key))
            if shape == () and impl == "threefry2x32":
                return key
        elif np.dtype(dtype) == np.uint32 and shape == (2,):
            return jax.random.wrap_key_data(jnp.asarray(key), impl="threefry2x32")
    raise ValueError(f"{name} must be {forms}; got {_described(key)}")


def key_data(key: Key) -> np.ndarray:
    """uint32 data ``[..., 2]`` of a typed or legacy key (a batch allowed)."""
    dtype = getattr(key, "dtype", None)  # read, not converted: no device array
    if dtype is not None and jnp.issubdtype(dtype, jax.dtypes.prng_key):
        return np.asarray(jax.random.key_data(key))
    if dtype is None or np.dtype(dtype) != np.uint32 or key.shape[-1:] != (2,):
        raise ValueError(f"key must be {KEY_FORMS}; got {_described(key)}")
    return np.asarray(key)
