"""Task structure: depths, catalogues, renaming, pools, and the design against the
write-up's flawed template (answers must come from tools, every dependent call forced)."""
import json

import pytest

from ccl.episode.oracle import OraclePolicy
from ccl.episode.runtime import run_episode
from ccl.world.aliases import PARAM_ALIASES, TOOL_ALIASES
from ccl.world.state import CITIES, FIRST_NAMES, city_pool, name_pool
from ccl.world.tasks import TEMPLATES, TaskError, generate_task, graph_depth
from ccl.world.tools import HELD_OUT_TOOLS, TOOLS

SEEDS = range(20)


def pool_of(name):
    return "train" if TEMPLATES[name].split == "train" else "eval"


@pytest.mark.parametrize("name", sorted(TEMPLATES))
def test_depth_catalogue_and_fields(name):
    for seed in SEEDS:
        task = generate_task(name, seed, pool_of(name))
        assert graph_depth(task["gold"]["nodes"]) == TEMPLATES[name].depth
        own = {n["tool"] for n in task["gold"]["nodes"]}
        assert own <= set(task["catalogue"])
        assert 2 <= task["distractors"] <= 6
        assert len(task["catalogue"]) == len(set(task["catalogue"]))
        assert task["expected_status"] in ("done", "refused", "blocked", "failed")
        sig = task["graph_signature"]  # value-free: no argument value appears in it
        values = [g["value"] for n in task["gold"]["nodes"] for g in n["args"].values()]
        assert not [v for v in values if isinstance(v, str) and len(v) > 2 and v in sig], sig


def test_training_tasks_never_offer_held_out_tools():
    for name, t in TEMPLATES.items():
        if t.split != "train":
            continue
        for seed in SEEDS:
            for k in (None, 12):
                task = generate_task(name, seed, "train", distractors=k)
                assert not set(task["catalogue"]) & set(HELD_OUT_TOOLS), task["id"]


def test_pools_train_is_strict_subset_of_eval():
    tf, tl = name_pool("train")
    ef, el = name_pool("eval")
    assert set(tf) < set(ef) and set(tl) < set(el)
    assert set(city_pool("train")) < set(city_pool("eval")) == set(CITIES)
    assert len(FIRST_NAMES) == len(set(FIRST_NAMES))


def test_alias_vocabularies_disjoint_and_unique():
    train = [a for t, _ in TOOL_ALIASES.values() for a in t]
    held = [a for _, h in TOOL_ALIASES.values() for a in h]
    assert len(set(train + held)) == len(train + held)  # every tool alias names one tool only
    assert not set(train) & set(TOOLS) and not set(held) & set(TOOLS)
    ptrain = {a for t, _ in PARAM_ALIASES.values() for a in t}
    pheld = {a for _, h in PARAM_ALIASES.values() for a in h}
    assert not ptrain & pheld
    assert set(TOOL_ALIASES) == set(TOOLS)
    assert {p.name for t in TOOLS.values() for p in t.params} == set(PARAM_ALIASES)


def test_renamed_task_shows_no_canonical_name():
    from ccl.episode.prompt import system_prompt
    for seed in SEEDS:
        task = generate_task("rec_weather_down", seed, rename="heldout")
        prompt = system_prompt(task)
        for t in task["catalogue"]:
            assert f"- {t}(" not in prompt
        assert "get_weather" not in prompt


def test_catalogue_sizes_nest_and_keep_the_task():
    a = generate_task("sel_fx", 3, "eval", distractors=0)
    b = generate_task("sel_fx", 3, "eval", distractors=5)
    c = generate_task("sel_fx", 3, "eval", distractors=12)
    assert a["request"] == b["request"] == c["request"] and a["world"] == c["world"]
    assert set(a["catalogue"]) < set(b["catalogue"]) < set(c["catalogue"])
    assert (len(a["catalogue"]), len(b["catalogue"]), len(c["catalogue"])) == (1, 6, 13)


@pytest.mark.parametrize("name", sorted(TEMPLATES))
def test_answers_need_tools_and_dependent_calls_are_forced(name):
    """Guard against the write-up's flawed un_timezone: when a task is completed with
    tools, at least one required fact is only observable in a tool result (not in the
    request), and every dependent gold call takes an argument that only an earlier
    result reveals."""
    for seed in range(10):
        task = generate_task(name, seed, pool_of(name))
        nodes = task["gold"]["nodes"]
        for n in nodes:
            if n["deps"]:
                forced = [g for g in n["args"].values() if "ref" in g or "refs" in g]
                assert forced, (task["id"], n["id"])
                for g in forced:
                    value = json.dumps(g["value"])
                    assert all(v not in task["request"] for v in ([g["value"]] if isinstance(g["value"], str) else [])), value
        if task["expected_status"] == "done" and any(not n["forbidden"] for n in nodes):
            ep = run_episode(task, OraclePolicy())
            observed = "".join(json.dumps(c.get("result", {}), ensure_ascii=False) for c in ep.calls)
            assert any(all(alt not in task["request"] for alt in fact) and any(alt in observed for alt in fact)
                       for fact in task["required_facts"]), task["id"]


def test_bad_template_seed_pool_and_options():
    with pytest.raises(TaskError, match="unknown template 'nope'.*sel_weather"):
        generate_task("nope", 1)
    for bad in (-1, 1.5, "3", True):
        with pytest.raises(TaskError, match="seed must be a non-negative integer"):
            generate_task("sel_fx", bad)
    with pytest.raises(TaskError, match="unknown pool 'test'"):
        generate_task("sel_fx", 1, "test")
    with pytest.raises(TaskError, match="unknown alias vocabulary"):
        generate_task("sel_fx", 1, rename="french")
    with pytest.raises(TaskError, match="distractors must be between 0 and"):
        generate_task("sel_fx", 1, distractors=99)
