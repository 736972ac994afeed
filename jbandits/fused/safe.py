"""The kernel-safe rewrite: a function's program without gather, scatter or sort.

A GPU kernel written in Pallas runs a block of lanes with every array in registers,
and its lowerings have no gather, scatter, dynamic slice, sort or variadic
reduction (the Triton lowering; Mosaic GPU has no arg-min either), and no PRNG key
types. A policy's step is written for XLA, where those are the fast forms
(``counts.at[arm].add(1)``, ``perm[arm]``, ``jnp.argsort``), and another engineer
may change any policy at any time; so rather than keep a second, kernel-only copy of
every building block, :func:`kernel_safe` rewrites the *program* of a function:
it traces the function to a jaxpr and evaluates it again, equation by equation,
replacing each such operation by an equivalent one built from elementwise
operations, ``iota``, masks and ordinary reductions:

* a gather / dynamic slice / static slice is a one-hot masked sum over the indexed
  axis (``sum_i where(i == start + o, x_i, 0)``), clamped or filled as the
  operation's mode says; bools go through int32;
* a scatter (set, add, min, max) / dynamic update slice / pad / concatenate is a
  one-hot placement: each output position sums the updates whose index hits it;
* a sort (any number of operands and keys, stable or not) is a rank sort: the rank
  of element ``i`` is the number of elements ordered before it (an ``[n, n]``
  comparison), then one placement by rank: O(n^2), for the arm axis;
* ``argmin`` / ``argmax`` is ``min`` + ``where(x == min, iota, n)`` + ``min`` (NaN
  first, as ``jnp.argmin``); a variadic ``reduce`` (the arm selection's (value,
  index) reduction) is a tree of its own computation over halves (``lax.split``);
* ``reduce_and`` / ``reduce_or`` are ``reduce_min`` / ``reduce_max`` on int32;
  ``cumsum``-like scans are triangular masked reductions;
* PRNG keys become their ``uint32[..., 2]`` threefry data: ``fold_in``, ``split``,
  ``random_bits`` are the straight-line hash of :mod:`jbandits._prng` (the same bits
  as ``jax.random`` with ``jax_threefry_partitionable``, the default);
* ``jit``, ``custom_jvp`` / ``custom_vjp`` calls are inlined; ``cond``,
  ``while_loop`` and ``scan`` are rebuilt with rewritten bodies;
  ``optimization_barrier`` is dropped.

Every replacement computes the same values (one-hot sums add exact zeros; the one
difference: a gathered ``-0.0`` comes back as ``+0.0``), so the rewritten step picks
the same arms; ``tests/test_fused.py`` checks this against the XLA path for every
fused policy. Anything else is bound as it is; :func:`unsupported` lists what a
lowering would still refuse. The one-hot forms cost O(n) or O(n^2) where the
original is O(1) or O(n log n): meant for the arm axis (tens to a few hundred), not
for large tables.
"""

from __future__ import annotations

import functools
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.extend import core as jcore

from jbandits import _prng


class NotKernelSafe(Exception):
    """The function uses an operation the rewrite cannot express in a kernel."""


class _Key:
    """A PRNG key value inside the rewrite: its threefry data, ``uint32[..., 2]``."""

    __slots__ = ("data",)

    def __init__(self, data):
        self.data = data


def _is_key_aval(aval) -> bool:
    dtype = getattr(aval, "dtype", None)
    return dtype is not None and jax.dtypes.issubdtype(dtype, jax.dtypes.prng_key)


def _check_impl(aval) -> None:
    impl = getattr(getattr(aval.dtype, "_impl", None), "name", "threefry2x32")
    if impl != "threefry2x32":
        raise NotKernelSafe(f"PRNG key implementation {impl!r} (only threefry2x32)")
    if not jax.config.jax_threefry_partitionable:
        raise NotKernelSafe("jax_threefry_partitionable is off")


# ------------------------------------------------------------------- the rewrite
def kernel_safe(fn):
    """``fn`` with its program rewritten (see the module docstring); same results.

    ``fn`` takes and returns pytrees of arrays (no PRNG key arrays at its boundary:
    pass key data). It is traced again at every call, at the shapes of that call.
    """

    @functools.wraps(fn)
    def wrapped(*args):
        flat, tree = jax.tree_util.tree_flatten(args)
        specs = [jax.ShapeDtypeStruct(jnp.shape(x), jnp.result_type(x)) for x in flat]
        out_tree = []

        def flat_fn(*xs):
            out = fn(*jax.tree_util.tree_unflatten(tree, xs))
            leaves, t = jax.tree_util.tree_flatten(out)
            out_tree.append(t)
            return leaves

        closed = jax.make_jaxpr(flat_fn)(*specs)
        outs = evaluate(closed.jaxpr, closed.consts, flat)
        for v, x in zip(closed.jaxpr.outvars, outs, strict=False):
            if isinstance(x, _Key):
                raise NotKernelSafe(f"returns a PRNG key ({v.aval})")
        return jax.tree_util.tree_unflatten(out_tree[0], outs)

    return wrapped


