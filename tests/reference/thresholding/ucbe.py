"""UCBE references (spec §4.3; authors' H1 of thresholding-authors-code.md §2)."""

from __future__ import annotations

import math

from reference.stats import arms as new_arms
from reference.stats import first_min


def _oracle_a(means, tau, budget, exponent, authors):
    k = len(means)
    if authors:  # arm K and every arm whose mean equals arm K's are left out
        means = [m for m in means[:-1] if m != means[-1]]
    h1 = sum(1.0 / (m - tau) ** 2 for m in means)
    return 4.0**exponent * (budget - k) / h1


def _run(inst, authors):
    tau, a = float(inst.hp["threshold"]), float(inst.hp["a"])
    expected = _oracle_a(
        list(inst.extra["means"]), tau, inst.budget, inst.extra["exponent"], authors
    )
    assert math.isclose(a, expected, rel_tol=1e-12), (a, expected)
    k, stats, pulls = inst.num_arms, new_arms(inst.num_arms), []
    for t in range(inst.budget):
        if t < k:
            i = t
        else:
            i = first_min([abs(s.mean - tau) - math.sqrt(a / s.n) for s in stats])
        stats[i].add(inst.table[i, stats[i].n])
        pulls.append(i)
    return pulls, [s.n > 0 and s.mean >= tau for s in stats]


def ucbe_paper(inst, draws):
    return _run(inst, authors=False)


def ucbe_authors_code(inst, draws):
    return _run(inst, authors=True)
