"""References for Sequential Halving (spec §5.3 (a) Karnin, (b) S004), from the spec."""

from __future__ import annotations

import math

from reference.stats import arms as new_arms


def num_stages(k: int) -> int:
    return math.ceil(math.log2(k))


def halve(active: list[int], local) -> list[int]:
    """The ceil(|A|/2) arms with the largest stage-local means (ties: lowest index)."""
    ranked = sorted(active, key=lambda i: -local[i].mean)
    return sorted(ranked[: math.ceil(len(active) / 2)])


def run_stages(inst, stage_pulls):
    """S004 Algorithm 1: ``stage_pulls(active, local, stage)`` yields the stage's arms."""
    k = inst.num_arms
    active, pulls = list(range(k)), []
    for stage in range(num_stages(k)):
        local = new_arms(k)
        for i in stage_pulls(active, local, stage):
            local[i].add(inst.table[i, len([p for p in pulls if p == i])])
            pulls.append(i)
        active = halve(active, local)
    assert len(active) == 1 and len(pulls) <= inst.budget
    return pulls, active[0]


def sh_equal_stages(inst, draws):
    n_s = inst.budget // num_stages(inst.num_arms)

    def stage_pulls(active, local, stage):
        for c in range(1, n_s + 1):
            yield active[(c - 1) % len(active)]

    return run_stages(inst, stage_pulls)


def sh_karnin(inst, draws):
    rounds = num_stages(inst.num_arms)

    def stage_pulls(active, local, stage):
        t_r = inst.budget // (len(active) * rounds)
        for _ in range(t_r):
            yield from active

    return run_stages(inst, stage_pulls)
