"""Runs, tables and claims shared by the fixed-confidence reproductions
(``gk16-table1``, ``shang-fig1``, ``russo-exp1``).

A fixed-confidence policy stops by itself (``state.arm = -1``); the engine's
``num_pulls`` is then its stopping time and the run's budget is only a cap: a lane
that reaches it is reported as *capped* (``stopped`` False), and counted as an error
in every error rate here (its recommendation carries no guarantee; the authors' code
records such a run as a failure too). Every algorithm of an experiment sees the same
replication keys (common random numbers) and the arms are relabelled at random per
replication (``permute``), which breaks the policies' lowest-index ties at random, as
the authors' code does (``randmax``).
"""

from __future__ import annotations

import math
import warnings
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

import jbandits
from experiments import _claims as C
from experiments import _core
from jbandits.analysis import stats
from jbandits.sim.runner.results import CappedRunsWarning


class Runs(NamedTuple):
    """One algorithm on one instance: ``[R]`` per replication (``pulls`` ``[R, K]``)."""

    stop: np.ndarray  # float: the stopping time (the cap where capped)
    stopped: np.ndarray  # bool
    recommended: np.ndarray  # int: the recommended arm (bandit numbering)
    error: np.ndarray  # bool: wrong arm, or capped
    pulls: np.ndarray  # [R, K] final pull counts (bandit numbering)


def instance(family: str, means, sigma: float = 1.0, num_arms: int | None = None):
    """``(bandit, params)`` of one instance of ``family`` ("bernoulli"/"gaussian"),
    padded to ``num_arms`` arms (padded arms are never pulled nor recommended), so
    that instances of different K share one compiled program."""
    means = np.asarray(means, float)
    pad = (num_arms or means.size) - means.size
    mask = np.r_[np.ones(means.size, bool), np.zeros(pad, bool)]
    means = np.r_[means, np.full(pad, means.min())]
    if family == "bernoulli":
        return jbandits.envs.bernoulli(means, arm_mask=mask)
    if family == "gaussian":
        stds = np.full(means.shape, float(sigma))
        return jbandits.envs.gaussian(means, stds, arm_mask=mask)
    raise ValueError(f"family must be 'bernoulli' or 'gaussian', got {family!r}")


def recommended_arm(output) -> np.ndarray:
    """The recommended arm of each replication: an ``[R]`` arm index as it is, a set
    ``[R, K]`` (UGapEc with m = 1) its first member (-1 when empty)."""
    out = np.asarray(output)
    if out.ndim == 1:
        return out.astype(np.int64)
    picked = out.astype(bool)
    return np.where(picked.any(-1), picked.argmax(-1), -1)


# a speed setting only (the runs are the same whatever it is): lanes per program of the
# runner's refilling lanes (jbandits.sim.runner.refill). A Track-and-Stop step cost no
# more per lane in chunks of 32 than of 128 on CPU (benchmarks/notes_fixed_confidence.md
# §1).
BATCH = 32


