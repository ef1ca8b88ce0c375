"""DPO's pairs (issue 41): one per state where the student's own turn fails its grade, with the
conversation as the student saw it; a turn that differs from the label but passes gives none."""
import json

import pytest

from ccl.episode.runtime import Episode, format_action
from ccl.learn.dagger import ExpertMix
from ccl.learn.expert import next_action
from ccl.learn.pairs import episode_pairs, pair_stats
from ccl.world.tasks import generate_task


class Scripted:
    """Turn k's text from ``turns[k]`` when given, else the expert's action."""

    def __init__(self, turns: dict):
        self.turns = turns

    def act(self, ep: Episode, memory) -> str:
        make = self.turns.get(len(ep.turns))
        return make(ep) if make else format_action(next_action(ep.task, ep))


def play(task, student, beta=0.0):
    mix = ExpertMix(student, beta=beta, stream="t")
    ep = Episode(task)
    while not ep.done:
        ep.step(mix.act_batch([ep], [None])[0])
    for v in mix.visits:
        v["on_expert_path"] = True  # run_iteration fills this from the oracle's transcript; not under test here
    return ep, mix.visits


def wrong_first(ep: Episode) -> str:
    return json.dumps({"calls": [{"tool": ep.catalogue.surface("calculate"), "args": {"expression": "1+1"}}]})


def test_a_wrong_first_call_gives_one_pair_with_the_prompt_the_student_saw():
    task = generate_task("ch_contact_email", 0)  # find_contact, then send_email; calculate is no gold tool
    task["catalogue"] = sorted(set(task["catalogue"]) | {"calculate"})
    ep, visits = play(task, Scripted({0: wrong_first}))
    pairs = episode_pairs(task, ep.messages, visits)
    assert len(pairs) == 1
    p = pairs[0]
    assert [m["role"] for m in p["prompt"]] == ["system", "user"] and p["prompt"] == ep.messages[:2]
    assert p["rejected"] == [{"role": "assistant", "content": visits[0]["student"]}]
    assert p["chosen"] == [{"role": "assistant", "content": visits[0]["label"]}]
    assert (p["turn"], p["grade"], p["kind"]) == (0, "no_progress", visits[0]["kind"])
    s = pair_stats(pairs, visits)
    assert (s["states"], s["student_fails"], s["pairs"], s["tasks_with_pairs"]) == (len(visits), 1, 1, 1)


def test_a_turn_unlike_the_label_that_passes_gives_no_pair():
    """par_fx: three independent rate lookups in one turn; the student lists them in reverse order."""
    task = generate_task("par_fx", 0)

    def swapped(ep: Episode) -> str:
        calls = json.loads(format_action(next_action(ep.task, ep)))["calls"]
        assert len(calls) == 3
        return json.dumps({"calls": calls[::-1]})

    ep, visits = play(task, Scripted({0: swapped}))
    assert not visits[0]["agrees"] and visits[0]["student_passes"]
    assert episode_pairs(task, ep.messages, visits) == []


def test_unrecoverable_states_give_pairs_only_when_kept():
    task = generate_task("perm_delete_viewer", 0, "eval")
    forbidden = next(n for n in task["gold"]["nodes"] if n["forbidden"])

    def delete(ep: Episode) -> str:
        return json.dumps({"calls": [{"tool": ep.catalogue.surface(forbidden["tool"]), "args": forbidden["args"]}]})

    def claim(ep: Episode) -> str:
        return json.dumps({"final": "The file is deleted.", "status": "done"})

    ep, visits = play(task, Scripted({0: delete, 1: claim}))
    assert not visits[0]["student_passes"] and visits[0]["recoverable"]  # the forbidden call: a pair
    assert not visits[1]["recoverable"] and not visits[1]["student_passes"]
    assert [p["turn"] for p in episode_pairs(task, ep.messages, visits)] == [0]
    assert [p["turn"] for p in episode_pairs(task, ep.messages, visits, keep_unrecoverable=True)] == [0, 1]


def test_the_stage_reads_an_iteration_folder_and_refuses_ungraded_visits(tmp_path):
    from ccl.artifacts.jsonio import read_jsonl, sha256_file, write_jsonl
    from ccl.learn.dagger import DaggerConfig, run_iteration
    from ccl.stages import dpo_pairs
    from tests.test_dagger import WrongFirst

    names = ("ch_contact_email", "sel_weather", "par_weather")
    tasks = [{**generate_task(name, 0), "dataset": "train_pool"} for name in names]
    write_jsonl(tmp_path / "data" / "tasks" / "train_pool.jsonl", tasks)
    it = run_iteration(tasks, WrongFirst(), DaggerConfig(tasks_per_iteration=3, task_offset=0, betas=(0.0,)), 1)
    src = tmp_path / "iter1"
    write_jsonl(src / "episodes.jsonl.gz", it.transcripts)
    write_jsonl(src / "visits.jsonl.gz", it.visits)
    stats = dpo_pairs.run(tmp_path / "data", src, tmp_path / "a")
    dpo_pairs.run(tmp_path / "data", src, tmp_path / "b")
    assert sha256_file(tmp_path / "a" / "pairs.jsonl.gz") == sha256_file(tmp_path / "b" / "pairs.jsonl.gz")
    pairs = list(read_jsonl(tmp_path / "a" / "pairs.jsonl.gz"))
    # WrongFirst's first turn (a calculate call) fails its grade on every task whose catalogue offers it
    fails = [v for v in it.visits if not v["student_passes"]]
    assert stats["pairs"] == len(pairs) == len(fails) > 0 and all(p["turn"] == 0 for p in pairs)
    write_jsonl(src / "visits.jsonl.gz", [{k: v for k, v in x.items() if k != "student_passes"} for x in it.visits])
    from ccl.errors import StageError
    with pytest.raises(StageError, match="no grade of the student's turn"):
        dpo_pairs.run(tmp_path / "data", src, tmp_path / "c")


def test_pairs_too_long_for_training_are_left_out_and_counted():
    from transformers import AutoTokenizer

    from ccl.learn.dpo import fitting
    from ccl.models.weights import model_dir
    from scripts.model_store import model_store
    tok = AutoTokenizer.from_pretrained(model_dir(model_store(), "smollm2-135m-instruct"))

    def pair(words: int) -> dict:
        return {"prompt": [{"role": "user", "content": " ".join(["tool"] * words)}],
                "chosen": [{"role": "assistant", "content": "yes"}],
                "rejected": [{"role": "assistant", "content": "no, " * 10}]}

    short, long = pair(10), pair(400)
    n_short = len(tok.apply_chat_template(short["prompt"] + short["rejected"], tokenize=True, return_dict=True)["input_ids"])
    assert 20 < n_short < 100  # the longer completion (rejected) is the one measured
    kept, dropped = fitting([short, long], tok, max_length=n_short)
    assert (kept, dropped) == ([short], 1)
    assert fitting([short], tok, max_length=n_short - 1) == ([], 1)
