"""Wang, Tzeng & Proutière (NeurIPS 2021), standard best-arm identification on
Bernoulli mu = (.3, .21, .2, .19, .18): ``fws-bai``.

The experiment of the authors' code (``rctzeng/NeurIPS2021-FWS``,
``standard/experiment_bai1.jl``, "the 2nd experiment from" Garivier & Kaufmann 2016):
delta in {0.1, 0.01, 0.001, 0.0001}, 3000 runs, every sampling rule stopped by the GLR
(Chernoff) rule at the threshold ``log((log t + 1)/delta)`` (``"practical"``; the code's
``GK16``), recommending the empirical best. Sampling rules run here: FWS, Track-and-Stop
with D-Tracking, the Degenne-Koolen-Ménard game rule (AdaHedge vs best response,
C-Tracking; the code's ``DaBomb(CTracking)``) and uniform sampling (round robin, the
code's ``RoundRobin``); the code's Ménard (lazy mirror ascent) and optimistic
Track-and-Stop are not in the library. EB-TC (beta = 1/2, not in the paper) is an extra
row.

What is compared (``experiments/REPORT.md``): the FWS paper's text was not available to
us (its abstract only), so none of its plotted or printed numbers is scored. Scored:
the paper's claim that FWS "is competitive" with the state of the art (read: FWS's mean
within 1.15 x Track-and-Stop's at every delta), GK16 Table 1's printed Track-and-Stop
(D-Tracking) mean on this instance at delta = 0.1 (1406) [EXACT], and the error rates
(at most delta). Beside them: T*(mu) kl(delta, 1 - delta), the lower bound the code
prints as "oracle".
"""

from __future__ import annotations

import numpy as np

from experiments import _core, _fc

MEANS = np.array([0.3, 0.21, 0.2, 0.19, 0.18])
DELTAS = (0.1, 0.01, 0.001, 0.0001)
ALGOS = (  # (label, registered name, static arguments; family and threshold added)
    ("FWS", "fws", {}),
    ("T-a-S (D-Tracking)", "track_and_stop", {"tracking": "d"}),
    ("DKM (C-Tracking)", "dkm", {}),
    ("Uniform", "uniform_glr", {"sampling": "round_robin"}),
    ("EB-TC (ours only)", "eb_tc", {}),
)
LABELS = [a[0] for a in ALGOS]
GK16_TAS_D = 1406  # GK16 Table 1, mu2, T-a-S (D-Tracking), delta = 0.1 [EXACT]
COMPETITIVE = 1.15  # our reading of "competitive": within 15 % of Track-and-Stop
FULL_REPS, QUICK_REPS = 3000, 60
CAP, QUICK_CAP = 1_000_000, 200_000


def _algo(label, name, static, delta) -> _core.Algo:
    static = {**static, "family": "bernoulli", "threshold": "practical"}
    return _core.Algo(label, name, static, {"delta": delta}, paper=label != LABELS[-1])


def run(cfg: _core.Config) -> _core.Outcome:
    reps = cfg.num_reps(FULL_REPS, QUICK_REPS)
    cap = int(cfg.extra.get("cap", QUICK_CAP if cfg.quick else CAP))
    labels = [lab for lab in LABELS if lab in cfg.extra.get("algorithms", LABELS)]
    t_star, w_star = _fc.characteristic_time(MEANS, "bernoulli")
    stops, errors, table, panels = {}, {}, [], []
    arrays = {"w_star": np.asarray(w_star, float)}
    for i, delta in enumerate(DELTAS):
        key = _core.key(cfg.seed, i)
        lb = float(t_star) * _fc.kl_bernoulli(delta, 1 - delta)
        for label, name, static in ALGOS:
            if label not in labels:
                continue
            runs = _fc.run(_algo(label, name, static, delta), "bernoulli", MEANS, key,
                           reps, cap)  # fmt: skip
            stops[delta, label], errors[delta, label] = runs.stop, runs.error
            arrays[f"{delta}/{label}/stop"] = runs.stop
            arrays[f"{delta}/{label}/error"] = runs.error
            share = runs.pulls.sum(0) / runs.pulls.sum()
            table.append(
                {"delta": delta, "algorithm": label, "runs": reps} | _fc.row(runs)
                | {"T* kl(delta,1-delta)": f"{lb:.0f}",
                   "mean/T* log(1/delta)": f"{runs.stop.mean() / (float(t_star) * np.log(1 / delta)):.3f}",
                   "pull shares": " ".join(f"{s:.3f}" for s in share)}
            )  # fmt: skip
        gk16 = [GK16_TAS_D if delta == 0.1 and lab == LABELS[1] else np.nan
                for lab in labels]  # fmt: skip
        panels.append(
            _fc.box_panel(
                f"delta = {delta}", labels, {"ours": [stops[delta, lab] for lab in labels]},
                {"GK16 Table 1 (mean)": gk16},
                {"T* kl(delta, 1-delta) (lower bound)": lb},
            )
        )  # fmt: skip
    notes = [
        f"{reps} runs per algorithm and delta, cap {cap} pulls (capped runs count as "
        "errors); threshold log((log t + 1)/delta) for every rule (the code's GK16).",
        f"T*(mu) = {float(t_star):.2f}, w*(mu) = "
        + " ".join(f"{x:.4f}" for x in np.asarray(w_star)),
        "Common random numbers across algorithms; arms relabelled at random per run.",
    ]
    return _core.Outcome(panels, table, _claims(stops, errors, labels), arrays, notes)


def _claims(stops, errors, labels) -> list:
    out = []
    fws, tas = LABELS[0], LABELS[1]
    if {fws, tas} <= set(labels):
        scaled = dict(stops)
        for delta in DELTAS:
            scaled[delta, "1.15 T-a-S"] = COMPETITIVE * stops[delta, tas]
        out.append(
            _fc.below_claim(
                "Wang et al. 2021 (abstract): FWS 'is competitive compared to "
                "state-of-art algorithms' (read: FWS below 1.15 x T-a-S (D-Tracking) "
                "at every delta)",
                scaled,
                [(delta, fws, "1.15 T-a-S") for delta in DELTAS],
            )
        )
    if tas in labels:
        out.append(
            _fc.magnitude_claim(
                "GK16 Table 1: T-a-S (D-Tracking) on this instance at delta = 0.1, "
                f"E[tau] = {GK16_TAS_D}",
                {"delta 0.1": _fc.against_table(stops[0.1, tas], GK16_TAS_D)},
                "consistent when |ours - paper| <= 1.96 sqrt(2) SE",
            )
        )
    for delta in DELTAS:
        out.append(
            _fc.error_claim(
                f"error at stopping <= delta = {delta} (practical threshold)",
                {lab: errors[delta, lab] for lab in labels},
                delta,
            )
        )
    return out


_core.register(
    _core.Experiment(
        name="fws-bai",
        title="Wang, Tzeng & Proutière 2021: BAI on mu = (.3 .21 .2 .19 .18), "
        "delta 0.1 to 1e-4",
        source="Wang, Tzeng & Proutière, NeurIPS 2021 (authors' code: "
        "standard/experiment_bai1.jl); Garivier & Kaufmann, COLT 2016, Table 1",
        run=run,
        estimate="quick 315 s (load 30), full not run",
    )
)
