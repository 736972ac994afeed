"""UCBEV references (spec §4.4 and the authors' code, thresholding-authors-code.md §2)."""

from __future__ import annotations

import math

from reference.stats import arms as new_arms
from reference.stats import first_min


def _oracle_a(means, variances, tau, budget, exponent, authors):
    k = len(means)
    pairs = list(zip(means, variances, strict=True))
    if authors:
        pairs = [(m, v) for m, v in pairs[:-1] if m != means[-1]]
    h = 0.0
    for m, v in pairs:
        gap, sigma = abs(m - tau), math.sqrt(v)
        xi = sigma + math.sqrt(sigma**2 + (16.0 / 3.0) * gap)
        h += (xi**2 if authors else xi) / gap**2
    scale = 8.0 / 9.0 if authors else 1.0
    return 4.0**exponent * scale * (budget - 2 * k) / h


def _run(inst, authors):
    tau, a, b = (float(inst.hp[x]) for x in ("threshold", "a", "b"))
    expected = _oracle_a(
        list(inst.extra["means"]),
        list(inst.extra["variances"]),
        tau,
        inst.budget,
        inst.extra["exponent"],
        authors,
    )
    assert math.isclose(a, expected, rel_tol=1e-12), (a, expected)
    k, stats, pulls = inst.num_arms, new_arms(inst.num_arms), []
    init = k if authors else 2 * k
    for t in range(inst.budget):
        if t < init:
            i = t % k
        else:
            scores = []
            for s in stats:
                if authors:
                    w = math.sqrt(2 * a * s.var_biased / s.n) + 7 * a * b / (
                        3 * s.n - 1
                    )
                else:
                    w = math.sqrt(2 * a * s.var_unbiased / s.n) + 7 * a * b / (
                        3 * (s.n - 1)
                    )
                scores.append(abs(s.mean - tau) - w)
            i = first_min(scores)
        stats[i].add(inst.table[i, stats[i].n])
        pulls.append(i)
    return pulls, [s.n > 0 and s.mean >= tau for s in stats]


def ucbev_paper(inst, draws):
    return _run(inst, authors=False)


def ucbev_authors_code(inst, draws):
    return _run(inst, authors=True)
