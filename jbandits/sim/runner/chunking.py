"""Chunks and memory: how many lanes a chunk holds.

A chunk's size comes from the user's ``batch_size`` or from a memory budget (40% of
the device's memory, capped on CPU) over the bytes one lane needs (the program's
shapes from ``jax.eval_shape``, probed at the chunk's own shape and sharding); it is
cut so that most chunks hold one budget (they stop at it).
"""

from __future__ import annotations

import math

import jax
import numpy as np

from jbandits.core import validate as _validate
from jbandits.core.validate import PolicyError
from jbandits.sim.contract import policy_failure
from jbandits.sim.runner.devices import _sharding, placed


def _available_memory() -> int:
    dev = jax.local_devices()[0]
    if dev.platform != "cpu":  # total, not free: every process sizes chunks alike
        stats = dev.memory_stats() or {}
        if "bytes_limit" in stats:
            return int(stats["bytes_limit"])
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 8 << 30


def default_memory_budget() -> int:
    """Bytes a chunk may use: 40% of the first local accelerator's memory, or of the
    host memory available on CPU (where :data:`CPU_MAX_LANE_BYTES` caps it anyway)."""
    return int(0.4 * _available_memory())


# On CPU, lanes beyond what fits in the caches only cost memory: cap the chunk there.
CPU_MAX_LANE_BYTES = 64 << 20


def _nbytes(tree) -> int:
    return sum(
        math.prod(_shape(x)) * np.dtype(_dtype(x)).itemsize
        for x in jax.tree_util.tree_leaves(tree)
    )


def _shape(x) -> tuple:
    return tuple(x.shape) if hasattr(x, "shape") else np.shape(x)


def _dtype(x):
    return x.dtype if hasattr(x, "dtype") else np.asarray(x).dtype


#: ``probe_key(fn, probe)`` -> bytes a lane of that program needs (its first
#: trace: :func:`jbandits.sim.runner.execute`)
LANE_BYTES: dict = {}


def probe_key(fn, probe) -> tuple:
    """What :data:`LANE_BYTES` keys a program's lane size on: the program and the
    probe's structure, shapes, dtypes and shardings."""
    return (
        fn,
        jax.tree_util.tree_structure(probe),
        tuple(
            (_shape(x), np.dtype(_dtype(x)).str, getattr(x, "sharding", None))
            for x in jax.tree_util.tree_leaves(probe)
        ),
    )


def lane_bytes(fn, hp, params, kdata, rep, budget, horizon) -> int:
    """Estimated bytes one lane needs: 8x its inputs and outputs (state, temporaries).

    Tracing the program here is also where a policy that does not fit the instance
    fails; the error is re-raised as a ValueError that says so (:func:`misfit`).
    """
    try:
        abstract = jax.eval_shape(fn, hp, params, kdata, rep, budget, horizon)
    except (TypeError, ValueError, IndexError, AttributeError) as err:
        raise misfit(params, err) from err
    return bytes_per_lane(abstract, hp, params, kdata, rep, budget, horizon)


def misfit(params, err: Exception, source=None, hp=None) -> Exception:
    """The error of a program that failed to trace on instance ``params``
    (:func:`jbandits.sim.contract.policy_failure`; with the policy's ``source`` and
    numbers ``hp`` ``[cells, ...]`` it names what the policy did)."""
    num_arms = jax.tree_util.tree_leaves(params)[0].shape[-1]
    if source is None or isinstance(err, PolicyError):
        return err if isinstance(err, PolicyError) else policy_failure(err, num_arms)
    row = jax.tree_util.tree_map(lambda x: np.asarray(x)[0], hp)
    return policy_failure(err, num_arms, source.policy, row)


def bytes_per_lane(abstract, hp, params, kdata, rep, budget, horizon) -> int:
    """:func:`lane_bytes` from the program's output shapes ``abstract``."""
    n = int(budget.shape[0])
    out = _nbytes(abstract) // n
    lane_leaves = [  # shared (unbatched) fields are one copy per chunk, not per lane
        x
        for x in jax.tree_util.tree_leaves(params)
        if len(_shape(x)) and _shape(x)[0] == n
    ]
    inputs = _nbytes((hp, kdata, rep, budget, horizon, lane_leaves)) // n
    return 8 * (out + inputs) + 1024


