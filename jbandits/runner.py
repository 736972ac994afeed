"""The one batched runner: lanes of (cell, replication), chunked, sharded, cached.

Every batched entry point — :func:`jbandits.simulate`, :func:`jbandits.sweep`,
:func:`jbandits.sweep_grid`, the tuner and the experiments — describes its work as
*cells* (a policy's numeric hyper-parameters, an instance, a budget) times
replications, and hands them to :func:`execute`. A *lane* is one replication of one
cell: one call of :func:`jbandits.engine.run`. :func:`execute`

* builds the policy *inside* the compiled function from traced numbers (ε, α, ρ, δ,
  budgets, horizons, host-computed schedules), so one compiled *program* serves every
  value; programs are cached on what changes them — the policy factory and its static
  arguments, the bandit family, K, the horizon, checkpoint count, metric, dtypes and
  chunk shape — never on closures or numbers, in a bounded LRU cache;
* orders lanes by budget and runs them in fixed-size chunks, so a chunk stops at its
  own largest budget (the engine's inner loop exits once every lane is done) and the
  last chunk reuses the compilation (padded);
* chooses the chunk size from a memory budget (the per-lane state size from
  ``jax.eval_shape``), shards every chunk's lane axis over ``jax.local_devices()``
  (``shard_map``: each device runs its own lanes, so its loops stop when they are
  done), splits chunks over processes under ``jax.distributed``, shows a progress bar and,
  given a :class:`jbandits.store.Store`, writes each chunk atomically and skips the
  chunks already written (resume).

Lane keys: the cell key is ``fold_in(key, instance)`` for a batch of instances, else
``key``; replication ``r`` uses ``fold_in(cell_key, r)`` (equal to
``jax.random.split(cell_key, R)[r]``), the same for every grid point and policy
(common random numbers).
"""

from __future__ import annotations

import collections
import contextlib
import inspect
import math
import os
import sys
import time
from dataclasses import dataclass, field
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from jbandits import _validate, registry
from jbandits.engine import RunResult, compiler_options, default_segment, run
from jbandits.execution import Execution
from jbandits.types import Bandit, Key, Policy

CACHE_SIZE = 32  # compiled programs kept (least recently used dropped first)
_CACHE: collections.OrderedDict = collections.OrderedDict()
_RESUME: list = []  # active resumable() roots: [path, calls so far]


# --------------------------------------------------------------------------- policies
@dataclass(frozen=True)
class Source:
    """How to build the policy inside the compiled function.

    ``build(**static, **numeric)`` returns a Policy; ``static`` is hashable and part of
    the cache key, the numeric keyword arguments are traced per cell.
    """

    build: Any
    static: tuple = ()
    ident: Any = None  # what identifies ``build`` in the cache key
    name: str = ""
    prepare: Any = None  # host hook (num_arms, num_real_arms, budget, **kw) -> dict
    takes_execution: bool = False  # ``build`` takes ``execution=`` (an Execution)


def _hashable(value):
    try:
        hash(value)
    except TypeError as err:
        raise ValueError(f"static policy argument {value!r} is not hashable") from err
    return value


def source_of(policy) -> tuple[Source, dict]:
    """(Source, numeric kwargs) of a Policy, a registered name, or a factory callable."""
    if isinstance(policy, Source):
        return policy, {}
    if isinstance(policy, Policy):
        if policy.spec is None:  # hand-built: cached on the closures themselves
            return Source(lambda: policy, (), ident=policy, name="policy"), {}
        spec = policy.spec
        return registered(spec.name, dict(spec.static)), dict(spec.params)
    if isinstance(policy, str):
        return registered(policy, {}), {}
    if callable(policy):
        return Source(
            policy,
            (),
            ident=policy,
            name=getattr(policy, "__name__", ""),
            takes_execution=_takes_execution(policy),
        ), {}
    raise ValueError(
        "policy must be a jbandits Policy, a registered name or a factory callable, "
        f"got {type(policy).__name__}"
    )


def _takes_execution(factory) -> bool:
    try:
        return "execution" in inspect.signature(factory).parameters
    except (TypeError, ValueError):
        return False


