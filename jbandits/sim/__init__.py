"""The simulation layer: one replication, the engine, the batched entry points, the
runner and its backends.

* :mod:`jbandits.sim.replication`, :mod:`jbandits.sim.segments`: one lane (set-up,
  step, stopping, read-outs), shared by the XLA engine and the fused kernel;
* :mod:`jbandits.sim.engine`: :func:`run`, one replication as a pure function;
* :func:`simulate` (:mod:`jbandits.sim.simulate`), :func:`sweep` and
  :func:`product_grid` (:mod:`jbandits.sim.sweep`), :func:`sweep_grid` and
  :func:`k_bucket` (:mod:`jbandits.sim.sweep_grid`), :class:`SweepResult`: the batched
  entry points; their argument checks are :mod:`jbandits.sim.checks`, the steps they
  share on the way to the runner :mod:`jbandits.sim.entry`;
* :mod:`jbandits.sim.runner`: programs, chunking, devices, resume;
  :mod:`jbandits.sim.fused`: the fused (Pallas) backend.

All batched entry points default to ``permute=True`` (a random relabelling of the
arms per replication): the policies break ties toward the lowest index, which is
faithful to the papers only when arm labels are random.
"""

from __future__ import annotations

from jbandits.sim.engine import RunResult, run
from jbandits.sim.simulate import simulate
from jbandits.sim.sweep import product_grid, sweep
from jbandits.sim.sweep_grid import k_bucket, sweep_grid
from jbandits.sim.sweep_result import SweepResult

__all__ = [
    "RunResult",
    "SweepResult",
    "k_bucket",
    "product_grid",
    "run",
    "simulate",
    "sweep",
    "sweep_grid",
]
