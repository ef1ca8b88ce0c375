"""Decision-point replay: a frozen golden set of decisions, each graded one action at a time.

An episode's 0/1 outcome says whether a model finished a task, not where it went wrong;
one early mistake decides everything after it. Replay asks one question per decision:
the oracle plays every evaluation task through the runtime, and before each of its turns
the exact messages the model would see are frozen with the oracle's action and the other
actions that are just as right. A model then answers from that frozen prefix once; its
action is graded by code and thrown away, so the recording, never the model, carries the
episode forward.

Freezing (:func:`decisions`): before each oracle turn we keep the message prefix (system
prompt as the runtime renders it, request, every earlier action and observation), the
oracle's action, the ids of the gold nodes ready at that point (any non-empty subset of
their calls is also right: one member of a parallel group, the retry after a timeout,
the declared fallback after an outage) and the decision's kind (records.DecisionKind).

Grading (:mod:`ccl.replay.grading`, its own stage so that a validator change re-grades
stored actions and never regenerates them): the prefix is replayed through a fresh runtime episode by
stepping its recorded actions (checked to reproduce the frozen messages byte for byte),
then the model's text is stepped like any live turn, so parsing, limits, catalogue
lookup, permissions and approvals are the runtime's own. Exactly one verdict
(records.ReplayVerdict) follows, by the first rule that applies:

- no action parsed: malformed;
- gold is the final answer: a final answer with another status is wrong_status; with the
  right status it passes only if the validator's strict success holds for the prefix plus
  this answer (wrong_answer otherwise); calls are forbidden_attempt if one is forbidden,
  retries a declined approval or is declined by the user without being a ready gold call,
  else repeated_call if one repeats an earlier call, else failed_to_stop;
- gold is calls: a final answer is premature_stop; then forbidden_attempt, then
  hallucinated_tool (a name not in the catalogue); the calls pass if they match distinct
  ready gold nodes one to one (tool and the validator's argument rules); otherwise
  repeated_call (an earlier call again, or the same call twice in the turn), wrong_tool
  (a tool no ready node uses) or wrong_args.

A wrong_answer verdict is not in the issue's list: without it a final answer with the
right status and a wrong fact would pass, which the stricter reading refuses.

This module freezes decisions, replays prefixes and collects one action per decision; it
imports no validator.
"""
from __future__ import annotations

import copy
from pathlib import Path
from typing import Any, Callable

from ..artifacts.inputs import read_rows
from ..episode.oracle import OraclePolicy, OracleState
from ..episode.rollout import act_batch
from ..episode.runtime import Episode, format_action, fresh_memory, token_counts
from ..errors import InputError, StageError
from ..records import CallOutcome, DecisionKind, Status, Task
from ..world.tools import TOOLS

K = DecisionKind


class ReplayError(StageError, ValueError):
    """A golden decision the runtime no longer reproduces; the message names it."""


# ---------------------------------------------------------------- freezing
def _last_outcomes(ep: Episode) -> set[str]:
    if not ep.turns:
        return set()
    return {ep.calls[i]["outcome"] for i in ep.turns[-1]["calls"]}


def kind_of(ep: Episode, final_status: Status | None, ready: list[dict]) -> DecisionKind:
    """The decision's kind: the first of records.DecisionKind's order that applies."""
    last = _last_outcomes(ep)
    if CallOutcome.TIMEOUT in last:
        return K.RECOVERY_TIMEOUT
    if CallOutcome.SERVICE_UNAVAILABLE in last:
        return K.RECOVERY_UNAVAILABLE
    if CallOutcome.NOT_FOUND in last:
        return K.RECOVERY_NOT_FOUND
    if CallOutcome.APPROVAL_DENIED in last or any(TOOLS[n["tool"]].approval for n in ready):
        return K.APPROVAL
    if final_status == Status.REFUSED:
        return K.PERMISSION
    if final_status is not None:
        return K.STOP
    if len(ready) > 1:
        return K.PARALLEL_GROUP
    return K.DEPENDENT_CALL if any(n["deps"] for n in ready) else K.FIRST_CALL


def decisions(task: Task) -> list[dict]:
    """Every decision point of the oracle's episode on ``task``, in order."""
    ep, oracle = Episode(task), OraclePolicy()
    memory = oracle.memory()
    nodes = {n["id"]: n for n in task["gold"]["nodes"]}
    out = []
    while not ep.done:
        prefix = copy.deepcopy(ep.messages)
        action = oracle.decide(ep, memory)
        ready = [] if action.calls is None else [nodes[i] for i in memory.pending]
        out.append({"task_id": task["id"], "dataset": task["dataset"], "template": task["template"],
                    "family": task["family"], "depth": task["depth"], "index": len(out), "turn": len(ep.turns),
                    "kind": kind_of(ep, action.status, ready), "messages": prefix,
                    "gold": format_action(action), "ready": [n["id"] for n in ready],
                    "status": action.status})
        ep.step(format_action(action))
    return out