def registered(name: str, static: dict, *, label: str | None = None) -> Source:
    """The :class:`Source` of registered policy ``name`` with ``static`` arguments
    (its numbers are traced per cell); ``label`` names it in progress output.

    Programs and stores are keyed on the name and the static arguments, so every
    source of the same policy and structure shares one compiled program.
    """
    registry.check_kwargs(name, static)
    items = tuple(sorted((k, _hashable(v)) for k, v in static.items()))
    factory = registry.raw_factory(name)
    return Source(
        factory,
        items,
        ident=("registered", name),
        name=label or name,
        prepare=registry.prepare_hook(name),
        takes_execution=_takes_execution(factory),
    )




def storable(source: Source) -> bool:
    """Whether runs of ``source`` can be stored and resumed: a registered policy,
    identified by its name, static arguments and numbers. A hand-built policy or an
    unregistered factory is code that no key can identify across processes (two
    closures over other numbers have the same byte code)."""
    ident = source.ident
    return isinstance(ident, tuple) and len(ident) == 2 and ident[0] == "registered"


# ------------------------------------------------------------------------------ lanes
@dataclass
class Lanes:
    """Host-side description of the work: ``num_cells`` cells x ``num_reps`` lanes.

    Attributes:
      hp: numeric policy arguments, a dict of pytrees with leaves ``[num_cells, ...]``.
      params: instance pytree with leaves ``[num_instances, ...]`` (except the fields
        named in ``shared``, one array for all instances).
      instance: ``[num_cells]`` int, the instance of each cell.
      budget: ``[num_cells]`` int budgets.
      keys: ``[num_cells, 2]`` uint32 key data, each cell's key.
      num_reps: replications per cell.
      horizon: ``[num_cells]`` int checkpoint horizons (default: the budgets).
      fold_reps: lane key ``fold_in(cell key, rep)``; False: the cell key itself
        (needs ``num_reps == 1``).
    """

    hp: dict
    params: Any
    instance: np.ndarray
    budget: np.ndarray
    keys: np.ndarray
    num_reps: int
    shared: tuple = ()
    fold_reps: bool = True
    horizon: np.ndarray | None = None

    @property
    def num_cells(self) -> int:
        return int(self.budget.shape[0])

    @property
    def num_lanes(self) -> int:
        return self.num_cells * self.num_reps


def key_data(key: Key) -> np.ndarray:
    """uint32 data ``[..., 2]`` of a typed or legacy key."""
    if jnp.issubdtype(jnp.asarray(key).dtype, jax.dtypes.prng_key):
        return np.asarray(jax.random.key_data(key))
    arr = np.asarray(key)
    if arr.dtype != np.uint32 or arr.shape[-1:] != (2,):
        raise ValueError(f"key must be a jax.random.key, got {key!r}")
    return arr


def instance_keys(key: Key, num_instances: int) -> np.ndarray:
    """Key data of ``fold_in(key, n)`` for n < ``num_instances``."""
    k = jax.random.wrap_key_data(jnp.asarray(key_data(key)))
    return np.asarray(
        jax.random.key_data(
            jax.vmap(lambda n: jax.random.fold_in(k, n))(jnp.arange(num_instances))
        )
    )


# ---------------------------------------------------------------------- the programs
@dataclass(frozen=True)
class Options:
    """Static run options (part of the program's cache key).

    ``horizon`` is static only with ``record_arms`` (a fixed-length scan); otherwise
    it is None and every cell's horizon (:attr:`Lanes.horizon`) is traced.
    """

    horizon: int | None = None
    num_checkpoints: int = 1
    metric: Any = None
    permute: bool = True
    record_arms: bool = False
    return_state: bool = False
    segment: int | None = None
    diagnostics: bool = False
    execution: Execution | None = None  # None: the platform's (execution_of)


LANES_AXIS = "lanes"  # the vmap axis over a chunk's lanes


