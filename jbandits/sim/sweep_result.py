""":class:`SweepResult`: the labelled results of :func:`jbandits.sweep_grid`, as a
tidy table (:meth:`SweepResult.to_dataframe`) or means with confidence intervals
(:meth:`SweepResult.summary`)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from jbandits.sim import runner


@dataclass
class SweepResult:
    """Labelled results of :func:`sweep_grid`.

    Attributes:
      cells: list of dicts, one per cell: policy, hyper-parameters, K, instance,
        budget (the labels).
      values: ``{field: array [cells, reps, ...]}`` (``metric.NAME`` ``[.., C]``,
        ``regret``, ``times``, ``num_pulls``, ...).
      report: what ran (:class:`jbandits.sim.runner.Report`), incl. the no-op fraction.
    """

    cells: list
    values: dict
    report: runner.Report = field(default_factory=runner.Report)

    @property
    def num_stopped(self) -> int:
        """Runs the policy stopped by itself, over every cell."""
        return int(np.sum(self.values["stopped"]))

    @property
    def num_capped(self) -> int:
        """Runs that reached their budget without the policy stopping, over every
        cell (see :meth:`summary`'s ``capped``)."""
        return int(np.size(self.values["stopped"])) - self.num_stopped

    def to_dataframe(self):
        """Tidy table: one row per (cell, replication, checkpoint) (needs pandas);
        a run's own values (``num_pulls``, ``stopped``) repeat on its checkpoints."""
        import pandas as pd

        num_cells, reps, num_ckpt = self.values["times"].shape
        idx = np.arange(num_cells * reps * num_ckpt)
        cell = idx // (reps * num_ckpt)
        frame = pd.DataFrame(self.cells).iloc[cell].reset_index(drop=True)
        frame["rep"] = (idx // num_ckpt) % reps
        frame["checkpoint"] = idx % num_ckpt
        for name, value in self.values.items():
            if value.shape[2:] == (num_ckpt,):
                frame[name.removeprefix("metric.")] = value.reshape(-1)
            elif value.shape[2:] == () and name in _PER_RUN:
                frame[name] = np.repeat(value.reshape(-1), num_ckpt)
        return frame

    def summary(self, z: float = 1.959963984540054):
        """Mean and CI per (cell, checkpoint) of each value (``NAME``, ``NAME_lo``,
        ``NAME_hi``).

        Rates (an ``error`` metric, boolean values) get the Wilson score interval
        (:func:`jbandits.analysis.metrics.binomial_ci`: inside [0, 1], not empty at a rate of
        0 or 1); other values (regret, reward, misclassified, simple regret) the
        normal interval ``mean +- z * sd / sqrt(reps)``.

        Every row also has its cell's ``stopped`` and ``capped`` counts (runs the
        policy stopped by itself; runs that reached the budget without stopping) and
        ``num_pulls`` with its normal interval: the stopping time of a
        fixed-confidence policy, a capped run counted at its budget (with
        ``capped > 0`` the mean is a lower bound of the mean stopping time).
        """
        import pandas as pd

        from jbandits.analysis.metrics import binomial_ci

        rows = []
        num_ckpt = self.values["times"].shape[2]
        rates = {name: _is_rate(name, v) for name, v in self.values.items()}
        for c, labels in enumerate(self.cells):
            for j in range(num_ckpt):
                row = {
                    **labels,
                    "checkpoint": j,
                    "time": int(self.values["times"][c, 0, j]),
                }
                for name, value in self.values.items():
                    if name == "times" or value.shape[2:] != (num_ckpt,):
                        continue
                    x = value[c, :, j].astype(np.float64)
                    short = name.removeprefix("metric.")
                    if rates[name]:
                        mean, lo, hi = (float(v) for v in binomial_ci(x, z=z))
                    else:
                        se = x.std(ddof=1) / math.sqrt(x.size) if x.size > 1 else 0.0
                        mean, lo, hi = x.mean(), x.mean() - z * se, x.mean() + z * se
                    row[short] = mean
                    row[short + "_lo"] = lo
                    row[short + "_hi"] = hi
                row.update(_stopping(self.values, c, z))
                rows.append(row)
        frame = pd.DataFrame(rows)
        # policy, hyper-parameters (of every policy), K, instance, budget, values
        labels = list(dict.fromkeys(k for c in self.cells for k in c))
        tail = [k for k in ("K", "instance", "budget") if k in labels]
        labels = [k for k in labels if k not in tail] + tail
        return frame[labels + [c for c in frame.columns if c not in labels]]


_PER_RUN = ("num_pulls", "stopped")  # a run's own values, no checkpoint axis


def _stopping(values: dict, c: int, z: float) -> dict:
    """Cell ``c``'s stopped and capped counts and its mean ``num_pulls`` with the
    normal interval (nothing for values without them, e.g. built by hand)."""
    if "stopped" not in values or "num_pulls" not in values:
        return {}
    done = np.asarray(values["stopped"][c], bool)
    x = np.asarray(values["num_pulls"][c], np.float64)
    se = x.std(ddof=1) / math.sqrt(x.size) if x.size > 1 else 0.0
    return {
        "stopped": int(done.sum()),
        "capped": int((~done).sum()),
        "num_pulls": x.mean(),
        "num_pulls_lo": x.mean() - z * se,
        "num_pulls_hi": x.mean() + z * se,
    }


def _is_rate(name: str, value: np.ndarray) -> bool:
    """A field of 0/1 outcomes: booleans, or an ``error`` metric that is 0 or 1."""
    if value.dtype == np.bool_:
        return True
    return name.removeprefix("metric.") == "error" and bool(
        np.all((value == 0) | (value == 1))
    )
