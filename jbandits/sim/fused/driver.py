"""The fused kernel: a block of lanes plays its whole budget in one Pallas program.

:func:`program` returns the function of a chunk of lanes that the batched runner
calls, ``lanes(hp, params, kdata, rep, budget, horizon) -> RunResult`` (the same
signature and the same results as the XLA program of
:func:`jbandits.sim.runner.programs._compile`), computed in three parts
(:mod:`jbandits.sim.fused.lane` holds one lane's set-up, step and read-outs;
:mod:`jbandits.sim.fused.kernel` the kernel body and the ``pallas_call`` plumbing):

1. *before* (XLA, once per lane): the lane's key (folded with its replication),
   split as :func:`jbandits.sim.replication.split_key` splits it; the arm permutation (a sort:
   not in the kernel); the true means and gaps; ``policy.init``; the first reward.
   Everything here runs once per lane, so it stays out of the kernel;
2. *the kernel* (:func:`pl.pallas_call`, a grid over blocks of
   ``block`` lanes): the policy state, pull counts and reward totals of a block are
   loop carries; for each of the ``C`` checkpoints a ``lax.while_loop`` runs guarded
   steps (the engine's :func:`jbandits.sim.segments.guarded_step`, written with one-hot
   updates) while some lane of the block has budget left and is not idle, then reads
   the checkpoint (``policy.output``, the metric, the regret) into one-hot written
   ``[block, C]`` accumulators. ``policy.step`` and ``bandit.sample`` are the
   policy's and the family's own functions, run per lane under ``vmap`` after the
   kernel-safe rewrite of :mod:`jbandits.sim.fused.safe`;
3. *after* (XLA): outputs and pull counts back to bandit numbering, checkpoint
   times.

The reward stack, the step keys and the permutation are those of
:func:`jbandits.sim.engine.run`, so both backends play the same arms and return the same
numbers (``tests/test_fused.py`` checks every fused policy in interpret mode).
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp

from jbandits.sim.engine import RunResult, assemble
from jbandits.sim.fused import lowering as _lowering
from jbandits.sim.fused.kernel import (
    _from_mem,
    _per_lane_flags,
    _to_mem,
    block_fn,
    block_shapes,
    call,
    lane_words,
    lean_block,
    pad_lanes,
)
from jbandits.sim.fused.lane import (
    LANES_AXIS,
    Lane,
    Spec,
    before,
    step_key_data,
    take,
    to_bandit,
)

__all__ = ["LANES_AXIS", "Spec", "program", "step_key_data", "take", "to_bandit"]


def program(spec: Spec):
    """The function of a chunk of lanes (unjitted), fused; see the module docstring.

    Raises :class:`jbandits.sim.fused.safe.NotKernelSafe` (at trace time) when the
    policy's step uses an operation the kernel-safe rewrite does not cover.
    """
    num_checkpoints = spec.num_checkpoints

    def lanes(hp, params, kdata, rep, budget, horizon):
        n = budget.shape[0]
        params_axes = type(params)(
            *[None if f in spec.shared else 0 for f in params._fields]
        )
        lane, carry0, inner = _set_up(
            spec, params_axes, hp, params, kdata, rep, budget, horizon
        )
        # lane axes inside the kernel: every lane input has one, except the shared
        # fields of the instance
        lane_axes = Lane(*[0] * len(Lane._fields))._replace(params=params_axes)
        lane_flat, lane_tree = jax.tree_util.tree_flatten(lane)
        carry_flat, carry_tree = jax.tree_util.tree_flatten(carry0)
        per_lane = _per_lane_flags(lane, lane_axes) + [True] * len(carry_flat)
        block = spec.block
        if not block:  # as many lanes as the registers hold (kernel.lean_block)
            words = lane_words(lane_flat + carry_flat, per_lane)
            block = _lowering.block_for(params.arm_mask.shape[-1])
            block = lean_block(block, words, spec.lowering.num_warps)
        block = min(block, 1 << max(n - 1, 0).bit_length())
        padded = -(-n // block) * block
        ins = [
            pad_lanes(_to_mem(x), padded, p)
            for x, p in zip(lane_flat + carry_flat, per_lane, strict=False)
        ]
        # traced here, not in kernel.call: a frame less above the policy's step
        run_block = block_fn(
            spec, lane_axes, lane_flat, lane_tree, carry_flat, carry_tree
        )
        closed, out_block = jax.make_jaxpr(run_block, return_shape=True)(
            *block_shapes(ins, per_lane, block)
        )
        results, out_flat_b, out_tree = call(
            spec, closed, out_block, ins, per_lane, block, padded
        )
        results = [
            _from_mem(r[:n], s) for r, s in zip(results, out_flat_b, strict=False)
        ]
        return _result(
            num_checkpoints,
            inner,
            budget,
            lane,
            jax.tree_util.tree_unflatten(out_tree, results),
        )

    lanes.__name__ = "jbandits_fused_lanes"
    return lanes


def _set_up(spec: Spec, params_axes, hp, params, kdata, rep, budget, horizon):
    """Every lane's :func:`jbandits.sim.fused.lane.before` (one vmap in XLA): the lane
    inputs (with the instance as given: shared fields stay shared), the initial
    carry and the steps between checkpoints."""
    set_up = jax.vmap(
        functools.partial(before, spec),
        in_axes=(0, params_axes, 0, 0, 0, 0),
        axis_name=LANES_AXIS,
    )
    lane, carry0, inner = set_up(hp, params, kdata, rep, budget, horizon)
    return lane._replace(params=params), carry0, inner


def _result(num_checkpoints: int, inner, budget, lane, results) -> RunResult:
    """The kernel's per-lane results in the engine's :class:`RunResult`: the
    engine's own per-lane assembly (:func:`jbandits.sim.engine.assemble`) over the
    lanes."""
    del num_checkpoints  # the read-outs' own axis
    counts, t, stopped, below, out, acc, used = results
    values, regret, total, outside = acc
    # only the final arm's sign and "below -1" are read
    arm = jnp.where(below, -2, jnp.where(stopped, -1, 0))
    mask = jnp.broadcast_to(lane.params.arm_mask, counts.shape)  # bandit numbering

    def one(inner, budget, perm, mask, arm, counts, t, out, reads, used):
        return assemble(
            inner, budget, perm, mask, arm, counts, t, lambda: out, reads, used
        )

    return jax.vmap(one)(
        inner, budget, lane.perm, mask, arm, counts, t, out,
        (values, regret, total, outside), used,
    )  # fmt: skip
