"""AugUCB paper vs authors' code: one difference at a time (Experiments 1 and 5).

Every difference listed in ``thresholding-authors-code.md`` that the library exposes
as a switch is measured in isolation: the error at T = 10^4 of the configuration with
that one switch flipped minus the error of the baseline, paired over the same
replication keys (common random numbers). Instances ("noise settings"):

* ``paper``: listed values are variances, paper ranges for arms 11-100.
* ``sd=listed``: the same listed values used as standard deviations (the authors'
  code's reading), paper ranges: isolates the reading of the column.
* ``authors_code``: the code's environment (sd = listed, arms 11-100 U[0.3, 0.4] in
  Expt 1, values rounded to 3 decimals).
* Expt 1 only, on top of ``authors_code``: ``AP means`` (r_7:10 = 0.60..0.75, the
  commented "AP" block of the authors' code) and the hypothesis ``sd 0.5 rest``
  (arms 11-100 keep ``create_environment.py``'s default listed value 0.5, as if its
  range loop had not run). The latter is a guess tested against the authors'
  repository curves, not a documented difference.

Oracle parameters follow the instance: the paper's UCBE/UCBEV ``a`` use the true
means and standard deviations; the code's ``a`` uses the listed column as the code
does (sigma = sqrt(listed)).
"""

from __future__ import annotations

import numpy as np

from experiments import _core
from experiments import augucb as ex
from jbandits import problems
from jbandits.policies import thresholding as th

FULL_REPS, QUICK_REPS = 500, 50


def instances(number: int, seed: int) -> dict:
    """label -> (Problem, listed column)."""
    out = {}
    paper = problems.augucb_experiment(number, "paper", seed=seed)
    _, listed_p = problems.augucb_listed_values(number, ranges="paper", seed=seed)
    out["paper"] = (paper, listed_p)
    out["sd=listed"] = (
        paper._replace(name=paper.name + "-sd", stds=listed_p.copy()),
        listed_p,
    )
    code = problems.augucb_experiment(number, "authors_code", seed=seed)
    _, listed_c = problems.augucb_listed_values(
        number, ranges="authors_code", seed=seed
    )
    out["authors_code"] = (code, listed_c)
    if number == 1:
        means = code.means.copy()
        means[6:10] = 0.6 + 0.05 * np.arange(4)
        out["authors_code + AP means"] = (code._replace(means=means), listed_c)
        listed = listed_c.copy()
        listed[10:] = 0.5
        out["authors_code + sd 0.5 rest"] = (
            code._replace(stds=listed.copy()),
            listed,
        )
    return out


def configs(problem, listed) -> dict:
    """label -> Algo for every switch (paper / code values of each difference)."""
    true_var = np.asarray(problem.stds, float) ** 2
    a = {
        ("ucbe", "paper"): th.ucbe_oracle_a(
            problem.means, threshold=ex.TAU, budget=ex.BUDGET
        ),
        ("ucbe", "code"): th.ucbe_oracle_a(
            problem.means, threshold=ex.TAU, budget=ex.BUDGET, variant="authors_code"
        ),
        ("ucbev", "paper"): th.ucbev_oracle_a(
            problem.means, true_var, threshold=ex.TAU, budget=ex.BUDGET
        ),
        ("ucbev", "code"): th.ucbev_oracle_a(
            problem.means,
            listed,
            threshold=ex.TAU,
            budget=ex.BUDGET,
            variant="authors_code",
        ),
    }
    algo = ex.Algo
    return {
        "AugUCB paper": algo("AugUCB paper", "augucb", "paper", {}),
        "AugUCB code": algo("AugUCB code", "augucb", "authors_code", {}),
        "APT eps=.05": algo("APT eps=.05", "apt", "paper", {"epsilon": 0.05}),
        "APT eps=.01": algo("APT eps=.01", "apt", "paper", {"epsilon": 0.01}),
        "UCBE a paper": algo(
            "UCBE a paper", "ucbe", "paper", {"a": a["ucbe", "paper"]}
        ),
        "UCBE a code": algo("UCBE a code", "ucbe", "paper", {"a": a["ucbe", "code"]}),
        "UCBEV paper": algo(
            "UCBEV paper", "ucbev", "paper", {"a": a["ucbev", "paper"]}
        ),
        "UCBEV paper, a code": algo(
            "UCBEV paper, a code", "ucbev", "paper", {"a": a["ucbev", "code"]}
        ),
        "UCBEV code, a paper": algo(
            "UCBEV code, a paper", "ucbev", "authors_code", {"a": a["ucbev", "paper"]}
        ),
        "UCBEV code": algo(
            "UCBEV code", "ucbev", "authors_code", {"a": a["ucbev", "code"]}
        ),
        "CSAR paper": algo("CSAR paper", "csar", "paper", {}),
        "CSAR code": algo("CSAR code", "csar", "authors_code", {}),
        "CSAR code, fixed order": algo(
            "CSAR code, fixed order", "csar", "authors_code", {}, permute=False
        ),
        "UA": algo("UA", "ua", "paper", {}),
    }


