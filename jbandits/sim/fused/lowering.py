"""Which Pallas lowering a fused program uses: the one place that chooses.

* ``interpret``: Pallas interpret mode (the kernel runs as ordinary JAX ops); on CPU,
  where it proves the algorithm, not the speed. Used only when the fused backend is
  asked for explicitly (``Execution(backend="fused")``) off a GPU.
* ``triton``: the Pallas Triton lowering, on an NVIDIA GPU, for the jax versions in
  :data:`TRITON_JAX`. It is deprecated from jax 0.11; Mosaic GPU succeeds it, with a
  different programming model (warpgroup arrays, no arg-min lowering; the kernel-safe
  rewrite already writes arg-min as ``max + where(iota) + min``), which is not
  written here: a jax without the Triton lowering runs the XLA backend, with the
  reason.

Versions recorded (:data:`TESTED`): what ran where, and how; update it with the
versions a GPU run checks (``benchmarks/gpu_fused.sh`` prints the line to add).

:data:`FUSED_FASTER`: the (policy, K) pairs a GPU run measured faster on the fused
backend than on XLA, the only way into the fused kernel under ``"auto"``
(:func:`fused_faster`). It is empty: the fused programs are compiled for an H100 and
checked for spills in CI (``python -m benchmarks.gpu_compile``), not yet timed on
hardware, so ``"auto"`` runs XLA everywhere.
"""

from __future__ import annotations

from typing import NamedTuple

import jax

#: what was run with which jax version, and how (interpret mode on CPU proves the
#: algorithm; lowering to Triton IR on CPU proves the kernel lowers, not that Triton
#: compiles or runs it).
TESTED = {
    "interpret": {"0.10.2": "tests/test_fused.py on CPU (identical to the XLA path)"},
    "triton": {
        "0.10.2": "compiled for an H100 on CPU, deviceless (benchmarks/gpu_compile.py, "
        "in CI); not yet run on a GPU",
    },
    # the measured ceiling (/work/shared/lab/fused_apt_ceiling.py): a hand-written
    # APT kernel, not this backend
    "triton (lab kernel)": {"0.11.2": "run on one H200"},
}

#: ``(registered policy name, K) -> the run that measured it``: pairs on which a GPU
#: run timed the fused program faster than the XLA one (same chunk, same device), K
#: the instance's arm count (padded arms included). ``Execution(backend="auto")``
#: runs the fused kernel (with its first-call check) for these pairs only. Empty: no
#: GPU has timed the fused backend yet. An entry reads e.g.
#: ``("apt", 128): "benchmarks/notes_fused.md, H200, jax 0.10.2: 2.1x XLA at 1e7"``.
FUSED_FASTER: dict = {}


def fused_faster(policy: str, num_arms: int | None = None) -> bool:
    """Whether a GPU run measured ``policy`` faster fused than on XLA at ``num_arms``
    arms (:data:`FUSED_FASTER`); with ``num_arms`` None, at some K."""
    if num_arms is None:
        return any(name == policy for name, _ in FUSED_FASTER)
    return (policy, int(num_arms)) in FUSED_FASTER


#: jax versions [first, last) on which the Triton lowering is attempted
TRITON_JAX = ((0, 4, 31), (0, 12, 0))


class Unsupported(Exception):
    """No fused lowering here; the message says why (one line)."""


def jax_version() -> tuple:
    parts = []
    for p in jax.__version__.split(".")[:3]:
        digits = "".join(c for c in p if c.isdigit())
        parts.append(int(digits or 0))
    return tuple(parts)


class Lowering(NamedTuple):
    """A lowering and its launch parameters (hashable: part of a program's key)."""

    name: str  # "interpret" or "triton"
    num_warps: int = 4
    num_stages: int = 1

    def call_kwargs(self) -> dict:
        """Keyword arguments of ``pallas_call`` for this lowering."""
        if self.name == "interpret":
            return {"interpret": True}
        if self.name == "triton":
            from jax.experimental.pallas import triton as plgpu

            params = (
                getattr(plgpu, "CompilerParams", None) or plgpu.TritonCompilerParams
            )
            return {
                "compiler_params": params(
                    num_warps=self.num_warps, num_stages=self.num_stages
                )
            }
        raise Unsupported(f"unknown lowering {self.name!r}")


def choose(platform: str, *, num_warps: int = 4) -> Lowering:
    """The lowering for ``platform`` ("cpu", "gpu", "cuda", "rocm", "tpu", ...).

    Raises:
      Unsupported: no fused lowering for this platform or jax version (the message
        is the one-line reason the runner reports when it falls back to XLA).
    """
    platform = platform.lower()
    if platform == "cpu":
        return Lowering("interpret")
    if platform in ("gpu", "cuda"):
        version = jax_version()
        first, last = TRITON_JAX
        if not first <= version < last:
            raise Unsupported(
                f"jax {jax.__version__}: the Pallas Triton lowering is used for jax "
                f"{'.'.join(map(str, first))} to <{'.'.join(map(str, last))}; the "
                "Mosaic GPU lowering is not written"
            )
        try:
            from jax.experimental.pallas import triton  # noqa: F401
        except ImportError as err:
            raise Unsupported(
                f"jax {jax.__version__} has no Pallas Triton lowering ({err})"
            ) from err
        return Lowering("triton", num_warps=num_warps)
    raise Unsupported(f"no fused lowering for platform {platform!r}")


def block_for(num_arms: int) -> int:
    """Lanes per kernel program: about 2048 arm-lanes per program, 8 to 64 lanes, a
    power of two (the lab kernel ran 8 to 64 lanes per program at K = 10 and 100)."""
    width = 1 << max(num_arms - 1, 0).bit_length()
    lanes = max(8, min(64, 2048 // width))
    return 1 << (lanes.bit_length() - 1)


__all__ = [
    "FUSED_FASTER",
    "Lowering",
    "TESTED",
    "TRITON_JAX",
    "Unsupported",
    "block_for",
    "choose",
    "fused_faster",
]
