"""Count the kernels one engine step runs, from a program's optimised HLO text.

XLA:CPU (and GPU) run one thunk / kernel per top-level instruction of a computation:
each ``fusion`` is one kernel, and so is every un-fused ``copy``, ``custom-call``,
``scatter``, ``sort``, ... Bookkeeping instructions (``parameter``,
``get-tuple-element``, ``tuple``, ``constant``, ``bitcast``) cost nothing. The
engine's inner ``lax.scan`` over the steps of a segment becomes a ``while`` whose body
is one step (``engine.UNROLL == 1``); :func:`step_kernels` finds that body (a
``while`` with the segment's trip count) and
counts its kernels, descending into called computations and nested ``while`` loops
(a rolled threefry hash is a 5-trip ``while``: its body counts 5 times; the body of a
loop whose trip count XLA does not know, such as a stage end on CPU, is reported apart,
its condition, which runs every time, is counted, and so is
the largest branch of a ``conditional``, such as a gated phase end). With the
fast segments of :func:`jbandits.sim.engine.run` there are two such bodies, the
unguarded step of the steady state and the guarded one; both are reported.
"""

from __future__ import annotations

import re
from collections import Counter

FREE = {"parameter", "get-tuple-element", "tuple", "constant", "bitcast"}
RARE = "in data-dependent loops"
BRANCH = "in conditional branches"
_CONTAINERS = ("while", "call", "conditional", "data-dependent while", RARE, BRANCH)
_COMP = re.compile(r"^(?:ENTRY )?%(\S+) .*\{\s*$")
_INSTR = re.compile(r"^\s*(?:ROOT )?%\S+ = .*?\s([a-z][a-z0-9\-_]*)\((.*)$")


def computations(text: str) -> dict[str, list[str]]:
    """Computation name -> its instruction lines."""
    comps: dict[str, list[str]] = {}
    current = None
    for line in text.splitlines():
        m = _COMP.match(line)
        if m:
            current = m.group(1)
            comps[current] = []
        elif line.startswith("}"):
            current = None
        elif current is not None and line.strip():
            comps[current].append(line)
    return comps


def _opcode(line: str) -> str | None:
    m = _INSTR.match(line)
    return m.group(1) if m else None


def _trips(line: str) -> int | None:
    """A ``while``'s known trip count, None if XLA does not know it."""
    m = re.search(r'"known_trip_count":\{"n":"(\d+)"\}', line)
    return int(m.group(1)) if m else None


def kernels(comps: dict[str, list[str]], name: str) -> Counter:
    """Kernels run by one execution of computation ``name``: nested loops of known
    trip count unrolled; the body of a loop of unknown trip count (a data-dependent
    ``while``, e.g. a stage end that runs only when a stage ends) is counted once
    under ``"in data-dependent loops"``, apart from the kernels of every step."""
    out: Counter = Counter()
    for line in comps.get(name, []):
        op = _opcode(line)
        if op is None or op in FREE:
            continue
        if op == "while":
            body = re.search(r"body=%([^\s,]+)", line).group(1)
            trips = _trips(line)
            inner = kernels(comps, body)
            if trips is None:
                out["data-dependent while"] += 1
                out[RARE] += sum(_real(inner).values()) + inner[RARE]
                # its condition runs each time the loop is reached: every step
                cond = re.search(r"condition=%([^\s,]+)", line).group(1)
                for k, v in kernels(comps, cond).items():
                    out[k] += v
                continue
            out["while"] += 1
            for k, v in inner.items():
                out[k] += trips * v
        elif op == "call":
            out.update(kernels(comps, re.search(r"to_apply=%([^\s,}]+)", line)[1]))
            out[op] += 1
        elif op == "conditional":
            # a step's branches run on few steps (a phase end, a rare fallback):
            # the largest branch is reported apart, like a data-dependent loop
            m = re.search(r"branch_computations=\{[^}]*\}", line) or re.search(
                r"true_computation=%\S+, false_computation=%[^\s,]+", line
            )
            names = re.findall(r"%([^\s,}]+)", m.group(0)) if m else []
            branch = [kernels(comps, name) for name in names]
            out[op] += 1
            out[BRANCH] += max(
                (sum(_real(b).values()) + b[RARE] + b[BRANCH] for b in branch),
                default=0,
            )
        else:
            out[op] += 1
    return out


def step_kernels(text: str, segment: int) -> list[Counter]:
    """Kernels of one engine step, for each ``segment``-trip ``while`` body, fewest
    first: with ``axis_name`` the engine compiles an unguarded step (the steady
    state) and a guarded one (segments where a lane's budget ends)."""
    comps = computations(text)
    bodies = set()
    for lines in comps.values():
        for line in lines:
            if _opcode(line) == "while" and _trips(line) == segment:
                bodies.add(re.search(r"body=%([^\s,]+)", line).group(1))
    if not bodies:
        raise ValueError(f"no {segment}-trip while loop in the HLO")
    counts = [kernels(comps, body) for body in bodies]
    return sorted(counts, key=total)