def execution_of(source: Source, opts: Options) -> Execution | None:
    """The :class:`~jbandits.execution.Execution` a program builds its policy with
    (None when the policy's factory takes none): the policy's own ``execution=``
    if it was built with one, else ``opts.execution``, else the measured defaults of
    the platform of the local devices; always with the program's lanes axis."""
    if not source.takes_execution:
        return None
    chosen = dict(source.static).get("execution") or opts.execution
    if chosen is None:
        chosen = Execution.for_platform(jax.local_devices()[0].platform)
    return Execution.resolve(chosen).with_lanes(LANES_AXIS)


def _axes(params, shared):
    if not shared:
        return 0
    return type(params)(*[None if f in shared else 0 for f in params._fields])


def _program(
    source: Source,
    bandit: Bandit,
    opts: Options,
    shared: tuple,
    fold: bool,
    devices: int = 1,
):
    """The compiled program of a chunk of lanes (cached).

    ``devices > 1``: the lane axis is split over the first ``devices`` local devices
    by ``shard_map``, and each device runs its own lanes under ``vmap``. The engine's
    "any lane" predicates (the inner loop's stopping test, the fast-segment test,
    :func:`jbandits._lanes.any_lane` in policies) then reduce over the device's own
    lanes: no cross-device rendezvous in the loops, and a device whose lanes are done
    stops. Results do not depend on how lanes are grouped (those predicates only
    choose how much work is done, never what it computes).
    """
    execution = execution_of(source, opts)
    key = (
        execution,  # how phase ends, Bayes-UCB's search and lane pooling compile
        source.ident,
        source.static,
        bandit,
        opts,
        shared,
        fold,
        devices,
        jax.config.x64_enabled,
    )
    fn = _CACHE.get(key)
    if fn is not None:
        _CACHE.move_to_end(key)
        return fn
    static = dict(source.static)
    if execution is not None:
        static["execution"] = execution

    def lane(hp, params, kdata, rep, budget, horizon):
        k = jax.random.wrap_key_data(kdata)
        if fold:
            k = jax.random.fold_in(k, rep)
        policy = source.build(**static, **hp)
        return run(
            policy,
            bandit,
            params,
            k,
            budget=budget,
            horizon=horizon if opts.horizon is None else opts.horizon,
            num_checkpoints=opts.num_checkpoints,
            metric=opts.metric,
            record_arms=opts.record_arms,
            permute=opts.permute,
            return_state=opts.return_state,
            segment=opts.segment,
            axis_name=LANES_AXIS,
            diagnostics=opts.diagnostics,
            key_cache=(source.ident, source.static, execution),
        )

    def lanes(hp, params, kdata, rep, budget, horizon):
        return jax.vmap(
            lane,
            in_axes=(0, _axes(params, shared), 0, 0, 0, 0),
            axis_name=LANES_AXIS,
        )(hp, params, kdata, rep, budget, horizon)

    lanes.__name__ = "jbandits_lanes"
    if devices > 1:
        split = jax.sharding.PartitionSpec(DEVICE_AXIS)
        whole = jax.sharding.PartitionSpec()

        def per_device(hp, params, kdata, rep, budget, horizon):
            spec = params._replace(
                **{f: (whole if f in shared else split) for f in params._fields}
            )
            return jax.shard_map(
                lanes,
                mesh=_mesh(devices),
                in_specs=(split, spec, split, split, split, split),
                out_specs=split,
                check_vma=False,
            )(hp, params, kdata, rep, budget, horizon)

        per_device.__name__ = "jbandits_lanes"
        fn = jax.jit(per_device, compiler_options=compiler_options())
    else:
        fn = jax.jit(lanes, compiler_options=compiler_options())
    _CACHE[key] = fn
    while len(_CACHE) > CACHE_SIZE:
        _CACHE.popitem(last=False)
    return fn


def clear_cache() -> None:
    """Drop every cached program (their executables are freed with them)."""
    _CACHE.clear()


# ---------------------------------------------------------------------- chunk sizing
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


_BYTES: dict = {}


def _shape(x) -> tuple:
    return tuple(x.shape) if hasattr(x, "shape") else np.shape(x)


