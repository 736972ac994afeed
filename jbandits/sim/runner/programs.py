"""Policy sources and the compiled programs of a chunk of lanes, in a bounded cache.

A :class:`Source` says how to build the policy *inside* the compiled function from
traced numbers; :func:`_program` is the jitted function of a chunk of lanes (``vmap``
over lanes, ``shard_map`` over devices), cached on what changes it: the source's
identity, code (:attr:`Source.code`) and static arguments, the bandit family, the
:class:`Options`, the shared instance fields, key folding, the device count, x64
and the :class:`Execution`.
"""

from __future__ import annotations

import collections
from dataclasses import dataclass
from typing import Any

import jax

from jbandits.core import code_identity, registry
from jbandits.core.execution import Execution
from jbandits.core.types import Bandit, Policy
from jbandits.core.validate import policy_object
from jbandits.sim.engine import RunOptions, compiler_options, start
from jbandits.sim.fused import backend as fused_backend
from jbandits.sim.runner.devices import DEVICE_AXIS, _mesh

CACHE_SIZE = 32  # compiled programs kept (least recently used dropped first)
_CACHE: collections.OrderedDict = collections.OrderedDict()


# --------------------------------------------------------------------------- policies
@dataclass(frozen=True)
class Source:
    """How to build the policy inside the compiled function.

    ``build(**static, **numeric)`` returns a Policy; ``static`` is hashable and part of
    the cache key, the numeric keyword arguments are traced per cell. ``code`` is the
    digest of the code it runs (:func:`jbandits.core.code_identity.digest` of
    ``build`` and ``prepare``; computed when not given): a name does not identify
    code (registered again, an edited notebook cell, a changed helper), so the
    program cache and the stores key on it too.
    """

    build: Any
    static: tuple = ()
    ident: Any = None  # what identifies ``build`` in the cache key
    name: str = ""
    prepare: Any = None  # host hook (num_arms, num_real_arms, budget, **kw) -> dict
    takes_execution: bool = False  # ``build`` takes ``execution=`` (an Execution)
    code: str | None = None  # digest of the code of ``build`` and ``prepare``

    def __post_init__(self):
        if self.code is None:
            object.__setattr__(
                self, "code", code_identity.digest(self.build, self.prepare)
            )

    def policy(self, numbers: dict, execution: Execution | None = None) -> Policy:
        """The policy with ``numbers`` (a lane's, traced inside a program, or a
        cell's on the host): a registered policy's structure with the numbers as
        data in its state (:mod:`jbandits.core.numbers`); a factory called with them."""
        static = dict(self.static)
        if execution is not None:
            static["execution"] = execution
        if storable(self):
            return self._structure(static).policy({**self._constants(), **numbers})
        built = self.build(**static, **numbers)
        return policy_object(built, f"the policy factory {self.name or self.build!r}")

    def _structure(self, static: dict):
        shape, _ = registry.split_kwargs(static, self.ident[1])
        return registry.bind(self.ident[1], **shape)

    def _constants(self) -> dict:
        """Numbers given with the static arguments (``registered(name, {"gamma":
        1.96})``): constants of the program, part of its cache key."""
        return registry.split_kwargs(dict(self.static), self.ident[1])[1]


def _hashable(value):
    try:
        hash(value)
    except TypeError as err:
        raise ValueError(f"static policy argument {value!r} is not hashable") from err
    return value


def source_of(policy) -> tuple[Source, dict]:
    """(Source, numeric kwargs) of a Policy, a registered name, or a factory callable."""
    if isinstance(policy, Source):
        return policy, {}
    if isinstance(policy, Policy):
        if policy.spec is None:  # hand-built: cached on the closures themselves
            return Source(lambda: policy, (), ident=policy, name="policy"), {}
        spec = policy.spec
        return registered(spec.name, dict(spec.static)), dict(spec.params)
    if isinstance(policy, str):
        return registered(policy, {}), {}
    if callable(policy):
        return Source(
            policy,
            (),
            ident=policy,
            name=getattr(policy, "__name__", ""),
            takes_execution=_takes_execution(policy),
        ), {}
    raise ValueError(
        "policy must be a jbandits Policy, a registered name or a factory callable, "
        f"got {type(policy).__name__}"
    )


def _takes_execution(factory) -> bool:
    try:
        return "execution" in registry.parameters(factory)
    except (TypeError, ValueError):
        return False


