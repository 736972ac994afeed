"""Policies the fused backend refuses on a GPU, with the reason, consulted before
anything is traced: those whose kernel spills registers to local memory when
compiled for an H100 at K = 16 or K = 128 even at the lanes per program
:func:`jbandits.sim.fused.kernel.lean_block` picks (a spilling kernel reads and
writes local memory at every step: it cannot approach the speed the fused backend is
for), and those whose kernel does not compile there.

The fused backend accepts on a GPU only the registered policies of :data:`SPILL_FREE`,
measured to compile without a spill at K = 16 and K = 128; every other registered
policy is refused with the reason (not yet measured, or measured to spill:
:data:`REFUSED`). A policy of your own (not registered) is compiled as asked: check
its spills with ``python -m benchmarks.gpu_compile``.

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

#: registry name -> (static arguments it applies to, {} for all; what was measured):
#: the policies whose kernel compiled for an H100 with 0 bytes spilled at K = 16 and
#: K = 128 at the default lanes per program, 4 warps (commit 831d316;
#: benchmarks/notes_fused_registers.md). The only ones the fused backend accepts on a
#: GPU; add a policy here with its measurement.
SPILL_FREE: dict[str, tuple[dict, str]] = {
    "apt": ({}, "K = 16: 128 registers, K = 128: 159; 0 spilled"),
    "ucb1": (
        {},
        "random ties K = 16/128: 222/168 registers, first: 128/148; 0 spilled",
    ),
    "thompson": ({"posterior": "gauss"}, "K = 16/128: 255/168 registers, 0 spilled"),
    "klucb": ({}, "K = 16/128: 255/255 registers, 0 spilled"),
    "moss": ({}, "K = 16/128: 231/168 registers, 0 spilled"),
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
    if lowering not in COMPILED or policy is None or policy not in registry.names():
        return None
    static = dict(static)
    applies = lambda when: all(  # noqa: E731
        _argument(policy, static, k) == v for k, v in when.items()
    )
    if policy in REFUSED and applies(REFUSED[policy][0]):
        return f"refused for GPUs: {REFUSED[policy][1]}"
    if policy in SPILL_FREE and applies(SPILL_FREE[policy][0]):
        return None
    return (
        "refused for GPUs: its kernel is not yet measured spill-free for an H100 "
        "(jbandits.sim.fused.refused.SPILL_FREE; python -m benchmarks.gpu_compile)"
    )


__all__ = ["COMPILED", "REFUSED", "SPILL_FREE", "reason"]