def _dtype(x):
    return x.dtype if hasattr(x, "dtype") else np.asarray(x).dtype


def _lane_bytes_cached(fn, probe) -> int:
    sig = (
        fn,
        jax.tree_util.tree_structure(probe),
        tuple(
            (_shape(x), np.dtype(_dtype(x)).str, getattr(x, "sharding", None))
            for x in jax.tree_util.tree_leaves(probe)
        ),
    )
    if sig not in _BYTES:
        _BYTES[sig] = lane_bytes(fn, *probe)
    return _BYTES[sig]


def lane_bytes(fn, hp, params, kdata, rep, budget, horizon) -> int:
    """Estimated bytes one lane needs: 8x its inputs and outputs (state, temporaries).

    Tracing the program here is also where a policy that does not fit the instance
    fails; the error is re-raised as a ValueError that says so.
    """
    try:
        abstract = jax.eval_shape(fn, hp, params, kdata, rep, budget, horizon)
    except (TypeError, ValueError, IndexError) as err:
        num_arms = jax.tree_util.tree_leaves(params)[0].shape[-1]
        raise ValueError(
            f"the policy failed on an instance with K={num_arms} arms (was it built "
            f"with num_arms={num_arms}, and do its arguments match?): {err}"
        ) from err
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
    ran ``[lanes]``-shaped kernels far slower at odd sizes (APT, K = 10, 2 cores:
    249, 251 or 253 lanes per device 1.6-1.7x slower per pull than 250 or 256;
    K = 100 unaffected), so one padding lane beats an odd count.
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


# float32 holds every integer up to 2^24 exactly; past it ``n + 1 == n``, so the
# pull counts of the policies' statistics (float, like their sums) stop growing
EXACT_FLOAT32_COUNT = 1 << 24


def check_count_precision(pulls) -> None:
    """Raise if an arm was pulled more often than float32 statistics can count.

    The policies keep their pull counts in the float dtype of their statistics. In
    float32 (JAX's default) a count stops at 2^24 = 16,777,216: the statistics of an
    arm pulled more often are wrong (its mean keeps growing over a frozen count) and
    the run is no longer the paper's algorithm. The engine counts pulls exactly in
    int32, so a chunk's ``pulls`` tell; the check runs on the host after each chunk,
    before anything is stored. With 64-bit floats (``jax_enable_x64``) counts are
    exact to 2^53 and nothing is checked.
    """
    if jnp.result_type(float) != jnp.float32 or np.size(pulls) == 0:
        return
    top = int(np.max(pulls))
    if top > EXACT_FLOAT32_COUNT:
        raise ValueError(
            f"an arm was pulled {top:,} times, more than float32 statistics count "
            f"exactly ({EXACT_FLOAT32_COUNT:,} = 2^24; past it n + 1 == n): the "
            "run's statistics are wrong. Enable 64-bit floats before any JAX work "
            "(jax.config.update('jax_enable_x64', True)) or use a smaller budget"
        )


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


# ----------------------------------------------------------------------- the executor
@dataclass
class Report:
    """What an :func:`execute` call did (for progress, benchmarks and notes)."""

    lanes: int = 0
    chunks: int = 0
    chunks_skipped: int = 0
    chunk_size: int = 0
    lane_steps_executed: int = 0
    pulls: int = 0
    seconds: float = 0.0
    extra: dict = field(default_factory=dict)

    @property
    def noop_fraction(self) -> float:
        """Lane-steps run that pulled nothing (past a lane's budget, or idle)."""
        if not self.lane_steps_executed:
            return 0.0
        return 1.0 - self.pulls / self.lane_steps_executed


def _progress_bar(total: int, desc: str, enabled):
    if enabled is None and os.environ.get("JBANDITS_PROGRESS", "") == "0":
        enabled = False
    if enabled is False:
        return None
    try:
        from tqdm.auto import tqdm
    except ImportError:  # pragma: no cover - tqdm is a dependency
        return None
    return tqdm(
        total=total,
        desc=desc,
        unit="rep",
        unit_scale=True,
        delay=0 if enabled else 2.0,
        file=sys.stderr,
        dynamic_ncols=True,
        leave=bool(enabled),
    )


