"""``Execution(backend="auto")``: XLA, except on a GPU for the (policy, K) pairs a GPU
run measured faster fused (``lowering.FUSED_FASTER``, the only way in), where the
fused kernel runs after a first-call check against the XLA program
(jbandits.sim.fused.backend).

On CPU the GPU is simulated: the platform seam reports ``"gpu"`` and the lowering
choice returns Pallas interpret mode, so the fused program runs as it would on a GPU
(same padded kernel program), only interpreted.
"""

import logging

import jax
import numpy as np
import pytest

import jbandits
from jbandits.core.execution import Execution
from jbandits.sim.fused import backend, lowering
from jbandits.sim.runner import programs

# interpret-mode fused programs run in a process of their own (see .ci/run)
pytestmark = pytest.mark.fused

K, BUDGET, REPS = 4, 24, 3


@pytest.fixture(autouse=True)
def _fresh():
    programs.clear_cache()
    backend.FALLBACKS.clear()
    yield
    programs.clear_cache()
    backend.FALLBACKS.clear()


@pytest.fixture
def on_gpu(monkeypatch):
    """A "gpu" platform whose lowering is interpret mode."""
    monkeypatch.setattr(backend, "_platform", lambda: "gpu")
    monkeypatch.setattr(
        lowering, "choose", lambda platform, **kw: lowering.Lowering("interpret")
    )


@pytest.fixture
def measured(monkeypatch):
    """UCB1 at K arms measured faster fused (the only way into fused under auto)."""
    monkeypatch.setattr(lowering, "FUSED_FASTER", {("ucb1", K): "a test's entry"})


@pytest.fixture
def spy(monkeypatch):
    """Wraps every program the runner builds: counts the untraced calls of its XLA
    and fused programs; ``perturb`` set: the fused program's output has that
    change."""
    real = backend.program_for
    state = {"xla_calls": 0, "fused_calls": 0, "perturb": None, "programs": []}

    def counted(xla):
        def call(*args):
            state["xla_calls"] += 1
            return xla(*args)

        call.__wrapped__ = xla.__wrapped__  # traced inline, uncounted
        call.lower = xla.lower
        return call

    def perturbed(fused, change):
        def call(*args):
            state["fused_calls"] += 1
            return change(fused(*args))

        call.__wrapped__ = lambda *args: change(fused.__wrapped__(*args))
        call.lower = fused.lower
        return call

    def program_for(*args, **kwargs):
        prog = real(*args, **kwargs)
        if isinstance(prog, backend.FusedProgram):
            prog.xla = counted(prog.xla)
            prog.fused = perturbed(
                prog.fused, lambda out: (state["perturb"] or (lambda o: o))(out)
            )
        state["programs"].append(prog)
        return prog

    monkeypatch.setattr(backend, "program_for", program_for)
    return state


def _simulate(backend_name="auto"):
    bandit, params = jbandits.envs.bernoulli(np.linspace(0.2, 0.8, K))
    policy = jbandits.make("ucb1", num_arms=K)
    return jbandits.simulate(
        policy, bandit, params, jax.random.key(3), budget=BUDGET, num_reps=REPS,
        num_checkpoints=2, progress=False, execution=Execution(backend=backend_name),
    )  # fmt: skip


def _leaves(res):
    return [
        np.asarray(x) for x in jax.tree_util.tree_leaves(res._replace(segments=None))
    ]


def _assert_same(a, b):
    for x, y in zip(_leaves(a), _leaves(b), strict=True):
        np.testing.assert_array_equal(x, y)


def test_auto_on_gpu_runs_fused_after_a_passing_check(on_gpu, measured, spy):
    expected = _simulate("xla")
    spy["xla_calls"], spy["programs"] = 0, []
    got = _simulate()
    _assert_same(got, expected)
    (prog,) = spy["programs"]
    assert isinstance(prog, backend.FusedProgram) and prog.check
    assert prog.spec.lowering.name == "interpret"
    assert prog.backend == "fused" and prog.reason is None
    assert spy["xla_calls"] == 1  # the first-call check, once
    _assert_same(_simulate(), expected)  # same signature: fused only, no check
    assert spy["xla_calls"] == 1 and prog.backend == "fused"


def test_auto_check_catches_a_wrong_fused_result(on_gpu, measured, spy, caplog):
    expected = _simulate("xla")
    spy["programs"] = []
    spy["perturb"] = lambda out: out._replace(num_pulls=out.num_pulls + 1)
    with caplog.at_level(logging.WARNING, logger="jbandits"):
        got = _simulate()
    _assert_same(got, expected)  # the caller gets the XLA result
    (prog,) = spy["programs"]
    assert prog.backend == "xla"
    assert "differs from xla" in prog.reason and ".num_pulls" in prog.reason
    assert backend.FALLBACKS["ucb1"] == prog.reason
    assert any(".num_pulls" in r.getMessage() for r in caplog.records)
    _assert_same(_simulate(), expected)  # XLA for good
    assert prog.backend == "xla"


def test_auto_on_gpu_without_a_measured_pair_is_xla(on_gpu, spy, monkeypatch):
    """An empty FUSED_FASTER (no GPU timing): no fused program is even built."""
    monkeypatch.setattr(lowering, "FUSED_FASTER", {})
    expected = _simulate("xla")
    spy["programs"] = []
    _assert_same(_simulate(), expected)
    assert spy["programs"] and not any(
        isinstance(p, backend.FusedProgram) for p in spy["programs"]
    )
    assert not backend.FALLBACKS


def test_auto_runs_fused_only_at_a_measured_k(on_gpu, spy, monkeypatch):
    """UCB1 measured at another K only: the program is built, but every call at this
    K runs XLA (no fused call, no check); the entry at K lets it in."""
    monkeypatch.setattr(lowering, "FUSED_FASTER", {("ucb1", 2 * K): "elsewhere"})
    expected = _simulate("xla")
    spy["xla_calls"], spy["programs"] = 0, []
    _assert_same(_simulate(), expected)
    (prog,) = spy["programs"]
    assert isinstance(prog, backend.FusedProgram) and prog.reason is None
    assert spy["fused_calls"] == 0 and spy["xla_calls"] == 1
    lowering.FUSED_FASTER[("ucb1", K)] = "here"
    _assert_same(_simulate(), expected)
    assert spy["fused_calls"] == 1 and spy["xla_calls"] == 2  # fused, then the check


def test_no_pair_is_measured_yet():
    """No GPU has timed the fused backend: "auto" is XLA everywhere. An entry comes
    with the GPU run that measured it (then update this test)."""
    assert lowering.FUSED_FASTER == {}
    assert not lowering.fused_faster("apt") and not lowering.fused_faster("apt", 128)


def test_auto_off_gpu_is_xla(spy, measured):
    _simulate()
    assert spy["programs"] and not any(
        isinstance(p, backend.FusedProgram) for p in spy["programs"]
    )
    assert not backend.FALLBACKS


def test_first_difference():
    a = {"x": np.array([1.0, np.nan]), "n": np.array(3)}
    assert (
        backend.first_difference(a, {"x": np.array([1.0, np.nan]), "n": np.array(3)})
        is None
    )
    diff = backend.first_difference(a, {"x": np.array([2.0, np.nan]), "n": np.array(3)})
    assert "['x']" in diff and "1 of 2" in diff
    assert "int32" in backend.first_difference(
        {"n": np.array(3, np.int32)}, {"n": np.array(3, np.int64)}
    )