def registered(name: str, static: dict, *, label: str | None = None) -> Source:
    """The :class:`Source` of registered policy ``name`` with ``static`` arguments
    (its numbers are traced per cell; a number given here is a constant of the
    program instead); ``label`` names it in progress output.

    Programs and stores are keyed on the name, the static arguments and the digest
    of the registered code (:attr:`Source.code`), so every source of the same policy,
    code and structure shares one compiled program.
    """
    registry.check_kwargs(name, static)
    items = tuple(sorted((k, _hashable(v)) for k, v in static.items()))
    factory = registry.raw_factory(name)
    return Source(
        factory,
        items,
        ident=("registered", name),
        name=label or name,
        prepare=registry.prepare_hook(name),
        takes_execution=_takes_execution(factory),
    )


def code_of(sources, bandit: Bandit) -> dict:
    """What a results store records of the code of its work (the ``code`` of a
    :class:`~jbandits.analysis.store.Store`): ``{"policy NAME": digest}`` of each source
    (a :class:`Source` or a registered name) and ``{"family NAME": digest}`` of
    ``bandit`` (:func:`jbandits.core.code_identity.family_digest`)."""
    out = {}
    for source in sources:
        if isinstance(source, str):
            source = registered(source, {})
        name = source.ident[1] if storable(source) else source.name
        out[f"policy {name}"] = source.code
    out[f"family {bandit.name}"] = code_identity.family_digest(bandit)
    return out


def storable(source: Source) -> bool:
    """Whether runs of ``source`` can be stored and resumed: a registered policy,
    identified by its name, code digest, static arguments and numbers. A hand-built
    policy or an unregistered factory has no name a resumed run could be matched
    by (its numbers live in closures the store does not record)."""
    ident = source.ident
    return isinstance(ident, tuple) and len(ident) == 2 and ident[0] == "registered"


# ---------------------------------------------------------------------- the programs
@dataclass(frozen=True)
class Options:
    """Static run options (part of the program's cache key).

    ``horizon`` is static only with ``record_arms`` (a fixed-length scan); otherwise
    it is None and every cell's horizon (:attr:`Lanes.horizon`) is traced.
    """

    horizon: int | None = None
    num_checkpoints: int = 1
    metric: Any = None
    permute: bool = True
    record_arms: bool = False
    return_state: bool = False
    segment: int | None = None
    diagnostics: bool = False
    execution: Execution | None = None  # None: the platform's (execution_of)

    def engine(self) -> RunOptions:
        """The options of every lane's :func:`jbandits.sim.engine.start`."""
        return RunOptions(
            self.num_checkpoints, self.metric, self.diagnostics, self.record_arms,
            self.return_state, self.permute, self.segment,
        )  # fmt: skip


LANES_AXIS = "lanes"  # the vmap axis over a chunk's lanes


def execution_of(
    source: Source, opts: Options, platform: str | None = None
) -> Execution | None:
    """The :class:`~jbandits.core.execution.Execution` a program builds its policy with
    (None when the policy's factory takes none): the policy's own ``execution=``
    if it was built with one, else ``opts.execution``, else the measured defaults of
    ``platform`` (default: that of the local devices); always with the program's
    lanes axis."""
    if not source.takes_execution:
        return None
    chosen = dict(source.static).get("execution") or opts.execution
    if chosen is None:
        chosen = Execution.for_platform(platform or jax.local_devices()[0].platform)
    return Execution.resolve(chosen).with_lanes(LANES_AXIS)


def _axes(params_type, shared: tuple):
    """The vmap axes of an instance of class ``params_type``: none for the
    ``shared`` fields (one array for every lane), else the lane axis."""
    if not shared:
        return 0
    return params_type(*[None if f in shared else 0 for f in params_type._fields])