DEVICE_AXIS = "devices"  # the mesh axis the lane axis is split over


def _mesh(num_devices: int):
    devices = jax.local_devices()[:num_devices]
    return jax.sharding.Mesh(np.array(devices), (DEVICE_AXIS,))


def _lane_steps(used: np.ndarray, segment: int, devices: int) -> int:
    """Lane-steps a chunk ran: each device's block of lanes runs, between two
    checkpoints, as many segments as its slowest lane needed (``used``: [lanes, C]
    segments per lane; the lane axis split into ``devices`` equal blocks)."""
    blocks = used.reshape(devices, -1, used.shape[-1])
    return int(blocks.max(axis=1).sum()) * segment * blocks.shape[1]


def _sharding(num_devices: int):
    return jax.sharding.NamedSharding(
        _mesh(num_devices), jax.sharding.PartitionSpec(DEVICE_AXIS)
    )


@contextlib.contextmanager
def resumable(path: str):
    """Give every :func:`execute` call inside the block a results store under ``path``.

    The ``i``-th call of the block gets the store ``path/<i>-<digest>``, the digest
    taken over its work (policy name, static arguments and factory byte code, numeric
    hyper-parameters, instances, keys, budgets, replications, run options). Run the
    same program again after an interruption (SIGINT, SIGKILL, a session's end) and
    every chunk that finished is read instead of recomputed, so the run resumes and
    ends bit-identical to an uninterrupted one (each store keeps its chunk layout).
    Calls that pass their own ``store`` or ask for ``return_state`` are not stored.
    ``python -m experiments run`` wraps every experiment in this block
    (``OUT/.partial/NAME``) and removes the folder once the results are written.

    Resuming assumes the same code: a call whose work changed gets a new store (its
    digest differs) and recomputes.
    """
    from jbandits.store import Store  # noqa: F401  (fail early without pyarrow)

    # the folder is created by the first stored call (a block without batched work
    # leaves nothing behind)
    _RESUME.append([os.fspath(path), 0])
    try:
        yield path
    finally:
        _RESUME.pop()


def _auto_store(source: Source, bandit: Bandit, lanes: Lanes, opts: Options, hp):
    """The store of this call inside :func:`resumable` (None outside or not storable)."""
    if not _RESUME or opts.return_state:
        return None
    from jbandits.store import Store, digest

    frame = _RESUME[-1]
    index, frame[1] = frame[1], frame[1] + 1
    if not storable(source):
        _warn_not_storable(source)
        return None
    work = {
        "policy": (source.ident, source.static),
        "bandit": bandit.name,
        "hp": hp,
        "params": lanes.params,
        "cells": (lanes.instance, lanes.budget, lanes.keys, lanes.horizon),
        "reps": (lanes.num_reps, lanes.shared, lanes.fold_reps),
        "options": repr(opts),
    }
    fingerprint = {name: digest(value) for name, value in work.items()}
    tag = digest(fingerprint)[:16]
    return Store(os.path.join(frame[0], f"{index:04d}-{tag}"), fingerprint=fingerprint)


def _warn_not_storable(source: Source) -> None:
    import warnings

    warnings.warn(
        f"resumable(): the run of {source.name or 'a policy'} is not stored: only "
        "registered policies (jbandits.make, jbandits.<name>, @registry.policy) can "
        "be recognised when resumed",
        stacklevel=4,
    )


def _process_share(chunk: int) -> bool:
    return chunk % jax.process_count() == jax.process_index()