PAPER = (
    "AugUCB paper",
    "APT eps=.05",
    "UCBE a paper",
    "UCBEV paper",
    "CSAR paper",
    "UA",
)
CODE = ("AugUCB code", "APT eps=.01", "UCBE a code", "UCBEV code", "CSAR code", "UA")
# (difference, baseline config, switched config)
SWITCHES = [
    ("AugUCB: paper -> authors' code variant", "AugUCB paper", "AugUCB code"),
    ("APT: eps 0.05 -> 0.01", "APT eps=.05", "APT eps=.01"),
    ("UCBE: a from H1 over all arms -> code's H1", "UCBE a paper", "UCBE a code"),
    ("UCBEV: a paper -> code's (8/9)/H^sigma", "UCBEV paper", "UCBEV paper, a code"),
    (
        "UCBEV: width/variance/init paper -> code",
        "UCBEV paper",
        "UCBEV code, a paper",
    ),
    ("UCBEV: everything paper -> code", "UCBEV paper", "UCBEV code"),
    ("CSAR: paper -> authors' code variant", "CSAR paper", "CSAR code"),
    ("CSAR code: permuted -> fixed arm order", "CSAR code", "CSAR code, fixed order"),
]
# instance -> configs run on it
RUN_ON = {
    "paper": None,  # all
    "sd=listed": PAPER,
    "authors_code": None,
    "authors_code + AP means": CODE,
    "authors_code + sd 0.5 rest": CODE,
}
# (difference, baseline instance, switched instance, configs)
NOISE_SWITCHES = [
    ("noise: listed = variance -> listed = sd", "paper", "sd=listed", PAPER),
    (
        "noise: paper ranges -> code ranges + rounding (sd reading)",
        "sd=listed",
        "authors_code",
        PAPER,
    ),
    ("noise: paper -> authors' code environment", "paper", "authors_code", PAPER),
    (
        "Expt 1 means r_7:10 0.65.. -> 0.60.. (code's AP block)",
        "authors_code",
        "authors_code + AP means",
        CODE,
    ),
    (
        "hypothesis: arms 11-100 sd 0.5 (code default)",
        "authors_code",
        "authors_code + sd 0.5 rest",
        CODE,
    ),
]


def _row(number, difference, instance, base, new, e_base, e_new):
    return {
        "expt": number,
        "difference": difference,
        "instance": instance,
        "baseline": f"{base}: {ex.fmt_pct(e_base[:, -1])}",
        "switched": f"{new}: {ex.fmt_pct(e_new[:, -1])}",
        "switched - baseline (points)": ex.fmt_diff(
            ex.diff(e_new[:, -1], e_base[:, -1])
        ),
    }


