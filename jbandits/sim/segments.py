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
import math
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp

from jbandits.core import validate as _validate
from jbandits.core.types import Array, Policy, State
from jbandits.sim import replication
from jbandits.sim.replication import Play

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


def segment_of(horizon: int | None, num_checkpoints: int, segment: int | None) -> int:
    """The static steps per segment of a program whose horizon is ``horizon`` (an
    int) or traced (None): ``segment`` if given, else :func:`default_segment` of the
    checkpoint interval."""
    if segment is not None:
        return segment
    return default_segment(
        None if horizon is None else math.ceil(horizon / num_checkpoints)
    )


def spacing(horizon, num_checkpoints: int, segment: int | None, static: bool):
    """``(horizon, inner, seg)``, the one checkpoint spacing of every backend (the
    caller checks a static horizon against ``num_checkpoints``): the
    horizon (a static int where it is concrete, or where ``static``: arms recorded,
    a program's static horizon), the steps between checkpoints, ``ceil(horizon /
    num_checkpoints)`` (traced with a traced horizon), and the static steps per
    segment (:func:`default_segment` unless ``segment`` is given)."""
    if static or _validate.is_concrete(horizon):
        horizon = _validate.static_int(
            "horizon", horizon, minimum=1, maximum=_validate.INT32_MAX
        )
        inner = math.ceil(horizon / num_checkpoints)
        seg = segment_of(horizon, num_checkpoints, segment)
    else:  # traced horizon: checkpoint spacing computed in the program
        h = jnp.asarray(horizon, jnp.int32)
        inner = (h + num_checkpoints - 1) // num_checkpoints
        seg = segment_of(None, num_checkpoints, segment)
    return horizon, inner, _validate.static_int("segment", seg, minimum=1)


class Plan(NamedTuple):
    """How the XLA engine loops over one replication's pulls (static)."""

    seg: int  # steps per segment
    record_arms: bool  # guarded steps output the pulled arm (bandit numbering)
    axis_name: str | None  # the named vmap axis over replications, if any
    keyed: bool = True  # an unguarded step advances the step counter itself
    kept: tuple = ()  # per policy-state leaf: the step returns it as it is


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
    # the step itself is traced (no wrapper frame): its own errors surface here, as
    # they would in the loop's trace; the key is the input after the state's leaves
    closed = jax.make_jaxpr(policy.step)(state, jax.random.key(0), reward)
    key_input = len(jax.tree_util.tree_leaves(state))
    try:
        from jax._src.interpreters import partial_eval as pe

        _, used = pe.dce_jaxpr(closed.jaxpr, [True] * len(closed.jaxpr.outvars))
        reads = bool(used[key_input])
    except (ImportError, AttributeError, TypeError):  # the internal API moved
        reads = True
    if cache is not None:
        _READS_KEY[cache] = reads
    return reads


_KEPT: dict = {}  # (cache, x64) -> kept_leaves


def kept_leaves(policy: Policy, state: State, reward: Any, cache: Any = None) -> tuple:
    """Per leaf of ``state``: whether ``policy.step`` returns it as it is (its
    output is the input variable itself, traced once), e.g. a schedule the state
    carries. Such a leaf keeps its value through every step, guarded or not, so a
    segment's loop need not restore it on the lanes already done (a select over
    it, on a GPU a kernel per segment). ``()`` if the step's output does not have
    the state's structure; ``cache`` as in :func:`step_reads_key`."""
    if cache is not None:
        cache = (cache, jax.config.x64_enabled)
        if cache in _KEPT:
            return _KEPT[cache]
    closed = jax.make_jaxpr(policy.step, return_shape=True)
    closed, shape = closed(state, jax.random.key(0), reward)
    inputs = jax.tree_util.tree_leaves(state)
    same = jax.tree_util.tree_structure(shape) == jax.tree_util.tree_structure(state)
    kept = ()
    if same:
        outs, ins = closed.jaxpr.outvars, closed.jaxpr.invars[: len(inputs)]
        kept = tuple(o is i for o, i in zip(outs, ins, strict=True))
    if cache is not None:
        _KEPT[cache] = kept
    return kept


def _first(out: tuple, *_) -> tuple:
    return out


def lanes_all(pred: Array, axis_name: str) -> Array:
    """``pred`` holds on every lane of ``axis_name`` (an unbatched predicate)."""
    missing = jax.lax.psum((~pred).astype(jnp.int32), axis_name)
    return missing == 0