def run(
    algo: _core.Algo,
    family,
    means,
    key,
    reps: int,
    cap: int,
    sigma=1.0,
    *,
    num_arms: int | None = None,
) -> Runs:
    """``reps`` replications of ``algo`` (a registered policy, its static and numeric
    arguments) on one instance, each stopped by the policy or at ``cap`` pulls.

    Replication ``r`` has the key of instance ``r`` of a stack of ``reps`` copies of the
    instance run by :func:`jbandits.simulate` with one replication each (``fold_in(
    fold_in(key, r), 0)``). They run in one runner call whose lanes refill from a queue
    (:mod:`jbandits.sim.runner.refill`): a lane whose replication stopped takes the
    next one, so no lane waits for the slowest of a chunk; each result is that of one
    run at ``cap`` (``tests/test_experiments_fixed_confidence.py`` checks it against
    :func:`jbandits.simulate`). ``num_arms``: pad the instance to that many arms
    (:func:`instance`).
    """
    means = np.asarray(means, float)
    k = means.size
    width = max(k, num_arms or k)
    bandit, params = instance(family, means, sigma, width)
    # replication r: fold_in(fold_in(key, r), 0), as simulate keys replication 0 of
    # instance r of a stack of reps copies of the instance
    keys = jax.vmap(lambda r: jax.random.fold_in(jax.random.fold_in(key, r), 0))(
        jnp.arange(reps)
    )
    batch = min(BATCH, 2 ** max(1, math.ceil(math.log2(reps))))
    with warnings.catch_warnings():  # capped runs are counted in the table
        warnings.simplefilter("ignore", CappedRunsWarning)
        res = jbandits.simulate(
            algo.policy(num_arms=width), bandit, params, keys, budget=cap,
            num_reps=reps, metric=None, permute=algo.permute, batch_size=batch,
        )  # fmt: skip
    output = np.asarray(res.output).reshape(reps, -1)
    output = output[:, 0] if output.shape[1] == 1 else output
    stopped = np.asarray(res.stopped, bool).reshape(reps)
    recommended = recommended_arm(output)
    error = (recommended != int(np.argmax(means))) | ~stopped
    return Runs(
        np.asarray(res.num_pulls, float).reshape(reps), stopped, recommended,
        error, np.asarray(res.pulls).reshape(reps, width)[:, :k].astype(float),
    )  # fmt: skip


def row(runs: Runs) -> dict:
    """Table columns of one algorithm on one instance."""
    q = np.quantile(runs.stop, [0.1, 0.5, 0.9])
    return {
        "mean stop [95% CI]": C.fmt_mean(runs.stop),
        "q10/q50/q90": "/".join(f"{x:.0f}" for x in q),
        "error [Wilson 95%]": C.fmt_rate(runs.error),
        "capped": f"{int((~runs.stopped).sum())}/{runs.stopped.size}",
    }


def mean_se(x) -> tuple[float, float]:
    """Mean and standard error of ``x [R]`` (SE NaN with one replication)."""
    p = stats.paired(x)
    return p.mean, p.se


def against_table(x, paper: float) -> tuple[bool | None, str]:
    """Our mean of ``x [R]`` against a printed mean ``paper`` that was itself averaged
    over as many runs: consistent when ``|ours - paper| <= 1.96 sqrt(2) SE`` (the
    paper's standard error taken equal to ours). None without an SE."""
    m, se = mean_se(x)
    if not np.isfinite(se):
        return None, f"one run: no SE ({m:.0f} vs {paper:g})"
    band = C.Z * math.sqrt(2.0) * se
    rel = 100 * (m / paper - 1)
    ok = bool(abs(m - paper) <= band)
    return ok, f"{m:.0f} vs {paper:g} ({rel:+.1f}%, band +-{band:.0f})"


def against_plot(x, paper: float, band: float) -> tuple[bool | None, str]:
    """Our 95% CI of the mean of ``x [R]`` against a value read from a plot with a
    reading uncertainty ``+-band``: consistent when the two intervals overlap."""
    m, se, lo, hi = stats.paired(x)
    if not np.isfinite(se):
        return None, f"one run: no SE ({m:.0f} vs {paper:g})"
    ok = bool(hi >= paper - band and lo <= paper + band)
    rel = 100 * (m / paper - 1)
    return ok, f"{m:.0f} [{lo:.0f}, {hi:.0f}] vs {paper:g}+-{band:g} ({rel:+.1f}%)"


def magnitude_claim(text: str, checks: dict, rule: str) -> C.Claim:
    """A claim made of cells ``label -> (ok, detail)``: reproduced when every cell
    is consistent, partly when some are, not reproduced when none is."""
    ok = sum(v[0] is True for v in checks.values())
    fails = sum(v[0] is False for v in checks.values())
    verdict = C.combine(ok, fails, len(checks))
    out = [f"{k}: {v[1]}" for k, v in checks.items() if v[0] is not True]
    ours = f"{ok}/{len(checks)} cells consistent"
    if out:
        ours += "; not: " + "; ".join(out)
    return C.Claim(text, ours, verdict, rule)


