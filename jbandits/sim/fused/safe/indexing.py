"""Rules for reading by index: gather, dynamic slice, slice, rev, unstack (one-hot
masked sums over the indexed axis)."""

from __future__ import annotations

import jax.numpy as jnp
from jax import lax

from jbandits.sim.fused.safe.core import NotKernelSafe, _rule
from jbandits.sim.fused.safe.onehot import (
    _col,
    _contract,
    _fill_value,
    _window_mask,
    _zero,
)


@_rule("slice")
def _slice(eqn, x):
    p = eqn.params
    strides = p["strides"] or (1,) * x.ndim
    for axis, (lo, hi, st) in enumerate(
        zip(p["start_indices"], p["limit_indices"], strides, strict=False)
    ):
        size = max(0, -(-(hi - lo) // st))
        if lo == 0 and size == x.shape[axis] and st == 1:
            continue
        x = _contract(x, axis, _window_mask(lo, size, x.shape[axis], st))
    return x


@_rule("rev")
def _rev(eqn, x):
    for axis in eqn.params["dimensions"]:
        n = x.shape[axis]
        x = _contract(x, axis, _window_mask(n - 1, n, n, -1))
    return x


@_rule("dynamic_slice")
def _dynamic_slice(eqn, x, *starts):
    sizes = eqn.params["slice_sizes"]
    starts = starts[: x.ndim]
    for axis, (start, size) in enumerate(zip(starts, sizes, strict=False)):
        dim = x.shape[axis]
        if size == dim:
            continue
        start = jnp.clip(jnp.asarray(start, jnp.int32), 0, dim - size)
        x = _contract(x, axis, _window_mask(start, size, dim))
    return x


@_rule("unstack")
def _unstack(eqn, x):
    axis = eqn.params["axis"]
    n = x.shape[axis]
    pos = lax.broadcasted_iota(jnp.int32, x.shape, axis)
    outs = []
    for k in range(n):
        if x.dtype == jnp.bool_:
            v = jnp.max(jnp.where(pos == k, x.astype(jnp.int32), 0), axis=axis) > 0
        else:
            v = jnp.sum(jnp.where(pos == k, x, _zero(x.dtype)), axis=axis).astype(
                x.dtype
            )
        outs.append(v)
    return outs


@_rule("gather")
def _gather(eqn, x, idx):
    p = eqn.params
    dn = p["dimension_numbers"]
    if tuple(dn.operand_batching_dims) or tuple(dn.start_indices_batching_dims):
        raise NotKernelSafe("gather with batching dimensions")
    sizes = p["slice_sizes"]
    mode = str(p["mode"])
    idx = jnp.asarray(idx, jnp.int32)
    batch = idx.shape[:-1]
    nb = len(batch)
    y = jnp.broadcast_to(x, (*batch, *x.shape)) if nb else jnp.asarray(x)
    oob = jnp.zeros(batch, jnp.bool_)
    for k, d in enumerate(dn.start_index_map):
        dim, size = x.shape[d], sizes[d]
        start = _col(idx, k)
        if "FILL" in mode:
            oob = oob | (start < 0) | (start > dim - size)
        start = jnp.clip(start, 0, dim - size)
        y = _contract(y, nb + d, _window_mask(start, size, dim))
    for d in range(x.ndim):  # static windows of the dimensions not indexed
        if d not in dn.start_index_map and sizes[d] != x.shape[d]:
            y = _contract(y, nb + d, _window_mask(0, sizes[d], x.shape[d]))
    if dn.collapsed_slice_dims:
        y = lax.squeeze(y, tuple(nb + d for d in dn.collapsed_slice_dims))
    # y: batch + offset dims (operand order); the output puts the offset dims at
    # offset_dims and the batch dims elsewhere, in order
    out_nd = y.ndim
    offset_dims = tuple(dn.offset_dims)
    batch_pos = [i for i in range(out_nd) if i not in offset_dims]
    perm = [0] * out_nd
    for j, pos in enumerate(batch_pos):
        perm[pos] = j
    for j, pos in enumerate(offset_dims):
        perm[pos] = nb + j
    if perm != list(range(out_nd)):
        y = lax.transpose(y, perm)
    if "FILL" in mode and nb:
        bad = jnp.expand_dims(oob, tuple(offset_dims)) if offset_dims else oob
        y = jnp.where(bad, _fill_value(y.dtype, p.get("fill_value")), y)
    elif "FILL" in mode:
        y = jnp.where(oob, _fill_value(y.dtype, p.get("fill_value")), y)
    return y
