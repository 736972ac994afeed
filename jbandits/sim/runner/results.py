"""Results: what a call did (:class:`Report`, the progress bar), a chunk's results
on the host (:func:`_host`, :func:`_scatter` into ``[cells, reps, ...]`` arrays,
:func:`to_result`), and the float32 count check every chunk passes before it is
kept."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field

import jax
import jax.numpy as jnp
import numpy as np

from jbandits.core import validate as _validate
from jbandits.sim.engine import RunResult


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


class CappedRunsWarning(UserWarning):
    """Runs of a fixed-confidence policy reached their budget without stopping."""


def warn_capped(who: str, name: str, stopped, budgets) -> None:
    """A one-line :class:`CappedRunsWarning` when any run of fixed-confidence policy
    ``name`` is capped: ``stopped`` its runs' flags, ``budgets`` (broadcast to them)
    their budgets. A capped run counts at its budget (``num_pulls``) with the
    output at the cap as its recommendation: the mean stopping time is then a lower
    bound, and the error rate not that of the stopping rule."""
    stopped = np.asarray(stopped, bool)
    capped = ~stopped
    count = int(capped.sum())
    if not count:
        return
    at = np.unique(np.broadcast_to(np.asarray(budgets), stopped.shape)[capped])
    where = f"budget {at[0]}" if at.size == 1 else f"budgets {at[0]}..{at[-1]}"
    _validate.warn(
        f"{who}: {count} of {stopped.size} runs of {name} reached their {where} "
        "without stopping (capped: counted at the budget, with the output at the cap "
        "as their recommendation; see num_capped and stopped); raise the budget",
        CappedRunsWarning,
    )


def _host(res: RunResult, n: int) -> dict:
    """Flatten a chunk's RunResult into ``{field: array [n, ...]}`` (padding cut)."""
    flat = {}
    for name, value in res._asdict().items():
        if value is None or name in ("segments", "violations"):  # checked, not kept
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
