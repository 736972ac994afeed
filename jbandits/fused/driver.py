"""The fused kernel: a block of lanes plays its whole budget in one Pallas program.

:func:`program` returns the function of a chunk of lanes that the batched runner
calls, ``lanes(hp, params, kdata, rep, budget, horizon) -> RunResult`` (the same
signature and the same results as the XLA program of
:func:`jbandits.runner.programs._compile`), computed in three parts:

1. *before* (XLA, once per lane): the lane's key (folded with its replication),
   split as :func:`jbandits.engine.split_key` splits it; the arm permutation (a sort:
   not in the kernel); the true means and gaps; ``policy.init``; the first reward.
   Everything here runs once per lane, so it stays out of the kernel;
2. *the kernel* (:func:`pl.pallas_call`, a grid over blocks of
   ``block`` lanes): the policy state, pull counts and reward totals of a block are
   loop carries; for each of the ``C`` checkpoints a ``lax.while_loop`` runs guarded
   steps (the engine's :func:`jbandits._segments.guarded_step`, written with one-hot
   updates) while some lane of the block has budget left and is not idle, then reads
   the checkpoint (``policy.output``, the metric, the regret) into one-hot written
   ``[block, C]`` accumulators. ``policy.step`` and ``bandit.sample`` are the
   policy's and the family's own functions, run per lane under ``vmap`` after the
   kernel-safe rewrite of :mod:`jbandits.fused.safe`;
3. *after* (XLA): outputs and pull counts back to bandit numbering, checkpoint
   times.

The reward stack, the step keys and the permutation are those of
:func:`jbandits.engine.run`, so both backends play the same arms and return the same
numbers (``tests/test_fused.py`` checks every fused policy in interpret mode).
"""

from __future__ import annotations

import functools
import math
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl

from jbandits import _prng, metrics
from jbandits.engine import (
    RunResult,
    _arm_order,
    _to_bandit_numbering,
    default_segment,
    split_key,
)
from jbandits.fused import lowering as _lowering
from jbandits.fused import safe as _safe
from jbandits.types import Bandit

LANES_AXIS = "lanes"  # the vmap axis over a block's lanes (as the runner's)


class Spec(NamedTuple):
    """The static description of a fused program (what the runner's cache keys)."""

    build: Any  # (hp, execution) -> Policy (the runner's Source.policy)
    execution: Any  # the Execution the policy is built with (None: it takes none)
    bandit: Bandit
    horizon: int | None  # static horizon (None: traced per lane)
    num_checkpoints: int
    metric: Any
    permute: bool
    segment: int | None
    shared: tuple  # params fields without a lane axis
    fold: bool  # fold the replication index into the key
    block: int  # lanes per kernel program (0: lowering.block_for(K))
    lowering: _lowering.Lowering


# ----------------------------------------------------------------- kernel-safe pieces
def take(x, i):
    """``x[..., i]`` for a scalar ``i`` as a masked sum over the last axis (no gather);
    ``x`` of any dtype (bools through int32)."""
    x = jnp.asarray(x)
    hit = lax.broadcasted_iota(jnp.int32, x.shape, x.ndim - 1) == i
    if x.dtype == jnp.bool_:
        return jnp.sum(jnp.where(hit, x.astype(jnp.int32), 0), axis=-1) > 0
    return jnp.sum(jnp.where(hit, x, jnp.zeros((), x.dtype)), axis=-1).astype(x.dtype)


def to_bandit(out, perm):
    """:func:`jbandits.engine._to_bandit_numbering` without gather or scatter: a
    scalar arm ``a >= 0`` becomes ``perm[a]``; a ``[K]`` array ``y`` becomes
    ``z[perm[a]] = y[a]`` (a [K, K] one-hot sum)."""
    out = jnp.asarray(out)
    if out.ndim == 0:
        return jnp.where(out >= 0, take(perm, jnp.maximum(out, 0)), out).astype(
            out.dtype
        )
    k = perm.shape[-1]
    # hit[j, a]: bandit arm j is policy arm a
    hit = perm[None, :] == lax.broadcasted_iota(jnp.int32, (k, k), 0)
    if out.dtype == jnp.bool_:
        return jnp.sum(jnp.where(hit, out[None, :].astype(jnp.int32), 0), axis=1) > 0
    zero = jnp.zeros((), out.dtype)
    return jnp.sum(jnp.where(hit, out[None, :], zero), axis=1).astype(out.dtype)


