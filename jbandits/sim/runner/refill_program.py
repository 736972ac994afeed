"""The compiled program of lanes that refill (:mod:`jbandits.sim.runner.refill`).

A *refill program* runs a fixed number of lanes (its width) that each hold a lane
carry of the engine (:func:`jbandits.sim.engine.start`: ``(state, counts, t, total,
reward, one)``), passed in and returned, so that the host can hand a lane whose
replication is done a new one, and move the lanes still running into a narrower
program. One call:

1. every lane marked ``fresh`` starts its replication (the engine's ``start``: its
   key, arm order, ``policy.init``); the others keep their carry;
2. segments of the engine's loop (:meth:`jbandits.sim.segments.Segments.segment`,
   the guarded and fast steps of every batched run) run while more than ``floor``
   lanes are live and fewer than ``finish`` of the lanes live at the call's start
   have finished, counted over every lane of every device (one all-reduce per
   segment keeps the devices in step), at most ``most`` segments; a device none of
   whose lanes is live skips the segment;
3. every lane's read-outs (:class:`~jbandits.sim.engine.RunResult`, as the plain
   program reads them at its one checkpoint) and whether it is still live.

A lane's pulls depend on its key, its budget and its step count only (the steps of a
lane past its limit or idle keep its carry), so a replication's result is the same
whichever lanes it shared a call with, and however its steps were cut into calls:
exactly the plain program's (``tests/test_refill.py``). Only runs with one checkpoint
and no recorded arms come here.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from jbandits.core.types import Bandit
from jbandits.sim import replication
from jbandits.sim.engine import compiler_options
from jbandits.sim.runner.devices import DEVICE_AXIS, _mesh
from jbandits.sim.runner.programs import (
    _CACHE,
    CACHE_SIZE,
    LANES_AXIS,
    Options,
    Source,
    _axes,
    execution_of,
    lane_loop,
)
from jbandits.sim.segments import Segments, _read_diagnostics


def program(
    source: Source,
    bandit: Bandit,
    opts: Options,
    shared: tuple,
    fold: bool,
    devices: int,
    params_type: type,
):
    """The jitted refill program (cached beside the runner's programs, in
    :data:`jbandits.sim.runner.programs._CACHE`; one compilation per width)::

        carry, result, live = fn(carry, fresh, hp, params, kdata, rep, budget,
                                 horizon, control)

    ``carry``: the lanes' carries ``[W, ...]`` (:func:`empty_carry` before the first
    call); ``fresh`` ``[W]`` bool: lanes that start their replication; the next six
    are the runner's lane arguments (:meth:`jbandits.sim.runner.work.Work.gather`;
    a lane with budget 0 holds no replication); ``control`` ``[3]`` int32: ``(finish,
    floor, most)``. ``result.segments`` ``[W, 1]``: the segments each lane's device ran.
    """
    execution = execution_of(source, opts)
    key = ("refill", execution, source.ident, getattr(source, "code", None),
           source.static, bandit, opts, shared,
           fold, devices, params_type, jax.config.x64_enabled)  # fmt: skip
    fn = _CACHE.get(key)
    if fn is not None:
        _CACHE.move_to_end(key)
        return fn
    fn = _compile(source, bandit, opts, shared, fold, devices, execution, params_type)
    _CACHE[key] = fn
    while len(_CACHE) > CACHE_SIZE:
        _CACHE.popitem(last=False)
    return fn


def _compile(source, bandit, opts, shared, fold, devices, execution, params_type):
    axes = LANES_AXIS if devices == 1 else (LANES_AXIS, DEVICE_AXIS)

    setup = lane_loop(source, bandit, opts, fold, execution)

    def lane(carry, fresh, hp, params, kdata, rep, budget, horizon, control):
        loop = setup(hp, params, kdata, rep, budget, horizon)
        carry = jax.tree_util.tree_map(
            lambda new, old: jnp.where(fresh, new, old), loop.carry, carry
        )
        play, plan, readout, budget, inner = loop.checkpoint.args  # checkpoint c = 0
        segments = Segments(play, plan, jnp.minimum(budget, inner))
        live0 = _live(segments, carry)
        finish, floor, most = control[0], control[1], control[2]

        def more(s):
            live = _live(segments, s[0])
            count = jax.lax.psum(live.astype(jnp.int32), axes)
            ended = jax.lax.psum((live0 & ~live).astype(jnp.int32), axes)
            return (count > floor) & (ended < finish) & (s[2] < most)

        def segment(s):
            c, used, n = s
            mine = jax.lax.psum(_live(segments, c).astype(jnp.int32), LANES_AXIS) > 0
            c = jax.lax.cond(
                mine, lambda c: segments.segment((c, 0))[0], lambda c: c, c
            )
            return c, used + mine.astype(jnp.int32), n + 1

        zero = jnp.zeros((), jnp.int32)
        carry, used, _ = jax.lax.while_loop(more, segment, (carry, zero, zero))
        return (
            carry,
            loop.result(carry, _readouts(play, readout, carry, used)),
            _live(segments, carry),
        )

    lane.__name__ = "jbandits_refill"
    lanes = jax.vmap(
        lane,
        in_axes=(0, 0, 0, _axes(params_type, shared), 0, 0, 0, 0, None),
        axis_name=LANES_AXIS,
    )
    if devices > 1:
        lanes = _per_device(lanes, shared, devices)
    return jax.jit(lanes, compiler_options=compiler_options())


def _live(segments: Segments, carry) -> jax.Array:
    """Whether the lane still pulls: below its limit and not idle."""
    state, t = carry[0], carry[2]
    return (t < segments.limit) & (state.arm >= 0)


def _readouts(play, readout, carry, used) -> tuple:
    """The read-outs of :func:`jbandits.sim.segments.checkpoint` at the lane's final
    carry, with the leading checkpoint axis (one checkpoint) of the engine's scan."""
    values, outside = replication.read(
        play, readout.metric, readout.means, readout.mask, carry[0]
    )
    diag = None
    if readout.diagnostics:
        diag = _read_diagnostics(play.policy, carry[0], play.perm)
    regret = replication.regret(play.ftype, readout.gaps[play.perm], carry[1])
    outs = (values, regret, carry[3], None, used, diag, outside)
    return jax.tree_util.tree_map(lambda x: x[None], outs)