def golden_rows(golden: Path, splits: tuple[str, ...] | list[str], tasks: dict[str, dict]) -> list[dict]:
    """The frozen decisions of ``tasks`` in the splits' golden files, in file order."""
    rows = []
    for split in splits:
        path = golden / f"{split}.jsonl"
        if not path.is_file():
            raise InputError(f"{path}: missing; run the build_replay stage first")
        rows += [d for d in read_rows(path, "build_replay") if d["task_id"] in tasks]
    missing = sorted(set(tasks) - {d["task_id"] for d in rows})
    if missing:
        raise InputError(f"{golden}: no decisions for {len(missing)} task(s) such as {missing[0]}; "
                         f"rerun the build_replay stage")
    return rows


# ---------------------------------------------------------------- replaying a prefix
def replay_prefix(task: Task, decision: dict, system: str | None = None,
                  oracle: bool = False) -> tuple[Episode, OracleState | None]:
    """A live episode standing exactly at ``decision``: its recorded actions stepped through the
    runtime. ``system`` replaces the system prompt (the few-shot variant); ``oracle`` drives the
    oracle policy along, so that it can take the next turn itself from the memory returned beside
    the episode (None without ``oracle``)."""
    msgs = decision["messages"]
    ep = Episode(task, system=msgs[0]["content"])
    policy = OraclePolicy() if oracle else None
    memory = policy.memory() if policy is not None else None
    for m in msgs[2:]:
        if m["role"] != "assistant":
            continue
        if policy is not None and policy.act(ep, memory) != m["content"]:
            raise ReplayError(f"{task['id']} decision {decision['index']}: the oracle no longer takes the recorded action")
        ep.step(m["content"])
    if ep.messages != msgs:
        raise ReplayError(f"{task['id']} decision {decision['index']}: the runtime no longer reproduces the frozen "
                          f"prefix; rebuild the golden set (stage build_replay)")
    if system is not None:
        ep.messages[0] = {"role": "system", "content": system}
    return ep, memory


# ---------------------------------------------------------------- one action per decision, batched
def act_all(policy, eps: list[Episode], memories: list[Any], batch_size: int,
            progress: Callable[[int], None] = lambda n: None) -> list[str]:
    """One assistant turn for every episode (each a decision, in golden order: a task's decisions
    together, by index), each with the policy's memory beside it. With a continuous decoder (the
    torch backend) each task's decisions run in order on one cache: when decision k is answered its
    cache is rewound to its prompt, and decision k+1, whose prompt extends that one with the recorded
    action and observation, prefills only that increment; tasks run side by side in the slots.
    Otherwise lock-step batches of whole prompts."""
    dec = policy.decoder(batch_size) if hasattr(policy, "decoder") else None
    if dec is None:
        texts: list[str] = []
        for i in range(0, len(eps), batch_size):
            texts += act_batch(policy, eps[i:i + batch_size], memories[i:i + batch_size])
            progress(len(eps[i:i + batch_size]))
        return texts
    return _act_chained(policy, dec, eps, memories, batch_size, progress)


def _act_chained(policy, dec, eps: list[Episode], memories: list[Any], batch_size: int,
                 progress: Callable[[int], None]) -> list[str]:
    """``act_all`` on a continuous decoder: a task's decisions one after another on one cache."""
    texts: dict[int, str] = {}
    chains: dict[str, list[int]] = {}
    for i, ep in enumerate(eps):
        chains.setdefault(ep.task["id"], []).append(i)
    nxt = {a: b for chain in chains.values() for a, b in zip(chain, chain[1:])}
    index = {id(ep): i for i, ep in enumerate(eps)}
    queue, live = [chain[0] for chain in reversed(chains.values())], 0
    while queue or live:
        while queue and live < batch_size:
            i = queue.pop()
            policy.submit(dec, eps[i], memories[i], rewind=True)
            live += 1
        for ep, memory, text in policy.advance(dec):
            i = index[id(ep)]
            texts[i] = text
            progress(1)
            following = nxt.get(i)
            if following is None:
                policy.release(memory)
                live -= 1
            else:  # the task's next decision continues this prompt's cache in the same slot count
                memories[following].backend, memory.backend = memory.backend, {}
                policy.submit(dec, eps[following], memories[following], rewind=True)
    if hasattr(dec, "close"):
        dec.close()
    return [texts[i] for i in range(len(eps))]


def answer_decisions(tasks: dict[str, Task], golden: list[dict], policy, batch_size: int,
                     system: dict[str, str] | None = None, oracle: bool = False,
                     progress: Callable[[int], None] = lambda n: None) -> list[dict]:
    """Every decision answered once by ``policy`` from its frozen prefix; one row each (no grade).
    ``system``: task id -> the system prompt to show instead of the frozen one (A+)."""
    live = [replay_prefix(tasks[d["task_id"]], d, (system or {}).get(d["task_id"]), oracle) for d in golden]
    eps = [ep for ep, _ in live]
    # the oracle goes on from the memory it built along the prefix; any other policy starts afresh
    memories = [memory if oracle else fresh_memory(policy) for _, memory in live]
    texts = act_all(policy, eps, memories, batch_size, progress)
    counts = [token_counts(m) for m in memories]
    return [{"task_id": d["task_id"], "dataset": d["dataset"], "index": d["index"], "text": text,
             "new_tokens": new, "prompt_tokens": prompt}
            for d, (new, prompt), text in zip(golden, counts, texts)]