def _enter(values, avals):
    """Values crossing into a (sub)program: key-typed variables become :class:`_Key`."""
    out = []
    for x, aval in zip(values, avals, strict=False):
        if _is_key_aval(aval) and not isinstance(x, _Key):
            _check_impl(aval)
            x = _Key(x)
        out.append(x)
    return out


def _leave(values):
    """Values crossing out of a (sub)program through JAX control flow: key data."""
    return [x.data if isinstance(x, _Key) else x for x in values]


def evaluate(jaxpr, consts, args) -> list:
    """Evaluate ``jaxpr`` with every equation through its kernel-safe rule."""
    env: dict = {}

    def read(v):
        if isinstance(v, jcore.Literal):
            return v.val
        return env[v]

    consts = [_materialize(c) for c in consts]
    for v, x in zip(
        jaxpr.constvars, _enter(consts, [v.aval for v in jaxpr.constvars]), strict=False
    ):
        env[v] = x
    for v, x in zip(
        jaxpr.invars, _enter(args, [v.aval for v in jaxpr.invars]), strict=False
    ):
        env[v] = x
    for eqn in jaxpr.eqns:
        ins = [read(v) for v in eqn.invars]
        rule = _RULES.get(eqn.primitive.name)
        if any(isinstance(x, _Key) for x in ins) and eqn.primitive.name not in _KEYED:
            outs = _on_key_data(eqn, rule, ins)
        elif rule is not None:
            outs = rule(eqn, *ins)
        else:
            outs = eqn.primitive.bind(*ins, **eqn.params)
        if not eqn.primitive.multiple_results:
            outs = [outs]
        for v, x in zip(eqn.outvars, outs, strict=False):
            env[v] = x
    return [read(v) for v in jaxpr.outvars]


MAX_CONSTANT = 4096  # elements of a constant array rebuilt inside a kernel


def _materialize(c):
    """A concrete constant (a table a policy closes over) rebuilt from scalar
    literals, ``where(index == p, value_p, ...)``: a kernel may not capture arrays."""
    if isinstance(c, jax.core.Tracer):
        return c
    if isinstance(c, jax.Array) and jax.dtypes.issubdtype(c.dtype, jax.dtypes.prng_key):
        return _materialize(np.asarray(jax.random.key_data(c)))
    if not isinstance(c, (np.ndarray, jax.Array, np.generic)):
        return c
    c = np.asarray(c)
    if c.size > MAX_CONSTANT:
        raise NotKernelSafe(f"a constant array of {c.size} elements")
    dtype = c.dtype
    work = np.int32 if dtype == np.bool_ else dtype
    flat = c.reshape(-1).astype(work)
    if c.ndim == 0:
        return lax.full((), flat[0].item(), work).astype(dtype)
    index = jnp.zeros(c.shape, jnp.int32)
    stride = 1
    for axis in range(c.ndim - 1, -1, -1):
        index = index + lax.broadcasted_iota(jnp.int32, c.shape, axis) * stride
        stride *= c.shape[axis]
    values, first = np.unique(flat, return_index=True)
    common = flat[np.argmax(np.bincount(np.searchsorted(values, flat)))]
    out = lax.full(c.shape, common.item(), work)
    for p, value in enumerate(flat):
        if value != common or (value != value):
            out = jnp.where(index == p, lax.full((), value.item(), work), out)
    del first
    return out.astype(dtype)


