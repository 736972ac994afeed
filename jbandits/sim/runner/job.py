"""The one path of the entry points: a :class:`Job` says what to run, :func:`run` runs it.

:func:`jbandits.simulate`, :func:`jbandits.sweep` and :func:`jbandits.sweep_grid`
each check their own arguments and normalise them into a :class:`Job`: the reward
family, the run options, and one :class:`Part` per compiled program (a policy
source and its cells; ``simulate`` and ``sweep`` have one, ``sweep_grid`` one per
policy and K bucket). :func:`run` hands every part to the batched runner
(:func:`jbandits.sim.runner.execute`) and closes the store; each entry point then
shapes the results it returns (and warns about capped fixed-confidence runs).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from jbandits.core.types import Bandit
from jbandits.sim import runner


@dataclasses.dataclass(frozen=True)
class Part:
    """One compiled program's share of a job: ``source`` on ``lanes``.

    ``label`` names it on the progress bar, ``group`` in the store."""

    source: runner.Source
    lanes: runner.Lanes
    label: str = ""
    group: str = "g0"


@dataclasses.dataclass(frozen=True)
class Job:
    """Everything a run needs, normalised by an entry point.

    Attributes:
      bandit: the reward family.
      parts: the programs to run (:class:`Part`).
      opts: the static run options (:class:`jbandits.sim.runner.Options`).
      store: a :class:`jbandits.analysis.store.Store`, or None.
      call: the runner's keyword arguments (progress, batch_size, memory_budget,
        report).
      cells: the labelled cells written to the store (``sweep_grid``), or None.
    """

    bandit: Bandit
    parts: tuple
    opts: runner.Options
    store: Any = None
    call: dict = dataclasses.field(default_factory=dict)
    cells: list | None = None


def run(job: Job, each=None) -> list[dict]:
    """Run every part of ``job``: the runner's flat results ``[cells, reps, ...]``
    per part, in order; or, given ``each``, ``each(i, flat)`` is called as part
    ``i`` ends (its results are not kept) and the list is empty. The store (if any)
    is then finished, with the labelled cells and the report's lane counts for
    ``sweep_grid``."""
    flats = []
    for i, part in enumerate(job.parts):
        flat = runner.execute(
            part.source, job.bandit, part.lanes, job.opts, store=job.store,
            group=part.group, label=part.label, **job.call,
        )  # fmt: skip
        if each is None:
            flats.append(flat)
        else:
            each(i, flat)
    if job.store is not None:
        info = {}
        if job.cells is not None:
            job.store.write_cells(job.cells)
            report = job.call.get("report")
            if report is not None:
                info = {"noop_fraction": report.noop_fraction, "lanes": report.lanes}
        job.store.finish(**info)
    return flats
