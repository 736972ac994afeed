"""Lanes that refill from a queue: how :func:`~jbandits.sim.runner.execute` runs
policies that stop by themselves (fixed confidence).

A chunk of the plain runner runs until its slowest lane is done, so a stopping
policy's chunk costs (lanes) x (its largest stopping time): 16 % of the lane-steps
were useful with one lane that never stops among 399 that stop early
(``benchmarks/notes_fixed_confidence.md`` §1). Here the lanes of a program of fixed
width (:mod:`jbandits.sim.runner.refill_program`) keep their carries on the device
between calls; after each call the host records the result of every lane whose
replication is done (stopped, or at its budget) and gives that lane the next
replication not yet started (its own key, instance, numbers and budget: exactly the
arguments of the plain program). A call returns once ``max(1, W / 8)`` of its lanes
have finished (:data:`REFILL_FRACTION`). When the queue is empty the lanes still
running move into narrower programs (:func:`widths`: W, W/4, W/16, ... down to one
lane per device, each compiled once), so that a long last replication does not hold
a wide program; a width not yet compiled is compiled only once the CPU time it would
have saved in the program's tails, and is expected to save in this one, reaches about
a compilation (:class:`_Tail`).

Every replication's result is exactly that of the plain program (the same key, the
same steps; ``tests/test_refill.py`` compares every field). Lanes are recorded in
store chunks of the plan's chunk size, so a store resumes as before (chunks already
written are read, the others run), and under ``jax.distributed`` each process runs
the lanes of its own chunks. :class:`~jbandits.sim.runner.results.Report` counts the
lane-steps run (``lane_steps_executed``: segments x segment length x lanes of each
device) and the useful pulls (``pulls``: the sum of the replications' pulls).

Which runs refill (:func:`applies`): a policy that stops (:func:`stops`: the
registered fixed-confidence policies, or ``execute(refill=True)``), one checkpoint, no
recorded arms, and not the fused backend asked for by name (its kernel runs whole
chunks: there a stopping policy runs as before).
"""

from __future__ import annotations

import functools
import time

import jax
import numpy as np

from jbandits.sim.contract import policy_contract
from jbandits.sim.fused import backend as fused_backend
from jbandits.sim.runner import refill_program
from jbandits.sim.runner.devices import _lane_steps, _process_share, placed
from jbandits.sim.runner.programs import Options, Source
from jbandits.sim.runner.results import (
    Report,
    _host,
    _scatter,
    check_count_precision,
)
from jbandits.sim.runner.work import Work

#: a call returns once this fraction of its lanes (at least one) has finished
REFILL_FRACTION = 1 / 8
#: each narrower program has this many times fewer lanes
NARROWING = 4
#: registered policies outside ``jbandits.policies.fixed_confidence`` that stop
STOPPING = ("ugapec",)
_FIXED_CONFIDENCE = "jbandits.policies.fixed_confidence."


def stops(source: Source) -> bool:
    """Whether ``source`` is a registered policy that stops by itself: one of the
    fixed-confidence package, or named in :data:`STOPPING`."""
    ident = source.ident
    if not (isinstance(ident, tuple) and len(ident) == 2 and ident[0] == "registered"):
        return False
    module = getattr(source.build, "__module__", "") or ""
    return module.startswith(_FIXED_CONFIDENCE) or ident[1] in STOPPING


def applies(source: Source, opts: Options, refill: bool | None) -> bool:
    """Whether the lanes of this run refill (see the module docstring); ``refill``:
    the caller's choice (None: :func:`stops`)."""
    if refill is False or opts.num_checkpoints != 1 or opts.record_arms:
        return False
    if fused_backend.requested(source, opts) == "fused":
        return False
    return True if refill else stops(source)