def _on_key_data(eqn, rule, ins):
    """A structural operation on PRNG keys (select, slice, broadcast, gather of a
    key array, ...) applied to their data: mapped over the trailing word axis, so
    the operation sees arrays of the keys' own shape."""
    keyed = [isinstance(x, _Key) for x in ins]
    if eqn.primitive.name in ("while", "cond", "scan", "jit", "pjit", "closed_call"):
        return rule(eqn, *ins)  # control flow and calls pass keys through

    def f(*xs):
        if rule is not None:
            return rule(eqn, *xs)
        return eqn.primitive.bind(*xs, **eqn.params)

    outs = jax.vmap(f, in_axes=[-1 if k else None for k in keyed], out_axes=-1)(
        *[x.data if k else x for x, k in zip(ins, keyed, strict=False)]
    )
    many = eqn.primitive.multiple_results
    wrapped = [
        _Key(o) if _is_key_aval(v.aval) else o
        for o, v in zip(outs if many else [outs], eqn.outvars, strict=False)
    ]
    return wrapped if many else wrapped[0]


def _closed(c):
    """(jaxpr, consts) of a ClosedJaxpr or an open Jaxpr."""
    if hasattr(c, "consts"):
        return c.jaxpr, c.consts
    return c, ()


def _run(c, args):
    jaxpr, consts = _closed(c)
    return evaluate(jaxpr, list(consts), list(args))


_RULES: dict = {}


def _rule(*names):
    def register(f):
        for n in names:
            _RULES[n] = f
        return f

    return register


# ---------------------------------------------------------------- calls and control
@_rule("jit", "pjit", "closed_call", "core_call", "remat", "checkpoint")
def _call(eqn, *ins):
    sub = eqn.params.get("jaxpr", eqn.params.get("call_jaxpr"))
    return _run(sub, ins)


@_rule("custom_jvp_call", "custom_vjp_call", "custom_vjp_call_jaxpr", "custom_lin")
def _custom(eqn, *ins):
    sub = eqn.params.get("call_jaxpr", eqn.params.get("fun_jaxpr"))
    if sub is None:
        raise NotKernelSafe(f"{eqn.primitive.name} without a call jaxpr")
    consts = eqn.params.get("num_consts", 0)
    del consts  # the call jaxpr takes every operand
    return _run(sub, ins)


@_rule("optimization_barrier")
def _barrier(eqn, *ins):
    return list(ins)


@_rule("copy", "copy_p")
def _copy(eqn, x):
    return x


@_rule("stop_gradient")
def _stop_gradient(eqn, x):
    return x


@_rule("cond")
def _cond(eqn, index, *ops):
    branches = eqn.params["branches"]
    out_avals = [v.aval for v in eqn.outvars]

    def branch(b):
        def f(*xs):
            return _leave(_run(b, xs))

        return f

    outs = lax.switch(index, [branch(b) for b in branches], *_leave(ops))
    return _enter(outs, out_avals)


@_rule("while")
def _while(eqn, *ins):
    p = eqn.params
    nc, nb = p["cond_nconsts"], p["body_nconsts"]
    cconsts, bconsts, init = ins[:nc], ins[nc : nc + nb], ins[nc + nb :]
    out_avals = [v.aval for v in eqn.outvars]

    def cond(carry):
        return _run(p["cond_jaxpr"], [*cconsts, *carry])[0]

    def body(carry):
        return tuple(_leave(_run(p["body_jaxpr"], [*bconsts, *carry])))

    outs = lax.while_loop(cond, body, tuple(_leave(init)))
    return _enter(list(outs), out_avals)


@_rule("scan")
def _scan(eqn, *ins):
    p = eqn.params
    nconst, ncarry = p["num_consts"], p["num_carry"]
    consts, init, xs = (
        ins[:nconst],
        ins[nconst : nconst + ncarry],
        ins[nconst + ncarry :],
    )
    out_avals = [v.aval for v in eqn.outvars]

    def body(carry, x):
        out = _leave(_run(p["jaxpr"], [*consts, *carry, *x]))
        return tuple(out[:ncarry]), tuple(out[ncarry:])

    carry, ys = lax.scan(
        body,
        tuple(_leave(init)),
        tuple(_leave(xs)),
        length=p["length"],
        reverse=p["reverse"],
        unroll=p["unroll"],
    )
    return _enter([*carry, *ys], out_avals)


# ------------------------------------------------------------------------- keys
_KEYED = frozenset(
    {"random_wrap", "random_unwrap", "random_fold_in", "random_split", "random_bits"}
)


@_rule("random_wrap")
def _wrap(eqn, data):
    _check_impl(eqn.outvars[0].aval)
    return _Key(data)


@_rule("random_unwrap")
def _unwrap(eqn, key):
    return key.data


def _col(x, k: int):
    """``x[..., k]`` as a one-hot sum over the last axis (no slice in a kernel)."""
    hit = lax.broadcasted_iota(jnp.int32, x.shape, x.ndim - 1) == k
    return jnp.sum(jnp.where(hit, x, _zero(x.dtype)), axis=-1).astype(x.dtype)


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


