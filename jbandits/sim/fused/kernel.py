"""The kernel of the fused program: the body over one block of lanes (the
checkpoint loop of guarded steps and read-outs) and the ``pallas_call`` plumbing
(memory dtypes, block specs, padding the lanes to whole blocks); see
:mod:`jbandits.sim.fused.driver`."""

from __future__ import annotations

import functools
import math

import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl

from jbandits.sim.fused import safe as _safe
from jbandits.sim.fused.lane import (
    LANES_AXIS,
    Lane,
    Spec,
    policy_of,
    readout,
    segment_length,
    step,
)


# ------------------------------------------------------------------ memory boundary
def _to_mem(x):
    """Kernel operands and results hold no bools (int32 instead)."""
    x = jnp.asarray(x)
    return x.astype(jnp.int32) if x.dtype == jnp.bool_ else x


def _from_mem(x, like):
    return x.astype(jnp.bool_) if like.dtype == jnp.bool_ else x


def _block_spec(x, block: int, per_lane: bool):
    shape = tuple(x.shape)
    if not per_lane:  # the whole array in every program
        nd = len(shape)
        return pl.BlockSpec(shape, lambda i: (0,) * nd)
    rest = len(shape) - 1
    return pl.BlockSpec((block, *shape[1:]), lambda i: (i,) + (0,) * rest)


