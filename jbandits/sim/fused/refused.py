"""Policies the fused backend refuses on a GPU, with the reason, consulted before
anything is traced: those whose kernel spills registers to local memory when
compiled for an H100 at K = 16 or K = 128 even at the lanes per program
:func:`jbandits.sim.fused.kernel.lean_block` picks (a spilling kernel reads and
writes local memory at every step: it cannot approach the speed the fused backend is
for), and those whose kernel does not compile there.

Measured by compiling the chunk program for an H100 without a GPU
(``python -m benchmarks.gpu_compile --backend fused``; ptxas' own report of
registers, stack and spills; benchmarks/notes_fused_registers.md has the table);
update it with those measurements. Interpret mode (the CPU tests) is not refused:
it proves the algorithm, not the registers.
"""

from __future__ import annotations

#: registry name -> why the fused backend refuses it on a GPU (one line)
REFUSED: dict[str, str] = {}

#: lowerings that compile the kernel for a GPU (the table applies to them)
COMPILED = ("triton",)


def reason(policy: str | None, lowering: str) -> str | None:
    """Why ``policy`` (a registry name) is refused with ``lowering``, or None."""
    if lowering not in COMPILED or policy is None:
        return None
    why = REFUSED.get(policy)
    return None if why is None else f"refused for GPUs: {why}"


__all__ = ["COMPILED", "REFUSED", "reason"]
