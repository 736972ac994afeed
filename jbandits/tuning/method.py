"""Which search :func:`jbandits.tuning.tune` runs, and why (``TuneResult.method``).

The defaults are the ones the tuning benchmark favoured (``benchmarks/
notes_tuning_tasks.md``): for one parameter a 5-point grid on common random numbers
then ES steps (runs 3 and 4: a halved 16-point grid did no better); for two or more
successive halving of a product grid, ES steps and a race (runs 3, 4 and 6), the grid
11 x 11 for two parameters and 6 x 6 x 6 beyond, or 8 x 8 / 5 x 5 x 5 where the
finer grid's first halving round would give a point fewer than 6 replications (issue
53; :func:`jbandits.tuning.allocation.halving_design`).
"""

from __future__ import annotations

import numpy as np

from jbandits.tuning import allocation
from jbandits.tuning.options import ES, PG, Search


def init_points(search: Search, dim: int, select: float) -> tuple[int, str]:
    """``(points per axis of the starting grid, why)``; 0 when ``search.start`` is
    given (no grid)."""
    if search.start is not None:
        return 0, "Search(start=...) given: no starting grid"
    if search.init_points:
        return search.init_points, f"Search(init_points={search.init_points})"
    if search.halving_for(dim):
        keep = max(allocation.HALVING_KEEP, search.starts)
        return allocation.halving_design(dim, search.simulations, select, keep)
    n = search.init_points_for(dim)
    return n, f"{n} points per axis (the default grid for {dim} parameter(s))"


def describe(search: Search, estimator, dim: int, select: float, grid) -> dict:
    """The ``method`` dict: ``allocation``, ``design``, ``estimator``, ``final``
    (what ran) and ``why`` (one sentence for each); ``grid``: :func:`init_points`'s
    answer."""
    allocation_name = search.allocation_for(dim)
    if search.start is not None:
        allocation_name, a_why = "start", "Search(start=...) given: no grid"
    elif search.allocation is not None:
        a_why = f"Search(allocation={search.allocation!r})"
    elif dim == 1:
        a_why = "the default for one parameter: an even grid, then ES steps"
    else:
        a_why = (
            f"the default for {dim} parameters: successive halving of a grid, ES "
            "steps, a race between the candidates"
        )
    if isinstance(estimator, PG):
        est, e_why = f"PG(temperature={estimator.temperature:g})", "given"
    else:
        est = f"ES(sigma={estimator.sigma:g}, num_pairs={estimator.num_pairs}, "
        est += f"crn={estimator.crn}"
        if np.isfinite(estimator.sigma_decay):
            est += f", sigma_decay={estimator.sigma_decay:g}"
        est += ")"
        e_why = "the default (any policy)" if estimator == ES().resolved(dim) else ""
        e_why = e_why or "given (unset fields: their defaults for this dimension)"
    if select <= 0:
        final, f_why = "none", "select=0: the descent's average is the result"
    elif search.halving_for(dim):
        final, f_why = "race", f"select={select:g} of the simulations, as a race"
    else:
        final = "equal shares"
        f_why = f"select={select:g} of the simulations, equal shares"
    return {
        "allocation": allocation_name,
        "design": " x ".join([str(grid[0])] * dim) if grid[0] else "none",
        "estimator": est,
        "final": final,
        "why": {
            "allocation": a_why,
            "design": grid[1],
            "estimator": e_why,
            "final": f_why,
        },
    }
