"""The one batched runner: lanes of (cell, replication), chunked, sharded, cached.

Every batched entry point — :func:`jbandits.simulate`, :func:`jbandits.sweep`,
:func:`jbandits.sweep_grid`, the tuner and the experiments — describes its work as
*cells* (a policy's numeric hyper-parameters, an instance, a budget) times
replications, and hands them to :func:`execute`. A *lane* is one replication of one
cell: one call of :func:`jbandits.sim.engine.run`. :func:`execute`

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
  given a :class:`jbandits.analysis.store.Store`, writes each chunk atomically and skips the
  chunks already written (resume).

Lane keys: the cell key is ``fold_in(key, instance)`` for a batch of instances, else
``key``; replication ``r`` uses ``fold_in(cell_key, r)`` (equal to
``jax.random.split(cell_key, R)[r]``), the same for every grid point and policy
(common random numbers).

This package is the documented low-level tier: experiments, benchmarks and the tuner
use the names exported here (``from jbandits import runner``; ``runner.execute``).
Its modules, one job each:

* :mod:`~jbandits.sim.runner.programs` — policy sources (:class:`Source`,
  :func:`registered`, :func:`source_of`, :func:`storable`), run :class:`Options`,
  the :class:`~jbandits.core.execution.Execution` of a program (:func:`execution_of`)
  and the compiled programs (:func:`program`) in a bounded LRU cache (:data:`CACHE_SIZE`,
  :func:`clear_cache`, :func:`program_cache`);
* :mod:`~jbandits.sim.runner.work` — the work: :class:`Lanes`,
  :func:`instance_keys`, numbers per cell (:func:`per_cell`) and their checks, a
  chunk's arguments;
* :mod:`~jbandits.sim.runner.chunking` — chunks and memory (:func:`default_memory_budget`,
  :func:`lane_bytes`, :func:`choose_chunk`, budget-homogeneous chunks,
  :data:`MIN_CHUNK`);
* :mod:`~jbandits.sim.runner.devices` — the device mesh (:data:`DEVICE_AXIS`), argument
  shardings, each process's share of the chunks, lane-steps run per device;
* :mod:`~jbandits.sim.runner.job` — what a run is: a :class:`Job` of :class:`Part` s
  (a policy source and its lanes each), the one form the entry points normalise
  their arguments into;
* :mod:`~jbandits.sim.runner.loop` — the execution loop: :func:`run` runs a job,
  :func:`execute` a job of one part;
* :mod:`~jbandits.sim.runner.results` — :class:`Report`, the progress bar, a chunk's
  results on the host, :func:`to_result`, :func:`check_count_precision`;
* :mod:`~jbandits.sim.runner.resume` — :func:`resumable`: a store per call, resumed.

Module state lives where it is read: the program cache and :data:`CACHE_SIZE` in
``programs``, :data:`EXACT_FLOAT32_COUNT` in ``results``, the active
:func:`resumable` blocks in ``resume``; to change a setting, set it there
(``runner.programs.CACHE_SIZE = 8``). The names exported here are copies for
reading; assigning ``runner.CACHE_SIZE`` or ``runner.EXACT_FLOAT32_COUNT`` (the form
of versions where the runner was one module, forwarded until 0.2.0) raises
AttributeError naming the module to set.
"""

import sys
import types

from jbandits.core import registry  # noqa: F401  (runner.registry: sweeps reads it)
from jbandits.sim.runner.chunking import (
    CPU_MAX_LANE_BYTES,
    MIN_CHUNK,
    choose_chunk,
    default_memory_budget,
    lane_bytes,
)
from jbandits.sim.runner.devices import DEVICE_AXIS
from jbandits.sim.runner.devices import _lane_steps as _lane_steps
from jbandits.sim.runner.job import Job, Part
from jbandits.sim.runner.loop import execute, run
from jbandits.sim.runner.programs import _CACHE as _CACHE
from jbandits.sim.runner.programs import (
    CACHE_SIZE,
    LANES_AXIS,
    Options,
    Source,
    clear_cache,
    code_of,
    execution_of,
    registered,
    source_of,
    storable,
)
from jbandits.sim.runner.programs import _program as program
from jbandits.sim.runner.results import (
    EXACT_FLOAT32_COUNT,
    Report,
    check_count_precision,
    to_result,
)
from jbandits.sim.runner.resume import resumable
from jbandits.sim.runner.work import Lanes, instance_keys, per_cell

# ``X as X`` above: private names still read by the tests; the tier is the names
# below.
__all__ = [
    "CACHE_SIZE",
    "CPU_MAX_LANE_BYTES",
    "DEVICE_AXIS",
    "EXACT_FLOAT32_COUNT",
    "LANES_AXIS",
    "MIN_CHUNK",
    "Job",
    "Lanes",
    "Options",
    "Part",
    "Report",
    "Source",
    "check_count_precision",
    "choose_chunk",
    "clear_cache",
    "code_of",
    "default_memory_budget",
    "execute",
    "execution_of",
    "instance_keys",
    "lane_bytes",
    "per_cell",
    "program",
    "program_cache",
    "registered",
    "resumable",
    "run",
    "source_of",
    "storable",
    "to_result",
]


def program_cache():
    """The runner's cache of compiled programs itself (not a copy): an ordered dict
    from a program's key to the program, least recently used first, at most
    ``runner.programs.CACHE_SIZE`` entries (:func:`program` fills it,
    :func:`clear_cache` empties it).

    For benchmarks that look at the programs a call compiled
    (``benchmarks/fused_lowering.py``) or time a call against a saved set of them
    (``benchmarks/contract_cost.py``); a call's results never depend on it.
    """
    return _CACHE


class _Runner(types.ModuleType):
    """``jbandits.sim.runner`` itself: assigning a setting that lives in a submodule
    raises AttributeError naming that module (an assignment here would change a copy
    that nothing reads)."""

    _SETTINGS = {"CACHE_SIZE": "programs", "EXACT_FLOAT32_COUNT": "results"}

    def __setattr__(self, name, value):
        home = self._SETTINGS.get(name)
        if home is not None:
            raise AttributeError(
                f"jbandits.sim.runner.{name} = ... was removed in 0.2.0 (it changed "
                f"a copy that nothing reads): set jbandits.sim.runner.{home}.{name}"
            )
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Runner
