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

import inspect

from jbandits.core import registry

_SPILL = "its kernel spills registers for an H100 at the lanes per program it gets"

#: registry name -> (static arguments it applies to, {} for all; why the fused backend
#: refuses it on a GPU, one line). Measured at commits 9b6f45d-831d316 (H100,
#: 4 warps, lean blocks; benchmarks/notes_fused_registers.md)
REFUSED: dict[str, tuple[dict, str]] = {
    "sequential_halving": ({}, f"{_SPILL} (K = 128: 3104 B spill stores)"),
    "uniform": ({}, f"{_SPILL} (K = 128: 3040 B spill stores)"),
    "successive_rejects": ({}, f"{_SPILL} (K = 128: 1160 B spill stores)"),
    "lucb1": ({}, f"{_SPILL} (K = 128: 3376 B spill stores)"),
    "bayes_ucb": (
        {"posterior": "beta"},
        f"{_SPILL} (Beta posterior; K = 128: 24 B spill stores)",
    ),
    "thompson": (
        {"posterior": "beta"},
        f"{_SPILL} (Beta posterior; K = 16: 1184 B, K = 128: 54992 B spill stores)",
    ),
}

#: lowerings that compile the kernel for a GPU (the table applies to them)
COMPILED = ("triton",)


def _argument(name: str, static: dict, key: str):
    if key in static:
        return static[key]
    param = inspect.signature(registry.raw_factory(name)).parameters.get(key)
    return None if param is None else param.default


def reason(policy: str | None, lowering: str, static=()) -> str | None:
    """Why ``policy`` (a registry name, with its ``static`` arguments: a dict or
    ``(key, value)`` pairs) is refused with ``lowering``, or None."""
    if lowering not in COMPILED or policy not in REFUSED:
        return None
    when, why = REFUSED[policy]
    static = dict(static)
    if any(_argument(policy, static, k) != v for k, v in when.items()):
        return None
    return f"refused for GPUs: {why}"


__all__ = ["COMPILED", "REFUSED", "reason"]
