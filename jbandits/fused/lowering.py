"""Lowering choice (placeholder)."""
from __future__ import annotations
from typing import NamedTuple


class Lowering(NamedTuple):
    name: str
    num_warps: int = 4

    def call_kwargs(self) -> dict:
        if self.name == "interpret":
            return {"interpret": True}
        from jax.experimental.pallas import triton as plgpu
        return {"compiler_params": plgpu.CompilerParams(num_warps=self.num_warps, num_stages=1)}