def execute(
    policy,
    bandit: Bandit,
    lanes: Lanes,
    opts: Options,
    *,
    batch_size: int | None = None,
    memory_budget: int | None = None,
    progress: bool | None = None,
    label: str = "",
    store=None,
    group: str = "g0",
    order: np.ndarray | None = None,
    report: Report | None = None,
) -> dict:
    """Run every lane; returns RunResult fields as NumPy arrays ``[cells, reps, ...]``.

    Args:
      policy: a Policy (``make()``/factory-built ones are rebuilt from their spec), a
        registered name or a factory callable ``(**hp) -> Policy``.
      bandit: the reward family.
      lanes: the cells and replications (:class:`Lanes`).
      opts: static run options (:class:`Options`).
      batch_size: lanes per chunk (default: from ``memory_budget``); must be >= 1.
      memory_budget: bytes a chunk may use (default :func:`default_memory_budget`).
      progress: True shows a bar at once, None (default) after 2 s, False never.
      label: progress-bar label.
      store: a :class:`jbandits.store.Store` (optional): each chunk is written
        atomically under ``group``; chunks already there are read, not recomputed.
      order: cell order (default: by budget, so chunks stop at their own budget).
      report: a :class:`Report` to fill.

    Raises:
      ValueError: bad ``batch_size`` / ``memory_budget``; several processes
        (``jax.distributed``) without a store.
    """
    if store is None and jax.process_count() > 1:
        raise ValueError(
            f"{jax.process_count()} processes (jax.distributed) split the chunks "
            "between them and exchange them through a results store: pass "
            "store=PATH on a file system every process sees"
        )
    source, numeric = source_of(policy)
    hp = {**numeric, **lanes.hp} if numeric else lanes.hp
    report = Report() if report is None else report
    auto = store is None and _auto_store(source, bandit, lanes, opts, hp)
    store = auto or store
    num_cells, reps = lanes.num_cells, lanes.num_reps
    if not lanes.fold_reps and reps != 1:
        raise ValueError("fold_reps=False needs num_reps == 1")
    total = num_cells * reps
    shared, params = lanes.shared, lanes.params
    batched = [f for f in params._fields if f not in shared]
    if batched and np.shape(getattr(params, batched[0]))[0] == 1:
        # one instance: pass it unbatched (a constant of every lane, not a gather)
        params = params._replace(
            **{f: np.asarray(getattr(params, f))[0] for f in batched}
        )
        shared, batched = tuple(params._fields), []
    order = np.argsort(lanes.budget, kind="stable") if order is None else order
    ndev = len(jax.local_devices())
    # per-cell numeric arguments broadcast over cells (scalars given once)
    hp = jax.tree_util.tree_map(lambda x: _per_cell(x, num_cells), hp)
    name = _check_numbers(source, hp, num_cells)
    horizons = lanes.budget if lanes.horizon is None else lanes.horizon
    horizons = np.broadcast_to(np.asarray(horizons), (num_cells,))

    def gather(lane_ids):
        cells = order[lane_ids // reps]
        rep = (lane_ids % reps).astype(np.int32)
        h = jax.tree_util.tree_map(lambda x: x[cells], hp)
        inst = lanes.instance[cells]
        p = params._replace(
            **{f: np.asarray(getattr(params, f))[inst] for f in batched}
        )
        return (
            h,
            p,
            lanes.keys[cells],
            rep,
            lanes.budget[cells].astype(np.int32),
            horizons[cells].astype(np.int32),
        )

    def placed(args, sharding):
        """Shardings of a chunk's arguments: lane axis split, shared fields kept whole."""
        if sharding is None:
            return None
        whole = jax.sharding.NamedSharding(sharding.mesh, jax.sharding.PartitionSpec())
        p_shard = args[1]._replace(
            **{f: (whole if f in shared else sharding) for f in args[1]._fields}
        )
        return (sharding, p_shard, sharding, sharding, sharding, sharding)

    def chunk_lanes(per_lane: int) -> int:
        size = choose_chunk(
            per_lane,
            total,
            memory_budget=memory_budget,
            batch_size=batch_size,
            multiple=ndev,
        )
        if batch_size is None:
            size = _budget_homogeneous(size, lanes.budget, reps, ndev)
        return size

    # The size probe traces the program at the chunk shape (and sharding) chosen when
    # memory does not bind (the user's batch_size, or the whole work cut to chunks of
    # one budget), so when that is the size chosen the call below reuses the trace
    # (tracing is most of a second run's wall time once the executables are cached;
    # probing at the whole work traced chunked runs twice). The probe is abstract:
    # one gathered lane gives dtypes and trailing shapes.
    probe_size = chunk_lanes(1)
    one = gather(np.zeros(1, np.int64))
    tu = jax.tree_util

    def expand(prefix):  # a value per argument (or params field) -> one per leaf
        return tu.tree_map(lambda v, sub: tu.tree_map(lambda _: v, sub), prefix, one)

    lead = expand(
        (True, one[1]._replace(**{f: f not in shared for f in one[1]._fields}))
        + (True,) * 4
    )
    where = placed(one, _sharding(ndev) if ndev > 1 else None)
    fn = _program(source, bandit, opts, shared, lanes.fold_reps, ndev)
    where = tu.tree_leaves(expand(where)) if where is not None else None
    leaves, tree = tu.tree_flatten(one)
    probe = tu.tree_unflatten(
        tree,
        [
            jax.ShapeDtypeStruct(
                (probe_size, *_shape(x)[1:]) if batched_leaf else _shape(x),
                jax.dtypes.canonicalize_dtype(_dtype(x)),
                sharding=None if where is None else where[n],
            )
            for n, (x, batched_leaf) in enumerate(
                zip(leaves, tu.tree_leaves(lead), strict=True)
            )
        ],
    )
    size = chunk_lanes(_lane_bytes_cached(fn, probe))
    if store is not None:  # a resumed run keeps the recorded chunk layout
        size = store.chunk_size(group, size)
    num_chunks = -(-total // size)
    sharding = _sharding(ndev) if ndev > 1 and size % ndev == 0 else None
    if sharding is None and ndev > 1:
        fn = _program(source, bandit, opts, shared, lanes.fold_reps)
    report.lanes += total
    report.chunk_size = size
    out: dict = {}
    bar = _progress_bar(total, label or name, progress)
    t0 = time.perf_counter()
    seg = opts.segment or default_segment(
        None if opts.horizon is None else math.ceil(opts.horizon / opts.num_checkpoints)
    )
    for chunk in range(num_chunks):
        start, stop = chunk * size, min(total, (chunk + 1) * size)
        lane_ids = np.arange(start, start + size) % total  # pad: wrap around
        cells = order[lane_ids[: stop - start] // reps]
        rep = lane_ids[: stop - start] % reps
        part = None
        if store is not None and store.has(group, chunk):
            part = store.read(group, chunk)
            report.chunks_skipped += 1
        elif _process_share(chunk):
            args = gather(lane_ids)
            if sharding is not None:  # lane axis split; shared fields replicated
                args = jax.device_put(args, placed(args, sharding))
            res = jax.device_get(fn(*args))
            check_count_precision(res.pulls)
            part = _host(res, stop - start)
            used = np.asarray(res.segments)  # [size, C]
            report.lane_steps_executed += _lane_steps(
                used, seg, 1 if sharding is None else ndev
            )
            report.pulls += int(np.asarray(res.num_pulls).sum())
            if store is not None:
                store.write(group, chunk, part)
            report.chunks += 1
        if part is not None:
            _scatter(out, part, cells, rep, num_cells, reps)
        if bar is not None:
            bar.update(stop - start)
    if bar is not None:
        bar.close()
    if store is not None and jax.process_count() > 1:
        store.wait(group, num_chunks)
        for chunk in range(num_chunks):
            if not _process_share(chunk):
                start, stop = chunk * size, min(total, (chunk + 1) * size)
                ids = np.arange(start, stop)
                _scatter(
                    out,
                    store.read(group, chunk),
                    order[ids // reps],
                    ids % reps,
                    num_cells,
                    reps,
                )
    if auto:
        auto.finish()
    report.seconds += time.perf_counter() - t0
    return out


def _check_numbers(source: Source, hp: dict, num_cells: int) -> str:
    """Reject NaN/inf numbers, then build the policy on the host once per distinct
    row of numbers, so that its own checks (ranges, signs) see concrete values —
    inside the compiled program they are traced and cannot raise. Returns the name
    to show for the work: the source's, or for an anonymous factory (a lambda) the
    registered name of the policy it builds."""
    for path, leaf in jax.tree_util.tree_flatten_with_path(hp)[0]:
        leaf = np.asarray(leaf)
        if leaf.dtype.kind == "f" and not np.all(np.isfinite(leaf)):
            bad = np.flatnonzero(~np.isfinite(leaf).reshape(num_cells, -1).all(-1))
            raise ValueError(
                f"{jax.tree_util.keystr(path)} must be finite, got "
                f"{leaf.reshape(num_cells, -1)[bad[0]]} (cell {bad[0]})"
            )
    name = source.name if source.name not in ("", "<lambda>") else None
    if isinstance(source.ident, Policy) or not hp:
        return name or source.name or "policy"
    leaves, treedef = jax.tree_util.tree_flatten(hp)
    seen = set()
    for cell in range(num_cells):
        row = [np.asarray(x)[cell] for x in leaves]
        sig = b"".join(r.tobytes() for r in row)
        if sig in seen:
            continue
        seen.add(sig)
        kw = jax.tree_util.tree_unflatten(treedef, row)
        try:
            built = source.build(**dict(source.static), **kw)
        except ValueError as err:
            raise ValueError(f"{source.name}, cell {cell}: {err}") from err
        spec = getattr(built, "spec", None)
        if name is None and spec is not None:
            name = spec.name
        if len(seen) >= 4096:  # enough to catch bad grids; the rest is traced
            break
    return name or source.name or "policy"


def _per_cell(x, num_cells: int):
    x = np.asarray(x)
    if x.ndim == 0 or x.shape[0] != num_cells:
        return np.broadcast_to(x, (num_cells, *x.shape))
    return x


def _host(res: RunResult, n: int) -> dict:
    """Flatten a chunk's RunResult into ``{field: array [n, ...]}`` (padding cut)."""
    flat = {}
    for name, value in res._asdict().items():
        if value is None or name == "segments":
            continue
        if name in ("metrics", "diagnostics"):
            prefix = "metric" if name == "metrics" else "diag"
            for m, v in value.items():
                flat[f"{prefix}.{m}"] = np.asarray(v)[:n]
        elif name == "state":
            leaves, treedef = jax.tree_util.tree_flatten(value)
            for i, leaf in enumerate(leaves):
                flat[f"state.{i}"] = np.asarray(leaf)[:n]
            flat["_state_treedef"] = treedef
        else:
            flat[name] = np.asarray(value)[:n]
    return flat


def _scatter(out: dict, part: dict, cells, rep, num_cells: int, reps: int) -> None:
    for name, value in part.items():
        if name.startswith("_"):
            out[name] = value
            continue
        if name not in out:
            out[name] = np.zeros((num_cells, reps, *value.shape[1:]), value.dtype)
        out[name][cells, rep] = value


def to_result(flat: dict, lead: tuple) -> RunResult:
    """A RunResult with leaves ``[*lead, ...]`` from :func:`execute`'s flat dict."""

    def shape(x):
        return x.reshape(*lead, *x.shape[2:])

    state_tree = None
    if "_state_treedef" in flat:
        count = flat["_state_treedef"].num_leaves
        state_tree = jax.tree_util.tree_unflatten(
            flat["_state_treedef"], [shape(flat[f"state.{i}"]) for i in range(count)]
        )

    metrics = {k[7:]: shape(v) for k, v in flat.items() if k.startswith("metric.")}
    diag = {k[5:]: shape(v) for k, v in flat.items() if k.startswith("diag.")}
    return RunResult(
        times=shape(flat["times"]),
        metrics=metrics,
        regret=shape(flat["regret"]),
        reward=shape(flat["reward"]),
        pulls=shape(flat["pulls"]),
        num_pulls=shape(flat["num_pulls"]),
        stopped=shape(flat["stopped"]),
        output=shape(flat["output"]),
        arms=shape(flat["arms"]) if "arms" in flat else None,
        state=state_tree,
        perm=shape(flat["perm"]) if "perm" in flat else None,
        diagnostics=diag or None,
    )