def block_fn(spec: Spec, lane_axes, lane_flat, lane_tree, carry_flat, carry_tree):
    """The kernel body: the function of one block's arrays (lane inputs, then the
    initial carry, as kernel operands; lane axis first) returning its results
    ``(counts, t, stopped, below, out, acc, used)`` (``below``: the final state's arm
    is below -1). Its step loop calls the lanes' kernel-safe step directly: few
    frames lie between a run and a policy's step (``tests/test_structure.py``)."""
    num_checkpoints = spec.num_checkpoints
    vmap = functools.partial(jax.vmap, axis_name=LANES_AXIS)
    step_lanes = vmap(
        _safe.kernel_safe(functools.partial(step, spec)), in_axes=(lane_axes, 0, 0)
    )
    readout_lanes = vmap(
        _safe.kernel_safe(functools.partial(readout, spec)), in_axes=(lane_axes, 0)
    )
    output_lanes = vmap(
        _safe.kernel_safe(functools.partial(_output, spec)), in_axes=(lane_axes, 0)
    )
    seg = segment_length(spec)
    num_lane = len(lane_flat)

    def run_block(*arrays):
        lane = jax.tree_util.tree_unflatten(
            lane_tree,
            [
                _from_mem(a, x)
                for a, x in zip(arrays[:num_lane], lane_flat, strict=True)
            ],
        )
        carry0 = jax.tree_util.tree_unflatten(
            carry_tree,
            [
                _from_mem(a, x)
                for a, x in zip(arrays[num_lane:], carry_flat, strict=True)
            ],
        )
        block = carry0[2].shape[0]
        cidx = lax.broadcasted_iota(jnp.int32, (block, num_checkpoints), 1)
        # [block, C] accumulators, written one-hot at checkpoint c
        abstract = jax.eval_shape(readout_lanes, lane, carry0)
        acc0 = jax.tree_util.tree_map(
            lambda s: jnp.zeros((block, num_checkpoints), _mem_dtype(s.dtype)), abstract
        )
        used0 = jnp.zeros((block, num_checkpoints), jnp.int32)

        def checkpoint(c, loop):
            carry, acc, used = loop
            limit = jnp.minimum(lane.budget, (c + 1) * lane.inner)

            def more(inner_loop):
                live = vmap(_live_of, in_axes=(0, 0))(limit, inner_loop[0])
                return jnp.max(live.astype(jnp.int32)) > 0

            def advance(inner_loop):
                carry, n = inner_loop
                return step_lanes(lane, limit, carry), n + 1

            carry, n = lax.while_loop(more, advance, (carry, jnp.zeros((), jnp.int32)))
            read = readout_lanes(lane, carry)
            here = cidx == c
            acc = jax.tree_util.tree_map(
                lambda a, v: jnp.where(here, _to_mem(v)[:, None], a), acc, read
            )
            used = jnp.where(here, (n + seg - 1) // seg, used)
            return carry, acc, used

        carry, acc, used = lax.fori_loop(
            0, num_checkpoints, checkpoint, (carry0, acc0, used0)
        )
        out = output_lanes(lane, carry)
        state, counts, t, _, _ = carry
        return (counts, t, state.arm < 0, state.arm < -1, out, acc, used)

    return run_block


def _output(spec: Spec, lane, carry):
    """The policy's output of one lane's final state."""
    return policy_of(spec, lane.hp).output(carry[0])


#: words (32-bit values, arrays at their power-of-two sizes) of lane inputs and
#: carry per thread that a block may hold: the kernel's registers grow with them
#: (ptxas on an H100, benchmarks/notes_fused_registers.md: APT at 81 words per
#: thread used 254 registers, UCB1 at 86 spilled), and its temporaries with them
WORDS_PER_THREAD = 64


def lean_block(block: int, words: int, num_warps: int) -> int:
    """Lanes per kernel program: ``block`` halved while a block's lane inputs and
    carry (``words`` per lane) exceed :data:`WORDS_PER_THREAD` per thread of its
    ``num_warps`` warps; at least one lane."""
    room = WORDS_PER_THREAD * 32 * num_warps
    while block > 1 and block * words > room:
        block //= 2
    return block


def lane_words(leaves, flags) -> int:
    """Words per lane of the kernel operands ``leaves`` with a lane axis (``flags``),
    at their power-of-two sizes."""
    return sum(
        math.prod(_safe.pow2_shape(x.shape[1:]))
        for x, p in zip(leaves, flags, strict=True)
        if p
    )


def _live_of(limit, carry):
    state, _, t, _, _ = carry
    return (t < limit) & (state.arm >= 0)


def _mem_dtype(dtype):
    return jnp.int32 if dtype == jnp.bool_ else dtype


def _per_lane_flags(lane: Lane, lane_axes: Lane) -> list:
    """Per flattened leaf of ``lane``: whether it has a lane axis (the shared fields
    of the instance do not)."""
    flags = []
    for field in lane._fields:
        value, axes = getattr(lane, field), getattr(lane_axes, field)
        n = len(jax.tree_util.tree_leaves(value))
        if field == "params" and axes != 0:
            for f in value._fields:
                k = len(jax.tree_util.tree_leaves(getattr(value, f)))
                flags += [getattr(axes, f) == 0] * k
        else:
            flags += [True] * n
    return flags


# ------------------------------------------------------------ pallas_call plumbing
def pad_lanes(x, padded: int, per_lane: bool = True):
    """``x`` with its lane axis padded to ``padded`` by copies of its first lane."""
    n = x.shape[0]
    if not per_lane or padded == n:
        return x
    return jnp.concatenate([x, jnp.repeat(x[:1], padded - n, axis=0)], axis=0)


def block_shapes(ins, per_lane, block: int) -> list:
    """The abstract kernel operands of one block (what :func:`block_fn`'s function
    is traced at)."""
    return [
        jax.ShapeDtypeStruct((block, *x.shape[1:]) if p else x.shape, x.dtype)
        for x, p in zip(ins, per_lane, strict=False)
    ]


def call(spec: Spec, closed, out_block, ins, per_lane, block: int, padded: int):
    """The traced block function ``closed`` (a closed jaxpr of :func:`block_fn`'s
    function at :func:`block_shapes`, returning ``out_block``) over the
    ``padded // block`` blocks of ``ins`` in one ``pallas_call``: (flat results with
    ``padded`` lanes, the abstract results of one block, their tree)."""
    out_flat_b, out_tree = jax.tree_util.tree_flatten(out_block)
    # inside the kernel every array has power-of-two sizes (safe.evaluate_padded)
    ins = [_pad_operand(x, p) for x, p in zip(ins, per_lane, strict=False)]
    out_shapes = [
        jax.ShapeDtypeStruct(
            (padded, *_safe.pow2_shape(s.shape[1:])), _mem_dtype(s.dtype)
        )
        for s in out_flat_b
    ]

    def kernel(*refs):
        in_refs, out_refs = refs[: len(ins)], refs[len(ins) :]
        arrays = [r[...] for r in in_refs]
        results = _safe.evaluate_padded(closed.jaxpr, closed.consts, arrays)
        for r, v in zip(out_refs, results, strict=False):
            r[...] = _to_mem(v)

    in_specs = [_block_spec(x, block, p) for x, p in zip(ins, per_lane, strict=False)]
    out_specs = [_block_spec(s, block, True) for s in out_shapes]
    pallas = pl.pallas_call(
        kernel,
        out_shape=out_shapes,
        grid=(padded // block,),
        in_specs=in_specs,
        out_specs=out_specs,
        name="jbandits_fused",
        **spec.lowering.call_kwargs(),
    )
    results = [
        _safe.unpad_array(r, (padded, *s.shape[1:]))
        for r, s in zip(pallas(*ins), out_flat_b, strict=False)
    ]
    return results, out_flat_b, out_tree


def _pad_operand(x, per_lane: bool):
    """A kernel operand padded to power-of-two sizes (not its lane axis: blocks of
    ``block`` lanes, a power of two, are what the kernel sees of it)."""
    if not per_lane:
        return _safe.pad_array(x)
    width = [(0, 0)] + [(0, _safe.pow2(d) - d) for d in x.shape[1:]]
    if all(hi == 0 for _, hi in width):
        return x
    return jnp.pad(x, width)
