"""Rules for reductions and sorting: reduce_and/or, argmin/argmax, variadic
``reduce`` (a tree over halves), cumulative scans, sort (a rank sort)."""

from __future__ import annotations

import jax.numpy as jnp
from jax import lax

from jbandits.sim.fused.safe.core import NotKernelSafe, _rule, _run
from jbandits.sim.fused.safe.onehot import _contract, _pad_to, _zero


@_rule("reduce_and")
def _reduce_and(eqn, x):
    return jnp.min(x.astype(jnp.int32), axis=tuple(eqn.params["axes"])) > 0


@_rule("reduce_or")
def _reduce_or(eqn, x):
    return jnp.max(x.astype(jnp.int32), axis=tuple(eqn.params["axes"])) > 0


def _arg(eqn, x, smallest: bool):
    (axis,) = eqn.params["axes"]
    dtype = eqn.params["index_dtype"]
    n = x.shape[axis]
    ids = lax.broadcasted_iota(jnp.int32, x.shape, axis)
    if x.dtype == jnp.bool_:
        x = x.astype(jnp.int32)
    best = (
        jnp.min(x, axis=axis, keepdims=True)
        if smallest
        else jnp.max(x, axis=axis, keepdims=True)
    )
    hit = x == best
    if jnp.issubdtype(x.dtype, jnp.inexact):  # jnp.argmin/argmax: the first NaN
        nan = jnp.isnan(x)
        any_nan = jnp.max(nan.astype(jnp.int32), axis=axis, keepdims=True) > 0
        hit = jnp.where(any_nan, nan, hit)
    return jnp.min(jnp.where(hit, ids, n), axis=axis).astype(dtype)


@_rule("argmin")
def _argmin(eqn, x):
    return _arg(eqn, x, True)


@_rule("argmax")
def _argmax(eqn, x):
    return _arg(eqn, x, False)


@_rule("reduce")
def _reduce(eqn, *ins):
    """A variadic reduction as a tree of its own computation over halves."""
    p = eqn.params
    n = len(ins) // 2
    xs, inits = list(ins[:n]), list(ins[n:])
    comp = p["jaxpr"]

    def combine(a, b):
        return _run(comp, [*a, *b])

    for axis in sorted(p["dimensions"], reverse=True):
        size = xs[0].shape[axis]
        width = 1 << max(size - 1, 0).bit_length()
        if width != size:  # pad with the initial values to a power of two
            xs = [
                _pad_to(x, axis, width, init)
                for x, init in zip(xs, inits, strict=False)
            ]
        while xs[0].shape[axis] > 1:
            half = xs[0].shape[axis] // 2
            lo = [lax.split(x, (half, half), axis)[0] for x in xs]
            hi = [lax.split(x, (half, half), axis)[1] for x in xs]
            xs = combine(lo, hi)
        xs = [lax.squeeze(x, (axis,)) for x in xs]
        # fold in the initial values (an identity of the computation)
        xs = combine(
            xs, [jnp.broadcast_to(i, x.shape) for i, x in zip(inits, xs, strict=False)]
        )
    return xs


def _cumulative(eqn, x, how: str):
    axis = eqn.params["axis"]
    reverse = eqn.params.get("reverse", False)
    n = x.shape[axis]
    r = lax.broadcasted_iota(jnp.int32, (n, n), 0)  # output position
    i = lax.broadcasted_iota(jnp.int32, (n, n), 1)  # input position
    mask = (i >= r) if reverse else (i <= r)
    xe = jnp.expand_dims(x, axis)
    me = mask.reshape(mask.shape + (1,) * (x.ndim - axis - 1))
    if how == "sum":
        return jnp.sum(jnp.where(me, xe, _zero(x.dtype)), axis=axis + 1).astype(x.dtype)
    if jnp.issubdtype(x.dtype, jnp.inexact):
        ident = jnp.inf if how == "min" else -jnp.inf
    else:
        info = jnp.iinfo(x.dtype)
        ident = info.max if how == "min" else info.min
    red = jnp.min if how == "min" else jnp.max
    return red(jnp.where(me, xe, jnp.asarray(ident, x.dtype)), axis=axis + 1)


@_rule("cumsum")
def _cumsum(eqn, x):
    return _cumulative(eqn, x, "sum")


