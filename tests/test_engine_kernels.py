"""Engine: kernels per step of the batched program, counted in the optimised HLO.

On a GPU every kernel of a step is a launch; on CPU every thunk costs dispatch time.
These tests pin upper bounds on the kernels of the unguarded (steady-state) step of
the runner's program, counted by ``benchmarks/hlo.py`` as
``python -m benchmarks.throughput`` prints them, so that a change that adds kernels
to every step fails here. Before the lean step (forced round robin and the index in
one selection, no copies of the loop carry, one accumulator for regret and reward,
UCB's n from the step counter) the bounds below were APT 51, UCB1 53 (random ties
60) and Sequential Halving 69 per step; before statistics without a second moment
(mean-only policies) APT 36, UCB1 37 (43) and Sequential Halving 52; before the
statistics became one table (one gather and one scatter per pull, the cached index
as one of its rows), the reward was drawn ahead and carried, and the engine counted
pulls in the policy's numbering: APT 24, UCB1 25 (31), Sequential Halving 30; before
index policies that do not read the number of pulls derived the forced round robin
from the counts (no pull counter of their own): APT 18; before steps that never read
their key stopped advancing the engine's step counter every step (it advances once per
segment): APT 17, UCB1 with first ties 19, Sequential Halving 19.
"""

import jax
import numpy as np
import pytest

import jbandits
from benchmarks import hlo

K = 40  # above 32, where XLA:CPU splits a plain reduction in two kernels
BUDGET = 256
SEG = 32  # steps per inner segment of the runner's program (traced horizon)


def _step_kernels(policy, bandit, params) -> int:
    """Kernels of the unguarded step of the runner's program for ``policy``."""
    return hlo.total(hlo.engine_step_kernels(policy, bandit, params, BUDGET)[0])


@pytest.fixture(scope="module")
def gauss():
    rng = np.random.default_rng(0)
    return jbandits.envs.gaussian(rng.uniform(0.2, 0.8, K), np.full(K, 0.5))


def test_apt_step_kernels(gauss):
    """APT (Locatelli et al., ICML 2016), K = 40."""
    policy = jbandits.apt(K, threshold=0.5, epsilon=0.05)
    assert _step_kernels(policy, *gauss) <= 16


def test_apt_step_kernels_few_arms():
    """APT at K = 10, where the selection is one (value, index) reduction over the
    cached index and the forced round robin reads a table of successors
    (jbandits.policies.blocks.arms.uses_one_pass): 17 kernels (24 before the statistics table; the
    successor table replaced an integer reduction per step). When the cached index
    was an array of its own it took two kernels; without the cache the one-pass step
    ran 22, and the two-pass step with the forced arm in the index reduction 25
    (1.5x the time per pull). 17 before the forced round robin was read from the
    counts; 16 before the step counter of a key-free step advanced once per segment
    (15 now)."""
    rng = np.random.default_rng(1)
    bandit, params = jbandits.envs.gaussian(rng.uniform(0.2, 0.8, 10), np.full(10, 0.5))
    policy = jbandits.apt(10, threshold=0.5, epsilon=0.05)
    assert _step_kernels(policy, bandit, params) <= 15


def test_apt_step_kernels_many_lanes():
    """The program a timed run executes (250 lanes per device, as ``simulate``
    splits 500 replications over 2 devices) compiles the step with fewer index
    kernels than the one-lane program: APT K = 10 runs 12 kernels per step (15
    before the engine carried its count increment, which XLA otherwise broadcasts
    from a folded constant every step, and the forced round robin was read from the
    counts; 13 before the step counter of a key-free step advanced once per
    segment)."""
    rng = np.random.default_rng(1)
    bandit, params = jbandits.envs.gaussian(rng.uniform(0.2, 0.8, 10), np.full(10, 0.5))
    policy = jbandits.apt(10, threshold=0.5, epsilon=0.05)
    counts = hlo.engine_step_kernels(policy, bandit, params, BUDGET, lanes=250)[0]
    assert hlo.total(counts) <= 12


def test_no_split_reductions(gauss):
    """XLA's tree-reduction rewriter stays off in the runner's programs: at K = 40 it
    would split the arg-min's reductions into an unfusable ``reduce-window`` and a
    second reduce (APT K = 100 ran at 0.55x the speed with it)."""
    policy = jbandits.apt(K, threshold=0.5, epsilon=0.05)
    text = hlo.engine_program_text(policy, *gauss, BUDGET)
    assert " reduce-window(" not in text


