"""The fused backend (jbandits.sim.fused) against the XLA path, in Pallas interpret mode.

Every fused policy runs through :func:`jbandits.simulate` twice, with
``Execution(backend="xla")`` and ``Execution(backend="fused")`` (the kernel in
interpret mode on CPU), on one random instance of its trace case (K = 8 with padded
arms, mixed budgets, 3 checkpoints, permuted arms): every field of the results must
be identical (pull counts, outputs, metrics, regret and reward at each checkpoint,
stopping). A fall-back to XLA warns; here it is a failure, except for the policies
listed in :data:`NOT_FUSED` with their reason. Three policies and UCB1 with random
ties run in the default suite; the others are marked slow (compilation of two programs each).
"""

import warnings

import jax
import numpy as np
import pytest
from cases import CASES

import jbandits
from jbandits.core.execution import Execution
from jbandits.sim.fused import lowering, safe

# interpret-mode fused programs run in a process of their own (see .ci/run)
pytestmark = pytest.mark.fused

_FIRST = {}
for _case in CASES:
    _FIRST.setdefault(_case.registry_name, _case)

DEFAULT = ("apt", "thompson", "sequential_halving")  # + the ucb1-random variant

#: registered policies that stay on XLA, with the reason (a substring of the
#: fall-back's one-line message)
NOT_FUSED: dict = {
    # the posterior quadrature runs only at steps where some lane of the batch needs
    # it (blocks.tracking.when_any, a custom_vmap over the lanes: no kernel-safe form)
    "ttts": "custom_vmap_call",
}

#: extra variants: (id, registry name, factory keyword arguments)
VARIANTS = [
    ("ucb1-random", "ucb1", {"tie_break": "random"}),
    ("thompson-gauss", "thompson", {"posterior": "gauss"}),
    ("bayes_ucb-gauss", "bayes_ucb", {"posterior": "gauss"}),
]


def _instance(case, seed):
    rng = np.random.default_rng(seed)
    inst = case.sample(rng, case.k_max, case.horizon)
    means = rng.uniform(0.05, 0.95, case.k_max)
    bandit, params = jbandits.envs.bernoulli(means, arm_mask=np.asarray(inst.arm_mask))
    return inst, bandit, params


def _simulate(policy, bandit, params, budget, backend, **kw):
    return jbandits.simulate(
        policy,
        bandit,
        params,
        jax.random.key(11),
        budget=budget,
        num_reps=5,
        num_checkpoints=3,
        progress=False,
        execution=Execution(backend=backend),
        # the trace cases draw the numbers of any reward model (a Gaussian
        # sigma = 0.1 on these Bernoulli instances): the two backends are compared
        check_model=False,
        **kw,
    )


def _assert_same(a, b, label):
    for field in a._fields:
        x, y = getattr(a, field), getattr(b, field)
        if field == "segments" or (x is None and y is None):
            continue
        lx, ly = jax.tree_util.tree_leaves(x), jax.tree_util.tree_leaves(y)
        assert len(lx) == len(ly), (label, field)
        for p, q in zip(lx, ly, strict=False):
            np.testing.assert_array_equal(np.asarray(p), np.asarray(q), err_msg=field)


def _check(label, name, policy, bandit, params, budget):
    xla = _simulate(policy, bandit, params, budget, "xla")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fused = _simulate(policy, bandit, params, budget, "fused")
    fell = [str(w.message) for w in caught if "xla backend" in str(w.message)]
    if name in NOT_FUSED:
        assert fell and NOT_FUSED[name] in fell[0], fell
    else:
        assert not fell, fell
    _assert_same(xla, fused, label)


def _params(name):
    marks = () if name in DEFAULT else (pytest.mark.slow,)
    return pytest.param(name, marks=marks, id=name)


@pytest.mark.parametrize("name", [_params(n) for n in sorted(_FIRST)])
def test_fused_equals_xla(name):
    case = _FIRST[name]
    inst, bandit, params = _instance(case, 3)
    policy = case.make_policy(**inst.hp)
    _check(name, name, policy, bandit, params, inst.budget)


@pytest.mark.parametrize(
    "label,name,kw",
    [
        pytest.param(
            *v, marks=() if v[0] == "ucb1-random" else (pytest.mark.slow,), id=v[0]
        )
        for v in VARIANTS
    ],
)
def test_fused_variants(label, name, kw):
    case = _FIRST[name]
    inst, bandit, params = _instance(case, 5)
    policy = jbandits.make(name, num_arms=case.k_max, **{**inst.hp, **kw})
    _check(label, name, policy, bandit, params, inst.budget)


def test_unsupported_options_fall_back_with_reason():
    case = _FIRST["apt"]
    inst, bandit, params = _instance(case, 1)
    policy = case.make_policy(**inst.hp)
    with pytest.warns(RuntimeWarning, match="record_arms"):
        res = _simulate(policy, bandit, params, inst.budget, "fused", record_arms=True)
    assert res.arms is not None


def test_lowering_choice():
    assert lowering.choose("cpu").name == "interpret"
    with pytest.raises(lowering.Unsupported, match="platform"):
        lowering.choose("tpu")
    assert lowering.block_for(100) == 16 and lowering.block_for(8) == 64
    with pytest.raises(ValueError, match="backend"):
        Execution(backend="pallas")


def test_rewrite_removes_gather_scatter_sort():
    """The rewritten program of a function with the operations a kernel refuses has
    none of them left, and computes the same values."""

    def f(x, i, key_data):
        key = jax.random.wrap_key_data(key_data)
        y = x.at[i].add(1.0)
        order = jax.numpy.argsort(-y, stable=True)
        noise = jax.random.uniform(jax.random.fold_in(key, i), x.shape)
        return y[order], jax.numpy.argmin(y + noise), jax.numpy.cumsum(y)[1:3]

    x = jax.numpy.asarray([0.3, 0.1, 0.3, 0.7, 0.2], jax.numpy.float32)
    i = jax.numpy.asarray(2, jax.numpy.int32)
    kd = jax.random.key_data(jax.random.key(4))
    expected = jax.jit(f)(x, i, kd)
    got = jax.jit(safe.kernel_safe(f))(x, i, kd)
    for a, b in zip(expected, got, strict=False):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    jaxpr = jax.make_jaxpr(safe.kernel_safe(f))(x, i, kd).jaxpr
    assert not safe.unsupported(jaxpr), safe.unsupported(jaxpr)