def widths(size: int, multiple: int) -> list[int]:
    """The program widths, widest first: ``size``, then :data:`NARROWING` times
    fewer each (a multiple of ``multiple``, the device count) down to ``multiple``."""
    out = [size]
    while out[-1] > multiple:
        w = -(-out[-1] // NARROWING // multiple) * multiple
        w = max(multiple, w)
        if w >= out[-1]:
            break
        out.append(w)
    return out


class _Lanes:
    """The lanes of the program now running: each holds a lane id of the work (its
    replication) or -1 (empty), and their carries on the device."""

    def __init__(self, width: int):
        self.slot = np.full(width, -1, np.int64)
        self.fresh = np.ones(width, bool)
        self.carry = None

    @property
    def width(self) -> int:
        return self.slot.size

    @property
    def active(self) -> np.ndarray:
        return self.slot >= 0


def run(out: dict, plan, work: Work, store, group: str, report: Report, bar,
        setup: tuple) -> None:  # fmt: skip
    """Run (or read from ``store``) every lane of this process into ``out``.

    ``plan``: the call's :class:`~jbandits.sim.runner.loop._Plan` (its chunk size is
    the widest program and the store's chunk); ``setup``: ``(source, bandit,
    opts)``.
    """
    queue, remaining = _queue(out, plan, work, store, group, report, bar)
    if not queue.size:
        return
    ndev = plan.ndev if plan.sharding is not None else 1
    source, bandit, opts = setup
    fold, kind = work.lanes.fold_reps, type(work.params)
    fn = refill_program.program(source, bandit, opts, work.shared, fold, ndev, kind)
    empty = functools.partial(
        refill_program.empty_carry, source, bandit, opts, fold, kind, work.shared
    )
    ladder = widths(plan.size, ndev)
    lanes = _Lanes(min(w for w in ladder if w >= min(queue.size, plan.size)))
    pos = _fill(lanes, np.arange(lanes.width), queue, 0)
    tail = _Tail(ladder, _costs(fn))
    calls, used = 0, []
    while lanes.active.any():
        if pos < queue.size:
            control = (max(1, int(lanes.width * REFILL_FRACTION)), 0, _ALL)
        else:
            control = tail.control(lanes)
        t0 = time.process_time()  # CPU seconds of every thread: the devices' too
        res, live = _call(fn, empty, lanes, work, plan, ndev, control)
        cpu = time.process_time() - t0
        first = lanes.width not in tail.seen
        tail.seen.setdefault(lanes.width, cpu)
        if lanes.width not in used:
            used.append(lanes.width)
        calls += 1
        done = np.flatnonzero(lanes.active & ~live)
        _record(out, res, lanes.slot[done], done, work, plan, ndev, report)
        report.lane_steps_executed += _lane_steps(
            np.asarray(res.segments), plan.segment, ndev
        )
        _store_chunks(out, lanes.slot[done], remaining, plan, work, store, group)
        if bar is not None:
            bar.update(done.size)
        lanes.fresh[:] = False
        ahead = _ahead(res, lanes, live, work) if pos >= queue.size else 0
        pos = _fill(lanes, done, queue, pos)
        if pos >= queue.size:
            steps = int(np.asarray(res.segments).max()) * plan.segment
            _narrow(lanes, tail.after(lanes, 0.0 if first else cpu, steps, ahead))
    report.extra["refill"] = {"calls": calls, "widths": used}


_ALL = (1 << 31) - 1  # no bound on a call's segments
#: segments of the first call once the queue is spent; each later one may run twice as
#: many
TAIL_SEGMENTS = 16
#: a new width is compiled once the CPU time it saved and is expected to save reaches
#: this times the first call of the width running (0: at once)
COMPILE_WEIGHT = 1.0
_COSTS: dict = {}  # program -> {width: CPU s of its first call, "saved": {width: s}}


def _costs(fn) -> dict:
    """What a program's tails cost so far (kept for the program's life: a width
    compiled once serves every later call)."""
    if len(_COSTS) > 64:
        _COSTS.clear()
    return _COSTS.setdefault(fn, {"saved": {}})


class _Tail:
    """When the lanes still running move into a narrower program (the queue spent).

    A width already compiled is taken as soon as the live lanes fit it. A new one
    costs its compilation, about the first call of a width (``costs``: width -> CPU
    seconds of its first call, compilation included); it is bought as in ski rental,
    for each width on its own and over the program's life (a width compiled once
    serves every later call): ``costs["saved"][w]`` sums the CPU time that ``w``
    would have saved in the program's tails so far (each tail call's CPU time x the
    share of its lanes that ``w`` leaves out, ``(W - max(w, live)) / W``). The lanes
    move to the narrowest width that holds them whose saving so far plus the saving
    expected from this tail reaches :data:`COMPILE_WEIGHT` compilations. The
    expected saving counts the steps to come as the live lanes' steps so far (at
    most their budget left; a lane that has run ``t`` steps runs about ``t`` more),
    at the CPU time per step of the last call. So a width is compiled once what it
    saves, past and expected, pays for it: a short tail does not compile, and the
    narrower programs of a program called again are compiled once its tails have
    cost about their compilation. CPU time, not wall time: the choice does not depend
    on what else runs on the machine.
    """

    def __init__(self, ladder: list[int], costs: dict):
        self.ladder, self.costs = ladder, costs
        self.most = TAIL_SEGMENTS

    @property
    def seen(self) -> dict:
        return self.costs

    def control(self, lanes: _Lanes) -> tuple:
        """``(finish, floor, most)`` of the next call: return when the live lanes
        fit the next width below their count, or after ``most`` segments."""
        live = int(lanes.active.sum())
        below = [w for w in self.ladder if w < live]
        control = (lanes.width + 1, below[0] if below else 0, self.most)
        self.most = min(2 * self.most, _ALL)
        return control

    def after(self, lanes: _Lanes, cpu: float, steps: int = 0, ahead: int = 0) -> int:
        """The width to move to after a call of ``cpu`` seconds (0 for the first
        call of a width: its compilation) and ``steps`` steps; ``ahead``: the steps
        the live lanes are expected to run yet."""
        live, width = int(lanes.active.sum()), lanes.width
        saved = self.costs.setdefault("saved", {})
        narrower = [w for w in self.ladder if live <= w < width]
        for w in narrower:
            if w not in self.costs:
                saved[w] = saved.get(w, 0.0) + cpu * (width - max(w, live)) / width
        if not live or not narrower:
            return width
        per_step = cpu / steps if steps else 0.0
        cost = COMPILE_WEIGHT * self.costs.get(width, 0.0)
        for w in reversed(narrower):  # the narrowest first
            gain = per_step * ahead * (width - max(w, live)) / width
            if w in self.costs or saved.get(w, 0.0) + gain >= cost:
                return w
        return width


def _ahead(res, lanes: _Lanes, live: np.ndarray, work: Work) -> int:
    """The steps the live lanes are expected to run yet: the most of their steps so
    far, each at most its budget left."""
    rows = np.flatnonzero(lanes.active & live)
    if not rows.size:
        return 0
    t = np.asarray(res.num_pulls)[rows].astype(np.int64)
    budget = work.lanes.budget[work.placement(lanes.slot[rows])[0]]
    return int(np.minimum(t, np.maximum(budget - t, 0)).max())


def _queue(out, plan, work, store, group, report, bar):
    """The lanes this process runs, in work order (a store's finished chunks are
    read into ``out`` instead), and the count of lanes left per chunk."""
    todo, remaining = [], {}
    for chunk in range(plan.num_chunks):
        start, stop = chunk * plan.size, min(work.total, (chunk + 1) * plan.size)
        if store is not None and store.has(group, chunk):
            part = store.read(group, chunk, (start, stop))
            _scatter(out, part, *work.placement(np.arange(start, stop)), *work.shape)
            report.chunks_skipped += 1
            if bar is not None:
                bar.update(stop - start)
        elif _process_share(chunk):
            todo.append(np.arange(start, stop))
            remaining[chunk] = stop - start
            report.chunks += 1
    queue = np.concatenate(todo) if todo else np.zeros(0, np.int64)
    return queue, remaining


def _fill(lanes: _Lanes, free: np.ndarray, queue: np.ndarray, pos: int) -> int:
    """Give the ``free`` lanes the next replications of ``queue`` (from ``pos``),
    empty once it is spent; returns the new position."""
    take = queue[pos : pos + free.size]
    lanes.slot[free] = -1
    lanes.slot[free[: take.size]] = take
    lanes.fresh[free] = True
    return pos + take.size


def _call(fn, empty, lanes: _Lanes, work: Work, plan, ndev: int, control):
    """One program call; the results and liveness of the lanes on the host."""
    active = lanes.active
    filler = lanes.slot[active][0] if active.any() else 0
    args = list(work.gather(np.where(active, lanes.slot, filler)))
    args[4] = np.where(active, args[4], 0).astype(np.int32)  # empty: budget 0
    args = tuple(args)
    sharding = plan.sharding if ndev > 1 else None
    if lanes.carry is None:
        lanes.carry = empty(args)
    fresh = lanes.fresh.copy()
    if sharding is not None:
        args = jax.device_put(args, placed(args, sharding, work.shared))
        fresh = jax.device_put(fresh, sharding)
        lanes.carry = jax.device_put(lanes.carry, sharding)
    control = np.asarray(control, np.int32)
    lanes.carry, res, live = fn(lanes.carry, fresh, *args, control)
    res, live = jax.device_get((res, live))
    return res, np.asarray(live, bool)


def _record(out, res, ids, rows, work: Work, plan, ndev, report: Report) -> None:
    """Scatter the results of lanes ``rows`` (replications ``ids``) into ``out``."""
    if not rows.size:
        return
    cells, reps = work.placement(ids)
    check_count_precision(np.asarray(res.pulls)[rows])
    policy_contract(np.asarray(res.violations)[rows], plan.name, lambda i: (
        f"cell {cells[i]}, replication {reps[i]}"))  # fmt: skip
    part = {
        k: (v if k.startswith("_") else v[rows])
        for k, v in _host(res, rows.max() + 1).items()
    }
    _scatter(out, part, cells, reps, *work.shape)
    report.pulls += int(np.asarray(res.num_pulls)[rows].sum())


def _store_chunks(out, ids, remaining, plan, work, store, group) -> None:
    """Write each store chunk whose last lane just finished."""
    for chunk in (ids // plan.size).tolist():
        remaining[chunk] -= 1
        if remaining[chunk] == 0 and store is not None:
            start, stop = chunk * plan.size, min(work.total, (chunk + 1) * plan.size)
            cells, reps = work.placement(np.arange(start, stop))
            part = {k: v[cells, reps] for k, v in out.items() if not k.startswith("_")}
            store.write(group, chunk, part, (start, stop))


def _narrow(lanes: _Lanes, width: int) -> None:
    """Move the active lanes (carries on the device) into a program of ``width``
    (nothing when it is the width they run at)."""
    if width >= lanes.width:
        return
    keep = np.flatnonzero(lanes.active)
    rows = np.r_[keep, np.zeros(width - keep.size, np.int64)]
    carry = jax.tree_util.tree_map(lambda x: x[rows], lanes.carry)
    slot = np.r_[lanes.slot[keep], np.full(width - keep.size, -1)]
    fresh = np.r_[np.zeros(keep.size, bool), np.ones(width - keep.size, bool)]
    lanes.slot, lanes.fresh, lanes.carry = slot, fresh, carry
