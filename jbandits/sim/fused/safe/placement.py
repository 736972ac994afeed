"""Rules for writing by index: scatter (set/add/min/max), dynamic update slice,
pad, concatenate, stack (one-hot placements)."""

from __future__ import annotations

import jax.numpy as jnp
from jax import lax

from jbandits.sim.fused.safe.core import NotKernelSafe, _Key, _rule
from jbandits.sim.fused.safe.onehot import (
    _col,
    _contract,
    _place_mask,
    _zero,
    in_place_pad,
)


def _scatter(eqn, x, idx, upd, how: str):
    p = eqn.params
    dn = p["dimension_numbers"]
    if tuple(dn.operand_batching_dims) or tuple(dn.scatter_indices_batching_dims):
        raise NotKernelSafe("scatter with batching dimensions")
    scattered = tuple(dn.scatter_dims_to_operand_dims)
    if tuple(sorted(dn.inserted_window_dims)) != tuple(sorted(scattered)):
        raise NotKernelSafe("scatter of windows wider than one element")
    idx = jnp.asarray(idx, jnp.int32)
    batch = idx.shape[:-1]
    nb = len(batch)
    rest = [d for d in range(x.ndim) if d not in scattered]
    # updates: scatter (batch) dims + window dims; bring the window dims last
    window = tuple(dn.update_window_dims)
    for d, w in zip(rest, window, strict=False):
        if upd.shape[w] != x.shape[d]:
            raise NotKernelSafe("scatter of a partial window")
    upd_batch = [i for i in range(upd.ndim) if i not in window]
    order = upd_batch + list(window)
    if order != list(range(upd.ndim)):
        upd = lax.transpose(upd, order)
    if "CLIP" in str(p["mode"]):
        top = jnp.asarray([x.shape[d] - 1 for d in scattered], jnp.int32)
        idx = jnp.clip(idx, 0, top)
    # hit[batch..., operand dims...]: update b lands on this operand position
    full = (*batch, *x.shape)
    hit = jnp.ones(full, jnp.bool_)
    for k, d in enumerate(scattered):
        pos = lax.broadcasted_iota(jnp.int32, full, nb + d)
        hit = hit & (
            pos == jnp.expand_dims(_col(idx, k), tuple(range(nb, nb + x.ndim)))
        )
    # updates broadcast to batch + operand dims (size 1 on the scattered dims)
    shape = list(batch) + [1 if d in scattered else x.shape[d] for d in range(x.ndim)]
    u = jnp.broadcast_to(upd.reshape(shape), full)
    axes = tuple(range(nb))
    boolean = x.dtype == jnp.bool_
    if how == "add":
        if boolean:
            raise NotKernelSafe("scatter-add of bools")
        return x + jnp.sum(jnp.where(hit, u, _zero(x.dtype)), axis=axes).astype(x.dtype)
    any_hit = jnp.max(hit.astype(jnp.int32), axis=axes) > 0 if nb else hit
    if how == "set":
        if boolean:
            val = (
                jnp.max(jnp.where(hit, u.astype(jnp.int32), 0), axis=axes) > 0
                if nb
                else u
            )
        else:
            val = jnp.sum(jnp.where(hit, u, _zero(x.dtype)), axis=axes) if nb else u
        return jnp.where(any_hit, val.astype(x.dtype), x)
    if how in ("min", "max"):
        if jnp.issubdtype(x.dtype, jnp.inexact):
            ident = jnp.inf if how == "min" else -jnp.inf
        elif boolean:
            raise NotKernelSafe(f"scatter-{how} of bools")
        else:
            info = jnp.iinfo(x.dtype)
            ident = info.max if how == "min" else info.min
        red = jnp.min if how == "min" else jnp.max
        val = (
            red(jnp.where(hit, u, jnp.asarray(ident, x.dtype)), axis=axes) if nb else u
        )
        comb = jnp.minimum if how == "min" else jnp.maximum
        return jnp.where(any_hit, comb(x, val), x)
    raise NotKernelSafe(f"scatter-{how}")


@_rule("scatter")
def _scatter_set(eqn, x, idx, upd):
    return _scatter(eqn, x, idx, upd, "set")


@_rule("scatter-add", "scatter_add")
def _scatter_add(eqn, x, idx, upd):
    return _scatter(eqn, x, idx, upd, "add")


@_rule("scatter-min", "scatter_min")
def _scatter_min(eqn, x, idx, upd):
    return _scatter(eqn, x, idx, upd, "min")


@_rule("scatter-max", "scatter_max")
def _scatter_max(eqn, x, idx, upd):
    return _scatter(eqn, x, idx, upd, "max")


@_rule("dynamic_update_slice")
def _dynamic_update_slice(eqn, x, update, *starts):
    cover = jnp.ones(update.shape, jnp.bool_)
    for axis, start in enumerate(starts):
        dim, size = x.shape[axis], update.shape[axis]
        if size == dim:
            continue
        start = jnp.clip(jnp.asarray(start, jnp.int32), 0, dim - size)
        mask = _place_mask(start, 1, dim, size)
        update = _contract(update, axis, mask)
        cover = _contract(cover, axis, mask)
    return jnp.where(cover, update.astype(x.dtype), x)


@_rule("pad")
def _pad(eqn, x, value):
    if in_place_pad(x, eqn.params["padding_config"]):
        return lax.pad(x, jnp.asarray(value, x.dtype), eqn.params["padding_config"])
    cover = jnp.ones(x.shape, jnp.bool_)
    for axis, (lo, hi, interior) in enumerate(eqn.params["padding_config"]):
        dim = x.shape[axis]
        out = lo + hi + dim + max(dim - 1, 0) * interior
        if lo == 0 and hi == 0 and interior == 0:
            continue
        mask = _place_mask(lo, interior + 1, out, dim)
        x = _contract(x, axis, mask)
        cover = _contract(cover, axis, mask)
    return jnp.where(cover, x, jnp.asarray(value, x.dtype))


@_rule("concatenate")
def _concatenate(eqn, *xs):
    axis = eqn.params["dimension"]
    total = sum(x.shape[axis] for x in xs)
    dtype = eqn.outvars[0].aval.dtype
    acc = None
    offset = 0
    for x in xs:
        x = jnp.asarray(x, dtype)
        placed = _contract(x, axis, _place_mask(offset, 1, total, x.shape[axis]))
        if dtype == jnp.bool_:
            acc = placed if acc is None else acc | placed
        else:
            acc = placed if acc is None else acc + placed
        offset += x.shape[axis]
    return acc


@_rule("stack")
def _stack(eqn, *xs):
    """``stack`` of any number of operands (Triton lowers two): selects on a new
    axis."""
    axis = eqn.params["axis"]
    dtype = eqn.outvars[0].aval.dtype
    if any(isinstance(x, _Key) for x in xs):
        raise NotKernelSafe("stack of PRNG keys")
    xs = [jnp.expand_dims(jnp.asarray(x, dtype), axis) for x in xs]
    shape = list(xs[0].shape)
    shape[axis] = len(xs)
    pos = lax.broadcasted_iota(jnp.int32, tuple(shape), axis)
    out = jnp.broadcast_to(xs[-1], tuple(shape))
    for k in range(len(xs) - 2, -1, -1):
        out = jnp.where(pos == k, xs[k], out)
    return out
