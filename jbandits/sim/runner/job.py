"""What a run is: a :class:`Job` of :class:`Part` s, which :func:`~jbandits.sim.runner.run` runs.

:func:`jbandits.simulate`, :func:`jbandits.sweep` and :func:`jbandits.sweep_grid`
each check their own arguments and normalise them into a :class:`Job`: the reward
family, the run options, and one :class:`Part` per compiled program (a policy
source and its cells; ``simulate`` and ``sweep`` have one, ``sweep_grid`` one per
policy and K bucket). :func:`jbandits.sim.runner.run` runs every part and closes the
store; each entry point then shapes the results it returns (and warns about capped
fixed-confidence runs). :func:`jbandits.sim.runner.execute` is a job of one part.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from jbandits.core.types import Bandit
from jbandits.sim.runner.programs import Options, Source
from jbandits.sim.runner.work import Lanes


@dataclasses.dataclass(frozen=True)
class Part:
    """One compiled program's share of a job: ``source`` on ``lanes``.

    ``label`` names it on the progress bar, ``group`` in the store; ``order``: the
    cells' order (default: by budget); ``refill``: see
    :func:`jbandits.sim.runner.execute`."""

    source: Source
    lanes: Lanes
    label: str = ""
    group: str = "g0"
    order: np.ndarray | None = None
    refill: bool | None = None


@dataclasses.dataclass(frozen=True)
class Job:
    """Everything a run needs, normalised by an entry point.

    Attributes:
      bandit: the reward family.
      parts: the programs to run (:class:`Part`).
      opts: the static run options (:class:`jbandits.sim.runner.Options`).
      store: a :class:`jbandits.analysis.store.Store`, or None.
      call: the runner's keyword arguments (``progress``, ``batch_size``,
        ``memory_budget``, ``report``).
      cells: the labelled cells written to the store (``sweep_grid``), or None.
      finish: mark the store complete once every part has run.
    """

    bandit: Bandit
    parts: tuple
    opts: Options
    store: Any = None
    call: dict = dataclasses.field(default_factory=dict)
    cells: list | None = None
    finish: bool = True
