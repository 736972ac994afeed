"""AugUCB paper vs authors' code: one difference at a time (Experiments 1 and 5).

Every difference we found between the paper and the authors' experiment code
(github ``Subhojyoti/tbandit_IJCAI``, ``code/*.py``) that the library exposes
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

from experiments import _claims as C
from experiments import _core
from experiments import _tbp as S
from jbandits.envs import problems

FULL_REPS, QUICK_REPS = 500, 50


def instances(number: int, seed: int) -> dict:
    """label -> (Problem, listed column)."""
    paper = problems.augucb_experiment(number, "paper", seed=seed)
    _, listed_p = problems.augucb_listed_values(number, ranges="paper", seed=seed)
    code = problems.augucb_experiment(number, "authors_code", seed=seed)
    _, listed_c = problems.augucb_listed_values(
        number, ranges="authors_code", seed=seed
    )
    out = {
        "paper": (paper, listed_p),
        "sd=listed": (
            paper._replace(name=paper.name + "-sd", stds=listed_p.copy()),
            listed_p,
        ),
        "authors_code": (code, listed_c),
    }
    if number == 1:
        means = code.means.copy()
        means[6:10] = 0.6 + 0.05 * np.arange(4)
        out["authors_code + AP means"] = (code._replace(means=means), listed_c)
        listed = listed_c.copy()
        listed[10:] = 0.5
        out["authors_code + sd 0.5 rest"] = (code._replace(stds=listed.copy()), listed)
    return out


def configs(problem, listed) -> dict:
    """label -> Algo for every switch (paper / code values of each difference)."""
    true_var = np.asarray(problem.stds, float) ** 2
    ucbe = {
        v: S.oracle_a(problem, listed, v, "ucbe") for v in ("paper", "authors_code")
    }
    ucbev_paper = S.oracle_a(problem, true_var, "paper")
    ucbev_code = S.oracle_a(problem, listed, "authors_code")
    algos = [
        S.algo("AugUCB paper", "augucb"),
        S.algo("AugUCB code", "augucb", "authors_code"),
        S.algo("APT eps=.05", "apt", epsilon=0.05),
        S.algo("APT eps=.01", "apt", epsilon=0.01),
        S.algo("UCBE a paper", "ucbe", a=ucbe["paper"]),
        S.algo("UCBE a code", "ucbe", a=ucbe["authors_code"]),
        S.algo("UCBEV paper", "ucbev", a=ucbev_paper),
        S.algo("UCBEV paper, a code", "ucbev", a=ucbev_code),
        S.algo("UCBEV code, a paper", "ucbev", "authors_code", a=ucbev_paper),
        S.algo("UCBEV code", "ucbev", "authors_code", a=ucbev_code),
        S.algo("CSAR paper", "csar"),
        S.algo("CSAR code", "csar", "authors_code"),
        S.algo("CSAR code, fixed order", "csar", "authors_code", permute=False),
        S.algo("UA", "ua"),
    ]
    return {a.label: a for a in algos}


# fmt: off
PAPER = ("AugUCB paper", "APT eps=.05", "UCBE a paper", "UCBEV paper", "CSAR paper", "UA")
CODE = ("AugUCB code", "APT eps=.01", "UCBE a code", "UCBEV code", "CSAR code", "UA")
PUBLISHED_ON = ("authors_code", "authors_code + AP means", "authors_code + sd 0.5 rest")
SWITCHES = [  # (difference, baseline config, switched config)
    ("AugUCB: paper -> authors' code variant", "AugUCB paper", "AugUCB code"),
    ("APT: eps 0.05 -> 0.01", "APT eps=.05", "APT eps=.01"),
    ("UCBE: a from H1 over all arms -> code's H1", "UCBE a paper", "UCBE a code"),
    ("UCBEV: a paper -> code's (8/9)/H^sigma", "UCBEV paper", "UCBEV paper, a code"),
    ("UCBEV: width/variance/init paper -> code", "UCBEV paper", "UCBEV code, a paper"),
    ("UCBEV: everything paper -> code", "UCBEV paper", "UCBEV code"),
    ("CSAR: paper -> authors' code variant", "CSAR paper", "CSAR code"),
    ("CSAR code: permuted -> fixed arm order", "CSAR code", "CSAR code, fixed order"),
]
RUN_ON = {  # instance -> configs run on it (None: all)
    "paper": None, "sd=listed": PAPER, "authors_code": None,
    "authors_code + AP means": CODE, "authors_code + sd 0.5 rest": CODE,
}
NOISE_SWITCHES = [  # (difference, baseline instance, switched instance, configs)
    ("noise: listed = variance -> listed = sd", "paper", "sd=listed", PAPER),
    ("noise: paper ranges -> code ranges + rounding (sd reading)", "sd=listed", "authors_code", PAPER),
    ("noise: paper -> authors' code environment", "paper", "authors_code", PAPER),
    ("Expt 1 means r_7:10 0.65.. -> 0.60.. (code's AP block)", "authors_code", "authors_code + AP means", CODE),
    ("hypothesis: arms 11-100 sd 0.5 (code default)", "authors_code", "authors_code + sd 0.5 rest", CODE),
]
# fmt: on


def _row(number, difference, instance, base, new, e_base, e_new):
    return {
        "expt": number,
        "difference": difference,
        "instance": instance,
        "baseline": f"{base}: {C.fmt_pct(e_base[:, -1])}",
        "switched": f"{new}: {C.fmt_pct(e_new[:, -1])}",
        "switched - baseline (points)": C.fmt_points(
            C.paired(e_new[:, -1], e_base[:, -1])
        ),
    }


def run(cfg: _core.Config) -> _core.Outcome:
    reps = cfg.num_reps(FULL_REPS, QUICK_REPS)
    panels, table, claims, arrays = [], [], [], {"t": S.times()}
    pulls_csar = {}
    a_values = {}
    for number in (1, 5):
        key = S.experiment_key(cfg.seed, number)
        err = {}
        for inst, (problem, listed) in instances(number, cfg.seed).items():
            cf = configs(problem, listed)
            a_values[number, inst] = {k: v.hp.get("a") for k, v in cf.items()}
            wanted = RUN_ON[inst] or tuple(cf)
            res = S.run_algorithms(problem, [cf[k] for k in wanted], key, reps)
            err[inst] = {k: v[0] for k, v in res.items()}
            for k, v in res.items():
                arrays[f"expt{number}/{inst}/{k}/error"] = v[0]
            if "CSAR code" in res:
                pulls_csar[number, inst] = res["CSAR code"][1]
            title = f"Expt {number}, {inst} ({reps} runs)"
            panels.append(_core.error_panel(title, S.times(), err[inst]))
        for difference, base, new in SWITCHES:
            for inst in ("paper", "authors_code"):
                e = err[inst]
                table.append(_row(number, difference, inst, base, new, e[base], e[new]))
        for difference, i0, i1, names in NOISE_SWITCHES:
            for name in names if i0 in err and i1 in err else ():
                e0, e1 = err[i0][name], err[i1][name]
                table.append(
                    _row(number, difference, f"{i0} -> {i1}", name, name, e0, e1)
                )
        for inst in PUBLISHED_ON if number == 1 else ():
            mine = {k.split()[0]: err[inst][k] for k in CODE}
            claims += S.claim_published(mine, inst)
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
    """Numbers quoted in our reading of the authors' code, checked on our instances."""
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
            C.Claim(
                f"[code reading] {text}",
                f"{ours:.6g} ({inst} instance)",
                C.ladder(ok, False),
                "host computation; agreement to the 4 significant digits quoted",
            )
        )
    for number, inst in (1, "paper"), (5, "paper"):
        ours = a_values[number, inst]["UCBEV paper"]
        quoted = {1: 0.6093, 5: 0.5169}[number]
        out.append(
            C.Claim(
                f"[code reading] UCBEV paper-form a = {quoted} (Expt {number}, sigma = "
                "sqrt(listed))",
                f"{ours:.4g}",
                C.ladder(abs(ours - quoted) / quoted < 0.02, True),
                "depends on the random variances of arms 11-100 (ours: seed 0), so "
                "only agreement within 2% is expected",
            )
        )
    ranges = {1: (7651, 9288), 5: (7651, 8608)}
    for number, (lo, hi) in ranges.items():
        p = pulls_csar[number, "authors_code"]
        inside = np.mean((p >= lo) & (p <= hi))
        out.append(
            C.Claim(
                f"[code reading] the code's CSAR stops sampling after {lo}-{hi} of the "
                f"10^4 steps (Expt {number}; logged code runs)",
                f"pulls made: min {p.min()}, median {int(np.median(p))}, max {p.max()}; "
                f"{100 * inside:.0f}% of runs inside",
                C.ladder(inside > 0.9, inside > 0),
                "the quoted range comes from 8 logged runs of the authors' code (Expt 1: "
                "typically 9188)",
            )
        )
    return out


_core.register(
    _core.Experiment(
        name="augucb-ablation",
        title="AugUCB paper vs authors' code: one difference at a time (Expt 1, 5)",
        source="Mukherjee, Naveen, Sudarsanam, Ravindran, Thresholding Bandits with "
        "Augmented UCB, IJCAI 2017, Section 4, against the authors' published code",
        run=run,
        highlight=("AugUCB paper", "AugUCB code"),
    )
)
