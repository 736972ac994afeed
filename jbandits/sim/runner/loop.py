"""The execution loop: :func:`execute` runs every lane of a call, chunk by chunk.

It gets the policy's :class:`~jbandits.sim.runner.programs.Source`, a store inside
:func:`~jbandits.sim.runner.resume.resumable`, checks the numbers, traces the program
once at a probe chunk (its output shapes size a lane), plans the run (:class:`_Plan`:
the program, the chunk size, the lane sharding), then runs, reads (a store's
finished chunks) or leaves to another process each chunk, and scatters the results
into ``[cells, reps, ...]`` arrays.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass
from typing import Any

import jax
import numpy as np

from jbandits.core import registry
from jbandits.core.types import Bandit
from jbandits.sim.contract import policy_contract
from jbandits.sim.runner import refill as refill_lanes
from jbandits.sim.runner.chunking import (
    LANE_BYTES,
    abstract_chunk,
    bytes_per_lane,
    chunk_lanes,
    misfit,
    probe_key,
)
from jbandits.sim.runner.devices import _lane_steps, _process_share, _sharding, placed
from jbandits.sim.runner.job import Job, Part
from jbandits.sim.runner.memory import (
    RESULT_BYTES,
    check_host_memory,
    result_bytes_per_lane,
)
from jbandits.sim.runner.programs import (
    Options,
    Source,
    _program,
    source_of,
    storable,
)
from jbandits.sim.runner.results import (
    Report,
    _host,
    _progress_bar,
    _scatter,
    check_count_precision,
)
from jbandits.sim.runner.resume import _auto_store
from jbandits.sim.runner.work import Lanes, Work, _check_numbers, per_cell
from jbandits.sim.segments import segment_of


def execute(
    policy,
    bandit: Bandit,
    lanes: Lanes,
    opts: Options,
    *,
    label: str = "",
    progress: bool | None = None,
    batch_size: int | None = None,
    memory_budget: int | None = None,
    store=None,
    group: str = "g0",
    order: np.ndarray | None = None,
    report: Report | None = None,
    refill: bool | None = None,
) -> dict:
    """Run every lane; returns RunResult fields as NumPy arrays ``[cells, reps, ...]``.

    Args:
      policy: a Policy (``make()``/factory-built ones are rebuilt from their spec), a
        registered name or a factory callable ``(**hp) -> Policy``.
      bandit: the reward family.
      lanes: the cells and replications (:class:`Lanes`).
      opts: static run options (:class:`Options`).
      label: progress-bar label.
      progress: True shows a bar at once, None (default) after 2 s, False never.
      batch_size: lanes per chunk (default: from ``memory_budget``); must be >= 1.
      memory_budget: bytes a chunk may use (default :func:`default_memory_budget`).
      store: a :class:`jbandits.analysis.store.Store` (optional): each chunk is written
        atomically under ``group``; chunks already there are read, not recomputed.
      order: cell order (default: by budget, so chunks stop at their own budget).
      report: a :class:`Report` to fill.
      refill: lanes whose replication is done take the next one from a queue
        (:mod:`~jbandits.sim.runner.refill`); None (default): for policies that stop
        by themselves (:func:`~jbandits.sim.runner.refill.stops`); never with
        several checkpoints or recorded arms.

    Raises:
      ValueError: bad ``batch_size`` / ``memory_budget``; several processes
        (``jax.distributed``) without a store.
    """
    part = Part(source_of(policy)[0], lanes, label, group, order, refill)
    call = dict(
        progress=progress, batch_size=batch_size, memory_budget=memory_budget,
        report=report,
    )  # fmt: skip
    job = Job(bandit, (part,), opts, store, call, finish=False)
    return run(job, policy=policy)[0]


def run(job: Job, each=None, *, policy=None) -> list[dict]:
    """Run every part of ``job`` (:mod:`~jbandits.sim.runner.job`): the results of
    each, as :func:`execute` returns them, in order; or, given ``each``,
    ``each(i, results)`` is called as part ``i`` ends (its results are not kept) and
    the list is empty. Then the store (if any, and ``job.finish``) is marked
    complete, with the labelled cells and the lane counts for ``sweep_grid``.
    ``policy``: the policy :func:`execute` was given (its numbers ride with the
    lanes'), else each part's source."""
    call = dict(job.call)
    progress, report = call.get("progress"), call.get("report")
    report = Report() if report is None else report
    store, opts, bandit, flats = job.store, job.opts, job.bandit, []
    _check_processes(store)
    for i, part in enumerate(job.parts):
        source, numeric = source_of(part.source if policy is None else policy)
        hp = {**numeric, **part.lanes.hp} if numeric else part.lanes.hp
        if storable(source):  # each number its declared type: one program per structure
            hp = registry.cast_numbers(source.ident[1], hp)
        lanes = part.lanes
        auto = store is None and _auto_store(source, bandit, lanes, opts, hp)
        store_i = auto or store
        if not lanes.fold_reps and lanes.num_reps != 1:
            raise ValueError("fold_reps=False needs num_reps == 1")
        hp = per_cell(hp, lanes.num_cells)
        name = _check_numbers(source, hp, lanes.num_cells)
        work = Work(lanes, hp, part.order)
        sizing = _sizing(work, call.get("batch_size"), call.get("memory_budget"))
        fn, probe = _probe(source, bandit, opts, work, sizing)
        key = probe_key(fn, probe)
        if key not in LANE_BYTES or key not in RESULT_BYTES:  # its first trace sizes
            try:
                shapes = jax.eval_shape(fn, *probe)
            except (TypeError, ValueError, IndexError, AttributeError) as err:
                raise misfit(probe[1], err, source, hp) from err
            LANE_BYTES[key] = bytes_per_lane(shapes, *probe)  # a lane on the device
            RESULT_BYTES[key] = result_bytes_per_lane(shapes)  # its results, host
        check_host_memory(work.total, RESULT_BYTES[key], f"this call of {name}")
        plan = _plan(
            source, bandit, opts, work, fn, LANE_BYTES[key], sizing, store_i,
            part.group,
        )  # fmt: skip
        plan = dataclasses.replace(plan, name=name)  # the policy's, in errors
        report.lanes += work.total
        report.chunk_size = plan.size
        out: dict = {}
        bar = _progress_bar(work.total, part.label or name, progress)
        t0 = time.perf_counter()
        if refill_lanes.applies(source, opts, part.refill):
            setup = (source, bandit, opts)
            refill_lanes.run(out, plan, work, store_i, part.group, report, bar, setup)
        else:
            _run_chunks(out, plan, work, store_i, part.group, report, bar)
        if bar is not None:
            bar.close()
        if store_i is not None and jax.process_count() > 1:
            _read_other_processes(out, plan, work, store_i, part.group)
        if auto:
            auto.finish()
        report.seconds += time.perf_counter() - t0
        if each is None:
            flats.append(out)
        else:
            each(i, out)
    if store is not None and job.finish:
        _finish(job, report)
    return flats


def _finish(job: Job, report: Report) -> None:
    """Mark ``job``'s store complete (with ``sweep_grid``'s cells and lane counts)."""
    info = {}
    if job.cells is not None:
        job.store.write_cells(job.cells)
        info = {"noop_fraction": report.noop_fraction, "lanes": report.lanes}
    job.store.finish(**info)


def _check_processes(store) -> None:
    if store is None and jax.process_count() > 1:
        raise ValueError(
            f"{jax.process_count()} processes (jax.distributed) split the chunks "
            "between them and exchange them through a results store: pass "
            "store=PATH on a file system every process sees"
        )


@dataclass(frozen=True)
class _Plan:
    """How a call's lanes run: the compiled program, lanes per chunk, the number of
    chunks, the lane sharding (None: one device, or a chunk size that the devices
    do not divide), the local device count and the engine's segment length."""

    fn: Any
    size: int
    num_chunks: int
    sharding: Any
    ndev: int
    segment: int
    name: str = "policy"


