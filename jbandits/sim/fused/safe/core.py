"""The rewrite's core: the jaxpr interpreter, PRNG key values, constants and the
rule table (each rule module registers its rules here)."""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.extend import core as jcore


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


def kernel_safe(fn):
    """``fn`` with its program rewritten (see the module docstring); same results.

    ``fn`` takes and returns pytrees of arrays (no PRNG key arrays at its boundary:
    pass key data). It is traced again at every call, at the shapes of that call.
    """

    @functools.wraps(fn)
    def wrapped(*args):
        flat = jax.tree_util.tree_leaves(args)
        specs = jax.tree_util.tree_map(
            lambda x: jax.ShapeDtypeStruct(jnp.shape(x), jnp.result_type(x)), args
        )
        # fn traced as it is (no flattening wrapper): one frame of this rewrite
        # between its caller and fn
        closed, out_shape = jax.make_jaxpr(fn, return_shape=True)(*specs)
        outs = evaluate(closed.jaxpr, closed.consts, flat)
        for v, x in zip(closed.jaxpr.outvars, outs, strict=False):
            if isinstance(x, _Key):
                raise NotKernelSafe(f"returns a PRNG key ({v.aval})")
        return jax.tree_util.tree_unflatten(
            jax.tree_util.tree_structure(out_shape), outs
        )

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
    consts = _enter(
        [_materialize(c) for c in consts], [v.aval for v in jaxpr.constvars]
    )
    args = _enter(args, [v.aval for v in jaxpr.invars])
    return interpret(jaxpr, consts, args, _apply_safe)


def interpret(jaxpr, consts, args, apply, *, strict: bool = False) -> list:
    """The jaxpr interpreter of the rewrite (here and :mod:`.padded`): ``jaxpr`` on
    the values ``consts`` and ``args``, each equation through ``apply(eqn, ins)``
    (its output, a list when the primitive has several); ``strict`` zips strictly."""
    env: dict = {}

    def read(v):
        if isinstance(v, jcore.Literal):
            return v.val
        return env[v]

    for v, x in zip(jaxpr.constvars, consts, strict=strict):
        env[v] = x
    for v, x in zip(jaxpr.invars, args, strict=strict):
        env[v] = x
    for eqn in jaxpr.eqns:
        outs = apply(eqn, [read(v) for v in eqn.invars])
        if not eqn.primitive.multiple_results:
            outs = [outs]
        for v, x in zip(eqn.outvars, outs, strict=strict):
            env[v] = x
    return [read(v) for v in jaxpr.outvars]


def _apply_safe(eqn, ins):
    """One equation through its kernel-safe rule (key values as their data)."""
    rule = _RULES.get(eqn.primitive.name)
    if any(isinstance(x, _Key) for x in ins) and eqn.primitive.name not in _KEYED:
        return _on_key_data(eqn, rule, ins)
    if rule is not None:
        return rule(eqn, *ins)
    return eqn.primitive.bind(*ins, **eqn.params)


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


def rule_table() -> tuple[dict, object]:
    """``(rules, rule)``: a table of primitive rules and its decorator
    (``@rule("gather", ...)`` registers a function under those primitive names)."""
    rules: dict = {}

    def rule(*names):
        def register(f):
            for n in names:
                rules[n] = f
            return f

        return register

    return rules, rule


_RULES, _rule = rule_table()


# primitives that take PRNG keys as they are (the others see key data)
_KEYED = frozenset(
    {"random_wrap", "random_unwrap", "random_fold_in", "random_split", "random_bits"}
)