def choose_chunk(
    per_lane: int,
    total: int,
    *,
    memory_budget: int | None,
    batch_size: int | None,
    multiple: int,
) -> int:
    """Lanes per chunk: the user's ``batch_size``, else what the memory budget allows.

    Always a multiple of ``multiple`` (the device count) and never above the work
    (but for padding). From 16 lanes per device, an even number per device: XLA:CPU
    ran ``[lanes]``-shaped kernels far slower at odd sizes
    (``benchmarks/notes_sim.md``), so one padding lane beats an odd count.
    """
    if total >= 16 * multiple:
        multiple *= 2
    if batch_size is not None:
        size = _validate.static_int("batch_size", batch_size, minimum=1)
    else:
        budget = default_memory_budget() if memory_budget is None else memory_budget
        budget = _validate.static_int("memory_budget", budget, minimum=1)
        if jax.local_devices()[0].platform == "cpu":
            budget = min(budget, CPU_MAX_LANE_BYTES)
        size = max(1, budget // per_lane)
        if batch_size is None and size < 1:
            raise ValueError(
                f"memory_budget={budget} bytes holds no lane (one lane ~{per_lane} B)"
            )
    if size >= total:  # one chunk holds everything
        return -(-total // multiple) * multiple
    size = max(multiple, size - size % multiple)
    # round down to a power of two times the multiple: fewer distinct chunk shapes
    return multiple * (1 << ((size // multiple).bit_length() - 1))


MIN_CHUNK = 64  # lanes per device below which a chunk is not split further


def _budget_homogeneous(size: int, budgets: np.ndarray, reps: int, ndev: int) -> int:
    """Shrink the chunk so that most chunks hold one budget (they stop at it).

    Lanes are ordered by budget; a chunk runs until its largest budget, so a chunk
    that mixes budgets 100 and 10 000 wastes most of its steps. The chunk is capped at
    the lanes of the least frequent budget (a power of two times the device count),
    but never below :data:`MIN_CHUNK` lanes per device.
    """
    _, counts = np.unique(budgets, return_counts=True)
    if counts.size < 2:
        return size
    per_level = int(counts.min()) * reps
    cap = ndev * (1 << max(0, (per_level // ndev).bit_length() - 1))
    return max(min(size, cap), min(size, MIN_CHUNK * ndev))


def chunk_lanes(
    per_lane: int,
    total: int,
    budgets: np.ndarray,
    reps: int,
    ndev: int,
    *,
    batch_size: int | None,
    memory_budget: int | None,
) -> int:
    """Lanes per chunk for lanes of ``per_lane`` bytes (:func:`choose_chunk`), cut
    to chunks of one budget (:func:`_budget_homogeneous`) unless ``batch_size`` is
    given."""
    size = choose_chunk(
        per_lane,
        total,
        memory_budget=memory_budget,
        batch_size=batch_size,
        multiple=ndev,
    )
    if batch_size is None:
        size = _budget_homogeneous(size, budgets, reps, ndev)
    return size


def abstract_chunk(one: tuple, shared: tuple, size: int, ndev: int) -> tuple:
    """Abstract arguments of a chunk of ``size`` lanes, for :func:`lane_bytes`.

    ``one`` is one gathered lane: it gives dtypes and trailing shapes; the lane axis
    is ``size`` long (the params fields in ``shared`` have none) and sharded as the
    chunk will be over ``ndev`` devices. Probing at the chunk's own shape and
    sharding lets the call that follows reuse the trace.
    """
    tu = jax.tree_util
    lead = _per_leaf(
        (True, one[1]._replace(**{f: f not in shared for f in one[1]._fields}))
        + (True,) * 4,
        one,
    )
    where = placed(one, _sharding(ndev) if ndev > 1 else None, shared)
    where = tu.tree_leaves(_per_leaf(where, one)) if where is not None else None
    leaves, tree = tu.tree_flatten(one)
    return tu.tree_unflatten(
        tree,
        [
            jax.ShapeDtypeStruct(
                (size, *_shape(x)[1:]) if batched_leaf else _shape(x),
                jax.dtypes.canonicalize_dtype(_dtype(x)),
                sharding=None if where is None else where[n],
            )
            for n, (x, batched_leaf) in enumerate(
                zip(leaves, tu.tree_leaves(lead), strict=True)
            )
        ],
    )


def _per_leaf(prefix, tree):
    """A value per argument (or params field) of ``prefix`` -> one per leaf of ``tree``."""
    tu = jax.tree_util
    return tu.tree_map(lambda v, sub: tu.tree_map(lambda _: v, sub), prefix, tree)