# ------------------------------------------------------------- one-hot contraction
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


# ------------------------------------------------------------------- slicing rules
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


# ------------------------------------------------------------------ gather, scatter
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


# --------------------------------------------------------------------- reductions
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


def _pad_to(x, axis: int, width: int, value):
    size = x.shape[axis]
    mask = _place_mask(0, 1, width, size)
    placed = _contract(x, axis, mask)
    cover = _contract(jnp.ones(x.shape, jnp.bool_), axis, mask)
    return jnp.where(cover, placed, jnp.asarray(value, x.dtype))


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


# --------------------------------------------------------------------------- sort
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


# ------------------------------------------------------------------- what is left
#: primitives the Pallas Triton lowering has rules for (jax 0.10.2), after the
#: rewrite; :func:`unsupported` reports the others a kernel body still holds.
TRITON_OK = frozenset(
    [
        "abs",
        "acos",
        "acosh",
        "add",
        "add_any",
        "addupdate",
        "and",
        "argmax",
        "argmin",
        "asin",
        "asinh",
        "atan",
        "atan2",
        "atanh",
        "axis_index",
        "bitcast_convert_type",
        "broadcast_in_dim",
        "broadcast_to",
        "cbrt",
        "ceil",
        "clamp",
        "closed_call",
        "clz",
        "concatenate",
        "cond",
        "convert_element_type",
        "cos",
        "cosh",
        "cumsum",
        "custom_jvp_call",
        "debug_print",
        "div",
        "dot_general",
        "eq",
        "erf_inv",
        "exp",
        "exp2",
        "expm1",
        "floor",
        "ge",
        "get",
        "gt",
        "integer_pow",
        "iota",
        "is_finite",
        "jit",
        "le",
        "log",
        "log1p",
        "logistic",
        "lt",
        "masked_load",
        "masked_swap",
        "max",
        "min",
        "mul",
        "multiple_of",
        "ne",
        "neg",
        "nextafter",
        "not",
        "num_programs",
        "or",
        "population_count",
        "pow",
        "program_id",
        "reduce_max",
        "reduce_min",
        "reduce_sum",
        "rem",
        "remat2",
        "reshape",
        "reshard",
        "rsqrt",
        "scan",
        "select_n",
        "shift_left",
        "shift_right_arithmetic",
        "shift_right_logical",
        "sign",
        "sin",
        "sinh",
        "split",
        "sqrt",
        "square",
        "squeeze",
        "stack",
        "stop_gradient",
        "sub",
        "swap",
        "tan",
        "tanh",
        "transpose",
        "unstack",
        "while",
        "xor",
    ]
)


def primitives(jaxpr, acc=None) -> dict:
    """``{primitive name: count}`` of a jaxpr and its sub-jaxprs."""
    acc = {} if acc is None else acc
    for eqn in jaxpr.eqns:
        acc[eqn.primitive.name] = acc.get(eqn.primitive.name, 0) + 1
        for value in eqn.params.values():
            for sub in value if isinstance(value, (tuple, list)) else (value,):
                if hasattr(sub, "eqns"):
                    primitives(sub, acc)
                elif hasattr(sub, "jaxpr") and hasattr(sub.jaxpr, "eqns"):
                    primitives(sub.jaxpr, acc)
    return acc


def unsupported(jaxpr, allowed: frozenset = TRITON_OK) -> dict:
    """The primitives of ``jaxpr`` (and its sub-jaxprs) outside ``allowed``."""
    return {k: v for k, v in primitives(jaxpr).items() if k not in allowed}


__all__ = ["NotKernelSafe", "kernel_safe", "evaluate", "primitives", "unsupported"]

del Any


def kernel_bodies(jaxpr) -> list:
    """The kernel jaxprs of the ``pallas_call`` equations in ``jaxpr`` (nested)."""
    found = []
    for eqn in jaxpr.eqns:
        if eqn.primitive.name == "pallas_call":
            found.append(eqn.params["jaxpr"])
            continue
        for value in eqn.params.values():
            for sub in value if isinstance(value, (tuple, list)) else (value,):
                if hasattr(sub, "eqns"):
                    found += kernel_bodies(sub)
                elif hasattr(sub, "jaxpr") and hasattr(sub.jaxpr, "eqns"):
                    found += kernel_bodies(sub.jaxpr)
    return found
