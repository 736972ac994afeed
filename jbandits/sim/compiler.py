"""XLA compiler options for the programs that run the engine (:func:`compiler_options`)."""

from __future__ import annotations

import functools
from typing import Any

import jax
import numpy as np


def compiler_options(platform: str | None = None) -> dict[str, str]:
    """XLA options for programs that run the engine (the batched runner uses them).

    On CPU, XLA's YNN fusions (reductions and elementwise fusions handed to XNNPACK's
    YNN runtime) are switched off: inside the engine's loops, where one compiled
    program executes them millions of times, the process's peak RSS grew with the
    horizon although our buffers are O(R K); without them it stays flat
    (``benchmarks/memory.py``). Copy insertion uses XLA's region analysis, which
    proves more of the step's in-place scatters into the loop-carried arrays safe
    without a copy (fewer kernels per step, counted by ``benchmarks/hlo.py``; results
    are unchanged, copies only move data). XLA's tree-reduction rewriter is off: on
    CPU it splits every reduction over more than 32 elements into a
    ``reduce-window`` of 32-wide partial results and a second reduction, and that
    ``reduce-window`` cannot fuse with the index that feeds it; a policy's arg-max
    over K arms then costs two passes over ``[lanes, K]`` instead of one fused pass
    (much slower from K = 100 arms). The engine's reductions run over the K arms of
    one lane (never over replications), where the rewriter's pairwise partial sums
    buy no accuracy that matters; results of every trace test are unchanged. The
    measurements behind each option: ``benchmarks/notes_sim.md``.

    ``platform``: the platform the program is compiled for (default: JAX's default
    backend; another one for ahead-of-time compiles, ``benchmarks/gpu_compile.py``).
    """
    if (platform or jax.default_backend()) != "cpu":
        return {}
    wanted = {
        "xla_cpu_experimental_ynn_fusion_type": "",
        "xla_cpu_copy_insertion_use_region_analysis": True,
        "xla_disable_hlo_passes": "tree_reduction_rewriter",
    }
    return {k: v for k, v in wanted.items() if _known_option(k, v)}


@functools.cache
def _known_option(name: str, value: Any) -> bool:
    """Whether this jaxlib's compiler accepts the option (older ones reject unknown
    flags with an error); probed once per option on a one-element program."""
    try:
        jax.jit(lambda x: x + 1, compiler_options={name: value}).lower(
            np.zeros(1, np.float32)
        ).compile()
    except Exception:  # noqa: BLE001 - any rejection means: leave the option out
        return False
    return True
