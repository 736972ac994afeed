"""Pulls/s against arm-lanes on whatever device JAX has (written for GPUs).

``python -m benchmarks.gpu [--arms 100] [--steps 2000] [--max-arm-lanes 1e8]``

1. **check** (with ``--check``): a few policies run on the default device and, in a
   child process with ``JAX_PLATFORMS=cpu``, on the CPU; per policy the lanes whose
   pull counts and outputs are identical. Off CPU the phase policies and Bayes-UCB
   run their fixed-shape form (:class:`jbandits.core.execution.Execution` of the
   platform), on CPU the ``lax.while_loop`` form, so this also checks that both forms choose the same arms.
2. **curve**: APT, Sequential Halving and UCB1 (random ties), K arms, through
   :func:`jbandits.simulate` with replications = arm-lanes / K for arm-lanes
   ``--min-arm-lanes`` .. ``--max-arm-lanes`` (one decade apart; ``--extra-arm-lanes``
   run after the table): pulls/s,
   ns per lane-step, the bandwidth implied by reading and writing the policy state
   once per lane-step (bytes from ``jax.eval_shape``), and the kernels of one step in
   the optimised HLO (:mod:`benchmarks.hlo`; with its count in data-dependent loops).
3. **table** (``--table-arm-lanes``, 0 to skip): more policies at one size.

Backends (``--backends``, default ``xla,fused`` on a GPU, ``xla`` elsewhere): every
curve and table row runs once per backend (:class:`jbandits.core.execution.Execution`'s
``backend``); the ``backend`` column says which one ran (``xla*``: the fused program
fell back to XLA; the reason is printed below the row). ``--check`` then also
compares, lane by lane, the fused backend with the XLA backend on the device and
with the CPU (pull counts, outputs, regret and reward at each checkpoint).

Median of 3 warm calls per row; the first call's time (compilation included) is
printed. ``--time-limit`` seconds: rows that would start after it are skipped (a lent
GPU has a fixed budget), so the output ends with what was measured. ``--out DIR``
also writes the rows as JSON. Measurements on an H100: ``benchmarks/gpu_h100.md``.
"""

from __future__ import annotations

import argparse
import dataclasses
import inspect
import json
import os
import subprocess
import sys
import tempfile
import time
import warnings

import jax
import numpy as np

import jbandits
from benchmarks import hlo
from benchmarks._timing import load, median_time, simulate_call
from jbandits.core.execution import Execution

CURVE = ("apt", "sequential_halving", "ucb1")
TABLE = (
    "apt",
    "ucb1",
    "ucb1:first",
    "sequential_halving",
    "successive_rejects",
    "augucb",
    "eucbv",
    "klucb",
    "thompson:beta",
    "thompson:gauss",
    "bayes_ucb:beta",
    "bayes_ucb:gauss",
)
CHECK = (
    "apt",
    "ucb1",
    "sequential_halving",
    "successive_rejects",
    "augucb",
    "eucbv",
    "thompson:beta",
    "bayes_ucb:beta",
)


def make(label: str, num_arms: int, steps: int, execution: Execution | None = None):
    """``"name[:variant]"`` -> policy with this benchmark's arguments (``execution``:
    its compiled form, where its factory takes one; None: the platform's)."""
    name, _, variant = label.partition(":")
    kw: dict = {}
    if name == "sar":
        kw["m"] = 5
    if name in ("apt", "augucb", "csar", "lsa"):
        kw["threshold"] = 0.5
    if name == "apt":
        kw["epsilon"] = 0.05
    budgeted = ("augucb", "csar", "sar", "sequential_halving", "successive_rejects")
    if name in (*budgeted, "vbr_provisional"):
        kw["budget"] = steps
    if name in ("eucbv", "moss", "ocucb", "ucb_improved"):
        kw["horizon"] = steps
    if variant == "first":
        kw["tie_break"] = "first"
    elif variant:
        kw["posterior"] = variant
    takes = inspect.signature(jbandits.core.registry.raw_factory(name)).parameters
    if execution is not None and "execution" in takes:
        kw["execution"] = execution
    return jbandits.make(name, num_arms=num_arms, **kw)


