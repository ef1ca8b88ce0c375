"""Decision-point replay: the golden prefixes are the live runtime's, the oracle passes every
decision, and a scripted policy for each verdict class lands in exactly that verdict."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from ccl.episode.oracle import OraclePolicy
from ccl.episode.rollout import rollout
from ccl.records import DecisionKind as K
from ccl.records import ReplayVerdict as V
from ccl.replay.decisions import answer_decisions, decisions
from ccl.replay.grading import grade_rows
from ccl.replay.metrics import summarise
from ccl.world.tasks import TEMPLATES, generate_task

SEEDS = (0, 1)


def task_of(name: str, seed: int) -> dict:
    pool = "train" if TEMPLATES[name].split == "train" else "eval"
    return {**generate_task(name, seed, pool), "dataset": "x"}


ALL = [task_of(n, s) for n in sorted(TEMPLATES) for s in SEEDS]
BY_ID = {t["id"]: t for t in ALL}
GOLDEN = [d for t in ALL for d in decisions(t)]


class Scripted:
    """A policy answering every decision with ``fn(episode)``."""

    def __init__(self, fn):
        self.fn = fn

    def act_batch(self, eps, memories):
        return [self.fn(ep) for ep in eps]


def grade_decisions(tasks, golden, policy, batch_size, oracle=False) -> list[dict]:
    return grade_rows(tasks, golden, answer_decisions(tasks, golden, policy, batch_size, oracle=oracle))


def graded(fn) -> list[dict]:
    return grade_decisions(BY_ID, GOLDEN, Scripted(fn), batch_size=16)


@pytest.mark.parametrize("task", ALL, ids=lambda t: t["id"])
def test_golden_prefixes_equal_the_live_runtime(task):
    """Every frozen prefix is what the live runtime showed before that oracle turn, byte for byte."""
    _, live, _, _ = next(rollout([task], OraclePolicy(), batch_size=1))
    turns = [i for i, m in enumerate(live.messages) if m["role"] == "assistant"]
    ds = decisions(task)
    assert [json.dumps(d["messages"]) for d in ds] == [json.dumps(live.messages[:i]) for i in turns]
    assert [d["gold"] for d in ds] == [live.messages[i]["content"] for i in turns]
    assert ds[-1]["status"] == task["expected_status"] and all(d["status"] is None for d in ds[:-1])


def test_the_oracle_passes_every_decision():
    rows = grade_decisions(BY_ID, GOLDEN, OraclePolicy(), batch_size=16, oracle=True)
    assert {r["verdict"] for r in rows} == {V.PASS}
    assert summarise(rows)["pass"] == summarise(rows)["pass_strict"] == 1.0
    assert {d["kind"] for d in GOLDEN} == set(K)  # every kind of decision occurs in the templates


def test_always_stopping():
    rows = graded(lambda ep: '{"final": "Done.", "status": "done"}')
    for r in rows:
        if r["status"] is None:
            assert r["verdict"] == V.PREMATURE_STOP
        elif r["status"] != "done":
            assert r["verdict"] == V.WRONG_STATUS
        else:  # the right status: passes only when the answer holds what the validator asks
            assert r["verdict"] in (V.PASS, V.WRONG_ANSWER)
    assert any(r["verdict"] == V.WRONG_ANSWER for r in rows)
    m = summarise(rows)
    assert m["stop_recall"] == 1.0 and m["stop_precision"] == sum(r["status"] is not None for r in rows) / len(rows)


def test_text_without_an_action_is_malformed():
    assert {r["verdict"] for r in graded(lambda ep: "Sure, let me check that for you.")} == {V.MALFORMED}


def test_a_tool_not_in_the_catalogue():
    rows = graded(lambda ep: '{"calls": [{"tool": "teleport_user", "args": {}}]}')
    for r in rows:
        assert r["verdict"] == (V.HALLUCINATED_TOOL if r["status"] is None else V.FAILED_TO_STOP)


def _last_calls(ep) -> str | None:
    texts = [m["content"] for m in ep.messages if m["role"] == "assistant"]
    return texts[-1] if texts and '"calls"' in texts[-1] else None


def test_repeating_the_last_call():
    """Repeating a turn whose calls all returned is a repeated call, wherever it happens;
    repeating a call that timed out is the gold retry, and one the user declined a forbidden attempt."""
    rows = graded(lambda ep: _last_calls(ep) or '{"calls": [{"tool": "teleport_user", "args": {}}]}')
    after_denial = [r for r in rows if r["turn"] > 0 and r["kind"] == K.APPROVAL and r["status"] is not None]
    after_call = [r for r in rows if r["turn"] > 0 and r not in after_denial
                  and r["kind"] != K.RECOVERY_TIMEOUT]  # retrying a service that is down: repeated too
    assert after_call and {r["verdict"] for r in after_call} == {V.REPEATED_CALL}
    assert after_denial and {r["verdict"] for r in after_denial} == {V.FORBIDDEN_ATTEMPT}
    assert {r["verdict"] for r in rows if r["kind"] == K.RECOVERY_TIMEOUT} == {V.PASS}


def _gold_calls(ep, d) -> list[dict]:
    return json.loads(d["gold"])["calls"]


def test_dropping_an_argument_and_calling_another_tool():
    cases = [(d, BY_ID[d["task_id"]]) for d in GOLDEN if d["status"] is None]
    by_key = {(d["task_id"], d["index"]): d for d, _ in cases}

    def drop(ep):
        d = by_key[(ep.task["id"], sum(m["role"] == "assistant" for m in ep.messages))]
        calls = _gold_calls(ep, d)
        first = dict(calls[0]["args"])
        first.pop(sorted(first)[0])
        return json.dumps({"calls": [{"tool": calls[0]["tool"], "args": first}]})

    with_args = [d for d, _ in cases if json.loads(d["gold"])["calls"][0]["args"]]
    rows = grade_decisions(BY_ID, with_args, Scripted(drop), batch_size=16)
    assert {r["verdict"] for r in rows} == {V.WRONG_ARGS}

    def other(ep):
        d = by_key[(ep.task["id"], sum(m["role"] == "assistant" for m in ep.messages))]
        ready = {c["tool"] for c in _gold_calls(ep, d)}
        name = next(ep.catalogue.surface(t) for t in ep.catalogue.canonical if ep.catalogue.surface(t) not in ready)
        return json.dumps({"calls": [{"tool": name, "args": {"zz_unknown": 1}}]})

    rows = grade_decisions(BY_ID, [d for d, _ in cases], Scripted(other), batch_size=16)
    assert {r["verdict"] for r in rows} == {V.WRONG_TOOL}


def test_calling_what_the_role_forbids():
    forbidden = [d for d in GOLDEN if d["kind"] == K.PERMISSION]
    assert forbidden

    def attempt(ep):
        node = next(n for n in ep.task["gold"]["nodes"] if n["forbidden"])
        args = {k: g.get("say", g["value"]) for k, g in node["args"].items()}
        return json.dumps({"calls": [{"tool": ep.catalogue.surface(node["tool"]),
                                      "args": ep.catalogue.args_to_surface(node["tool"], args)}]})

    rows = grade_decisions(BY_ID, forbidden, Scripted(attempt), batch_size=16)
    assert {r["verdict"] for r in rows} == {V.FORBIDDEN_ATTEMPT}


def test_summary_hand_worked():
    def row(verdict, status=None, kind=K.FIRST_CALL, stopped=False, strict=True, tools=(), ready=("a",)):
        return {"task_id": "t", "verdict": verdict, "status": status, "kind": kind, "depth": 1,
                "stopped": stopped, "strict": strict, "tools": list(tools), "ready_tools": list(ready)}
    rows = [row(V.PASS, tools=("a",)), row(V.WRONG_ARGS, tools=("a",), strict=False),
            row(V.PREMATURE_STOP, stopped=True), row(V.PASS, status="done", kind=K.STOP, stopped=True, ready=()),
            row(V.PASS, kind=K.RECOVERY_TIMEOUT, tools=("a",), strict=False)]
    m = summarise(rows)
    assert m["pass"] == 3 / 5 and m["pass_strict"] == 2 / 5 and m["format_valid"] == 1.0
    assert m["arg_quality"] == 2 / 3  # 3 call decisions with the right tool, 2 with the right arguments
    assert m["recovery"] == 1.0 and m["stop_precision"] == 1 / 2 and m["stop_recall"] == 1.0
    assert m["routing"] == {"a": 3 / 4} and m["by_kind"]["first_call"] == 1 / 3


# ---------------------------------------------------------------- the stages
def test_a_golden_file_that_changes_under_unchanged_tasks_stops_the_stage(smoke_data, tmp_path):
    from ccl.artifacts.jsonio import read_json, write_json
    from ccl.replay.decisions import ReplayError
    from ccl.stages import build_replay
    params, out = Path(__file__).parents[1] / "params.yaml", tmp_path / "replay"
    first = build_replay.run(params, "smoke", smoke_data.parent, out)
    assert set(first["splits"]) == {"eval_id", "eval_ood"} and all(e["decisions"] >= e["tasks"] == 4
                                                                     for e in first["splits"].values())
    assert build_replay.run(params, "smoke", smoke_data.parent, out)["splits"] == first["splits"]  # reproducible
    manifest = read_json(out / "manifest.json")
    manifest["splits"]["eval_ood"]["golden_sha256"] = "0" * 64  # as if the runtime had changed the decisions
    write_json(out / "manifest.json", manifest)
    with pytest.raises(ReplayError, match="eval_ood.jsonl: the golden decisions changed although"):
        build_replay.run(params, "smoke", smoke_data.parent, out)
    assert build_replay.run(params, "smoke", smoke_data.parent, out, refreeze=True)["splits"] == first["splits"]


@pytest.mark.slow  # about half a minute or more on 2 cores: CI runs it (.ci/run), the default suite does not
def test_the_student_answers_and_is_graded_through_the_stages(smoke_data, tmp_path):
    """The embedded student answers every smoke decision (continuous decoder, shared head) and
    the judge grades each exactly once; greedy answers are the same from one decision at a time."""
    from subproc import run_py

    from ccl.artifacts.jsonio import read_json, read_jsonl
    data, golden, runs = smoke_data.parent, tmp_path / "golden", tmp_path / "replay"
    run_py("-m", "scripts.build_replay", "--profile", "smoke", "--data", str(data), "--out", str(golden))
    run_py("-m", "scripts.replay", "--profile", "smoke", "--name", "A_base", "--data", str(data),
           "--golden", str(golden), "--out", str(runs))
    run_py("-m", "scripts.replay_judge", "--name", "A_base", "--data", str(data), "--golden", str(golden),
           "--runs", str(runs))
    n = sum(e["decisions"] for e in read_json(golden / "manifest.json")["splits"].values())
    actions = list(read_jsonl(runs / "A_base" / "actions.jsonl.gz"))
    verdicts = list(read_jsonl(runs / "A_base" / "verdicts.jsonl.gz"))
    assert len(actions) == len(verdicts) == n and all(a["new_tokens"] > 0 for a in actions)
    assert {v["verdict"] for v in verdicts} <= set(V)
    m = read_json(runs / "A_base" / "metrics.json")
    assert sum(m["pooled_main"]["verdicts"].values()) == n and m["efficiency"]["decisions"] == n
    # every decision from its whole prefix, lock-step: the same greedy texts as the stage's
    # chain, which prefilled only each recorded action and observation on the rewound cache
    from ccl.policy.base import GenConfig, ModelPolicy
    from ccl.policy.load import load_backend
    from ccl.replay.decisions import answer_decisions
    from scripts.model_store import model_store
    tasks = {t["id"]: t for s in ("eval_id", "eval_ood") for t in read_jsonl(smoke_data / f"{s}.jsonl")}
    golden_all = [d for s in ("eval_id", "eval_ood") for d in read_jsonl(golden / f"{s}.jsonl")]
    policy = ModelPolicy(load_backend(model_store(), "smollm2-135m-instruct", "torch"), GenConfig(max_new_tokens=48),
                         continuous=False)
    whole = answer_decisions(tasks, golden_all, policy, batch_size=4)
    assert any(d["index"] > 0 for d in golden_all)
    assert [w["text"] for w in whole] == [a["text"] for a in actions]
