"""The backend of a compiled program: ``fused`` where chosen and possible, else ``xla``.

:func:`program_for` is the runner's one call into this package
(:func:`jbandits.sim.runner.programs._compile`): given the XLA program of a chunk of
lanes it returns either that program or a :class:`FusedProgram`, which runs the fused
kernel and falls back to the XLA program for good the first time the fused one
cannot be traced (an operation the kernel-safe rewrite does not cover) or lowered
and compiled (a lowering that refuses the kernel). The choice:

* ``Execution(backend="xla")``: XLA;
* ``"auto"`` (the default): XLA, except on a ``gpu``/``cuda`` platform for the
  (policy, K) pairs a GPU run measured faster fused than on XLA
  (:data:`jbandits.sim.fused.lowering.FUSED_FASTER`, the only way into the fused
  kernel under ``"auto"``; empty today, so ``"auto"`` is XLA everywhere). For those
  pairs, the fused kernel with a
  **first-call check**: the first (untraced) call at each argument signature also
  runs the XLA program on the same arguments and compares every output leaf exactly
  (``np.array_equal``, NaN equal to NaN); any difference, like a trace, lowering or
  compile failure, switches the program to XLA for good with a one-line reason (in
  :data:`FALLBACKS`, :attr:`FusedProgram.reason`, and logged: a difference at
  ``WARNING``, the rest at ``INFO``), and that call returns the XLA result. After a
  passing check, later calls at that signature run the fused kernel only. The check
  costs one XLA run of the first chunk per program and signature.
* ``"fused"``: fused wherever a lowering exists (interpret mode on CPU: the tests),
  without the check; a fall-back warns, with its one-line reason. Its GPU programs
  are compiled for an H100 and checked for spills in CI
  (``python -m benchmarks.gpu_compile``); not yet timed on hardware (nor run on a
  GPU: benchmarks/notes_fused.md).

Run options the kernel does not produce (``record_arms``, ``return_state``,
``diagnostics``) and several devices (``shard_map``) run on XLA, with the reason.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
from typing import Any

import jax
import numpy as np
from jax._src import config as jax_config  # the persistent-cache switch

from jbandits.core import validate as _validate
from jbandits.core.execution import Execution
from jbandits.sim.fused import driver, lowering, refused
from jbandits.sim.fused.safe import NotKernelSafe

_LOG = logging.getLogger("jbandits")

BACKENDS = ("auto", "xla", "fused")

#: platforms on which ``"auto"`` may pick the fused kernel (with the first-call
#: check), for the pairs of :data:`jbandits.sim.fused.lowering.FUSED_FASTER` only
AUTO_PLATFORMS = ("gpu", "cuda")

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


def _report(reason: str, wanted: str, label: str, level: int = logging.INFO) -> None:
    FALLBACKS[label or "policy"] = reason
    line = f"jbandits: {label or 'policy'} runs on the xla backend: {reason}"
    if wanted == "fused":
        _validate.warn(line, RuntimeWarning)
    else:
        _LOG.log(level, line)


def _platform() -> str:
    """The platform of the local devices (a seam for the tests)."""
    return jax.local_devices()[0].platform


def _signature(args) -> tuple:
    leaves, tree = jax.tree_util.tree_flatten(args)
    return tree, tuple(
        (jax.numpy.shape(x), str(jax.numpy.result_type(x))) for x in leaves
    )


def registry_name(source) -> str:
    """The registered name of a policy source (its label for an unregistered one):
    what :data:`jbandits.sim.fused.lowering.FUSED_FASTER` is keyed on."""
    ident = getattr(source, "ident", None)
    if isinstance(ident, tuple) and len(ident) == 2 and ident[0] == "registered":
        return ident[1]
    return getattr(source, "name", "") or "policy"


def num_arms(args) -> int:
    """K of a chunk's arguments ``(hp, params, ...)``: the instance's arm axis."""
    return int(jax.numpy.shape(args[1].arm_mask)[-1])


def _unjitted(fn):
    return getattr(fn, "__wrapped__", fn)


def _evaluate(traced, args):
    """A jitted program's outputs under a trace: its own trace ``traced``
    (``program.trace(*args)``: a jit with compiler options cannot be nested in a
    trace; its trace is cached, and the first call at these shapes reuses it, as the
    XLA program's does) evaluated on ``args`` in the current trace."""
    closed = traced.jaxpr
    outs = jax.core.eval_jaxpr(
        closed.jaxpr, closed.consts, *jax.tree_util.tree_leaves(args)
    )
    return jax.tree_util.tree_unflatten(traced.out_tree, outs)


def _tracing(args) -> bool:
    return any(isinstance(x, jax.core.Tracer) for x in jax.tree_util.tree_leaves(args))


def _unequal(a: np.ndarray, b: np.ndarray) -> int:
    """How many elements of ``a`` and ``b`` (same shape) differ; NaN equals NaN."""
    same = a == b
    if a.dtype.kind in "fc":
        same |= np.isnan(a) & np.isnan(b)
    return int(a.size - np.count_nonzero(same))


def first_difference(fused_out, xla_out) -> str | None:
    """Where ``fused_out`` differs from ``xla_out`` (one line), or None when every
    leaf is exactly equal (same tree, shapes and dtypes; NaN equals NaN)."""
    got, tree = jax.tree_util.tree_flatten_with_path(fused_out)
    want, want_tree = jax.tree_util.tree_flatten_with_path(xla_out)
    if tree != want_tree:
        return f"output trees differ: {tree} vs {want_tree}"
    for (path, a), (_, b) in zip(got, want, strict=True):
        a, b = np.asarray(a), np.asarray(b)
        where = jax.tree_util.keystr(path) or "output"
        if a.shape != b.shape or a.dtype != b.dtype:
            return f"{where}: {a.dtype}{list(a.shape)} vs {b.dtype}{list(b.shape)}"
        n = _unequal(a, b)
        if n:
            return f"{where}: {n} of {a.size} elements differ"
    return None


class FusedProgram:
    """The fused program of a chunk of lanes, with the XLA program as its fall-back.

    Called like the XLA program. The first call at each argument signature that
    fails (trace, lowering or compilation) switches to the XLA program for good and
    records :attr:`reason`; a call that succeeded once is not guarded again. With
    ``check`` (``"auto"``), a call whose K is not measured faster fused for
    ``policy`` (:func:`jbandits.sim.fused.lowering.fused_faster`) runs the XLA
    program, and the first untraced call of the others also runs the XLA program and
    compares the results exactly (:func:`first_difference`): a difference is a
    fall-back too, and the call returns the XLA result.
    """

    def __init__(
        self,
        fused,
        xla,
        *,
        wanted: str,
        label: str,
        spec=None,
        check: bool = False,
        policy: str | None = None,
    ):
        self.fused = fused
        self.xla = xla
        self.wanted = wanted
        self.label = label
        self.policy = policy or label
        self.spec = spec
        self.check = check
        self.reason: str | None = None
        self.abstract_args = None  # shapes and dtypes of the last call's arguments
        self._ok: set = set()

    @property
    def backend(self) -> str:
        return "xla" if self.reason is not None else "fused"

    def fall_back(self, reason: str, level: int = logging.INFO) -> None:
        if self.reason is None:
            self.reason = reason
            _report(reason, self.wanted, self.label, level)

    def _checked(self, out, xla, args):
        """``out`` (the fused result) if it equals the XLA program's on ``args``,
        else the XLA result, after a fall-back that names the difference."""
        expected = jax.block_until_ready(xla(*args))
        diff = first_difference(out, expected)
        if diff is None:
            return out
        self.fall_back(
            f"the first-call check found the fused result differs from xla ({diff})",
            logging.WARNING,
        )
        return expected

    def __call__(self, *args):
        # under a trace (the runner's jax.eval_shape) the fused program is traced
        # on its own and evaluated inline (_evaluate); the XLA one is traced inline
        tracing = _tracing(args)
        self.abstract_args = jax.tree_util.tree_map(
            lambda x: jax.ShapeDtypeStruct(
                jax.numpy.shape(x), jax.numpy.result_type(x)
            ),
            args,
        )
        xla = _unjitted(self.xla) if tracing else self.xla
        if self.reason is not None:
            return xla(*args)
        if self.check and not lowering.fused_faster(self.policy, num_arms(args)):
            return xla(*args)  # "auto": fused only where measured faster
        sig = _signature(args)
        fused = _unjitted(self.fused) if tracing else self.fused
        # a jit is traced on its own (_evaluate); a stand-in without .trace, inline
        trace = getattr(self.fused, "trace", None) if tracing else None
        with self._cache_switch():  # the program is called here: no wrapper frame
            if sig in self._ok:
                return _evaluate(trace(*args), args) if trace else fused(*args)
            try:
                out = _evaluate(trace(*args), args) if trace else fused(*args)
                if not tracing:
                    jax.block_until_ready(out)
            except NotKernelSafe as err:
                self.fall_back(f"not kernel-safe: {err}")
                return xla(*args)
            except Exception as err:  # noqa: BLE001 - a lowering or compiler refusal
                first = (str(err).strip().splitlines() or [""])[0][:200]
                self.fall_back(
                    f"the fused kernel failed ({type(err).__name__}: {first})"
                )
                return xla(*args)
        if tracing:
            return out
        if self.check:
            out = self._checked(out, xla, args)
            if self.reason is not None:
                return out
        self._ok.add(sig)
        return out

    def _cache_switch(self):
        """A context that keeps the fused program out of JAX's persistent
        compilation cache when the kernel runs in interpret mode: its executable
        calls back into Python, and writing such executables to the cache crashed
        test workers (a segfault in ``compilation_cache.put_executable_and_time``).
        Applied here, not by wrapping the program: no frame of its own."""
        lowering = getattr(self.spec, "lowering", None)
        if getattr(lowering, "name", None) != "interpret":
            return contextlib.nullcontext()
        return jax_config.enable_compilation_cache(False)

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
    platform = (platform or _platform()).lower()
    policy = registry_name(source)
    if wanted == "auto" and (
        platform not in AUTO_PLATFORMS or not lowering.fused_faster(policy)
    ):
        return xla  # "auto": fused on a GPU, where a GPU run measured it faster
    label = getattr(source, "name", "") or "policy"
    reason = static_reason(opts, devices)
    low = None
    if reason is None:
        try:
            low = lowering.choose(platform)
        except lowering.Unsupported as err:
            reason = str(err)
        else:
            # before anything is traced
            reason = refused.reason(policy, low.name, getattr(source, "static", ()))
    if reason is not None:
        _report(reason, wanted, label)
        return xla
    if isinstance(execution, Execution):
        # "any lane" predicates read each lane's own value in a kernel (a psum over
        # the block has no Triton rule); same results, by Execution's contract. No
        # kept column either: more registers in a kernel, for no kernel saved
        execution = dataclasses.replace(execution, lanes=None, kept_column=False)
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
    return FusedProgram(
        fused, xla, wanted=wanted, label=label, spec=spec, check=wanted == "auto",
        policy=policy,
    )  # fmt: skip


__all__ = [
    "AUTO_PLATFORMS",
    "BACKENDS",
    "FusedProgram",
    "first_difference",
    "num_arms",
    "program_for",
    "registry_name",
    "requested",
    "static_reason",
]
