"""Does each policy's fused kernel lower for a GPU? Checked on CPU, without a GPU.

``python -m benchmarks.fused_lowering [--arms 16] [--steps 64] [names ...]``

For every registered policy (the arguments of :func:`benchmarks.gpu.make`): one small
``jbandits.simulate`` with ``Execution(backend="fused")`` (interpret mode on CPU)
builds the runner's fused program; the same program is then lowered with the Pallas
Triton lowering for the ``cuda`` platform (``jax.jit(...).trace(...).lower(
lowering_platforms=("cuda",))``), which runs the whole Pallas -> Triton IR lowering
on the host. Printed per policy: whether the fused program ran (interpret mode on
CPU, the real lowering on a GPU) or fell back to XLA (and why), the primitives of the kernel body the Triton lowering has no rule for, and
whether the lowering to Triton IR succeeded (else its first error line).

What this proves: the kernel lowers to Triton IR. Not that Triton compiles it to
PTX (register pressure, layouts) nor how fast it runs: that needs the GPU
(``benchmarks/gpu_fused.sh``).
"""

from __future__ import annotations

import argparse
import re
import time
import warnings

import jax
import numpy as np

import jbandits
from benchmarks.gpu import make
from jbandits.core.execution import Execution
from jbandits.sim import runner
from jbandits.sim.fused import backend, driver, lowering, safe


def _fused_program():
    for fn in reversed(runner.program_cache().values()):
        if isinstance(fn, backend.FusedProgram):
            return fn
    return None


def check(label: str, num_arms: int, steps: int) -> dict:
    runner.clear_cache()
    backend.FALLBACKS.clear()
    bandit, params = jbandits.envs.bernoulli(np.linspace(0.1, 0.9, num_arms))
    ex = Execution(fixed_phase_sorts=True, fixed_bisection=True, backend="fused")
    row = {"policy": label}
    try:
        policy = make(label, num_arms, steps, ex)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            jbandits.simulate(
                policy, bandit, params, jax.random.key(0), budget=steps,
                num_reps=8, progress=False, execution=ex,
            )  # fmt: skip
    except Exception as err:  # noqa: BLE001 - reported
        row["fused_run"] = f"error: {type(err).__name__}: {str(err)[:120]}"
        return row
    prog = _fused_program()
    if prog is None or prog.reason is not None:
        row["fused_run"] = "xla: " + (backend.FALLBACKS.get(label.split(":")[0]) or "?")
        return row
    row["fused_run"] = "fused"
    spec = prog.spec._replace(lowering=lowering.Lowering("triton"))
    fn = driver.program(spec)
    jaxpr = jax.make_jaxpr(fn)(*prog.abstract_args).jaxpr
    left = {}
    for body in safe.kernel_bodies(jaxpr):
        left.update(safe.unsupported(body))
    row["no_triton_rule"] = left
    t0 = time.perf_counter()
    try:
        jax.jit(fn).trace(*prog.abstract_args).lower(lowering_platforms=("cuda",))
        row["triton_ir"] = "ok"
    except Exception as err:  # noqa: BLE001 - reported
        text = " ".join(str(err).split())
        m = re.search(
            r"(Number of elements must be power-of-two|Unimplemented primitive[^.]*|Only [^.]*)",
            text,
        )
        row["triton_ir"] = f"{type(err).__name__}: {(m.group(0) if m else text)[:160]}"
    row["lower_s"] = round(time.perf_counter() - t0, 1)
    return row


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.fused_lowering")
    parser.add_argument("--arms", type=int, default=16)
    parser.add_argument("--steps", type=int, default=64)
    parser.add_argument("names", nargs="*")
    args = parser.parse_args(argv)
    names = args.names or [
        *sorted(jbandits.names()),
        "ucb1:first",
        "thompson:gauss",
        "bayes_ucb:gauss",
    ]
    print(
        f"jax {jax.__version__}; K={args.arms}, T={args.steps}; lowering to Triton IR on {jax.default_backend()}"
    )
    for label in names:
        row = check(label, args.arms, args.steps)
        print(
            f"{label:20s} fused_run={row['fused_run']:6s} "
            f"no-rule={row.get('no_triton_rule', '-')} triton-ir={row.get('triton_ir', '-')}",
            flush=True,
        )


if __name__ == "__main__":
    main()
