"""One row of :mod:`benchmarks.gpu_compile`: compile one program for an H100 on a
machine without a GPU, in a process of its own (its ``XLA_FLAGS`` dump directory and
ptxas' ``-v`` report on stderr are the row's).

Deviceless ahead-of-time compilation (jax 0.10.2 with ``jax-cuda12-plugin``,
``jax-cuda12-pjrt`` and ``nvidia-cuda-nvcc-cu12``; ``JAX_PLATFORMS=cpu``): a ``cuda``
topology from a ``GpuTargetConfigProto`` (an H100's by default), inputs given as
``jax.ShapeDtypeStruct`` with a sharding on that topology's mesh, ``.lower().compile()``.
Nothing runs.

A policy row compiles the program :func:`jbandits.simulate` would run for a chunk on a
``cuda`` device: the runner's own program (``runner.program(..., platform="cuda")``
through :func:`benchmarks.hlo.engine_program`), with
``Execution.for_platform("gpu")`` and the row's backend. A lab row compiles the lab
kernel (``fused``, APT in one Pallas kernel) or its plain-JAX twin (``plain``).
"""

from __future__ import annotations

import dataclasses
import importlib.util
import inspect
import json
import os
import sys
import time

MARK = "GPU_COMPILE_RESULT "
#: an H100's GpuTargetConfigProto (public device facts: 132 SMs, 65536 registers per
#: SM, compute capability 9.0), as given in ../shared/gpu/h100.txtpb
TARGET = os.path.join(os.path.dirname(os.path.abspath(__file__)), "gpu_h100.txtpb")
STEPS = 1000  # budget of every lane (traced; host schedules are built for it)

#: values of required (or budget/horizon) factory arguments, by name
DEFAULTS = {"threshold": 0.5, "a": 1.0, "m": 2, "epsilon": 0.05}


def make_policy(label: str, num_arms: int, steps: int, execution=None):
    """``"name"``, ``"name:variant"`` (``first``: ``tie_break="first"``; another
    word: ``posterior=word``, as in ``benchmarks/gpu.py``) or ``"name:k=v,k=v"`` ->
    the registered policy, its required arguments filled (:data:`DEFAULTS`, budget
    and horizon ``steps``, variances 1/4), with ``execution`` where it takes one."""
    import numpy as np

    import jbandits

    name, _, variant = label.partition(":")
    params = inspect.signature(jbandits.core.registry.raw_factory(name)).parameters
    kw: dict = {}
    for key, p in params.items():
        if key in ("budget", "horizon"):
            kw[key] = steps
        elif key == "variances" and p.default is inspect.Parameter.empty:
            kw[key] = np.full(num_arms, 0.25)
        elif p.default is inspect.Parameter.empty and key in DEFAULTS:
            kw[key] = DEFAULTS[key]
    if name == "apt":
        kw["epsilon"] = DEFAULTS["epsilon"]
    if "=" in variant:
        for item in variant.split(","):
            key, _, value = item.partition("=")
            try:
                kw[key] = json.loads(value)
            except json.JSONDecodeError:
                kw[key] = value
    elif variant == "first":
        kw["tie_break"] = "first"
    elif variant:
        kw["posterior"] = variant
    if execution is not None and "execution" in params:
        kw["execution"] = execution
    return jbandits.make(name, num_arms=num_arms, **kw)


def _mesh(target: str):
    from jax.experimental import topologies

    with open(target) as f:
        config = f.read()
    topo = topologies.get_topology_desc(
        platform="cuda", target_config=config, topology="1x1x1"
    )
    return topologies.make_mesh(topo, (1,), ("devices",))


def _abstract(args, mesh):
    import jax
    import numpy as np

    whole = jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec())
    return jax.tree_util.tree_map(
        lambda x: jax.ShapeDtypeStruct(
            np.shape(x),
            jax.dtypes.canonicalize_dtype(np.asarray(x).dtype),
            sharding=whole,
        ),
        args,
    )


def _compile(fn, args, mesh) -> dict:
    t0 = time.perf_counter()
    compiled = fn.lower(*_abstract(args, mesh)).compile()
    text = compiled.as_text()
    module = text.split(None, 2)[1].rstrip(",") if text.startswith("HloModule") else ""
    return {"seconds": round(time.perf_counter() - t0, 2), "module": module}


