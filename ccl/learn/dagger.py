"""DAgger (issue 40): the student drives, the expert labels every state it visits, and the labels
become training data.

One iteration rolls the current student out on training tasks through the project's rollout engine
(``ccl.episode.rollout``; batched, the shared prompt head cached). At every turn the expert
(``ccl.learn.expert``) labels the state the episode stands in, and with probability ``beta`` (the
iteration's entry of the schedule) the expert's action is executed instead of the student's, so early
iterations do not wander far off any path the expert would take. Every visited state is recorded
with the student's text, the expert's label, which of the two was executed, the decision's kind,
whether the state is still recoverable, and the grade of the student's own turn from that state
(``ccl.learn.turn_grade``: a turn can differ from the label and still be fine, for example calls in
another order; the grade, not agreement, says whether it was a mistake).

Training rows (``episode_rows``) keep the episode as the student saw it. A turn whose executed text is
the expert's label is supervised where it stands; at a turn where the student did something else, a
row ends with the expert's label in place of the student's text, and the next row goes on from the
student's real turn, which stays as history the model reads but is not trained to write (``"train":
false``, honoured by ``ccl.train.packing``). Every labelled state is supervised exactly once. States
from which even the expert can no longer reach ruler-2 success keep their label in the visit records
but are not supervised unless ``keep_unrecoverable`` is set: the label (stop honestly) is right, but the
episode cannot end well whatever is written there, and the default keeps the training signal to states
that can. A row whose only target lies past the trainer's ``max_length`` is dropped by packing; the
statistics count rows as written.
"""
from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass
from typing import Any

from ..episode.evaluation import transcript_row
from ..episode.oracle import OraclePolicy
from ..episode.rollout import act_batch, rollout
from ..episode.runtime import Episode, format_action, fresh_memory, parse_action, run_episode
from ..judge.ruler2 import judge
from ..judge.rulers import REWARD_RULERS
from ..vocabulary import RULER2
from ..records import Task
from .expert import label
from .turn_grade import grade_turn


@dataclass(frozen=True)
class DaggerConfig:
    """params.yaml ``dagger``: one entry of ``betas`` per iteration (dvc.yaml's ``dagger_iterations``)."""

    tasks_per_iteration: int = 64  # training-pool tasks each iteration rolls out
    task_offset: int = 128  # the first of them: past the tasks C's episodes may come from (distill.n; checked)
    betas: tuple[float, ...] = (0.5, 0.25)  # per iteration: the chance a turn executes the expert's action
    keep_unrecoverable: bool = False  # label states from which ruler-2 success is out of reach
    batch_size: int = 32
    max_new_tokens: int = 128
    seed: int = 0
    # the ruler the student's own turns are graded under (the visits' student_passes, DPO's pairs): the
    # published DAgger runs graded under ruler 2; the cpu-scale arms (issue 59) name ruler 3
    ruler: str = RULER2

    def __post_init__(self) -> None:
        if self.ruler not in REWARD_RULERS:
            raise ValueError(f"dagger.ruler {self.ruler!r}: one of {', '.join(REWARD_RULERS)}")

    def beta(self, iteration: int) -> float:
        if not 1 <= iteration <= len(self.betas):
            raise ValueError(f"dagger iteration {iteration}: betas has {len(self.betas)} entries ({list(self.betas)})")
        return self.betas[iteration - 1]

    def tasks(self, pool: list[Task], iteration: int) -> list[Task]:
        """Iteration k's slice of the training pool: fresh tasks each iteration."""
        start = self.task_offset + (iteration - 1) * self.tasks_per_iteration
        chosen = pool[start:start + self.tasks_per_iteration]
        if len(chosen) < self.tasks_per_iteration:
            raise ValueError(f"dagger iteration {iteration}: the training pool has {len(pool)} tasks, fewer than "
                             f"{start + self.tasks_per_iteration} (task_offset + iterations x tasks_per_iteration)")
        return chosen


class ExpertMix:
    """The student, watched: every turn it writes is labelled by the expert, and with probability ``beta``
    the expert's action is executed instead. Offers the student's batching (a continuous decoder or
    lock-step turns) to ``ccl.episode.rollout``; the student's KV cache simply misses when the executed
    text was not its own."""

    def __init__(self, student: Any, beta: float, stream: str, ruler: str = RULER2):
        self.student, self.beta, self.stream, self.ruler = student, beta, stream, ruler
        self.visits: list[dict] = []

    @property
    def stats(self) -> Any:
        return getattr(self.student, "stats", None)

    def memory(self) -> Any:
        return fresh_memory(self.student)

    def decoder(self, slots: int) -> Any:
        return self.student.decoder(slots) if hasattr(self.student, "decoder") else None

    def submit(self, dec: Any, ep: Episode, memory: Any) -> None:
        self.student.submit(dec, ep, memory)

    def advance(self, dec: Any) -> list[tuple[Episode, Any, str]]:
        return [(ep, memory, self._choose(ep, text)) for ep, memory, text in self.student.advance(dec)]

    def act_batch(self, eps: list[Episode], memories: list[Any]) -> list[str]:
        return [self._choose(ep, text) for ep, text in zip(eps, act_batch(self.student, eps, memories))]

    def release(self, memory: Any) -> None:
        if hasattr(self.student, "release"):
            self.student.release(memory)

    def _choose(self, ep: Episode, text: str) -> str:
        task, turn = ep.task, len(ep.turns)
        lab = label(task, ep)
        grade = grade_turn(task, ep, text, self.ruler)  # the student's own turn, graded from this state
        expert = random.Random(f"{self.stream}|{task['id']}|{turn}").random() < self.beta
        executed = lab.text if expert else text
        self.visits.append({"task_id": task["id"], "turn": turn, "student": text, "label": lab.text,
                            "executed_by": "expert" if expert else "student", "agrees": same_action(text, lab.text),
                            "student_passes": grade.passed, "student_grade": grade.why,
                            "kind": lab.kind, "recoverable": lab.recoverable, "reasons": list(lab.reasons)})
        return executed