def _program(
    source: Source,
    bandit: Bandit,
    opts: Options,
    shared: tuple,
    fold: bool,
    devices: int = 1,
    params_type: type | None = None,
    platform: str | None = None,
):
    """The compiled program of a chunk of lanes (cached).

    ``params_type``: the class of the instance (default: the bandit's
    ``params_type``); it places the ``shared`` fields.

    ``platform``: the platform the program is built for (default: that of the local
    devices): its Execution defaults, XLA options and backend (fused or XLA). A
    program for another platform can only be lowered and compiled ahead of time
    (``benchmarks/gpu_compile.py`` compiles the ``"cuda"`` one on a CPU-only machine).

    ``devices > 1``: the lane axis is split over the first ``devices`` local devices
    by ``shard_map``, and each device runs its own lanes under ``vmap``. The engine's
    "any lane" predicates (the inner loop's stopping test, the fast-segment test,
    :func:`jbandits.core.lanes.any_lane` in policies) then reduce over the device's own
    lanes: no cross-device rendezvous in the loops, and a device whose lanes are done
    stops. Results do not depend on how lanes are grouped (those predicates only
    choose how much work is done, never what it computes).
    """
    execution = execution_of(source, opts, platform)
    params_type = params_type or bandit.params_type
    key = (
        platform,
        execution,  # how phase ends, Bayes-UCB's search and lane pooling compile
        source.ident,
        source.code,  # the name does not identify the code (registered again)
        source.static,
        bandit,
        opts,
        shared,
        fold,
        devices,
        params_type,
        jax.config.x64_enabled,
    )
    fn = _CACHE.get(key)
    if fn is not None:
        _CACHE.move_to_end(key)
        return fn
    fn = _compile(
        source, bandit, opts, shared, fold, devices, execution, params_type, platform
    )
    _CACHE[key] = fn
    while len(_CACHE) > CACHE_SIZE:
        _CACHE.popitem(last=False)
    return fn


def _compile(
    source: Source,
    bandit: Bandit,
    opts: Options,
    shared: tuple,
    fold: bool,
    devices: int,
    execution: Execution | None,
    params_type: type,
    platform: str | None = None,
):
    """The jitted function of a chunk of lanes (see :func:`_program`): :func:`lane`
    under ``vmap``."""
    setup = lane_loop(source, bandit, opts, fold, execution)

    def lane(hp, params, kdata, rep, budget, horizon):
        """One lane: its engine loop over checkpoints (:func:`lane_loop`)."""
        loop = setup(hp, params, kdata, rep, budget, horizon)
        carry, outs = jax.lax.scan(loop.checkpoint, loop.carry, loop.checkpoints)
        return loop.result(carry, outs)

    lane.__name__ = "jbandits_lanes"  # the jit's name (compile logs, tests)
    lanes = jax.vmap(
        lane,
        in_axes=(0, _axes(params_type, shared), 0, 0, 0, 0),
        axis_name=LANES_AXIS,
    )
    options = compiler_options(platform)
    if devices > 1:
        fn = jax.jit(_per_device(lanes, shared, devices), compiler_options=options)
    else:
        fn = jax.jit(lanes, compiler_options=options)
    # the backend (jbandits.sim.fused.backend): this XLA program, or the fused kernel
    # with this program as its fall-back
    return fused_backend.program_for(
        source, bandit, opts, shared, fold, devices, fn,
        execution=execution, compiler_options=options, platform=platform,
    )  # fmt: skip


def lane_loop(source: Source, bandit: Bandit, opts: Options, fold: bool, execution):
    """``setup(hp, params, kdata, rep, budget, horizon)``: one lane's
    :class:`jbandits.sim.engine.Loop` (its key, folded with ``rep`` if ``fold``; its
    policy built once from the lane's numbers ``hp``; the engine set up), the one
    set-up of the plain and the refilling programs."""
    engine_opts = opts.engine()
    key_cache = (source.ident, source.code, source.static, execution)

    def setup(hp, params, kdata, rep, budget, horizon):
        k = jax.random.wrap_key_data(kdata)
        if fold:
            k = jax.random.fold_in(k, rep)
        policy = source.policy(hp, execution)
        horizon = horizon if opts.horizon is None else opts.horizon
        return start(
            policy, bandit, params, k, budget, horizon, engine_opts, LANES_AXIS,
            key_cache=key_cache,
        )  # fmt: skip

    return setup


def _per_device(lanes, shared: tuple, devices: int):
    """``lanes`` with its lane axis split over the first ``devices`` local devices."""
    split = jax.sharding.PartitionSpec(DEVICE_AXIS)
    whole = jax.sharding.PartitionSpec()

    def per_device(hp, params, kdata, rep, budget, horizon):
        spec = params._replace(
            **{f: (whole if f in shared else split) for f in params._fields}
        )
        return jax.shard_map(
            lanes,
            mesh=_mesh(devices),
            in_specs=(split, spec, split, split, split, split),
            out_specs=split,
            check_vma=False,
        )(hp, params, kdata, rep, budget, horizon)

    per_device.__name__ = "jbandits_lanes"
    return per_device


def clear_cache() -> None:
    """Drop every cached program (their executables are freed with them)."""
    _CACHE.clear()