def compile_policy(spec: dict, mesh) -> dict:
    """A policy row: ``spec`` has label, backend, arms, lanes."""
    import numpy as np

    import jbandits
    from benchmarks import hlo
    from jbandits.core.execution import Execution
    from jbandits.sim import runner, segments
    from jbandits.sim.fused import backend, lowering
    from jbandits.sim.fused.safe import NotKernelSafe

    k = spec["arms"]
    ex = dataclasses.replace(Execution.for_platform("gpu"), backend=spec["backend"])
    bandit, params = jbandits.envs.bernoulli(np.linspace(0.1, 0.9, k))
    policy = make_policy(spec["label"], k, STEPS, ex)
    opts = runner.Options(execution=ex)
    fn, args = hlo.engine_program(
        policy, bandit, params, STEPS, spec["lanes"], opts, "cuda"
    )
    out = {"loop_trips": segments.default_segment(None)}
    if spec["backend"] == "fused":
        if not isinstance(fn, backend.FusedProgram):
            name = spec["label"].partition(":")[0]
            return {"status": "refused", "reason": backend.FALLBACKS.get(name, "?")}
        out.update(block=lowering.block_for(k), warps=fn.spec.lowering.num_warps)
        fn = fn.fused
    try:
        out.update(_compile(fn, args, mesh))
    except NotKernelSafe as err:
        return {"status": "refused", "reason": f"not kernel-safe: {err}"}
    return {"status": "compiled", **out}


def _lab(path: str):
    spec = importlib.util.spec_from_file_location("fused_apt_ceiling", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def compile_lab(spec: dict, mesh) -> dict:
    """A lab row: ``spec`` has label (``lab fused`` or ``lab plain``), arms, lanes,
    block, warps, lab (the file)."""
    import jax
    import numpy as np

    lab = _lab(spec["lab"])
    k = spec["arms"]
    width = 1 << (k - 1).bit_length()
    mu = np.zeros((spec["lanes"], width), np.float32)
    seeds = np.zeros(spec["lanes"], np.uint32)
    if spec["label"] == "lab fused":

        def lab_fused(mu, seeds):
            return lab.fused(mu, seeds, k, STEPS, bl=spec["block"], warps=spec["warps"])

        fn = jax.jit(lab_fused)
        out = {"block": spec["block"], "warps": spec["warps"]}
    else:

        def lab_plain(mu, seeds):
            return lab.plain(mu, seeds, k, STEPS)

        fn = jax.jit(lab_plain)
        out = {"loop_trips": STEPS}
    return {"status": "compiled", **out, **_compile(fn, (mu, seeds), mesh)}


def compile_twin(spec: dict, mesh) -> dict:
    """A twin row (``twin NAME``): the plain-JAX twin of policy NAME
    (:data:`benchmarks.plain_twins.TWINS`) on ``lanes`` lanes, K arms, the budget in
    one ``fori_loop``."""
    import functools

    import jax
    import numpy as np

    import jbandits
    from benchmarks.plain_twins import TWINS

    k = spec["arms"]
    bandit, params = jbandits.envs.bernoulli(np.linspace(0.1, 0.9, k))
    twin = TWINS[spec["label"].split(None, 1)[1]]
    fn = jax.jit(functools.partial(twin, bandit, steps=STEPS))
    kdata = np.zeros((spec["lanes"], 2), np.uint32)
    return {"status": "compiled", "loop_trips": STEPS, **_compile(fn, (params, kdata), mesh)}


def main(argv=None) -> None:
    """``python -m benchmarks.gpu_compile_child SPEC_JSON``: prints one result line."""
    spec = json.loads((argv or sys.argv[1:])[0])
    import jax

    jax.config.update("jax_enable_compilation_cache", False)
    try:
        mesh = _mesh(spec.get("target") or TARGET)
        run = compile_lab if spec["label"].startswith("lab ") else compile_policy
        if spec["label"].startswith("twin "):
            run = compile_twin
        result = run(spec, mesh)
    except Exception as err:  # noqa: BLE001 - the row reports it
        first = (str(err).strip().splitlines() or [""])[0]
        result = {"status": "error", "error": f"{type(err).__name__}: {first}"[:300]}
    print(MARK + json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
