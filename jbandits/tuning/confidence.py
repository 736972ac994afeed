"""How sure the tuner is: the paired confidence statement (:class:`Confidence`, on
fresh common replications drawn after the tuned point was chosen, so its difference
to the start and the best evaluated point is not biased by the choice) and the
warnings (:class:`TuningWarning`): a loss that does not depend on theta, a landscape
flat within noise (a repeated-measures F test on the grid, 5% level, and no paired
CI against the start excluding 0), a tuned value on the box's edge (within 1%).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import jax
import numpy as np

from jbandits.analysis import stats
from jbandits.analysis.stats import Paired
from jbandits.tuning.results import Evaluation, _ci

EDGE = 0.01  # share of a coordinate's range that counts as the box's edge
FLAT_P = 0.05  # the grid's homogeneity test level


class TuningWarning(UserWarning):
    """The tuned result deserves caution: a flat landscape or an edge optimum."""


@dataclass
class Confidence:
    """The confidence statement of a :class:`~jbandits.tuning.TuneResult`.

    Attributes:
      rows: name (``"tuned"``, ``"start"``, ``"best evaluated"``) -> (theta, mean
        loss, its standard error) on ``num_reps`` fresh common replications.
      paired: ``"tuned - start"``, ``"tuned - best evaluated"`` and
        ``"best evaluated - start"`` -> :class:`~jbandits.analysis.stats.Paired`
        with its 95% CI (negative: the first is better).
      num_reps: fresh replications per point.
      simulations: simulations this statement cost (not counted in
        ``TuneResult.simulations``; shared with ``Report.evaluate`` when it ran).
      grid_p: p-value of the coarse grid's homogeneity test (None without a grid).
    """

    rows: dict
    paired: dict
    num_reps: int
    simulations: int
    grid_p: float | None = None

    def __str__(self) -> str:
        lines = [f"confidence ({self.num_reps} fresh common replications):"]
        for name, p in self.paired.items():
            d, se, lo, hi = p
            verdict = "significant" if p.significant else "within noise"
            lines.append(
                f"  {name:24s} {d:+.4g} +- {se:.2g} [{lo:+.4g}, {hi:+.4g}] ({verdict})"
            )
        if self.grid_p is not None:
            lines.append(f"  coarse grid homogeneity test: p = {self.grid_p:.3g}")
        return "\n".join(lines)


def paired(x: np.ndarray) -> Paired:
    """The mean of ``[R]`` paired differences with its 95% CI (one replication: a
    zero-width interval)."""
    return stats.paired(x, single=0.0)


def grid_homogeneity(per: np.ndarray) -> float:
    """p-value of "every grid point has the same mean loss" for ``[G, R]`` losses on
    common replications (repeated-measures one-way ANOVA: the replication is the
    block, so the noise that all points share cancels)."""
    from scipy import stats

    per = np.asarray(per, np.float64)
    per = per[np.all(np.isfinite(per), axis=1)]
    g, r = per.shape
    if g < 2 or r < 2:
        return 1.0
    point = per.mean(1, keepdims=True)
    resid = per - point - per.mean(0, keepdims=True) + per.mean()
    ms_points = r * float(((point - per.mean()) ** 2).sum()) / (g - 1)
    ms_err = float((resid**2).sum()) / ((g - 1) * (r - 1))
    scale = max(1.0, float(np.abs(per).max()))
    if ms_points <= 1e-24 * scale**2:
        return 1.0
    if ms_err <= 1e-24 * scale**2:
        return 0.0
    return float(stats.f.sf(ms_points / ms_err, g - 1, (g - 1) * (r - 1)))


def unique_losses(objective, space, points: dict, *, num_reps, key, chunk):
    """``{name: [R] losses}`` of named ``z`` points on common replications (points
    equal within 1e-9 run once)."""
    names, z_unique, index = list(points), [], []
    for n in names:
        z = np.asarray(points[n], np.float64)
        hit = [i for i, u in enumerate(z_unique) if np.max(np.abs(z - u)) <= 1e-9]
        if not hit:
            z_unique.append(z)
        index.append(hit[0] if hit else len(z_unique) - 1)
    per = objective.losses(
        space.batch_from_z(np.stack(z_unique)), key, num_reps, chunk=chunk
    )
    return {n: per[i] for n, i in zip(names, index, strict=True)}, per.size


def evaluate_points(
    objective, space, rows: dict, *, num_reps: int, key, chunk: int, extra=None
):
    """Mean loss with 95% CIs of named points on common fresh replications, and the
    paired differences ``tuned - other`` (an :class:`Evaluation`).

    ``extra`` (name -> theta) adds points evaluated on the same replications but
    kept out of the Evaluation; with it, returns ``(Evaluation, {name: [R]})``."""
    from jbandits.tuning.objective import as_key
    from jbandits.tuning.space import Space

    num_reps = stats.count("num_reps", num_reps, 2)
    space = space if isinstance(space, Space) else Space(space)
    key = as_key(key)
    points = {n: space.to_z(t) for n, t in {**rows, **(extra or {})}.items()}
    per, _ = unique_losses(
        objective, space, points, num_reps=num_reps, key=key, chunk=chunk
    )
    out = {n: (rows[n], *_ci(per[n])) for n in rows}
    diffs = {f"tuned - {n}": _ci(per["tuned"] - per[n]) for n in rows if n != "tuned"}
    ev = Evaluation(
        out, diffs if "tuned" in rows else {}, num_reps, num_reps * len(rows)
    )
    return ev if extra is None else (ev, per)


def statement(thetas: dict, per: dict, num_reps: int, sims: int, grid_per):
    """The :class:`Confidence` of ``per`` (name -> [R] fresh losses)."""
    rows = {
        n: (thetas[n], float(per[n].mean()), paired(per[n]).se)
        for n in per
        if n in thetas
    }
    diffs = {}
    for a, b in (
        ("tuned", "start"),
        ("tuned", "best evaluated"),
        ("best evaluated", "start"),
    ):
        if a in per and b in per:
            diffs[f"{a} - {b}"] = paired(per[a] - per[b])
    grid_p = None if grid_per is None else grid_homogeneity(grid_per)
    return Confidence(rows, diffs, num_reps, sims, grid_p)


def attach(result, objective, space, report, num_reps, *, grid, key, chunk) -> None:
    """Fill ``result``'s evaluation (``report.evaluate``), its confidence statement on
    fresh common replications (shared with the evaluation when it runs) and its
    warnings, and issue them. ``grid``: (the grid's best theta or None, ``z`` of the
    best evaluated point or None, the grid's ``[G, R]`` losses or None)."""
    grid_best, best_z, grid_per = grid
    thetas = {"tuned": result.theta, "start": result.start}
    if best_z is not None:
        thetas["best evaluated"] = space.from_z(best_z)
    per, n, sims = None, report.confidence_for(num_reps), 0
    if report.evaluate:
        rows = {"tuned": result.theta, "start": result.start}
        if grid_best is not None:
            rows["grid"] = grid_best
        extra = {k: v for k, v in thetas.items() if k not in rows}
        n = int(report.evaluate)
        result.evaluation, per = evaluate_points(
            objective, space, rows, num_reps=n, key=key, chunk=chunk, extra=extra
        )
        sims = result.evaluation.simulations + n * len(extra)
    elif n:
        per, sims = unique_losses(
            objective,
            space,
            {k: space.to_z(t) for k, t in thetas.items()},
            num_reps=n,
            key=jax.random.fold_in(key, 1),
            chunk=chunk,
        )
    if per is not None:
        result.confidence = statement(thetas, per, n, sims, grid_per)
    same = grid_per is not None and same_everywhere(grid_per)
    result.warnings = landscape_warnings(
        space, result.extra["z"], result.confidence, same=same
    )
    emit(result.warnings, stacklevel=5)


def same_everywhere(per) -> bool:
    """Whether ``[G, R]`` losses are equal at every point, replication by
    replication (the loss does not depend on theta; not noise)."""
    per = np.asarray(per)
    return per.shape[0] > 1 and bool(np.all(per == per[:1]))


SAME_LOSS = (
    "the loss is the same at every evaluated point, replication by replication: "
    "it does not depend on the tuned parameters here (a parameter the policy does "
    "not read, or one overridden by the run?), so the value returned is arbitrary; "
    "tune a parameter that changes what the policy does"
)


def landscape_warnings(space, z_tuned, conf: Confidence | None, same=False) -> tuple:
    """The warnings of a result: a loss that is the same at every point (``same``,
    or every paired difference exactly 0), a flat landscape within noise, an optimum
    on the box's edge."""
    out = []
    if conf is not None and not same:  # distinct points, identical losses
        thetas = [
            repr(jax.tree_util.tree_map(float, t)) for t, _, _ in conf.rows.values()
        ]
        same = len(set(thetas)) > 1 and all(
            p.mean == 0.0 and p.se == 0.0 for p in conf.paired.values()
        )
    if same:
        out.append(SAME_LOSS)
    elif conf is not None:
        tested = [conf.paired[k] for k in conf.paired if k.endswith("- start")]
        grid_flat = conf.grid_p is None or conf.grid_p >= FLAT_P
        if tested and grid_flat and not any(p.significant for p in tested):
            span = _span(conf)
            out.append(
                "the loss landscape is flat within noise: no evaluated point is "
                "significantly better than the start (paired 95% CIs contain 0)"
                + (
                    f" and the coarse grid's means are homogeneous (p = {conf.grid_p:.2g})"
                    if conf.grid_p is not None
                    else ""
                )
                + f"{span}: the tuned theta is no better than the start within "
                "noise; raise num_reps or simulations, or check the loss"
            )
    z = np.asarray(z_tuned, np.float64).reshape(-1)
    names = [n[2:-2] for n in space.names]
    for i, p in enumerate(space.params):
        lo_z, hi_z = (0.0, 1.0) if p.bounded else (-2.0, 3.0)
        width = hi_z - lo_z
        for side, bound_z, bound in (("lower", lo_z, p.lo), ("upper", hi_z, p.hi)):
            if abs(z[i] - bound_z) <= EDGE * width:
                value = float(p.from_z(z[i]))
                out.append(
                    f"tuned {names[i]} = {value:.4g} sits on the box's {side} edge "
                    f"({bound:.4g}): the optimum may lie outside [{p.lo:.4g}, "
                    f"{p.hi:.4g}]; widen the box"
                )
    return tuple(out)


def emit(messages: tuple, stacklevel: int = 4) -> None:
    for m in messages:
        warnings.warn(m, TuningWarning, stacklevel=stacklevel)


def _span(conf: Confidence) -> str:
    means = [m for _, m, _ in conf.rows.values()]
    if len(means) < 2:
        return ""
    return f" (fresh means span {max(means) - min(means):.3g})"
