"""The broad tuning benchmark's task set covers what issue 40 asks for (structure
only: running it takes minutes, see benchmarks/notes_tuning_tasks.md)."""

from benchmarks.tuning_tasks import tasks
from jbandits.tuning import Objective, Space


def test_the_task_set_spans_settings_dimensions_priors_and_oracle_constants():
    ts = tasks()
    assert len(ts) >= 12
    assert {t.setting for t in ts} == {"regret", "thresholding", "identification"}
    assert sum(Space(t.space).dim >= 2 for t in ts) >= 6
    assert sum(callable(t.instance) for t in ts) >= 3  # Bayes objectives
    names = {n for t in ts for n in t.space}
    assert {"prior_var", "prior_a", "noise_var", "a"} <= names
    for t in ts:
        obj = t.objective(0.3)
        assert isinstance(obj, Objective)
        obj.check_names(Space(t.space).keys())


def test_the_held_out_tasks_are_of_kinds_the_development_set_lacks():
    from benchmarks.tuning_tasks import TASK_SETS, heldout_tasks

    dev, held = tasks(), heldout_tasks()
    assert len(held) >= 6
    assert sum(Space(t.space).dim >= 2 for t in held) >= 3
    assert not {t.name for t in dev} & {t.name for t in held}
    kinds = {(t.policy, t.loss, tuple(sorted(t.space))) for t in dev}
    for t in held:  # another policy, loss or set of tuned parameters
        assert (t.policy, t.loss, tuple(sorted(t.space))) not in kinds, t.name
    assert {t.policy for t in held} - {t.policy for t in dev}  # other policies
    assert {t.loss for t in held} - {t.loss for t in dev}  # other losses
    for t in held:
        obj = t.objective(0.3)
        obj.check_names(Space(t.space).keys())
    assert [t.name for t in TASK_SETS["all"]()] == [t.name for t in dev + held]


def test_the_verdict_merges_records_by_task_and_gives_each_seed_its_own_replications(
    tmp_path,
):
    import json

    import jax
    import numpy as np

    from benchmarks.tuning_verdict import eval_key, merge

    def row(method, ratio):
        return {"method": method, "fraction": 1.0, "ratios": [ratio]}

    a = {"T": {"d": 1, "rows": [row("tune", 1.0), row("grid", 1.1)]}}
    b = {"T": {"d": 1, "rows": [row("grid-b", 1.2), row("grid", 1.3)]}}
    for name, rec in (("a", a), ("b", b)):
        (tmp_path / f"{name}.json").write_text(json.dumps(rec))
    merged = merge([tmp_path / "a.json", tmp_path / "b.json"])
    rows = {r["method"]: r["ratios"][0] for r in merged["T"]["rows"]}
    assert rows == {"tune": 1.0, "grid": 1.3, "grid-b": 1.2}  # the later file wins

    def bits(k):
        return np.asarray(jax.random.key_data(k)).tolist()

    shared = [bits(eval_key(s, 7, per_seed=False)) for s in range(3)]
    own = [bits(eval_key(s, 7, per_seed=True)) for s in range(3)]
    assert shared[0] == shared[1] == shared[2] == bits(jax.random.key(7))
    assert len({str(k) for k in own}) == 3 and bits(jax.random.key(7)) not in own