@_rule("cummax")
def _cummax(eqn, x):
    return _cumulative(eqn, x, "max")


@_rule("cummin")
def _cummin(eqn, x):
    return _cumulative(eqn, x, "min")


def _before_key(a, b):
    """``a`` sorts strictly before ``b`` in ``lax.sort``'s total order (NaN last;
    ``-0.0`` before ``0.0`` is not distinguished)."""
    if jnp.issubdtype(a.dtype, jnp.inexact):
        na, nb = jnp.isnan(a), jnp.isnan(b)
        return (a < b) | (~na & nb)
    if a.dtype == jnp.bool_:
        return ~a & b
    return a < b


def _equal_key(a, b):
    if jnp.issubdtype(a.dtype, jnp.inexact):
        return (a == b) | (jnp.isnan(a) & jnp.isnan(b))
    return a == b


@_rule("sort")
def _sort(eqn, *ops):
    p = eqn.params
    axis = p["dimension"]
    nkeys = p["num_keys"]
    n = ops[0].shape[axis]
    if axis != ops[0].ndim - 1:
        raise NotKernelSafe("sort along a dimension other than the last")
    # before[..., j, i]: element j sorts before element i (ties by index: stable)
    keys = ops[:nkeys]
    before = jnp.zeros((*ops[0].shape[:-1], n, n), jnp.bool_)
    tied = jnp.ones_like(before)
    for k in keys:
        kj, ki = k[..., :, None], k[..., None, :]
        before = before | (tied & _before_key(kj, ki))
        tied = tied & _equal_key(kj, ki)
    j = lax.broadcasted_iota(jnp.int32, (n, n), 0)
    i = lax.broadcasted_iota(jnp.int32, (n, n), 1)
    before = before | (tied & (j < i))
    rank = jnp.sum(before.astype(jnp.int32), axis=-2)  # [..., n]
    # out[..., r] = x[..., i] where rank[i] == r
    mask = (
        lax.broadcasted_iota(jnp.int32, (*rank.shape[:-1], n, n), rank.ndim - 1)
        == rank[..., None, :]
    )
    return [_contract(x, axis, mask) for x in ops]


@_rule("population_count")
def _population_count(eqn, x):
    """Set bits of each 32-bit (or narrower) integer, by the SWAR sums of bit pairs,
    nibbles and bytes (Warren, *Hacker's Delight*, 2nd ed., section 5-1): the Triton
    compiler of jax 0.10.2 fails to legalize ``math.ctpop`` on tensors."""
    dtype = x.dtype
    bits = jnp.iinfo(dtype).bits
    if bits > 32:
        raise NotKernelSafe(f"population_count of {dtype}")
    u = x.astype(jnp.uint32)
    if bits < 32:  # a negative narrow integer sign-extends: keep its own bits
        u = u & jnp.uint32((1 << bits) - 1)

    def c(v):
        return jnp.asarray(v, jnp.uint32)

    u = u - ((u >> c(1)) & c(0x55555555))
    u = (u & c(0x33333333)) + ((u >> c(2)) & c(0x33333333))
    u = (u + (u >> c(4))) & c(0x0F0F0F0F)
    u = (u * c(0x01010101)) >> c(24)
    return u.astype(dtype)


@_rule("round")
def _round(eqn, x):
    """``round`` (half away from zero, or half to even) from ``floor`` of ``|x|``: the
    Pallas Triton lowering has no rule for it. ``d = |x| - floor(|x|)`` is exact, so
    the comparisons with 1/2 decide exactly as ``round`` does; the sign is put back
    (``-0.0`` for a negative that rounds to zero), infinities and NaN stay."""
    a = jnp.abs(x)
    r = jnp.floor(a)
    d = a - r
    half = jnp.asarray(0.5, x.dtype)
    if eqn.params["rounding_method"] == lax.RoundingMethod.TO_NEAREST_EVEN:
        odd = (r - 2 * jnp.floor(r / 2)) == 1
        up = (d > half) | ((d == half) & odd)
    else:
        up = d >= half
    v = jnp.where(up, r + 1, r)
    v = jnp.where(x < 0, -v, v)
    return jnp.where(v == 0, x * 0, v).astype(x.dtype)