class Segments(NamedTuple):
    """The pulls of one replication up to ``limit`` (one checkpoint's), as loop bodies.

    The engine's checkpoint runs ``jax.lax.while_loop(s.live, s.segment, (carry,
    0))``; with ``record_arms`` a fixed-length scan of guarded pulls.
    """

    play: Play
    plan: Plan
    limit: Array  # the pull count this checkpoint stops at

    def live(self, loop) -> Array:
        """Whether the replication (under ``axis_name``: any lane) is live; a
        :meth:`flags` loop reads it from its carry."""
        if len(loop) == 4:  # (carry, n, go, risky): from the last segment
            return loop[2]
        (state, _, t, *_), _ = loop
        pred = (t < self.limit) & (state.arm >= 0)
        if self.plan.axis_name is None:
            return pred
        return jax.lax.psum(pred.astype(jnp.int32), self.plan.axis_name) > 0

    def flags(self, carry: tuple, n=None, risky: Array | None = None) -> tuple:
        """``(go, risky)`` of the next segment from ``carry`` under ``axis_name``:
        some lane is live, and some live lane can run out of budget inside
        ``seg`` steps (the segment is then guarded); with the per-lane segment
        counts ``n`` and this segment's ``risky``, also ``(n + 1, redo)``:
        ``redo``, that this segment ran unguarded and a lane's reward total is
        NaN (a step met an idle state). Each is a max over the lanes of a
        per-lane predicate: XLA computes them in one kernel, with ``n + 1``, and
        the loop's condition and branches read them from the carry (no
        further kernel)."""
        axis, limit = self.plan.axis_name, self.limit
        state, t = carry[0], carry[2]
        live = (t < limit) & (state.arm >= 0)
        go = jax.lax.pmax(live, axis)
        risky_next = jax.lax.pmax(live & (t + self.plan.seg > limit), axis)
        if n is None:
            return go, risky_next
        # t >= 0 always holds: the three predicates and the count read t, so that
        # XLA computes them in one kernel (it joins reductions of one operand)
        # and keeps the count per lane (a count equal on every lane it would
        # make a scalar, a kernel of its own)
        seen = t >= 0
        nan = ~risky & jnp.isnan(carry[3]) & seen
        return go, risky_next, n + seen.astype(n.dtype), jax.lax.pmax(nan, axis)

    def segment(self, loop) -> tuple:
        """One segment of ``seg`` steps (a while-loop body): guarded, or under
        ``axis_name`` unguarded when no lane can run out of budget inside it; then
        :meth:`settle` restores the lanes already ``done``, and a live lane that met
        an idle state sends the segment to the guarded redo.

        The branches are ``lax.scan`` of :func:`jbandits.sim.replication.pull`
        (partials, no wrapper), so that the function that calls ``policy.step`` is
        one call below this loop body."""
        play, plan, limit = self.play, self.plan, self.limit
        if len(loop) == 4:
            return self.flagged(loop)
        carry, n = loop
        scan = functools.partial(jax.lax.scan, xs=None, length=plan.seg, unroll=UNROLL)
        guarded = functools.partial(
            scan, functools.partial(replication.pull, play, limit)
        )
        if plan.axis_name is None:
            return guarded(carry)[0], n + 1
        state, t = carry[0], carry[2]
        done = (t >= limit) | (state.arm < 0)
        clean = lanes_all(done | (t + plan.seg <= limit), plan.axis_name)
        fast = functools.partial(replication.pull, play, None, keyed=plan.keyed)
        unguarded = functools.partial(scan, fast)
        out = jax.lax.cond(clean, unguarded, guarded, carry)[0]
        out = jax.lax.cond(clean, self.settle, _first, out, carry, done)
        redo = clean & ~lanes_all(done | ~jnp.isnan(out[3]), plan.axis_name)
        return jax.lax.cond(redo, guarded, lambda _: (out, None), carry)[0], n + 1

    def flagged(self, loop) -> tuple:
        """:meth:`segment` of a ``(carry, n, go, risky)`` loop (:meth:`flags`): the
        same steps, settle and redo, with ``risky`` read from the carry, the
        settle after the branches (after guarded steps it changes nothing: done
        lanes kept their carry, and a reward total that starts at +0.0 never
        becomes -0.0, so adding 0.0 to it is exact), leaves that no step changes
        (:func:`kept_leaves`) taken from the carry, and the redo test and the
        next segment's flags in one pass over the lanes.

        The redo test reads every lane's reward total, not only the lanes live
        before the segment (as :meth:`segment` does): a lane already done keeps
        its total, which is NaN only if its rewards were, and a redo then gives
        the same carry (guarded steps leave done lanes as they are)."""
        play, plan, limit = self.play, self.plan, self.limit
        carry, n, _, risky = loop
        scan = functools.partial(jax.lax.scan, xs=None, length=plan.seg, unroll=UNROLL)
        guarded = functools.partial(
            scan, functools.partial(replication.pull, play, limit)
        )
        fast = functools.partial(replication.pull, play, None, keyed=plan.keyed)

        out = jax.lax.cond(risky, guarded, functools.partial(scan, fast), carry)[0]
        # outside the branches, so that XLA joins the per-lane parts to the
        # kernel of the flags: the step counter of unguarded steps that left it
        # out (every live lane made ``seg`` steps), and the lanes done before the
        # segment keep their carry (after guarded steps an identity: they kept it)
        if not plan.keyed:
            out = (*out[:2], out[2] + jnp.where(risky, 0, plan.seg), *out[3:])
        if any(plan.kept):  # leaves no step changes: the carry's, not restored
            new, tree = jax.tree_util.tree_flatten(out[0])
            old = jax.tree_util.tree_leaves(carry[0])
            new = [o if k else x for x, o, k in zip(new, old, plan.kept, strict=True)]
            out = (jax.tree_util.tree_unflatten(tree, new), *out[1:])
        state, t = carry[0], carry[2]
        out = self.restore(out, carry, (t >= limit) | (state.arm < 0))
        go, risky_next, n, redo = self.flags(out, n, risky)

        def again(_):
            new = guarded(carry)[0]
            return (new, *self.flags(new))

        out, go, risky_next = jax.lax.cond(
            redo, again, lambda _: (out, go, risky_next), None
        )
        return out, n, go, risky_next

    def settle(self, out: tuple, carry: tuple, done: Array) -> tuple:
        """After ``seg`` unguarded steps: the step counter (if the steps left it
        out), and the lanes already ``done`` before the segment keep their carry."""
        if not self.plan.keyed:  # every live lane made ``seg`` steps
            out = (*out[:2], out[2] + self.plan.seg, *out[3:])
        return self.restore(out, carry, done)

    @staticmethod
    def restore(out: tuple, carry: tuple, done: Array) -> tuple:
        """``out`` with the lanes ``done`` given their ``carry``."""
        return jax.tree_util.tree_map(lambda n, o: jnp.where(done, o, n), out, carry)


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