def _sizing(work: Work, batch_size: int | None, memory_budget: int | None) -> dict:
    """The arguments of :func:`~jbandits.sim.runner.chunking.chunk_lanes` but the bytes
    of a lane."""
    return dict(
        total=work.total,
        budgets=work.lanes.budget,
        reps=work.reps,
        ndev=len(jax.local_devices()),
        batch_size=batch_size,
        memory_budget=memory_budget,
    )


def _probe(source: Source, bandit: Bandit, opts: Options, work: Work, sizing: dict):
    """The program of a call and the abstract arguments it is sized with.

    The probe has the chunk shape (and sharding) chosen when memory does not bind
    (the user's batch_size, or the whole work cut to chunks of one budget), so when
    that is the size chosen the call reuses the sizing's trace (tracing is most of a
    second run's wall time once the executables are cached; probing at the whole
    work traced chunked runs twice). One gathered lane gives dtypes and trailing
    shapes.
    """
    ndev = sizing["ndev"]
    one = work.gather(np.zeros(1, np.int64))
    fn = _program(
        source, bandit, opts, work.shared, work.lanes.fold_reps, ndev,
        type(work.params),
    )  # fmt: skip
    return fn, abstract_chunk(one, work.shared, chunk_lanes(1, **sizing), ndev)


