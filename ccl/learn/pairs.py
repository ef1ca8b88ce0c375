"""Preference pairs from the student's own mistakes (issue 41, DPO's data).

DAgger's rollouts (``ccl.learn.dagger``) visit states the student itself reaches on training tasks and
record, at each, the student's turn, the expert's label and the grade of the student's turn from that
state (``ccl.learn.turn_grade``). A state where the student's turn fails its grade is a preference
between two continuations of the same prompt: *chosen* the expert's label, *rejected* the student's
turn, with the prompt the conversation exactly as the student saw it (the executed transcript up to
that turn). A turn that passes its grade is no mistake, even where it differs from the label (calls in
another order), so it gives no pair.

States the expert itself cannot recover give no pair unless ``keep_unrecoverable``: their label (stop
honestly) is right, but DAgger's supervised rows leave them out too (see ``ccl.learn.dagger``), and the
two arms should learn from the same states.

Rows use TRL's conversational preference format: ``prompt`` a list of chat messages, ``chosen`` and
``rejected`` one assistant message each; the other keys say where the pair came from.
"""
from __future__ import annotations

from collections import Counter

from ..records import Task


def episode_pairs(task: Task, messages: list[dict], visits: list[dict], keep_unrecoverable: bool = False) -> list[dict]:
    """The pairs of one episode: ``messages`` its executed transcript, ``visits`` its states in turn order."""
    at = [i for i, m in enumerate(messages) if m["role"] == "assistant"]
    if len(at) != len(visits):
        raise ValueError(f"{task['id']}: {len(at)} assistant turns but {len(visits)} visited states")
    pairs = []
    for i, v in zip(at, visits):
        if v["student_passes"] or (not v["recoverable"] and not keep_unrecoverable):
            continue
        pairs.append({"task_id": task["id"], "template": task["template"], "family": task["family"],
                      "turn": v["turn"], "kind": v["kind"], "grade": v["student_grade"],
                      "on_expert_path": v["on_expert_path"],
                      "prompt": [{"role": m["role"], "content": m["content"]} for m in messages[:i]],
                      "chosen": [{"role": "assistant", "content": v["label"]}],
                      "rejected": [{"role": "assistant", "content": v["student"]}]})
    return pairs


def pair_stats(pairs: list[dict], visits: list[dict]) -> dict:
    """What the pairs cover: states seen, mistakes among them, pairs by decision kind, grade and family."""
    return {
        "states": len(visits),
        "student_fails": sum(not v["student_passes"] for v in visits),
        "student_fails_unrecoverable": sum(not v["student_passes"] and not v["recoverable"] for v in visits),
        "pairs": len(pairs),
        "pairs_off_expert_path": sum(not p["on_expert_path"] for p in pairs),
        "pairs_by_kind": dict(sorted(Counter(p["kind"] for p in pairs).items())),
        "pairs_by_grade": dict(sorted(Counter(p["grade"] for p in pairs).items())),
        "pairs_by_family": dict(sorted(Counter(p["family"] for p in pairs).items())),
        "tasks_with_pairs": len({p["task_id"] for p in pairs}),
    }