def checkpoint(play: Play, plan: Plan, readout: Readout, budget, inner, carry, c):
    """Checkpoint ``c`` (a scan body): the pulls up to it, then its read-outs
    ``(metrics, regret, reward, arms, segments, diagnostics, outside)`` (``outside``:
    1 if the policy's output is out of its setting's range,
    :func:`jbandits.sim.replication.output_outside`)."""
    limit = jnp.minimum(budget, (c + 1) * inner)
    segments = Segments(play, plan, limit)
    if plan.record_arms:  # a fixed-length scan, so that every step has an output
        pull = functools.partial(replication.pull, play, limit, record=True)
        carry, arms = jax.lax.scan(pull, carry, None, length=inner)
        used = jnp.asarray(-(-inner // plan.seg), jnp.int32)  # informational
    else:  # segments while the replication (under axis_name: any lane) is live
        arms = None
        loop = (carry, jnp.zeros((), jnp.int32))
        if plan.axis_name is not None:  # go and risky carried (Segments.flags)
            # the segment count per lane, so that its increment joins a kernel
            loop = (carry, jnp.zeros_like(carry[2]), *segments.flags(carry))
            body = segments.flagged  # its own body: no frame between loop and steps
        else:
            body = segments.segment
        carry, used, *_ = jax.lax.while_loop(segments.live, body, loop)
    policy, perm = play.policy, play.perm
    values, outside = replication.read(
        play, readout.metric, readout.means, readout.mask, carry[0]
    )
    diag = _read_diagnostics(policy, carry[0], perm) if readout.diagnostics else None
    regret = replication.regret(play.ftype, readout.gaps[perm], carry[1])
    return carry, (values, regret, carry[3], arms, used, diag, outside)