def same_action(text: str, label_text: str) -> bool:
    """The student's text is the expert's action (the canonical serialisation of what it parses to)."""
    action, _, _ = parse_action(text)
    return action is not None and format_action(action) == label_text


def episode_rows(task: Task, messages: list[dict], visits: list[dict], keep_unrecoverable: bool,
                 iteration: int) -> list[dict]:
    """Training rows from one episode (see the module's docstring); ``visits`` in turn order."""
    at = [i for i, m in enumerate(messages) if m["role"] == "assistant"]
    if len(at) != len(visits):
        raise ValueError(f"{task['id']}: {len(at)} assistant turns but {len(visits)} visited states")
    rows: list[dict] = []
    pending: list[int] = []  # turns whose executed text is the label: supervised where they stand
    for t, v in enumerate(visits):
        if not (v["recoverable"] or keep_unrecoverable):
            continue
        executed = v["label"] if v["executed_by"] == "expert" else v["student"]
        if executed == v["label"]:
            pending.append(t)
            continue
        rows.append(_row(task, messages[:at[t]], at, pending, v["label"], iteration))
        pending = []
    if pending:
        rows.append(_row(task, messages[:at[pending[-1]] + 1], at, pending, None, iteration))
    return rows


def _row(task: Task, prefix: list[dict], at: list[int], supervised: list[int], label_text: str | None,
         iteration: int) -> dict:
    keep = {at[t] for t in supervised}
    messages = [{"role": m["role"], "content": m["content"], **({"train": i in keep} if m["role"] == "assistant" else {})}
                for i, m in enumerate(prefix)]
    if label_text is not None:
        messages.append({"role": "assistant", "content": label_text, "train": True})
    return {"task_id": task["id"], "template": task["template"], "family": task["family"], "source": "dagger",
            "iteration": iteration, "messages": messages,
            "n_assistant_turns": sum(m.get("train", False) for m in messages)}


def on_expert_path(task: Task, messages: list[dict]) -> list[bool]:
    """Per assistant turn of an episode: was its state (the messages before it) one the oracle visits?"""
    oracle = run_episode(task, OraclePolicy()).messages
    at = [i for i, m in enumerate(messages) if m["role"] == "assistant"]
    return [messages[:i] == oracle[:i] for i in at]


@dataclass
class Iteration:
    """What one DAgger iteration produced."""

    transcripts: list[dict]  # one transcript row per episode (as evaluation writes them), task order
    visits: list[dict]  # one record per visited state, task order then turn
    rows: list[dict]  # the new training rows, task order
    stats: dict


def run_iteration(tasks: list[Task], student: Any, cfg: DaggerConfig, iteration: int) -> Iteration:
    """Roll the student out on ``tasks`` with the expert watching; label, build rows, count."""
    mix = ExpertMix(student, cfg.beta(iteration), f"dagger|{cfg.seed}|{iteration}", cfg.ruler)
    done = {task["id"]: (ep, memory) for task, ep, memory, _ in rollout(tasks, mix, batch_size=cfg.batch_size)}
    by_task: dict[str, list[dict]] = {}
    for v in mix.visits:
        by_task.setdefault(v["task_id"], []).append(v)
    transcripts, visits, rows = [], [], []
    for task in tasks:
        ep, memory = done[task["id"]]
        mine = sorted(by_task[task["id"]], key=lambda v: v["turn"])
        for v, on_path in zip(mine, on_expert_path(task, ep.messages)):
            v["on_expert_path"] = on_path
        transcripts.append({**transcript_row(task, ep, memory), "ruler2_success": judge(task, ep.record())["success"]})
        visits += mine
        rows += episode_rows(task, ep.messages, mine, cfg.keep_unrecoverable, iteration)
    return Iteration(transcripts, visits, rows, iteration_stats(tasks, transcripts, visits, rows, cfg, iteration))


def iteration_stats(tasks: list[Task], transcripts: list[dict], visits: list[dict], rows: list[dict],
                    cfg: DaggerConfig, iteration: int) -> dict:
    kinds = Counter(v["kind"] for v in visits)
    return {
        "iteration": iteration, "beta": cfg.beta(iteration), "tasks": len(tasks),
        "episodes_ruler2_success": sum(t["ruler2_success"] for t in transcripts),
        "states": len(visits),
        "states_off_expert_path": sum(not v["on_expert_path"] for v in visits),
        "executed_by_expert": sum(v["executed_by"] == "expert" for v in visits),
        "student_agrees": sum(v["agrees"] for v in visits),
        "student_passes": sum(v["student_passes"] for v in visits),  # ccl.learn.turn_grade
        "unrecoverable": sum(not v["recoverable"] for v in visits),
        "unrecoverable_reasons": dict(sorted(Counter(r.split(":")[0] for v in visits if not v["recoverable"]
                                                     for r in v["reasons"][:1]).items())),
        "labels_by_kind": dict(sorted(kinds.items())),
        "student_agrees_by_kind": {k: sum(v["agrees"] for v in visits if v["kind"] == k) for k in sorted(kinds)},
        "student_passes_by_kind": {k: sum(v["student_passes"] for v in visits if v["kind"] == k) for k in sorted(kinds)},
        "rows": len(rows), "supervised_turns": sum(r["n_assistant_turns"] for r in rows),
        "rows_by_family": dict(sorted(Counter(r["family"] for r in rows).items())),
    }