def _plan(
    source: Source,
    bandit: Bandit,
    opts: Options,
    work: Work,
    fn,
    per_lane: int,
    sizing: dict,
    store,
    group: str,
) -> _Plan:
    """How the call runs, for lanes of ``per_lane`` bytes. A store that already
    holds chunks keeps its recorded chunk layout (resume)."""
    size = chunk_lanes(per_lane, **sizing)
    if store is not None:  # a resumed run keeps the recorded chunk layout
        size = store.chunk_size(group, size)
    ndev = sizing["ndev"]
    sharding = _sharding(ndev) if ndev > 1 and size % ndev == 0 else None
    if sharding is None and ndev > 1:
        fold = work.lanes.fold_reps
        fn = _program(source, bandit, opts, work.shared, fold, 1, type(work.params))
    segment = segment_of(opts.horizon, opts.num_checkpoints, opts.segment)
    return _Plan(fn, size, -(-work.total // size), sharding, ndev, segment)


def _run_chunks(
    out: dict, plan: _Plan, work: Work, store, group: str, report: Report, bar
):
    """Run this process's chunks, or read those a store holds, into ``out``."""
    for chunk in range(plan.num_chunks):
        start, stop = _span(plan, work, chunk)
        part = None
        if store is not None and store.has(group, chunk):
            part = store.read(group, chunk, (start, stop))
            report.chunks_skipped += 1
        elif _process_share(chunk):
            part = _run_chunk(plan, work, chunk, report)
            if store is not None:
                store.write(group, chunk, part, (start, stop))
            report.chunks += 1
        if part is not None:
            _scatter(out, part, *work.placement(np.arange(start, stop)), *work.shape)
        if bar is not None:
            bar.update(stop - start)


def _span(plan: _Plan, work: Work, chunk: int) -> tuple[int, int]:
    """The lanes ``[start, stop)`` of ``chunk``."""
    return chunk * plan.size, min(work.total, (chunk + 1) * plan.size)


def _run_chunk(plan: _Plan, work: Work, chunk: int, report: Report) -> dict:
    """Run ``chunk`` (the last one padded by wrapping around to the first lanes);
    its results on the host, padding cut (:func:`_host`)."""
    start, stop = _span(plan, work, chunk)
    lane_ids = np.arange(start, start + plan.size) % work.total  # pad: wrap around
    args = work.gather(lane_ids)
    if plan.sharding is not None:  # lane axis split; shared fields replicated
        args = jax.device_put(args, placed(args, plan.sharding, work.shared))
    res = jax.device_get(plan.fn(*args))
    check_count_precision(res.pulls)
    placed_at = work.placement(np.arange(start, stop))  # (cells, reps) of the lanes
    policy_contract(res.violations[: stop - start], plan.name, lambda i: (
        f"cell {placed_at[0][i]}, replication {placed_at[1][i]}"))  # fmt: skip
    part = _host(res, stop - start)
    used = np.asarray(res.segments)  # [size, C]
    report.lane_steps_executed += _lane_steps(
        used, plan.segment, 1 if plan.sharding is None else plan.ndev
    )
    report.pulls += int(np.asarray(res.num_pulls)[: stop - start].sum())  # no padding
    return part


def _read_other_processes(out: dict, plan: _Plan, work: Work, store, group: str):
    """Under ``jax.distributed``: wait for the chunks the other processes run and
    scatter them from the store."""
    store.wait(group, plan.num_chunks)
    for chunk in range(plan.num_chunks):
        if not _process_share(chunk):
            start, stop = _span(plan, work, chunk)
            cells, rep = work.placement(np.arange(start, stop))
            part = store.read(group, chunk, (start, stop))
            _scatter(out, part, cells, rep, *work.shape)
