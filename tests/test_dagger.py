"""DAgger's data (issue 40): the expert labels every state a student visits, beta mixes who acts, and the
rows supervise each labelled state exactly once, never the student's own mistakes."""
import json

import pytest

from ccl.episode.runtime import Episode, format_action
from ccl.learn.dagger import DaggerConfig, ExpertMix, episode_rows, run_iteration, same_action
from ccl.learn.expert import next_action
from ccl.train.packing import pieces
from ccl.world.tasks import generate_task


class WrongFirst:
    """A scripted student: a wrong tool at its first turn, the expert's action afterwards."""

    def act(self, ep: Episode, memory) -> str:
        if not ep.turns:
            return json.dumps({"calls": [{"tool": ep.catalogue.surface("calculate"), "args": {"expression": "1+1"}}]})
        return format_action(next_action(ep.task, ep))


def test_rows_keep_the_students_mistake_as_history_and_label_each_state_once():
    task = generate_task("ch_contact_email", 0)  # find_contact, then send_email; calculate is no gold tool
    task["catalogue"] = sorted(set(task["catalogue"]) | {"calculate"})
    mix = ExpertMix(WrongFirst(), beta=0.0, stream="t")
    ep = Episode(task)
    while not ep.done:
        ep.step(mix.act_batch([ep], [None])[0])
    visits = mix.visits
    assert [v["executed_by"] for v in visits] == ["student"] * len(visits)
    assert not visits[0]["agrees"] and all(v["agrees"] for v in visits[1:])
    assert all(v["recoverable"] for v in visits)
    # the wrong first call is harmless (ruler 2 tolerates a read it did not need) but buys nothing: its
    # grade fails; every later turn is the expert's and passes
    assert [(v["student_passes"], v["student_grade"]) for v in visits] == \
        [(False, "no_progress")] + [(True, "progress")] * (len(visits) - 2) + [(True, "succeeded")]
    rows = episode_rows(task, ep.messages, visits, keep_unrecoverable=False, iteration=1)
    # row 1: the prompt and the expert's first call (the student's wrong call is not in it);
    # row 2: the student's wrong call as history, then every later turn where it stands
    assert len(rows) == 2
    first, second = (r["messages"] for r in rows)
    assert first[-1] == {"role": "assistant", "content": visits[0]["label"], "train": True}
    assert [m.get("train") for m in first if m["role"] == "assistant"] == [True]
    flags = [m.get("train") for m in second if m["role"] == "assistant"]
    assert flags == [False] + [True] * (len(visits) - 1)
    assert second[2]["content"] == visits[0]["student"]  # the mistake, verbatim, as history
    assert sum(r["n_assistant_turns"] for r in rows) == len(visits)  # each state supervised once


def test_beta_one_executes_the_expert_everywhere_and_gives_one_row():
    task = generate_task("ch_contact_email", 0)
    mix = ExpertMix(WrongFirst(), beta=1.0, stream="t")
    ep = Episode(task)
    while not ep.done:
        ep.step(mix.act_batch([ep], [None])[0])
    assert all(v["executed_by"] == "expert" for v in mix.visits)
    rows = episode_rows(task, ep.messages, mix.visits, keep_unrecoverable=False, iteration=1)
    assert len(rows) == 1 and rows[0]["n_assistant_turns"] == len(mix.visits)


def test_unrecoverable_states_are_left_unlabelled_unless_kept():
    task = generate_task("perm_delete_viewer", 0)  # the viewer may not delete: a delete attempt is lost for good

    class Forbidden:
        def act(self, ep, memory):
            if not ep.turns:
                node = next(n for n in ep.task["gold"]["nodes"] if n["forbidden"])
                args = {k: g["value"] for k, g in node["args"].items()}
                return json.dumps({"calls": [{"tool": ep.catalogue.surface(node["tool"]),
                                              "args": ep.catalogue.args_to_surface(node["tool"], args)}]})
            return format_action(next_action(ep.task, ep))

    mix = ExpertMix(Forbidden(), beta=0.0, stream="t")
    ep = Episode(task)
    while not ep.done:
        ep.step(mix.act_batch([ep], [None])[0])
    assert mix.visits[0]["recoverable"] and not mix.visits[1]["recoverable"]
    dropped = episode_rows(task, ep.messages, mix.visits, keep_unrecoverable=False, iteration=1)
    kept = episode_rows(task, ep.messages, mix.visits, keep_unrecoverable=True, iteration=1)
    assert sum(r["n_assistant_turns"] for r in dropped) == 1  # only the first state (refuse at once)
    assert sum(r["n_assistant_turns"] for r in kept) == len(mix.visits)


