"""The engine's loop: one checkpoint of a replication, its pulls and its read-outs.

:func:`checkpoint` is the body of the engine's scan over checkpoints (see
:func:`jbandits.sim.engine.start`): the pulls up to the checkpoint, then its read-outs
(:class:`Readout`: the metric of the policy's output, the regret, the reward, the
diagnostics). :class:`Segments` holds the loop bodies of the pulls: a
``lax.while_loop`` over segments of ``seg`` steps (:meth:`Segments.segment`, an
inner ``lax.scan``), only while the replication still has budget left and its
policy is not idle. A *guarded* step keeps the carry of a lane past its limit or
idle (a select over the whole carry); under a named ``vmap`` axis a segment in
which no lane can run out of budget runs *unguarded* steps and restores the lanes
already finished by one select per segment.

The carry of one replication is the tuple ``(state, counts, t, total, reward,
one)``: the policy state, pull counts (policy numbering), pulls made, realised
reward so far, the reward of the next pull (see :func:`draw`) and the unguarded
step's count increment 1.
"""

from __future__ import annotations

import functools
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp

from jbandits.core.types import Array, Policy, State
from jbandits.sim import replication
from jbandits.sim.replication import Play, draw, step_key

UNROLL = 1  # inner-scan unrolling (measured in benchmarks/throughput.py)


SEGMENT = 32  # steps per inner segment when the horizon is traced