def _state_bytes(policy, num_arms: int) -> int:
    state = jax.eval_shape(
        policy.init, jax.random.key(0), jax.ShapeDtypeStruct((num_arms,), bool)
    )
    return sum(x.size * x.dtype.itemsize for x in jax.tree_util.tree_leaves(state))


def _kernels(policy, bandit, params, steps, lanes) -> str:
    try:
        counts = hlo.engine_step_kernels(policy, bandit, params, steps, lanes)
    except Exception as err:  # noqa: BLE001 - informational only
        return f"? ({type(err).__name__})"
    return hlo.summary(counts[0])


def _ran(label: str, backend: str) -> tuple[str, str]:
    """(backend that ran, fall-back reason) of the last run of ``label``."""
    from jbandits.sim.fused.backend import FALLBACKS

    reason = FALLBACKS.get(label.partition(":")[0], "")
    if backend != "xla" and reason:
        return "xla*", reason
    return backend, ""


def measure(
    label, num_arms, steps, arm_lanes, kernels: bool, execution=None, backend="xla"
) -> dict:
    """One row: first-call time, median of 3 warm calls, rates, kernels."""
    from jbandits.sim.fused.backend import FALLBACKS

    bandit, params = jbandits.envs.bernoulli(np.linspace(0.1, 0.9, num_arms))
    execution = dataclasses.replace(
        execution or Execution.for_platform(jax.devices()[0].platform),
        backend=backend,
    )
    policy = make(label, num_arms, steps, execution)
    reps = max(1, int(arm_lanes) // num_arms)
    FALLBACKS.pop(label.partition(":")[0], None)

    def call(seed):  # one chunk: every lane in one program
        simulate_call(
            policy, bandit, params, steps, reps, seed, batch_size=reps,
            execution=execution,
        )()  # fmt: skip

    t0 = time.perf_counter()
    call(0)
    first = time.perf_counter() - t0
    seeds = iter((1, 2, 3))
    t = median_time(lambda: call(next(seeds)))
    lane_steps = reps * steps / t
    ran, reason = _ran(label, backend)
    return {
        "policy": label,
        "backend": ran,
        "fallback": reason,
        "arms": num_arms,
        "arm_lanes": reps * num_arms,
        "reps": reps,
        "first_s": round(first, 2),
        "mpulls_s": lane_steps / 1e6,
        "ns_lane_step": 1e9 / lane_steps,
        "gb_s": 2 * _state_bytes(policy, num_arms) * lane_steps / 1e9,
        "kernels": (
            _kernels(policy, bandit, params, steps, reps)
            if kernels and ran == "xla"
            else ""
        ),
    }


def _print_row(r: dict) -> None:
    print(
        f"{r['policy']:18s} {r['backend']:>7s} {r['arms']:>5d} {r['arm_lanes']:>10d} "
        f"{r['reps']:>8d} "
        f"{r['first_s']:>7.1f} {r['mpulls_s']:>9.2f} {r['ns_lane_step']:>10.2f} "
        f"{r['gb_s']:>7.1f}  {r['kernels']}",
        flush=True,
    )
    if r.get("fallback"):
        print(f"    ^ fell back to xla: {r['fallback']}", flush=True)


HEADER = (
    f"{'policy':18s} {'backend':>7s} {'K':>5s} {'arm-lanes':>10s} {'reps':>8s} {'first_s':>7s} "
    f"{'Mpulls/s':>9s} {'ns/lane-st':>10s} {'GB/s':>7s}  kernels per step"
)


def run_check(num_arms: int, steps: int, reps: int, backend: str = "xla") -> dict:
    """Pull counts, outputs, regret and reward (3 checkpoints) of the CHECK policies
    (bandit numbering), and the pulled arms on the ``xla`` backend."""
    bandit, params = jbandits.envs.bernoulli(np.linspace(0.1, 0.9, num_arms))
    execution = dataclasses.replace(
        Execution.for_platform(jax.devices()[0].platform), backend=backend
    )
    from jbandits.sim.fused.backend import FALLBACKS

    out = {}
    for label in CHECK:
        policy = make(label, num_arms, steps, execution)
        FALLBACKS.pop(label.partition(":")[0], None)
        res = simulate_call(
            policy, bandit, params, steps, reps, 0, num_checkpoints=3,
            record_arms=backend == "xla", execution=execution,
        )()  # fmt: skip
        out[label + "/pulls"] = np.asarray(res.pulls)
        out[label + "/output"] = np.asarray(res.output)
        out[label + "/regret"] = np.asarray(res.regret)
        out[label + "/reward"] = np.asarray(res.reward)
        if res.arms is not None:
            out[label + "/arms"] = np.asarray(res.arms)
        out[label + "/ran"] = np.asarray(_ran(label, backend)[0])
    return out


def _same_lanes(a: dict, b: dict, label: str, reps: int, parts) -> np.ndarray:
    same = np.ones(reps, bool)
    for part in parts:
        x, y = a[f"{label}/{part}"], b[f"{label}/{part}"]
        same &= np.all((x == y).reshape(reps, -1), axis=1)
    return same


def compare_with_cpu(num_arms: int, steps: int, reps: int, backends=("xla",)) -> None:
    """Lane by lane: the device's XLA backend against the CPU (pulls and outputs,
    the first differing arms), and each other backend against both (pulls,
    outputs, regret and reward at each checkpoint)."""
    here = {b: run_check(num_arms, steps, reps, b) for b in ("xla", *backends)}
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "cpu.npz")
        env = dict(os.environ, JAX_PLATFORMS="cpu")
        cmd = [sys.executable, "-m", "benchmarks.gpu", "--save-check", path]
        cmd += ["--arms", str(num_arms), "--steps", str(steps), "--reps", str(reps)]
        subprocess.run(cmd, env=env, check=True)
        cpu = dict(np.load(path))
    print(f"check: {jax.default_backend()} vs cpu, K={num_arms}, T={steps}, R={reps}")
    xla = here["xla"]
    for label in CHECK:
        same = _same_lanes(xla, cpu, label, reps, ("pulls", "output"))
        a, b = xla[f"{label}/arms"], cpu[f"{label}/arms"]
        first = [
            f"lane {i} step {int(np.argmax(a[i] != b[i]))}: "
            f"{int(a[i][a[i] != b[i]][0])} vs {int(b[i][a[i] != b[i]][0])}"
            for i in np.flatnonzero(np.any(a != b, axis=1))[:3]
        ]
        print(
            f"  {label:18s} xla vs cpu identical lanes {int(same.sum())}/{reps} "
            f"{'; '.join(first)}",
            flush=True,
        )
        parts = ("pulls", "output", "regret", "reward")
        for backend in backends:
            if backend == "xla":
                continue
            got = here[backend]
            ran = str(got[f"{label}/ran"])
            vs_xla = _same_lanes(got, xla, label, reps, parts)
            vs_cpu = _same_lanes(got, cpu, label, reps, ("pulls", "output"))
            print(
                f"  {label:18s} {backend} (ran: {ran}) vs device xla identical lanes "
                f"{int(vs_xla.sum())}/{reps}; vs cpu {int(vs_cpu.sum())}/{reps}",
                flush=True,
            )


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.gpu")
    parser.add_argument("--arms", type=int, default=100, help="K")
    parser.add_argument("--steps", type=int, default=2000, help="budget T per run")
    parser.add_argument("--min-arm-lanes", type=float, default=1e3)
    parser.add_argument("--max-arm-lanes", type=float, default=1e7)
    parser.add_argument("--table-arm-lanes", type=float, default=1e6)
    parser.add_argument(
        "--extra-arm-lanes",
        type=float,
        nargs="*",
        default=[],
        help="curve sizes run last (after the table), e.g. 1e8",
    )
    parser.add_argument("--check", action="store_true", help="compare with the CPU")
    parser.add_argument("--reps", type=int, default=64, help="replications of check")
    parser.add_argument("--save-check", help=argparse.SUPPRESS)
    parser.add_argument("--curve", nargs="*", default=list(CURVE), help="policies")
    parser.add_argument("--table", nargs="*", default=list(TABLE), help="policies")
    parser.add_argument(
        "--fixed-shape",
        choices=("auto", "on", "off"),
        default="auto",
        help="Execution.fixed_phase_sorts and .fixed_bisection (auto: the platform's)",
    )
    parser.add_argument(
        "--ungated", action="store_true", help="Execution.gate = False (A/B)"
    )
    parser.add_argument(
        "--no-kernels", action="store_true", help="skip the HLO kernel counts"
    )
    parser.add_argument(
        "--backends",
        default=None,
        help="comma-separated backends per row (default: xla,fused on a GPU, else xla)",
    )
    parser.add_argument("--time-limit", type=float, default=float("inf"))
    parser.add_argument("--out", help="folder for gpu_rows.json")
    args = parser.parse_args(argv)
    warnings.filterwarnings("ignore", message=".*does not cover this range")
    execution = Execution.for_platform(jax.devices()[0].platform)
    if args.fixed_shape != "auto":
        fixed = args.fixed_shape == "on"
        execution = Execution(fixed_phase_sorts=fixed, fixed_bisection=fixed)
    execution = dataclasses.replace(execution, gate=not args.ungated)
    if args.save_check:
        np.savez(args.save_check, **run_check(args.arms, args.steps, args.reps))
        return
    start = time.perf_counter()
    dev = jax.devices()[0]
    print(
        f"device: {len(jax.devices())} x {dev.device_kind} ({dev.platform}); "
        f"jax {jax.__version__}; load {load()}; "
        f"{execution}",
        flush=True,
    )
    platform = jax.devices()[0].platform
    backends = args.backends or ("xla,fused" if platform in ("gpu", "cuda") else "xla")
    backends = tuple(b.strip() for b in backends.split(",") if b.strip())
    if args.check:
        compare_with_cpu(10, 1000, args.reps, backends)
    lo, hi = args.min_arm_lanes, args.max_arm_lanes
    sizes = np.geomspace(lo, hi, int(round(np.log10(hi / lo))) + 1)
    plan = [(p, s, s == sizes[0]) for p in args.curve for s in sizes]
    if args.table_arm_lanes:
        plan += [(p, args.table_arm_lanes, True) for p in args.table]
    plan += [(p, s, False) for s in args.extra_arm_lanes for p in args.curve]
    plan = [(p, s, k, b) for p, s, k in plan for b in backends]
    rows, skipped = [], []
    print(HEADER, flush=True)
    for label, arm_lanes, kernels, backend in plan:
        if time.perf_counter() - start > args.time_limit:
            skipped.append(f"{label}/{backend}@{int(arm_lanes)}")
            continue
        kernels = kernels and not args.no_kernels
        try:
            rows.append(
                measure(
                    label,
                    args.arms,
                    args.steps,
                    arm_lanes,
                    kernels,
                    execution,
                    backend,
                )  # fmt: skip
            )
        except Exception as err:  # noqa: BLE001 - one failed row, the rest runs
            print(
                f"{label:18s} {backend:>7s} failed: {type(err).__name__}: {err}"[:300]
            )
            continue
        _print_row(rows[-1])
    if skipped:
        print(f"skipped (time limit {args.time_limit:.0f} s): {' '.join(skipped)}")
    print(f"total {time.perf_counter() - start:.0f} s")
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        with open(os.path.join(args.out, "gpu_rows.json"), "w") as f:
            json.dump(
                {
                    "device": str(dev.device_kind),
                    "jax": jax.__version__,
                    "backends": backends,
                    "rows": rows,
                },
                f,
                indent=1,
            )


if __name__ == "__main__":
    main()