def step_key_data(key_steps, t):
    """Key data of ``fold_in(key_steps, t)`` (:func:`jbandits._segments.step_key`)
    from the key data ``key_steps`` [2] uint32: one threefry2x32 hash."""
    o1, o2 = _prng.threefry2x32(
        take(key_steps, 0),
        take(key_steps, 1),
        jnp.zeros((), jnp.uint32),
        t.astype(jnp.uint32),
    )
    first = lax.broadcasted_iota(jnp.int32, (2,), 0) == 0
    return jnp.where(first, o1, o2)


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


# ---------------------------------------------------------------------- one lane
class _Lane(NamedTuple):
    """What every step of one lane reads (per-lane values inside the kernel)."""

    hp: Any
    params: Any
    key_steps: Any  # [2] uint32
    key_env: Any  # [2] uint32
    perm: Any  # [K] int32
    gaps: Any  # [K] mu* - mu_{perm[a]} (policy numbering)
    means: Any  # [K] bandit numbering
    mask: Any  # [K] bool, bandit numbering
    budget: Any  # [] int32
    inner: Any  # [] int32 steps between checkpoints


def _policy(spec: Spec, hp):
    return spec.build(hp, spec.execution)


def _draw(spec: Spec, lane: _Lane, state, counts):
    """The reward of the arm ``state`` pulls next (:func:`jbandits._segments.draw`)."""
    a = jnp.maximum(state.arm, 0)
    key_env = jax.random.wrap_key_data(lane.key_env)
    return spec.bandit.sample(lane.params, key_env, take(lane.perm, a), take(counts, a))


def _step(spec: Spec, lane: _Lane, limit, carry):
    """One guarded pull of one lane: a lane past ``limit`` or idle keeps its carry."""
    state, counts, t, total, reward = carry
    policy = _policy(spec, lane.hp)
    ftype = total.dtype
    a = jnp.maximum(state.arm, 0)
    key = jax.random.wrap_key_data(step_key_data(lane.key_steps, t))
    new = policy.step(state, key, reward)
    live = (t < limit) & (state.arm >= 0)
    state = jax.tree_util.tree_map(lambda n, o: jnp.where(live, n, o), new, state)
    hit = lax.broadcasted_iota(jnp.int32, counts.shape, 0) == a
    counts = counts + (hit & live).astype(counts.dtype)
    total = total + jnp.where(live, jnp.asarray(reward).astype(ftype), 0.0)
    reward = jnp.where(live, _draw(spec, lane, state, counts), reward)
    return state, counts, t + live.astype(jnp.int32), total, reward


def _readout(spec: Spec, lane: _Lane, carry):
    """A checkpoint's read-outs of one lane: (metric values, regret, reward)."""
    state, counts, _, total, _ = carry
    policy = _policy(spec, lane.hp)
    values = {}
    if spec.metric is not None:
        out = to_bandit(policy.output(state), lane.perm)
        values = dict(spec.metric(out, lane.means, lane.mask))
    pulled = counts > 0
    regret = jnp.sum(jnp.where(pulled, counts.astype(total.dtype) * lane.gaps, 0.0))
    return values, regret, total


def _live(lane: _Lane, limit, carry):
    state, _, t, _, _ = carry
    return (t < limit) & (state.arm >= 0)


# --------------------------------------------------------------------- the program
def _seg(spec: Spec) -> int:
    """The engine's segment length (the runner's lane-step accounting reads it)."""
    if spec.segment is not None:
        return spec.segment
    if spec.horizon is None:
        return default_segment(None)
    return default_segment(math.ceil(spec.horizon / spec.num_checkpoints))