def default_segment(inner: int | None) -> int:
    """Steps per inner-loop segment: for a static checkpoint interval of ``inner``
    steps, at most 32 segments of >= ~32 steps that tile it with little overshoot;
    :data:`SEGMENT` when the horizon is traced (``inner`` None)."""
    if inner is None:
        return SEGMENT
    count = min(32, max(1, -(-inner // 32)))
    return -(-inner // count)


_READS_KEY: dict = {}  # (cache, x64) -> step_reads_key


def step_reads_key(
    policy: Policy, state: State, reward: Any, cache: Any = None
) -> bool:
    """Whether ``policy.step`` reads its key (traced once, dead code removed).

    A step that never reads its key (APT, Sequential Halving, UCB1 with first ties)
    does not need the engine's per-lane step counter inside a segment, only at its
    end: one kernel less per step. Any failure to tell counts as reading it. With a
    hashable ``cache`` (see :func:`jbandits.sim.engine.run`'s ``key_cache``) the answer
    is remembered per ``cache`` and x64 mode.
    """
    if cache is not None:
        cache = (cache, jax.config.x64_enabled)
        if cache in _READS_KEY:
            return _READS_KEY[cache]
    try:
        from jax._src.interpreters import partial_eval as pe

        closed = jax.make_jaxpr(lambda k: policy.step(state, k, reward))(
            jax.random.key(0)
        )
        _, used = pe.dce_jaxpr(closed.jaxpr, [True] * len(closed.jaxpr.outvars))
        reads = bool(used[0])
    except Exception:  # noqa: BLE001 - an internal API: keep the counter
        reads = True
    if cache is not None:
        _READS_KEY[cache] = reads
    return reads


def _first(out: tuple, *_) -> tuple:
    return out


def lanes_all(pred: Array, axis_name: str) -> Array:
    """``pred`` holds on every lane of ``axis_name`` (an unbatched predicate)."""
    missing = jax.lax.psum((~pred).astype(jnp.int32), axis_name)
    return missing == 0


class Segments(NamedTuple):
    """The pulls of one replication up to ``limit`` (one checkpoint's), as loop bodies.

    The engine's checkpoint runs ``jax.lax.while_loop(s.live, s.segment, (carry,
    0))``; with ``record_arms`` a fixed-length scan of :meth:`guarded_step`.
    """

    play: Play
    limit: Array  # the pull count this checkpoint stops at

    def live(self, loop) -> Array:
        """Whether the replication (under ``axis_name``: any lane) is live."""
        (state, _, t, *_), _ = loop
        pred = (t < self.limit) & (state.arm >= 0)
        if self.play.axis_name is None:
            return pred
        return jax.lax.psum(pred.astype(jnp.int32), self.play.axis_name) > 0

    def segment(self, loop) -> tuple:
        """One segment of ``seg`` steps (a while-loop body): guarded, or under
        ``axis_name`` unguarded when no lane can run out of budget inside it; then
        :meth:`settle` restores the lanes already ``done``, and a live lane that met
        an idle state sends the segment to the guarded redo.

        The branches are ``lax.scan`` of a step body (partials, no wrapper), so that
        the step that calls ``policy.step`` is one call below this loop body."""
        play, limit = self.play, self.limit
        carry, n = loop
        scan = functools.partial(jax.lax.scan, xs=None, length=play.seg, unroll=UNROLL)
        guarded = functools.partial(scan, self.guarded_step)
        if play.axis_name is None:
            return guarded(carry)[0], n + 1
        state, t = carry[0], carry[2]
        done = (t >= limit) | (state.arm < 0)
        clean = lanes_all(done | (t + play.seg <= limit), play.axis_name)
        unguarded = functools.partial(scan, self.unguarded_step)
        out = jax.lax.cond(clean, unguarded, guarded, carry)[0]
        out = jax.lax.cond(clean, self.settle, _first, out, carry, done)
        redo = clean & ~lanes_all(done | ~jnp.isnan(out[3]), play.axis_name)
        return jax.lax.cond(redo, guarded, lambda _: (out, None), carry)[0], n + 1

    def settle(self, out: tuple, carry: tuple, done: Array) -> tuple:
        """After ``seg`` unguarded steps: the step counter (if the steps left it
        out), and the lanes already ``done`` before the segment keep their carry."""
        if not self.play.keyed:  # every live lane made ``seg`` steps
            out = (*out[:2], out[2] + self.play.seg, *out[3:])
        return jax.tree_util.tree_map(lambda n, o: jnp.where(done, o, n), out, carry)

    def guarded_step(self, carry: tuple, _) -> tuple:
        """One pull (a scan body; :func:`jbandits.sim.replication.pull`): a lane past
        ``limit`` or idle keeps its carry (a select over the whole carry). Outputs
        the pulled arm if ``record_arms``."""
        play = self.play
        state, counts, t, total, reward, one = carry
        state, counts, t, total, reward, a, live = replication.pull(
            play, self.limit, state, counts, t, total, reward
        )
        ys = None
        if play.record_arms:
            ys = jnp.where(live, play.perm[a], -1).astype(jnp.int32)
        return (state, counts, t, total, reward, one), ys

    def unguarded_step(self, carry: tuple, _) -> tuple:
        """One pull (a scan body) for segments in which every lane is known to stay
        live: the step writes its results directly and marks the reward total NaN
        if it met an idle state after all."""
        play = self.play
        state, counts, t, total, reward, one = carry
        a = jnp.maximum(state.arm, 0)  # counts are kept in policy numbering
        new = play.policy.step(state, step_key(play.key_steps, t), reward)
        gained = jnp.asarray(reward).astype(play.ftype)
        # an idle step (the policy stopped inside the segment) leaves NaN in the
        # reward total, which sends the segment to the guarded redo
        gained = jnp.where(state.arm < 0, jnp.nan, gained)
        counts = counts.at[a].add(one)
        ahead = draw(play, new, counts)
        # a policy that reads its key needs the step counter every step (step keys
        # from the segment's first step plus the scan index let XLA fuse the key's
        # hash into its consumers, which was slower: benchmarks/notes_sim.md); for the others the
        # segment adds its length once (the fast segment)
        t = t + 1 if play.keyed else t
        return (new, counts, t, total + gained, ahead, one), None


class Readout(NamedTuple):
    """What a checkpoint reads besides the carry."""

    metric: Any  # (output, means, arm_mask) -> dict, or None
    means: Array  # [K] arm means (bandit numbering)
    mask: Array  # [K] arm mask (bandit numbering)
    gaps: Array  # [K] mu* - mu_i (bandit numbering)
    diagnostics: bool  # read policy.diagnostics


def check_diagnostics(policy: Policy) -> None:
    """Refuse ``diagnostics=True`` for a policy without a diagnostics channel."""
    if policy.diagnostics is None:
        raise ValueError(
            "diagnostics=True but this policy has no diagnostics channel "
            "(Policy.diagnostics is None)"
        )


def _read_diagnostics(policy: Policy, state: Any, perm: Array) -> dict:
    """``policy.diagnostics(state)`` with per-arm (last-axis) values in bandit order."""
    check_diagnostics(policy)
    out = {}
    for name, value in dict(policy.diagnostics(state)).items():
        value = jnp.asarray(value)
        if value.ndim == 0:
            out[name] = value
        elif value.shape[-1] == perm.shape[0]:
            out[name] = jnp.zeros_like(value).at[..., perm].set(value)
        else:
            raise ValueError(
                f"diagnostic {name!r} has shape {value.shape}: it must be a scalar "
                f"or have the {perm.shape[0]} arms on its last axis"
            )
    return out


def checkpoint(play: Play, readout: Readout, budget, inner, carry, c):
    """Checkpoint ``c`` (a scan body): the pulls up to it, then its read-outs
    ``(metrics, regret, reward, arms, segments, diagnostics, outside)`` (``outside``:
    1 if the policy's output is out of its setting's range,
    :func:`jbandits.sim.replication.output_outside`)."""
    limit = jnp.minimum(budget, (c + 1) * inner)
    segments = Segments(play, limit)
    if play.record_arms:  # a fixed-length scan, so that every step has an output
        carry, arms = jax.lax.scan(segments.guarded_step, carry, None, length=inner)
        used = jnp.asarray(-(-inner // play.seg), jnp.int32)  # informational
    else:  # segments while the replication (under axis_name: any lane) is live
        arms = None
        carry, used = jax.lax.while_loop(
            segments.live, segments.segment, (carry, jnp.zeros((), jnp.int32))
        )
    policy, perm = play.policy, play.perm
    values, outside = replication.read(
        play, readout.metric, readout.means, readout.mask, carry[0]
    )
    diag = _read_diagnostics(policy, carry[0], perm) if readout.diagnostics else None
    regret = replication.regret(play.ftype, readout.gaps[perm], carry[1])
    return carry, (values, regret, carry[3], arms, used, diag, outside)