def step_fusions(text: str, segment: int) -> list[tuple[str, Counter]]:
    """``(output shape, opcode counts)`` of every fusion of the unguarded engine step
    (the ``segment``-trip ``while`` body with the fewest kernels), nested loop bodies
    included once each: e.g. to find the kernels that compute a threefry hash
    (``xor`` operations, 20 or more per 32-bit word)."""
    comps = computations(text)
    bodies = {
        re.search(r"body=%([^\s,]+)", line).group(1)
        for lines in comps.values()
        for line in lines
        if _opcode(line) == "while" and _trips(line) == segment
    }
    if not bodies:
        raise ValueError(f"no {segment}-trip while loop in the HLO")
    body = min(bodies, key=lambda b: total(kernels(comps, b)))
    out: list[tuple[str, Counter]] = []

    def walk(name: str) -> None:
        for line in comps.get(name, []):
            op = _opcode(line)
            if op == "fusion":
                callee = re.search(r"calls=%([^\s,}]+)", line).group(1)
                ops = Counter(_opcode(x) for x in comps.get(callee, []))
                shape = line.split("=", 1)[1].split()[0]
                out.append((shape, Counter({k: v for k, v in ops.items() if k})))
            elif op == "while":
                walk(re.search(r"body=%([^\s,]+)", line).group(1))

    walk(body)
    return out


def _real(counts: Counter) -> dict:
    return {k: v for k, v in counts.items() if k not in _CONTAINERS}


def total(counts: Counter) -> int:
    """Kernels of every step (those in data-dependent loops excluded)."""
    return sum(_real(counts).values())


def summary(counts: Counter) -> str:
    """``"18 kernels (17 fusion, 1 copy; +10 in 1 data-dependent loop)"``: loops,
    calls and conditionals are containers, not kernels; a data-dependent loop's body
    (run only when its condition holds, e.g. at a stage end) is reported apart."""
    real = _real(counts)
    parts = ", ".join(
        f"{v} {k}" for k, v in sorted(real.items(), key=lambda kv: -kv[1])
    )
    loops = f", {counts['while']} nested loops" if counts.get("while") else ""
    rare = ""
    if counts.get("data-dependent while"):
        n = counts["data-dependent while"]
        rare = f"; +{counts[RARE]} in {n} data-dependent loop{'s' if n > 1 else ''}"
    if counts.get("conditional"):
        n = counts["conditional"]
        rare += f"; +{counts[BRANCH]} in {n} conditional{'s' if n > 1 else ''}"
    return f"{total(counts)} kernels ({parts}{loops}{rare})"


def engine_step_kernels(
    policy, bandit, params, budget: int, lanes: int = 1
) -> list[Counter]:
    """:func:`step_kernels` of the batched runner's program for ``policy`` on one
    instance (``params`` unbatched), compiled for ``lanes`` replications (nothing is
    run). XLA compiles a one-lane program somewhat differently (a few more small
    index kernels) from the many-lane program a simulation runs."""
    from jbandits.sim import segments

    text = engine_program_text(policy, bandit, params, budget, lanes)
    return step_kernels(text, segments.default_segment(None))


def engine_program_text(policy, bandit, params, budget: int, lanes: int = 1) -> str:
    """Optimised HLO text of the batched runner's program for ``policy`` on one
    instance, compiled for ``lanes`` replications (split over the devices as
    :func:`jbandits.simulate` splits them)."""
    fn, args = engine_program(policy, bandit, params, budget, lanes)
    return fn.lower(*args).compile().as_text()


def engine_program(
    policy, bandit, params, budget: int, lanes: int = 1, opts=None, platform=None
):
    """``(fn, args)``: the batched runner's jitted program for ``policy`` on one
    instance and the arguments of a call with ``lanes`` replications (nothing is
    traced or run). ``opts``: the runner's Options (default ``runner.Options()``);
    ``platform``: the platform the program is built for (default: the local
    devices'; ``"cuda"`` for an ahead-of-time GPU compile, benchmarks/gpu_compile.py)."""
    import jax
    import numpy as np

    from jbandits.core import prng
    from jbandits.sim import entry, runner

    source, numeric = runner.source_of(policy)
    hp = {k: np.asarray([v] * lanes) for k, v in numeric.items()}
    # host-side schedules (SH and the other phase policies), as simulate builds them
    real = np.full(lanes, int(np.sum(np.asarray(params.arm_mask))))
    hp.update(entry.prepared(source, numeric, real[0], real, np.full(lanes, budget)))
    opts = runner.Options() if opts is None else opts
    fields = tuple(params._fields)
    fn = runner.program(source, bandit, opts, fields, True, platform=platform)
    kdata = np.stack([prng.key_data(jax.random.key(0))] * lanes)
    one = np.ones(lanes, np.int32)
    return fn, (hp, params, kdata, 0 * one, budget * one, budget * one)
