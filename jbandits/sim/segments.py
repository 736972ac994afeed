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

from jbandits.core import prng as _prng
from jbandits.core.types import Array, Bandit, Key, Policy, State

UNROLL = 1  # inner-scan unrolling (measured in benchmarks/throughput.py)


class Play(NamedTuple):
    """What every step of one replication reads; the same for the whole run."""

    policy: Policy
    bandit: Bandit
    params: Any  # the instance
    key_steps: Key  # step keys: fold_in(key_steps, t)
    key_env: Key  # the reward stacks
    perm: Array  # [K] policy arm a is bandit arm perm[a]
    ftype: Any  # float dtype of the reward total
    seg: int  # static steps per segment
    record_arms: bool  # guarded steps output the pulled arm (bandit numbering)
    axis_name: str | None  # the named vmap axis over replications, if any
    keyed: bool = True  # an unguarded step advances the step counter itself


def step_key(steps_key: Key, t: Any) -> Key:
    """Key passed to ``policy.step`` after pull ``t`` (0-based)."""
    return _prng.fold_in(steps_key, t)


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


def draw(play: Play, state: State, counts: Array) -> Array:
    """The reward of the arm ``state`` pulls next: the ``counts[a]``-th of the
    reward stack of bandit arm ``perm[a]``, for policy arm ``a``. Drawn at the end
    of the step that chose the arm and carried into the next one, so that it is
    computed once, in a kernel of its own, and read from the carry by every
    statistic it updates (computed inside the step, XLA fused the hash into each
    consumer and repeated it there)."""
    a = jnp.maximum(state.arm, 0)
    return play.bandit.sample(play.params, play.key_env, play.perm[a], counts[a])


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
        """One pull (a scan body): a lane past ``limit`` or idle keeps its carry (a
        select over the whole carry). Outputs the pulled arm if ``record_arms``."""
        play = self.play
        state, counts, t, total, reward, one = carry
        a = jnp.maximum(state.arm, 0)  # counts are kept in policy numbering
        new = play.policy.step(state, step_key(play.key_steps, t), reward)
        gained = jnp.asarray(reward).astype(play.ftype)
        live = (t < self.limit) & (state.arm >= 0)
        state = jax.tree_util.tree_map(lambda n, o: jnp.where(live, n, o), new, state)
        counts = counts.at[a].add(live.astype(jnp.int32))
        total = total + jnp.where(live, gained, 0.0)
        reward = jnp.where(live, draw(play, state, counts), reward)
        ys = None
        if play.record_arms:
            ys = jnp.where(live, play.perm[a], -1).astype(jnp.int32)
        return (state, counts, t + live.astype(jnp.int32), total, reward, one), ys

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
        # hash into its consumers: UCB1 ran 15 % slower); for the others the
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


def _to_bandit_numbering(out: Array, perm: Array) -> Array:
    if out.ndim == 0:
        return jnp.where(out >= 0, perm[jnp.maximum(out, 0)], out).astype(out.dtype)
    return jnp.zeros_like(out).at[perm].set(out)


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


def _regret(play: Play, gaps: Array, counts: Array) -> Array:
    """Pseudo-regret ``sum_i n_i (mu* - mu_i)`` of the pull counts (policy
    numbering): the per-step sum ``sum_t (mu* - mu_{A_t})`` regrouped by arm, read
    at checkpoints instead of gathered every step."""
    pulled = counts > 0
    return jnp.sum(jnp.where(pulled, counts.astype(play.ftype) * gaps[play.perm], 0.0))


def checkpoint(play: Play, readout: Readout, budget, inner, carry, c):
    """Checkpoint ``c`` (a scan body): the pulls up to it, then its read-outs
    ``(metrics, regret, reward, arms, segments, diagnostics)``."""
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
    out = _to_bandit_numbering(policy.output(carry[0]), perm)
    values = {}
    if readout.metric is not None:
        values = readout.metric(out, readout.means, readout.mask)
    diag = _read_diagnostics(policy, carry[0], perm) if readout.diagnostics else None
    regret = _regret(play, readout.gaps, carry[1])
    return carry, (values, regret, carry[3], arms, used, diag)