def _before(spec: Spec, hp, params, kdata, rep, budget, horizon):
    """Per-lane set-up in XLA (see the module docstring): the kernel's lane inputs
    and the initial carry."""
    k = jax.random.wrap_key_data(kdata)
    if spec.fold:
        k = jax.random.fold_in(k, rep)
    key_init, key_steps, key_env, key_perm = split_key(k)
    mask = params.arm_mask
    num_arms = mask.shape[-1]
    perm = _arm_order(key_perm, num_arms, spec.permute)
    means = spec.bandit.means(params)
    gaps = jnp.max(jnp.where(mask, means, -jnp.inf)) - means
    policy = _policy(spec, hp)
    metrics.check_setting(spec.metric, policy)
    state0 = policy.init(key_init, mask[perm])
    ftype = jnp.result_type(float)
    budget = jnp.asarray(budget, jnp.int32)
    c = spec.num_checkpoints
    if spec.horizon is not None:
        inner = jnp.asarray(math.ceil(spec.horizon / c), jnp.int32)
    else:
        inner = (jnp.asarray(horizon, jnp.int32) + c - 1) // c
    lane = _Lane(
        hp,
        None,  # the instance is set after the vmap (shared fields stay shared)
        jax.random.key_data(key_steps),
        jax.random.key_data(key_env),
        perm,
        gaps[perm],
        means,
        mask,
        budget,
        inner,
    )
    counts0 = jnp.zeros((num_arms,), jnp.int32)
    a = jnp.maximum(state0.arm, 0)
    reward0 = spec.bandit.sample(params, key_env, perm[a], counts0[a])
    carry0 = (state0, counts0, jnp.zeros((), jnp.int32), jnp.zeros((), ftype), reward0)
    return lane, carry0, inner


