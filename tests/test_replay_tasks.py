"""The replay stage asks only for the decisions build_replay froze (regression: with
``replay_tasks_per_split`` below evaluation's cap, it asked for every evaluated task's and
stopped the cpu-profile rerun at replay@A_base)."""
from types import SimpleNamespace

from ccl.episode.evaluate_config import EvaluateConfig
from ccl.stages.replay import replayed_tasks


def _tasks(split: str, n: int) -> list[dict]:
    return [{"id": f"{split}:{i}", "dataset": split} for i in range(n)]


def test_replay_takes_the_first_replay_cap_of_each_split_in_file_order():
    cfg = EvaluateConfig(splits=("eval_id", "eval_ood"), max_tasks_per_split={"eval_id": 5, "eval_ood": 1},
                         replay_tasks_per_split=2)
    plan = SimpleNamespace(cfg=cfg, tasks=_tasks("eval_id", 5) + _tasks("eval_ood", 1))
    # eval_id: min(5, 2) = 2 tasks; eval_ood: min(1, 2) = 1 task
    assert list(replayed_tasks(plan)) == ["eval_id:0", "eval_id:1", "eval_ood:0"]


def test_without_a_replay_cap_every_evaluated_task_is_replayed():
    cfg = EvaluateConfig(splits=("eval_id",), max_tasks_per_split=3)
    plan = SimpleNamespace(cfg=cfg, tasks=_tasks("eval_id", 3))
    assert list(replayed_tasks(plan)) == ["eval_id:0", "eval_id:1", "eval_id:2"]