def run(cfg: _core.Config) -> _core.Outcome:
    reps = cfg.num_reps(FULL_REPS, QUICK_REPS)
    panels, table, claims, arrays = [], [], [], {"t": ex.times()}
    pulls_csar = {}
    a_values = {}
    for number in (1, 5):
        key = ex.experiment_key(cfg.seed, number)
        err = {}
        for inst, (problem, listed) in instances(number, cfg.seed).items():
            cf = configs(problem, listed)
            a_values[number, inst] = {k: v.hp.get("a") for k, v in cf.items()}
            wanted = RUN_ON[inst] or tuple(cf)
            res = ex.run_algorithms(problem, [cf[k] for k in wanted], key, reps)
            err[inst] = {k: v[0] for k, v in res.items()}
            for k, v in res.items():
                arrays[f"expt{number}/{inst}/{k}/error"] = v[0]
            if "CSAR code" in res:
                pulls_csar[number, inst] = res["CSAR code"][1]
            panels.append(
                {
                    "title": f"Expt {number}, {inst} ({reps} runs)",
                    "xlabel": "time step t",
                    "ylabel": "error %",
                    "curves": {
                        k: _core.curve(
                            ex.times(), v, binary=True, transform=lambda x: 100 * x
                        )
                        for k, v in err[inst].items()
                    },
                }
            )
        for difference, base, new in SWITCHES:
            for inst in ("paper", "authors_code"):
                e = err[inst]
                table.append(_row(number, difference, inst, base, new, e[base], e[new]))
        for difference, i0, i1, names in NOISE_SWITCHES:
            if i0 not in err or i1 not in err:
                continue
            for name in names:
                table.append(
                    _row(
                        number,
                        difference,
                        f"{i0} -> {i1}",
                        name,
                        name,
                        err[i0][name],
                        err[i1][name],
                    )
                )
        if number == 1:
            for inst in (
                "authors_code",
                "authors_code + AP means",
                "authors_code + sd 0.5 rest",
            ):
                relabel = {
                    "AugUCB": "AugUCB code",
                    "APT": "APT eps=.01",
                    "UCBE": "UCBE a code",
                    "UCBEV": "UCBEV code",
                    "CSAR": "CSAR code",
                    "UA": "UA",
                }
                mine = {k: err[inst][v] for k, v in relabel.items()}
                for c in ex.claim_published(mine, inst):
                    claims.append(c)
    claims = _spec_claims(a_values, pulls_csar) + claims
    notes = [
        "Each row: error at T = 10^4 of the baseline and of the switched configuration "
        "(Wilson 95% CI) and their paired difference (95% CI), same replication keys.",
        "Instance switches compare the same algorithm on two instances with the same "
        "keys (the same standard normal draws, rescaled).",
        "Not switchable here (built into the authors_code variants as a whole): "
        "AugUCB's psi/ell/width/selection factor/mean rule/|B| count, CSAR's schedule "
        "vs removal rule, UCBEV's width vs biased variance vs one initial pull.",
    ]
    if cfg.quick:
        notes.append(f"QUICK run: {reps} replications instead of {FULL_REPS}.")
    return _core.Outcome(panels, table, claims, arrays, notes)


def _spec_claims(a_values, pulls_csar) -> list:
    """Numbers that thresholding-authors-code.md states, checked on our instances."""
    out = []
    checks = [
        (1, "UCBE a code", 9.969, "UCBE a_code = 9.969 (Expt 1)"),
        (1, "UCBE a paper", 0.9907, "UCBE a_paper = 0.9907 (Expt 1)"),
        (5, "UCBE a code", 2.475, "UCBE a_code = 2.475 (Expt 5)"),
        (5, "UCBE a paper", 0.7615, "UCBE a_paper = 0.7615 (Expt 5)"),
        (1, "UCBEV code", 2.9615, "UCBEV a_code = 2.9615 (Expt 1)"),
        (5, "UCBEV code", 0.8058, "UCBEV a_code = 0.8058 (Expt 5)"),
    ]
    for number, cfg_name, value, text in checks:
        inst = "authors_code" if "code" in cfg_name else "paper"
        ours = a_values[number, inst][cfg_name]
        ok = abs(ours - value) <= 0.5 * 10 ** (np.floor(np.log10(value)) - 3)
        out.append(
            _core.Claim(
                f"[spec file] {text}",
                f"{ours:.6g} ({inst} instance)",
                "reproduced" if ok else "not reproduced",
                "host computation; agreement to the 4 significant digits quoted",
            )
        )
    for number, inst in (1, "paper"), (5, "paper"):
        ours = a_values[number, inst]["UCBEV paper"]
        quoted = {1: 0.6093, 5: 0.5169}[number]
        out.append(
            _core.Claim(
                f"[spec file] UCBEV paper-form a = {quoted} (Expt {number}, sigma = "
                "sqrt(listed))",
                f"{ours:.4g}",
                "reproduced" if abs(ours - quoted) / quoted < 0.02 else "partly",
                "depends on the random variances of arms 11-100 (ours: seed 0), so "
                "only agreement within 2% is expected",
            )
        )
    ranges = {1: (7651, 9288), 5: (7651, 8608)}
    for number, (lo, hi) in ranges.items():
        p = pulls_csar[number, "authors_code"]
        inside = np.mean((p >= lo) & (p <= hi))
        out.append(
            _core.Claim(
                f"[spec file] the code's CSAR stops sampling after {lo}-{hi} of the "
                f"10^4 steps (Expt {number}; logged code runs)",
                f"pulls made: min {p.min()}, median {int(np.median(p))}, max {p.max()}; "
                f"{100 * inside:.0f}% of runs inside",
                "reproduced"
                if inside > 0.9
                else ("partly" if inside > 0 else "not reproduced"),
                "the spec's range comes from 8 logged runs (Expt 1: typically 9188)",
            )
        )
    return out


_core.register(
    _core.Experiment(
        name="augucb-ablation",
        title="AugUCB paper vs authors' code: one difference at a time (Expt 1, 5)",
        source="seed 000 Section 4; spec thresholding-authors-code.md §1-§4",
        run=run,
    )
)
