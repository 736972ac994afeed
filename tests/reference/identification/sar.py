"""Reference for Successive Accept-Reject (spec §6.1, AMB-21), from the spec text."""

from __future__ import annotations

from reference.identification.successive_rejects import sr_quotas
from reference.stats import arms as new_arms


def sar(inst, draws):
    k, m = inst.num_arms, int(inst.hp["m"])
    n = sr_quotas(k, inst.budget)
    arms, pulls, active, accepted, m_rem = new_arms(k), [], list(range(k)), [], m

    def forced():
        nonlocal active, m_rem
        if m_rem == 0:  # reject all remaining
            active = []
        elif m_rem >= len(active):  # accept all remaining
            accepted.extend(active)
            m_rem -= len(active)
            active = []
        return not active

    done = forced()
    for phase in range(1, k):
        if done:
            break
        for _ in range(n[phase] - n[phase - 1]):
            for i in active:
                arms[i].add(inst.table[i, arms[i].n])
                pulls.append(i)
        order = sorted(active, key=lambda i: -arms[i].mean)  # stable: ties by index
        rank = {i: r for r, i in enumerate(order, start=1)}
        gap = {}
        for i in active:
            if rank[i] <= m_rem:
                gap[i] = arms[i].mean - arms[order[m_rem]].mean  # sigma(m_rem + 1)
            else:
                gap[i] = arms[order[m_rem - 1]].mean - arms[i].mean  # sigma(m_rem)
        best = max(gap.values())
        pick = min(i for i in active if gap[i] == best)  # ties: lowest index
        active.remove(pick)
        if rank[pick] <= m_rem:
            accepted.append(pick)
            m_rem -= 1
        done = forced()
    assert len(pulls) <= inst.budget
    return pulls, [i in accepted for i in range(k)]