def test_packing_reads_the_train_flag_and_hides_it_from_the_template():
    seen = []

    def render(messages, tokenize=False, add_generation_prompt=False):
        seen.append(messages)
        text = "".join(f"<{m['role']}>{m['content']}</s>" for m in messages)
        return text + ("<assistant>" if add_generation_prompt else "")

    messages = [{"role": "system", "content": "s"}, {"role": "user", "content": "u"},
                {"role": "assistant", "content": "a1", "train": False}, {"role": "user", "content": "o"},
                {"role": "assistant", "content": "a2", "train": True}]
    parts = pieces(render, messages)
    assert [(t, sup) for t, sup in parts if sup or t.startswith("a")] == [("a1</s>", False), ("a2</s>", True)]
    assert all(set(m) == {"role", "content"} for ms in seen for m in ms)


def test_same_action_compares_canonical_forms():
    label = '{"calls": [{"tool": "f", "args": {"a": 1, "b": 2}}]}'
    assert same_action('```json\n{"calls":[{"tool":"f","args":{"b":2,"a":1}}]}\n```', label)
    assert not same_action('{"calls": [{"tool": "f", "args": {"a": 1}}]}', label)
    assert not same_action("no json", label)


def test_iterations_take_fresh_slices_of_the_training_pool_and_check_betas():
    pool = [{"id": str(i)} for i in range(20)]
    cfg = DaggerConfig(tasks_per_iteration=4, task_offset=8, betas=(0.5, 0.25))
    assert [t["id"] for t in cfg.tasks(pool, 1)] == ["8", "9", "10", "11"]
    assert [t["id"] for t in cfg.tasks(pool, 2)] == ["12", "13", "14", "15"]
    with pytest.raises(ValueError, match="betas has 2 entries"):
        cfg.beta(3)
    with pytest.raises(ValueError, match="fewer than 24"):
        DaggerConfig(tasks_per_iteration=8, task_offset=8).tasks(pool, 2)


def test_an_iteration_with_a_scripted_student_is_byte_stable():
    names = ("ch_contact_email", "sel_weather", "rec_weather_timeout", "par_weather", "sel_fx")
    tasks = [{**generate_task(name, 0), "dataset": "train_pool"} for name in names]
    cfg = DaggerConfig(tasks_per_iteration=5, task_offset=0, betas=(0.5,), batch_size=2)
    a = run_iteration(tasks, WrongFirst(), cfg, 1)
    b = run_iteration(tasks, WrongFirst(), cfg, 1)
    assert a.rows == b.rows and a.visits == b.visits and a.stats == b.stats
    s = a.stats
    assert s["states"] == len(a.visits) and s["tasks"] == 5
    assert 0 < s["executed_by_expert"] < s["states"]  # beta 0.5 mixed who acted
    assert s["states_off_expert_path"] > 0  # the student's wrong first calls left the oracle's path
    assert [v["task_id"] for v in a.visits] == sorted((v["task_id"] for v in a.visits),
                                                       key=[t["id"] for t in tasks].index)


class WrongFirstContinuous(WrongFirst):
    """The same student through the continuous-decoder protocol the torch and OpenVINO backends offer."""

    def decoder(self, slots: int) -> list:
        return []

    def submit(self, dec: list, ep: Episode, memory) -> None:
        dec.append((ep, memory))

    def advance(self, dec: list) -> list:
        ep, memory = dec.pop(0)  # one turn ends per step, oldest first
        return [(ep, memory, self.act(ep, memory))]


def test_both_rollout_schedules_give_the_same_labels_and_rows():
    names = ("ch_contact_email", "sel_weather", "par_weather", "rec_weather_down")
    tasks = [{**generate_task(name, 0), "dataset": "train_pool"} for name in names]
    cfg = DaggerConfig(tasks_per_iteration=4, task_offset=0, betas=(0.5,), batch_size=3)
    lockstep = run_iteration(tasks, WrongFirst(), cfg, 1)
    continuous = run_iteration(tasks, WrongFirstContinuous(), cfg, 1)
    assert continuous.visits == lockstep.visits and continuous.rows == lockstep.rows
    assert continuous.transcripts == lockstep.transcripts