def below_claim(text: str, stops: dict, triples, rule: str = "") -> C.Claim:
    """``a`` significantly below ``b`` for every ``(where, a, b)`` of ``triples``: the
    paired 95% CI of ``stops[where, a] - stops[where, b]`` (common random numbers)
    below 0. Reproduced when every part holds, partly when some do, not reproduced
    when none does and some are significantly above, else undecided."""
    holds, fails, parts, why = 0, 0, [], []
    for where, a, b in triples:
        d = C.paired(stops[where, a], stops[where, b])
        parts.append(f"{where} {a} - {b}: {d.mean:+.0f} [{d.lo:+.0f}, {d.hi:+.0f}]")
        holds += d.sign < 0
        fails += d.sign > 0
        if d.sign == 0:
            why.append(f"{where} {a} - {b} CI contains 0")
    note = "paired difference of stopping times, 95% CI below 0 in every part"
    note = f"{rule}; {note}" if rule else note
    if not triples:
        return C.Claim(text, "algorithms not run", C.NOT_TESTABLE, note)
    verdict = C.combine(holds, fails, len(triples))
    if verdict == C.UNDECIDED:
        note = C.undecided_note(note, why)
    return C.Claim(text, "; ".join(parts), verdict, note)


def error_claim(text: str, errors: dict, delta: float) -> C.Claim:
    """Error rate at stopping (capped runs counted as errors) at most ``delta`` for
    every cell ``label -> [R] 0/1``, read on the Wilson 95% interval."""
    holds, fails, why, parts = 0, 0, [], []
    for label, err in errors.items():
        ok, reason = C.at_most(*C.rate(err), delta, "delta")
        holds += ok is True
        fails += ok is False
        if ok is None:
            why.append(f"{label}: {reason}")
        parts.append(f"{label} {C.fmt_rate(err)}")
    verdict = C.combine(holds, fails, len(errors))
    note = "error (capped runs count as errors) at or below delta on its Wilson 95% CI"
    if verdict == C.UNDECIDED or why:
        note = C.undecided_note(note, why)
    return C.Claim(text, "; ".join(parts), verdict, note)


def kl_bernoulli(x: float, y: float) -> float:
    """kl(x, y) of Bernoulli means (for T* kl(delta, 1 - delta))."""
    return x * math.log(x / y) + (1 - x) * math.log((1 - x) / (1 - y))


def box_panel(
    title: str,
    labels: list,
    samples: dict,
    marks=None,
    refs=None,
    ylabel="stopping time (log)",
) -> dict:
    """A categorical panel (:func:`jbandits.analysis.plotting.plot_panels`): the
    algorithms ``labels`` named on the x axis, per algorithm the distribution of the
    stopping times of each series ``name -> [[R] per label]`` (box and whiskers, its
    mean and 95% CI), ``marks`` ``name -> [value or NaN per label]`` beside them (a
    paper's values) and ``refs`` ``name -> value`` as horizontal lines (lower
    bounds); log y."""
    return {
        "kind": "categorical", "title": title, "ylabel": ylabel,
        "categories": list(labels),
        "samples": {k: [np.asarray(v, float) for v in vals] for k, vals in samples.items()},
        "marks": {k: [float(v) for v in vals] for k, vals in (marks or {}).items()},
        "refs": {k: float(v) for k, v in (refs or {}).items()},
        "logy": True,
    }  # fmt: skip


def mean_ci(x) -> tuple[float, float, float]:
    """Mean of ``x [R]`` and its normal 95% interval (NaN with one replication)."""
    m, _, lo, hi = stats.paired(x)
    return m, lo, hi


def characteristic_time(means, family: str, sigma: float = 1.0, beta=None):
    """``(T*, w*)`` of ``means`` (GK16 Theorem 5; ``beta``: the beta-optimal
    ``T*_beta``), the host oracle of ``jbandits.analysis.tstar``."""
    from jbandits.analysis import tstar

    return tstar.characteristic_time(means, family, sigma=sigma, beta=beta)
