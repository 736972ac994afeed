"""Power-of-two shapes: a program evaluated on arrays padded to power-of-two sizes.

The Pallas Triton lowering needs every array in a kernel to have a power-of-two
number of elements; the policies' values do not (an ``ArmStats`` table of 3 to 6
rows, phase schedules of log2 K + 1 entries, K itself). :func:`padded` evaluates a
function's program (after the kernel-safe rewrite: elementwise operations, ``iota``,
broadcasts, reductions, loops) on *padded* values: every axis of every value is
rounded up to the next power of two, and the logical part (the leading positions of
each axis) holds exactly what the original program computes there. The padding
holds arbitrary values; an operation that mixes positions masks it: a reduction
replaces it by its identity (``0`` for a sum, ``-inf`` / ``inf`` or the integer
extremes for a max / min), a contraction (``dot_general``) by zeros. Elementwise
operations, broadcasts, transposes and loops carry it along unchanged. So the
logical results are the original ones, bit for bit (reductions see the same values
plus identities at the end of the axis).

A scan over a padded axis (``xs`` / ``ys`` of ``L`` rows, padded to ``pow2(L)``) runs
``pow2(L)`` steps and leaves its carry unchanged on the padding rows.

Anything else that moves positions across a padded axis in another way (a reshape that
splits or merges such an axis, a ``split`` of it) raises
:class:`NotKernelSafe`, and the caller runs the program on XLA.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from jbandits.sim.fused.safe.core import (
    NotKernelSafe,
    _closed,
    _materialize,
    interpret,
    rule_table,
)
from jbandits.sim.fused.safe.onehot import in_place_pad


def pow2(n: int) -> int:
    """The smallest power of two ``>= n`` (``1`` for ``0``: an empty axis becomes
    one position of padding)."""
    return 1 if n <= 1 else 1 << (n - 1).bit_length()


def pow2_shape(shape) -> tuple:
    return tuple(pow2(int(d)) for d in shape)


def pad_array(x, value=0):
    """``x`` (outside a kernel) padded with ``value`` to power-of-two sizes."""
    x = jnp.asarray(x)
    width = [(0, pow2(d) - d) for d in x.shape]
    if all(hi == 0 for _, hi in width):
        return x
    return jnp.pad(x, width, constant_values=jnp.asarray(value, x.dtype))


def unpad_array(x, shape):
    """The logical part ``x[:shape[0], :shape[1], ...]`` (outside a kernel)."""
    if tuple(x.shape) == tuple(shape):
        return x
    return x[tuple(slice(0, d) for d in shape)]


def evaluate_padded(jaxpr, consts, args) -> list:
    """Evaluate ``jaxpr`` on padded ``args`` (power-of-two shapes); padded results."""
    return _evaluate(jaxpr, consts, args)


def _evaluate(jaxpr, consts, args) -> list:
    consts = [_const(c) for c in consts]
    return interpret(jaxpr, consts, args, _apply, strict=True)


def _const(c):
    """A constant of the program, padded (edge values) and rebuilt from literals."""
    if isinstance(c, jax.core.Tracer):
        if tuple(c.shape) != pow2_shape(c.shape):
            raise NotKernelSafe(f"padding: a traced constant of shape {c.shape}")
        return c
    c = np.asarray(c)
    width = [(0, pow2(d) - d) for d in c.shape]
    return _materialize(np.pad(c, width, mode="edge" if c.size else "constant"))


def _run(c, args):
    jaxpr, consts = _closed(c)
    return _evaluate(jaxpr, list(consts), list(args))


def _shape(v) -> tuple:
    return tuple(getattr(v.aval, "shape", ()))


def _apply(eqn, ins):
    name = eqn.primitive.name
    rule = _RULES.get(name)
    if rule is not None:
        return rule(eqn, ins)
    out_shapes = [_shape(v) for v in eqn.outvars]
    in_shapes = [_shape(v) for v in eqn.invars]
    if all(s == pow2_shape(s) for s in [*in_shapes, *out_shapes]):
        return eqn.primitive.bind(*ins, **eqn.params)  # nothing padded
    elementwise = len(set(out_shapes)) == 1 and all(
        _broadcasts(s, out_shapes[0]) for s in in_shapes
    )
    if not elementwise or name in _NOT_ELEMENTWISE:
        raise NotKernelSafe(f"padding: {name} on shapes {in_shapes} -> {out_shapes}")
    return eqn.primitive.bind(*ins, **eqn.params)


def _broadcasts(shape, out) -> bool:
    """``shape`` is ``()`` or ``out`` with some axes of size 1 (an operand of an
    elementwise operation)."""
    if shape == ():
        return True
    return len(shape) == len(out) and all(
        d in (1, o) for d, o in zip(shape, out, strict=False)
    )


#: same-shape primitives that still move positions along an axis
_NOT_ELEMENTWISE = frozenset(
    {"sort", "rev", "cumlogsumexp", "gather", "scatter", "dynamic_slice", "pad"}
)

_RULES, _rule = rule_table()


# ------------------------------------------------------------------------- shapes
@_rule("iota")
def _iota(eqn, ins):
    p = dict(eqn.params)
    p["shape"] = pow2_shape(p["shape"])
    return eqn.primitive.bind(*ins, **p)


@_rule("broadcast_in_dim")
def _broadcast(eqn, ins):
    p = dict(eqn.params)
    p["shape"] = pow2_shape(p["shape"])
    return eqn.primitive.bind(*ins, **p)


@_rule("reshape")
def _reshape(eqn, ins):
    (x,) = ins
    old, new = _shape(eqn.invars[0]), tuple(eqn.params["new_sizes"])
    if old == pow2_shape(old) and new == pow2_shape(new):
        return eqn.primitive.bind(x, **eqn.params)
    if [d for d in old if d != 1] != [d for d in new if d != 1]:
        raise NotKernelSafe(f"padding: reshape {old} -> {new}")
    return lax.reshape(x, pow2_shape(new))  # only size-1 axes come or go


@_rule("squeeze", "transpose")
def _as_is(eqn, ins):
    """Size-1 axes and permutations: the same on the padded values."""
    return eqn.primitive.bind(*ins, **eqn.params)


@_rule("split")
def _split(eqn, ins):
    (x,) = ins
    axis, sizes = eqn.params["axis"], eqn.params["sizes"]
    if any(s != pow2(s) for s in sizes) or x.shape[axis] != sum(sizes):
        raise NotKernelSafe(f"padding: split {sizes} of {x.shape}")
    return eqn.primitive.bind(x, **eqn.params)


@_rule("pad")
def _pad(eqn, ins):
    """A pad at the high end that stays within the power-of-two sizes
    (:func:`jbandits.sim.fused.safe.onehot.in_place_pad`, the only pads the
    kernel-safe rewrite leaves): the padding value past the logical sizes."""
    x, value = ins
    config = eqn.params["padding_config"]
    shape = _shape(eqn.invars[0])
    if not in_place_pad(jax.ShapeDtypeStruct(shape, x.dtype), config):
        raise NotKernelSafe(f"padding: pad {config} of {shape}")
    mask = _valid(shape, x.shape, range(len(shape)))
    return x if mask is None else jnp.where(mask, x, jnp.asarray(value, x.dtype))


@_rule("select_n")
def _select_n(eqn, ins):
    """``select_n`` with an integer case index (a ``cond`` or ``switch`` batched by
    the kernel's ``vmap``) as selects on booleans: Triton's ``arith.select`` takes an
    ``i1`` condition only (the kernel does not compile otherwise)."""
    which, *cases = ins
    if jnp.result_type(which) == jnp.bool_:
        return eqn.primitive.bind(which, *cases)
    out = cases[-1]
    for i in range(len(cases) - 2, -1, -1):
        out = lax.select_n(which == i, out, cases[i])
    return out


# --------------------------------------------------------------------- reductions
def _valid(shape_logical, shape_padded, axes):
    """Mask of the logical positions along ``axes`` (None: nothing padded there)."""
    mask = None
    for a in axes:
        if shape_logical[a] == shape_padded[a]:
            continue
        m = lax.broadcasted_iota(jnp.int32, shape_padded, a) < shape_logical[a]
        mask = m if mask is None else mask & m
    return mask


def _identity(dtype, how: str):
    if how == "sum":
        return jnp.zeros((), dtype)
    if dtype == jnp.bool_:
        return jnp.asarray(how == "min")
    if jnp.issubdtype(dtype, jnp.inexact):
        return jnp.asarray(-jnp.inf if how == "max" else jnp.inf, dtype)
    info = jnp.iinfo(dtype)
    return jnp.asarray(info.min if how == "max" else info.max, dtype)


def _masked(eqn, x, axes, how: str):
    mask = _valid(_shape(eqn.invars[0]), x.shape, axes)
    if mask is None:
        return x
    return jnp.where(mask, x, _identity(x.dtype, how))


def _reduction(how: str):
    def rule(eqn, ins):
        (x,) = ins
        x = _masked(eqn, x, eqn.params["axes"], how)
        return eqn.primitive.bind(x, **eqn.params)

    return rule


_RULES["reduce_sum"] = _reduction("sum")
_RULES["reduce_max"] = _reduction("max")
_RULES["reduce_min"] = _reduction("min")
_RULES["reduce_or"] = _reduction("max")
_RULES["reduce_and"] = _reduction("min")
_RULES["argmax"] = _reduction("max")
_RULES["argmin"] = _reduction("min")


@_rule("cumsum", "cummax", "cummin", "cumprod")
def _cumulative(eqn, ins):
    (x,) = ins
    if eqn.params.get("reverse", False):  # the padding comes first: its identity
        how = {"cumsum": "sum", "cummax": "max", "cummin": "min"}.get(
            eqn.primitive.name
        )
        if how is None:
            raise NotKernelSafe("padding: reverse cumprod")
        x = _masked(eqn, x, (eqn.params["axis"],), how)
    return eqn.primitive.bind(x, **eqn.params)


@_rule("dot_general")
def _dot_general(eqn, ins):
    lhs, rhs = ins
    (lc, rc), _ = eqn.params["dimension_numbers"]
    lm = _valid(_shape(eqn.invars[0]), lhs.shape, lc)
    rm = _valid(_shape(eqn.invars[1]), rhs.shape, rc)
    if lm is not None:
        lhs = jnp.where(lm, lhs, jnp.zeros((), lhs.dtype))
    if rm is not None:
        rhs = jnp.where(rm, rhs, jnp.zeros((), rhs.dtype))
    return eqn.primitive.bind(lhs, rhs, **eqn.params)


# ---------------------------------------------------------------- calls and loops
@_rule("jit", "pjit", "closed_call", "core_call", "remat", "checkpoint")
def _call(eqn, ins):
    return _run(eqn.params.get("jaxpr", eqn.params.get("call_jaxpr")), ins)


@_rule("custom_jvp_call", "custom_vjp_call", "custom_vjp_call_jaxpr")
def _custom(eqn, ins):
    return _run(eqn.params.get("call_jaxpr", eqn.params.get("fun_jaxpr")), ins)


@_rule("cond")
def _cond(eqn, ins):
    index, *ops = ins
    branches = [(lambda b: lambda *xs: _run(b, xs))(b) for b in eqn.params["branches"]]
    return lax.switch(index, branches, *ops)


@_rule("while")
def _while(eqn, ins):
    p = eqn.params
    nc, nb = p["cond_nconsts"], p["body_nconsts"]
    cconsts, bconsts, init = ins[:nc], ins[nc : nc + nb], ins[nc + nb :]

    pred_shape = _shape(p["cond_jaxpr"].jaxpr.outvars[0])

    def cond(carry):
        pred = _run(p["cond_jaxpr"], [*cconsts, *carry])[0]
        if not pred_shape:
            return pred
        # a batched predicate (a vmapped while: the body selects per lane), which
        # the while's own lowering reduces with "or"; here, without the padding
        mask = _valid(pred_shape, pred.shape, range(len(pred_shape)))
        if mask is not None:
            pred = pred & mask
        return jnp.max(pred.astype(jnp.int32)) > 0

    def body(carry):
        return tuple(_run(p["body_jaxpr"], [*bconsts, *carry]))

    return list(lax.while_loop(cond, body, tuple(init)))


@_rule("scan")
def _scan(eqn, ins):
    p = eqn.params
    nconst, ncarry = p["num_consts"], p["num_carry"]
    consts, init = ins[:nconst], ins[nconst : nconst + ncarry]
    xs = ins[nconst + ncarry :]
    length = p["length"]
    steps = pow2(length) if xs or len(eqn.outvars) > ncarry else length

    def body(loop, x):
        i, carry = loop[0], loop[1:]
        out = _run(p["jaxpr"], [*consts, *carry, *x])
        new = tuple(out[:ncarry])
        if steps != length:  # xs/ys padded to a power of two: skip the padding
            index = steps - 1 - i if p["reverse"] else i
            new = tuple(
                jnp.where(index < length, n, o) for n, o in zip(new, carry, strict=True)
            )
        return (i + 1, *new), tuple(out[ncarry:])

    loop, ys = lax.scan(
        body,
        (jnp.zeros((), jnp.int32), *init),
        tuple(xs),
        length=steps,
        reverse=p["reverse"],
        unroll=p["unroll"],
    )
    return [*loop[1:], *ys]
