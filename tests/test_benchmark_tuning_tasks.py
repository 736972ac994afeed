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