@pytest.mark.slow
@pytest.mark.parametrize(
    "name, kwargs, bound",
    [
        ("ucb1", dict(tie_break="first"), 18),
        ("ucb1", dict(tie_break="random"), 25),
        # 18 step kernels + the stage-end loop's condition (1 kernel, run every step;
        # counted by benchmarks.hlo since it counts loop conditions)
        ("sequential_halving", dict(budget=BUDGET), 19),
    ],
)
def test_policy_step_kernels(gauss, name, kwargs, bound):
    policy = jbandits.make(name, num_arms=K, **kwargs)
    assert _step_kernels(policy, *gauss) <= bound


def test_counter_on_a_known_program():
    """The counter itself: a 32-step scan whose body is one fusion and one sort."""

    def body(c, _):
        return jax.numpy.sort(c * 2.0 + 1.0), None

    text = (
        jax.jit(lambda x: jax.lax.scan(body, x, None, length=SEG)[0])
        .lower(np.zeros(8, np.float32))
        .compile()
        .as_text()
    )
    counts = hlo.step_kernels(text, SEG)[0]  # loop counter, fusion, sort
    assert counts["sort"] == 1 and counts["fusion"] == 2 and hlo.total(counts) == 3


def _bernoulli_fusions(name, lanes=16, num_arms=20, **kwargs):
    means = np.linspace(0.1, 0.9, num_arms)
    bandit, params = jbandits.envs.bernoulli(means)
    policy = jbandits.make(name, num_arms=num_arms, **kwargs)
    text = hlo.engine_program_text(policy, bandit, params, BUDGET, lanes)
    return hlo.step_fusions(text, SEG)


@pytest.mark.slow  # 6-30 s on a 2-core machine: CI runs it in the slow step
def test_bayes_ucb_beta_hashes_each_word_once():
    """Bayes-UCB (Beta): the binarising uniform's threefry hash is one kernel that
    the step's other kernels read (``jbandits.policies.blocks.fuse.materialise``). With
    ``lax.optimization_barrier`` XLA:CPU dropped the barrier and fused the hash into
    every consumer of the flag: 15 hash words per step instead of 5 (the engine's and
    the step's key splits, the binarisation, the tie-break bits, the reward)."""
    fusions = _bernoulli_fusions("bayes_ucb", posterior="beta")
    words = sum(ops["xor"] for _, ops in fusions) / 20
    assert words < 6, words


@pytest.mark.slow  # 6-30 s on a 2-core machine: CI runs it in the slow step
def test_thompson_beta_binarises_outside_the_arm_loop():
    """Thompson sampling (Beta): no ``[lanes, K]`` kernel hashes, and one
    ``[lanes, 2 K]`` kernel does, the sampler's first stage (both gammas of every
    arm); the binarisation of the reward, one word per lane, is not redone for every
    arm inside the ``[K]``-wide update of the successes (it was, before
    ``_fuse.materialise``)."""
    lanes, num_arms = 16, 20
    fusions = _bernoulli_fusions("thompson", lanes, num_arms, posterior="beta")

    def hashing(width):
        shape = f"[{lanes},{width}]"
        return [dict(ops) for s, ops in fusions if shape in s and ops["xor"]]

    assert not hashing(num_arms), hashing(num_arms)
    assert len(hashing(2 * num_arms)) == 1, hashing(2 * num_arms)


@pytest.mark.slow  # ~10 s on a 2-core machine: CI runs it in the slow step
def test_thompson_beta_picks_stage_two_entries_in_one_kernel():
    """Thompson sampling (Beta), K = 100: the pooled stage 2 finds each lane's first
    NaN entries (``arms.lowest_set``) in one ``[lanes, slots]`` kernel after the
    packing, not by a masked min-reduction and a mask update per slot (2 kernels
    each, 9 slots here)."""
    lanes, num_arms = 50, 100
    fusions = _bernoulli_fusions("thompson", lanes, num_arms, posterior="beta")
    masks = [
        shape for shape, _ in fusions if shape.startswith(f"pred[{lanes},{num_arms}]")
    ]
    assert len(masks) <= 2, masks  # 9 before: a mask update per slot
    # 74 before, 59 after; 69 since stage 2 redoes single gammas (XLA splits their
    # tries into ~15 pool-sized kernels, yet the step runs 1.05-1.2x faster)
    assert len(fusions) <= 72, len(fusions)