def _kernel_fn(spec: Spec, lane_axes, num_checkpoints: int):
    """The kernel body over arrays of one block (lane axis first)."""
    vmap = functools.partial(jax.vmap, axis_name=LANES_AXIS)

    def step_lane(lane, limit, carry):
        return _safe.kernel_safe(functools.partial(_step, spec))(lane, limit, carry)

    def readout_lane(lane, carry):
        return _safe.kernel_safe(functools.partial(_readout, spec))(lane, carry)

    def output_lane(lane, carry):
        def out(lane, carry):
            return _policy(spec, lane.hp).output(carry[0])

        return _safe.kernel_safe(out)(lane, carry)

    def body(lane, carry0):
        block = carry0[2].shape[0]
        cidx = lax.broadcasted_iota(jnp.int32, (block, num_checkpoints), 1)
        # [block, C] accumulators, written one-hot at checkpoint c
        abstract = jax.eval_shape(
            vmap(readout_lane, in_axes=(lane_axes, 0)), lane, carry0
        )
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
                carry = vmap(step_lane, in_axes=(lane_axes, 0, 0))(lane, limit, carry)
                return carry, n + 1

            carry, n = lax.while_loop(more, advance, (carry, jnp.zeros((), jnp.int32)))
            read = vmap(readout_lane, in_axes=(lane_axes, 0))(lane, carry)
            here = cidx == c
            acc = jax.tree_util.tree_map(
                lambda a, v: jnp.where(here, _to_mem(v)[:, None], a), acc, read
            )
            seg = _seg(spec)
            used = jnp.where(here, (n + seg - 1) // seg, used)
            return carry, acc, used

        carry, acc, used = lax.fori_loop(
            0, num_checkpoints, checkpoint, (carry0, acc0, used0)
        )
        out = vmap(output_lane, in_axes=(lane_axes, 0))(lane, carry)
        return carry, out, acc, used

    return body


def _live_of(limit, carry):
    state, _, t, _, _ = carry
    return (t < limit) & (state.arm >= 0)


def _mem_dtype(dtype):
    return jnp.int32 if dtype == jnp.bool_ else dtype


def program(spec: Spec):
    """The function of a chunk of lanes (unjitted), fused; see the module docstring.

    Raises :class:`jbandits.fused.safe.NotKernelSafe` (at trace time) when the
    policy's step uses an operation the kernel-safe rewrite does not cover.
    """
    num_checkpoints = spec.num_checkpoints

    def lanes(hp, params, kdata, rep, budget, horizon):
        n = budget.shape[0]
        block = spec.block or _lowering.block_for(params.arm_mask.shape[-1])
        block = min(block, 1 << max(n - 1, 0).bit_length())
        params_axes = type(params)(
            *[None if f in spec.shared else 0 for f in params._fields]
        )
        before = jax.vmap(
            functools.partial(_before, spec),
            in_axes=(0, params_axes, 0, 0, 0, 0),
            axis_name=LANES_AXIS,
        )
        lane, carry0, inner = before(hp, params, kdata, rep, budget, horizon)
        lane = lane._replace(params=params)
        padded = -(-n // block) * block
        # lane axes inside the kernel: every lane input has one, except the shared
        # fields of the instance
        lane_axes = _Lane(*[0] * len(_Lane._fields))._replace(params=params_axes)

        def pad(x, per_lane=True):
            if not per_lane or padded == n:
                return x
            return jnp.concatenate([x, jnp.repeat(x[:1], padded - n, axis=0)], axis=0)

        lane_flat, lane_tree = jax.tree_util.tree_flatten(lane)
        per_lane = _per_lane_flags(lane, lane_axes)
        carry_flat, carry_tree = jax.tree_util.tree_flatten(carry0)
        ins = [pad(_to_mem(x), p) for x, p in zip(lane_flat, per_lane, strict=False)]
        ins += [pad(_to_mem(x)) for x in carry_flat]
        body = _kernel_fn(spec, lane_axes, num_checkpoints)

        # abstract outputs of one block, for the out_shape
        def run_block(*arrays):
            lane_b = jax.tree_util.tree_unflatten(
                lane_tree,
                [
                    _from_mem(a, x)
                    for a, x in zip(arrays[: len(lane_flat)], lane_flat, strict=False)
                ],
            )
            carry_b = jax.tree_util.tree_unflatten(
                carry_tree,
                [
                    _from_mem(a, x)
                    for a, x in zip(arrays[len(lane_flat) :], carry_flat, strict=False)
                ],
            )
            carry, out, acc, used = body(lane_b, carry_b)
            state, counts, t, total, _ = carry
            stopped = state.arm < 0
            return (counts, t, stopped, out, acc, used)

        block_args = [
            jax.ShapeDtypeStruct((block, *x.shape[1:]) if p else x.shape, x.dtype)
            for x, p in zip(ins, per_lane + [True] * len(carry_flat), strict=False)
        ]
        out_block = jax.eval_shape(run_block, *block_args)
        out_flat_b, out_tree = jax.tree_util.tree_flatten(out_block)
        out_shapes = [
            jax.ShapeDtypeStruct((padded, *s.shape[1:]), _mem_dtype(s.dtype))
            for s in out_flat_b
        ]

        def kernel(*refs):
            in_refs, out_refs = refs[: len(ins)], refs[len(ins) :]
            arrays = [r[...] for r in in_refs]
            results = jax.tree_util.tree_leaves(run_block(*arrays))
            for r, v in zip(out_refs, results, strict=False):
                r[...] = _to_mem(v)

        in_specs = [
            _block_spec(x, block, p)
            for x, p in zip(ins, per_lane + [True] * len(carry_flat), strict=False)
        ]
        out_specs = [_block_spec(s, block, True) for s in out_shapes]
        call = pl.pallas_call(
            kernel,
            out_shape=out_shapes,
            grid=(padded // block,),
            in_specs=in_specs,
            out_specs=out_specs,
            name="jbandits_fused",
            **spec.lowering.call_kwargs(),
        )
        results = call(*ins)
        results = [
            _from_mem(r[:n], s) for r, s in zip(results, out_flat_b, strict=False)
        ]
        counts, t, stopped, out, acc, used = jax.tree_util.tree_unflatten(
            out_tree, results
        )
        values, regret, total = acc
        times = jnp.minimum(
            jnp.arange(1, num_checkpoints + 1, dtype=jnp.int32)[None, :]
            * inner[:, None],
            budget[:, None],
        )
        to_b = jax.vmap(_to_bandit_numbering)
        return RunResult(
            times=times.astype(jnp.int32),
            metrics=values,
            regret=regret,
            reward=total,
            pulls=to_b(counts, lane.perm),
            num_pulls=jnp.sum(counts, axis=-1),
            stopped=stopped,
            output=to_b(out, lane.perm),
            arms=None,
            state=None,
            perm=None,
            segments=used,
            diagnostics=None,
        )

    lanes.__name__ = "jbandits_fused_lanes"
    return lanes


def _per_lane_flags(lane: _Lane, lane_axes: _Lane) -> list:
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
