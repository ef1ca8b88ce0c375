"""The shapes a stage checks its input rows against on read (``ccl.artifacts.inputs``).

Each shape names only the fields its readers use, with their JSON types, strictly (no "5" -> 5, no
true -> 1); other fields pass through unchecked (``extra="allow"``), so a shape never forces a
producer to change its bytes. Validation only checks: readers keep the row as read. A number may be
one of the strings the project's JSON writer puts for a non-finite float (``jsonio.finite_only``).
"""
from __future__ import annotations

from typing import Annotated, Literal

import pydantic


class Shape(pydantic.BaseModel):
    model_config = pydantic.ConfigDict(extra="allow", strict=True)


Number = float | Literal["NaN", "Infinity", "-Infinity"]  # a strict float also takes an int
Messages = Annotated[list["Message"], pydantic.Field(min_length=1)]


class Message(Shape):
    role: str
    content: str


class Task(Shape):
    """A line of a task split (build_datasets): its id, the one field every reader of a split uses (the
    task itself is the world's, checked where it is played)."""
    id: str


class ChatRow(Shape):
    """A training row: one episode as chat messages (build_sft, the DAgger aggregates, err_data)."""
    messages: Messages


class PreferencePair(Shape):
    """A line of dpo_pairs' pairs file: the conversation so far and the chosen and rejected next turn."""
    prompt: Messages
    chosen: Messages
    rejected: Messages


class StepLog(Shape):
    """A line of a run's train_log.jsonl (every method logs its step and loss)."""
    step: int
    loss: Number


class GrpoStepLog(StepLog):
    """A line of a GRPO run's train_log.jsonl: the monitors the views and the report plot."""
    loss: Number | None  # None on a step without an update (every group's rewards equal)
    reward: Number
    success: Number
    kl: Number | None = None  # None on a step without an update
    zero_spread_groups: Number
    flagged: Number


class GrpoValLog(Shape):
    """A line of a GRPO run's val_log.jsonl: greedy validation after ``step`` updates."""
    step: int
    val_success: Number
    val_flagged: Number


class GrpoSample(Shape):
    """A line of a GRPO run's samples.jsonl.gz: a completion kept for reading."""
    step: int
    family: str
    sparse: Number
    flags: list[str]
    final: str | None = None


class BfclDrawn(Shape):
    """One category of data/bfcl/sample.json: its size and the ids drawn (at least one: the category's
    table cell divides by its number of questions)."""
    total: int
    ids: Annotated[list[str], pydantic.Field(min_length=1)]


class BfclSample(Shape):
    """The BFCL sample, data/bfcl/sample.json (stage bfcl_sample): the release drawn from, the seed, and
    per category the drawn ids (at least one category: a sample without questions is refused, not scored)."""
    bfcl_eval: str
    seed: int
    categories: Annotated[dict[str, BfclDrawn], pydantic.Field(min_length=1)]


class BfclAnswer(Shape):
    """A line of results/bfcl/answers/<name>/answers.jsonl.gz (stage bfcl): one question's answer."""
    id: str
    text: str
    new_tokens: int


class BfclGeneration(Shape):
    """A configuration's record, results/bfcl/answers/<name>/generation.json (stage bfcl): what answered,
    under which bfcl-eval release."""
    bfcl_eval: str
    max_new_tokens: int
    model: str | None  # None for the oracle
    backend: str | None
    adapter: str | None
    wall_s: float
