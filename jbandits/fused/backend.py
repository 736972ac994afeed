"""The backend of a compiled program: ``fused`` where chosen and possible, else ``xla``.

:func:`program_for` is the runner's one call into this package
(:func:`jbandits.runner.programs._compile`): given the XLA program of a chunk of
lanes it returns either that program or a :class:`FusedProgram`, which runs the fused
kernel and falls back to the XLA program for good the first time the fused one
cannot be traced (an operation the kernel-safe rewrite does not cover) or lowered
and compiled (a lowering that refuses the kernel). The choice:

* ``Execution(backend="xla")``: XLA;
* ``"auto"`` (the default): XLA for now. It is to pick the fused kernel on a GPU
  once a GPU run has shown the kernel lowers and is faster (not yet measured: the
  Triton lowering needs power-of-two shapes, see benchmarks/notes_fused.md);
* ``"fused"``: fused wherever a lowering exists (interpret mode on CPU: the tests);
  a fall-back warns, with its one-line reason.

Run options the kernel does not produce (``record_arms``, ``return_state``,
``diagnostics``) and several devices (``shard_map``) run on XLA, with the reason.
"""

from __future__ import annotations

import dataclasses
import logging
import warnings
from typing import Any

import jax

from jbandits.execution import Execution
from jbandits.fused import driver, lowering
from jbandits.fused.safe import NotKernelSafe

_LOG = logging.getLogger("jbandits")

BACKENDS = ("auto", "xla", "fused")

#: label -> the reason of the last fall-back to XLA in this process (read by
#: ``benchmarks/gpu.py`` to print the backend that actually ran)
FALLBACKS: dict = {}


def requested(source, opts) -> str:
    """The backend asked for: the policy's own ``execution=`` if it was built with
    one, else the call's ``execution``, else ``"auto"``."""
    chosen = dict(getattr(source, "static", ())).get("execution") or opts.execution
    return getattr(chosen, "backend", "auto") if chosen is not None else "auto"


def static_reason(opts, devices: int) -> str | None:
    """Why a program with these options cannot be fused (None: it can)."""
    if opts.record_arms:
        return "record_arms: the kernel does not record the pulled arms"
    if opts.return_state:
        return "return_state: the kernel does not return the policy state"
    if opts.diagnostics:
        return "diagnostics: the kernel does not read policy.diagnostics"
    if devices > 1:
        return f"{devices} devices: the fused program runs on one device"
    return None


def _report(reason: str, wanted: str, label: str) -> None:
    FALLBACKS[label or "policy"] = reason
    line = f"jbandits: {label or 'policy'} runs on the xla backend: {reason}"
    if wanted == "fused":
        warnings.warn(line, RuntimeWarning, stacklevel=3)
    else:
        _LOG.info(line)


def _signature(args) -> tuple:
    leaves, tree = jax.tree_util.tree_flatten(args)
    return tree, tuple(
        (jax.numpy.shape(x), str(jax.numpy.result_type(x))) for x in leaves
    )


def _unjitted(fn):
    return getattr(fn, "__wrapped__", fn)


def _tracing(args) -> bool:
    return any(isinstance(x, jax.core.Tracer) for x in jax.tree_util.tree_leaves(args))


class FusedProgram:
    """The fused program of a chunk of lanes, with the XLA program as its fall-back.

    Called like the XLA program. The first call at each argument signature that
    fails (trace, lowering or compilation) switches to the XLA program for good and
    records :attr:`reason`; a call that succeeded once is not guarded again.
    """

    def __init__(self, fused, xla, *, wanted: str, label: str, spec=None):
        self.fused = fused
        self.xla = xla
        self.wanted = wanted
        self.label = label
        self.spec = spec
        self.reason: str | None = None
        self.abstract_args = None  # shapes and dtypes of the last call's arguments
        self._ok: set = set()

    @property
    def backend(self) -> str:
        return "xla" if self.reason is not None else "fused"

    def fall_back(self, reason: str) -> None:
        if self.reason is None:
            self.reason = reason
            _report(reason, self.wanted, self.label)

    def __call__(self, *args):
        # under a trace (the runner's jax.eval_shape) the functions are traced
        # inline: a jit with compiler options cannot be nested
        tracing = _tracing(args)
        self.abstract_args = jax.tree_util.tree_map(
            lambda x: jax.ShapeDtypeStruct(
                jax.numpy.shape(x), jax.numpy.result_type(x)
            ),
            args,
        )
        fused = _unjitted(self.fused) if tracing else self.fused
        xla = _unjitted(self.xla) if tracing else self.xla
        if self.reason is not None:
            return xla(*args)
        sig = _signature(args)
        if sig in self._ok:
            return fused(*args)
        try:
            out = fused(*args)
            if not tracing:
                jax.block_until_ready(out)
        except NotKernelSafe as err:
            self.fall_back(f"not kernel-safe: {err}")
            return xla(*args)
        except Exception as err:  # noqa: BLE001 - a lowering or compiler refusal
            first = (str(err).strip().splitlines() or [""])[0][:200]
            self.fall_back(f"the fused kernel failed ({type(err).__name__}: {first})")
            return xla(*args)
        if not tracing:
            self._ok.add(sig)
        return out

    def lower(self, *args, **kwargs):
        """``lower`` of the program that runs (fused, or XLA after a fall-back)."""
        active = self.xla if self.reason is not None else self.fused
        return active.lower(*args, **kwargs)


def program_for(
    source,
    bandit,
    opts,
    shared: tuple,
    fold: bool,
    devices: int,
    xla: Any,
    *,
    execution: Execution | None,
    compiler_options: dict | None = None,
    platform: str | None = None,
):
    """The program of a chunk of lanes: ``xla`` or a :class:`FusedProgram` (see the
    module docstring). ``execution``: the Execution the policy is built with (the
    runner's; None when its factory takes none)."""
    wanted = requested(source, opts)
    if wanted not in BACKENDS:
        raise ValueError(f"backend must be one of {BACKENDS}, got {wanted!r}")
    if wanted == "xla":
        return xla
    platform = (platform or jax.local_devices()[0].platform).lower()
    if wanted == "auto":
        # "auto" stays on XLA until a GPU run shows the kernel lowers and is faster
        # (benchmarks/notes_fused.md: not yet measured; Triton needs power-of-two
        # shapes that the policies' intermediate arrays do not have)
        return xla
    label = getattr(source, "name", "") or "policy"
    reason = static_reason(opts, devices)
    low = None
    if reason is None:
        try:
            low = lowering.choose(platform)
        except lowering.Unsupported as err:
            reason = str(err)
    if reason is not None:
        _report(reason, wanted, label)
        return xla
    if isinstance(execution, Execution):
        # "any lane" predicates read each lane's own value in a kernel (a psum over
        # the block has no Triton rule); same results, by Execution's contract
        execution = dataclasses.replace(execution, lanes=None)
    spec = driver.Spec(
        build=source.policy,
        execution=execution,
        bandit=bandit,
        horizon=opts.horizon,
        num_checkpoints=opts.num_checkpoints,
        metric=opts.metric,
        permute=opts.permute,
        segment=opts.segment,
        shared=shared,
        fold=fold,
        block=0,  # lowering.block_for(K) at trace time
        lowering=low,
    )
    fn = driver.program(spec)
    fused = jax.jit(fn, compiler_options=compiler_options or None)
    return FusedProgram(fused, xla, wanted=wanted, label=label, spec=spec)


__all__ = ["BACKENDS", "FusedProgram", "program_for", "requested", "static_reason"]
