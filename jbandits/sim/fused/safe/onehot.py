"""The one-hot building blocks the rules share: masked contraction over an axis,
window and placement masks, fill values."""

from __future__ import annotations

import jax.numpy as jnp
from jax import lax


def _zero(dtype):
    return jnp.zeros((), dtype)


def _contract(x, axis: int, mask):
    """``out[..., r, ...] = sum_i where(mask[..., r, i], x[..., i, ...], 0)``: the
    axis ``axis`` of ``x`` (size D) replaced by R, ``mask`` of shape
    ``lead + (R, D)`` with ``lead`` broadcastable to ``x.shape[:axis]``."""
    x = jnp.asarray(x)
    boolean = x.dtype == jnp.bool_
    if boolean:
        x = x.astype(jnp.int32)
    trailing = x.ndim - axis - 1
    lead = mask.shape[:-2]  # aligned with the first axes of x
    xe = jnp.expand_dims(x, axis)  # [..., 1, D, ...]
    me = mask.reshape(
        lead + (1,) * (axis - len(lead)) + mask.shape[-2:] + (1,) * trailing
    )
    picked = jnp.where(me, xe, _zero(x.dtype))
    out = jnp.sum(picked, axis=axis + 1).astype(x.dtype)
    return out > 0 if boolean else out


def _covered(axis_size_out: int, mask):
    """Whether each output position of a placement receives an element."""
    return jnp.max(mask.astype(jnp.int32), axis=-1) > 0


def _window_mask(start, size: int, dim: int, stride: int = 1):
    """``mask[..., o, i] = (i == start + o * stride)`` for ``start`` of any shape."""
    start = jnp.asarray(start, jnp.int32)
    o = lax.broadcasted_iota(jnp.int32, (size, dim), 0)
    i = lax.broadcasted_iota(jnp.int32, (size, dim), 1)
    return i == start[..., None, None] + o * stride


def _place_mask(offset, step: int, out: int, dim: int):
    """``mask[..., p, i] = (p == offset + i * step)``: element i placed at p."""
    offset = jnp.asarray(offset, jnp.int32)
    p = lax.broadcasted_iota(jnp.int32, (out, dim), 0)
    i = lax.broadcasted_iota(jnp.int32, (out, dim), 1)
    return p == offset[..., None, None] + i * step


def _fill_value(dtype, fill):
    if fill is not None:
        return jnp.asarray(fill, dtype)
    if jnp.issubdtype(dtype, jnp.inexact):
        return jnp.asarray(jnp.nan, dtype)
    if dtype == jnp.bool_:
        return jnp.asarray(True)
    if jnp.issubdtype(dtype, jnp.signedinteger):
        return jnp.asarray(jnp.iinfo(dtype).min, dtype)
    return jnp.asarray(jnp.iinfo(dtype).max, dtype)


def _col(x, k: int):
    """``x[..., k]`` as a one-hot sum over the last axis (no slice in a kernel)."""
    hit = lax.broadcasted_iota(jnp.int32, x.shape, x.ndim - 1) == k
    return jnp.sum(jnp.where(hit, x, _zero(x.dtype)), axis=-1).astype(x.dtype)


def _pow2(n: int) -> int:
    return 1 if n <= 1 else 1 << (n - 1).bit_length()


def in_place_pad(x, config) -> bool:
    """Whether padding ``x`` at the high end of its axes (``config``: ``(lo, hi,
    interior)`` per axis) stays within the power-of-two sizes the kernel's arrays
    already have (:mod:`jbandits.sim.fused.safe.padded`): then it moves nothing, and
    is kept as a ``pad`` that the padded evaluation writes as one select."""
    return all(
        lo == 0 and interior == 0 and _pow2(int(d + hi)) == _pow2(int(d))
        for d, (lo, hi, interior) in zip(x.shape, config, strict=True)
    )


def _pad_to(x, axis: int, width: int, value):
    size = x.shape[axis]
    config = [(0, width - size if a == axis else 0, 0) for a in range(x.ndim)]
    if in_place_pad(x, config):
        return lax.pad(x, jnp.asarray(value, x.dtype), config)
    mask = _place_mask(0, 1, width, size)
    placed = _contract(x, axis, mask)
    cover = _contract(jnp.ones(x.shape, jnp.bool_), axis, mask)
    return jnp.where(cover, placed, jnp.asarray(value, x.dtype))
