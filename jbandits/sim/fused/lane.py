"""One lane of the fused program: its static description (:class:`Spec`), its
per-lane set-up in XLA before the kernel (:func:`before`), and its guarded step and
checkpoint read-outs inside the kernel (run per lane under ``vmap`` after the
kernel-safe rewrite); see :mod:`jbandits.sim.fused.driver`."""

from __future__ import annotations

from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
from jax import lax

from jbandits.analysis import metrics
from jbandits.core import prng as _prng
from jbandits.core.types import Bandit
from jbandits.sim import replication
from jbandits.sim.fused import lowering as _lowering
from jbandits.sim.segments import segment_of, spacing

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
    """:func:`jbandits.sim.replication.to_bandit_numbering` without gather or scatter: a
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
    """Key data of ``fold_in(key_steps, t)`` (:func:`jbandits.sim.segments.step_key`)
    from the key data ``key_steps`` [2] uint32: one threefry2x32 hash."""
    o1, o2 = _prng.threefry2x32(
        take(key_steps, 0),
        take(key_steps, 1),
        jnp.zeros((), jnp.uint32),
        t.astype(jnp.uint32),
    )
    first = lax.broadcasted_iota(jnp.int32, (2,), 0) == 0
    return jnp.where(first, o1, o2)


def add_at(x, i, v):
    """``x.at[i].add(v)`` for a scalar ``i`` as a one-hot sum (no scatter)."""
    hit = lax.broadcasted_iota(jnp.int32, x.shape, x.ndim - 1) == i
    return x + jnp.where(hit, v, jnp.zeros((), x.dtype)).astype(x.dtype)


def _step_key(key_steps, t):
    return jax.random.wrap_key_data(step_key_data(key_steps, t))


KERNEL = replication.Ops(take, add_at, to_bandit, _step_key, jax.random.wrap_key_data)
"""The kernel-safe primitives of :class:`jbandits.sim.replication.Ops`: no gather,
scatter or typed key inside the kernel."""


# ---------------------------------------------------------------------- one lane
class Lane(NamedTuple):
    """What every step of one lane reads (per-lane values inside the kernel)."""

    hp: Any
    params: Any
    key_steps: Any  # [2] uint32
    key_env: Any  # [2] uint32
    perm: Any  # [K] int32
    gaps: Any  # [K] mu* - mu_{perm[a]} (policy numbering)
    means: Any  # [K] in the read-outs' numbering (:func:`read_in_policy_numbering`)
    mask: Any  # [K] bool, in the read-outs' numbering
    budget: Any  # [] int32
    inner: Any  # [] int32 steps between checkpoints


#: metrics whose values do not change when the output, the means and the arm mask
#: are renumbered by one permutation (sums and any of 0/1 values, max, min, sort and
#: one arm's value, all exact): read in policy numbering, they need no [K, K]
#: renumbering of a per-arm output inside the kernel
RENUMBERABLE = (metrics.Thresholding, metrics.Identification, metrics.TopM)


def read_in_policy_numbering(spec: Spec) -> bool:
    """Whether the checkpoint read-outs run in policy numbering (the metric's means
    and mask permuted once before the kernel, the output as the policy gives it)
    rather than renumbering the output at every checkpoint (a [K, K] one-hot sum for
    a per-arm output: the largest live values of the kernel at K = 128). The same
    values: the metrics of :data:`RENUMBERABLE` and the range check
    (:func:`jbandits.sim.replication.output_outside`) read one arm's mask entry or
    reduce over the arms with exact, order-free reductions."""
    return spec.metric is None or type(spec.metric) in RENUMBERABLE


def _as_is(out, perm):
    del perm
    return out


def policy_of(spec: Spec, hp):
    return spec.build(hp, spec.execution)


def play_of(spec: Spec, lane: Lane) -> replication.Play:
    """The lane as the shared replication reads it (key data, kernel-safe ops)."""
    policy = policy_of(spec, lane.hp)
    ftype = jnp.result_type(float)
    return replication.Play(
        policy, spec.bandit, lane.params, lane.key_steps, lane.key_env, lane.perm,
        ftype, KERNEL,
    )  # fmt: skip


def step(spec: Spec, lane: Lane, limit, carry):
    """One guarded pull of one lane (:func:`jbandits.sim.replication.pull`)."""
    return replication.pull(play_of(spec, lane), limit, carry)[0]


def readout(spec: Spec, lane: Lane, carry):
    """A checkpoint's read-outs of one lane: (metric values, regret, reward, output
    out of range)."""
    state, counts, _, total, _ = carry
    play = play_of(spec, lane)
    if read_in_policy_numbering(spec):
        play = play._replace(ops=KERNEL._replace(to_bandit=_as_is))
    values, bad = replication.read(play, spec.metric, lane.means, lane.mask, state)
    return values, replication.regret(total.dtype, lane.gaps, counts), total, bad


def segment_length(spec: Spec) -> int:
    """The engine's segment length (the runner's lane-step accounting reads it)."""
    return segment_of(spec.horizon, spec.num_checkpoints, spec.segment)


def before(spec: Spec, hp, params, kdata, rep, budget, horizon):
    """Per-lane set-up in XLA (see the module docstring): the kernel's lane inputs
    and the initial carry."""
    k = jax.random.wrap_key_data(kdata)
    if spec.fold:
        k = jax.random.fold_in(k, rep)
    policy = policy_of(spec, hp)
    metrics.check_setting(spec.metric, policy)
    keys = replication.split_key(k)
    lane0 = replication.begin(policy, spec.bandit, params, keys, spec.permute)
    perm, means, state0 = lane0.perm, lane0.means, lane0.state
    mask = params.arm_mask
    read_means, read_mask = means, mask
    if read_in_policy_numbering(spec):
        read_means, read_mask = means[perm], mask[perm]
    num_arms = mask.shape[-1]
    ftype = jnp.result_type(float)
    budget = jnp.asarray(budget, jnp.int32)
    static = spec.horizon is not None
    given = spec.horizon if static else horizon
    inner = jnp.asarray(
        spacing(given, spec.num_checkpoints, spec.segment, static)[1], jnp.int32
    )
    lane = Lane(
        hp,
        None,  # the instance is set after the vmap (shared fields stay shared)
        jax.random.key_data(lane0.key_steps),
        jax.random.key_data(lane0.key_env),
        perm,
        lane0.gaps[perm],
        read_means,
        read_mask,
        budget,
        inner,
    )
    counts0 = jnp.zeros((num_arms,), jnp.int32)
    first = replication.Play(
        policy, spec.bandit, params, lane0.key_steps, lane0.key_env, perm, ftype
    )
    reward0 = replication.draw(first, state0, counts0)
    carry0 = (state0, counts0, jnp.zeros((), jnp.int32), jnp.zeros((), ftype), reward0)
    return lane, carry0, inner