def _per_device(lanes, shared: tuple, devices: int):
    """``lanes`` with its lane axis split over the first ``devices`` local devices."""
    split = jax.sharding.PartitionSpec(DEVICE_AXIS)
    whole = jax.sharding.PartitionSpec()

    def per_device(carry, fresh, hp, params, kdata, rep, budget, horizon, control):
        spec = params._replace(
            **{f: (whole if f in shared else split) for f in params._fields}
        )
        return jax.shard_map(
            lanes,
            mesh=_mesh(devices),
            in_specs=(split, split, split, spec, split, split, split, split, whole),
            out_specs=split,
            check_vma=False,
        )(carry, fresh, hp, params, kdata, rep, budget, horizon, control)

    per_device.__name__ = "jbandits_refill"
    return per_device


def empty_carry(source, bandit, opts, fold, params_type, shared, args):
    """Zero carries of the lanes of ``args`` (their shapes and dtypes; PRNG keys
    from zero key data): the ``carry`` of a program's first call, every lane fresh."""
    setup = lane_loop(source, bandit, opts, fold, execution_of(source, opts))

    def first(*lane_args):
        return setup(*lane_args).carry

    in_axes = (0, _axes(params_type, shared), 0, 0, 0, 0)
    shapes = jax.eval_shape(
        jax.vmap(first, in_axes=in_axes, axis_name=LANES_AXIS), *args
    )
    return jax.tree_util.tree_map(_zeros, shapes)


def _zeros(s):
    if jax.dtypes.issubdtype(s.dtype, jax.dtypes.prng_key):
        data = jax.random.key_data(jax.random.key(0)).shape
        return jax.random.wrap_key_data(jnp.zeros((*s.shape, *data), jnp.uint32))
    return jnp.zeros(s.shape, s.dtype)
