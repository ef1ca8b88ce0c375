"""BFCL's questions through this project's prompt path, answered by a configuration, checked by BFCL.

One question's path:
1. BFCL's function documents become OpenAI ``tools`` by BFCL's own conversion (``bfcl_lib.openai_tools``,
   as its OpenAI-compatible handler sends them).
2. The tools and the question's messages become the study's messages by the server's function
   (``request_messages``: the static head, A+'s examples for A_fewshot, the catalogue listing).
3. The configuration writes one assistant turn through the replay engine (``act_all``: the decoding of
   evaluation and replay, greedy).
4. The text becomes the server's OpenAI choice (``action_choice``): ``tool_calls``, or content.
5. The choice becomes what BFCL's OpenAI handler records of a response (``[{name: arguments JSON}]``,
   or the content), and BFCL's checker gives the verdict.

The oracle answers each question with its first possible answer, written as the study's JSON action
under the names the model sees; through the same steps 4-5 it must score 100%, so no step may lose a
correct call (tests/test_bfcl.py, and the oracle row of every table).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from ..episode.runtime import fresh_memory, token_counts
from ..replay.decisions import act_all
from ..serve.openai_format import request_messages
from . import bfcl_lib
from .bfcl_questions import Question


@dataclass
class Turn:
    """What the rollout engine reads of an episode: an id (its sampling seed and cache chain), the
    messages so far and the turns taken (none)."""

    task: dict
    messages: list[dict]
    turns: list = field(default_factory=list)


def prompt(q: Question, fewshot: bool = False) -> Turn:
    """The question as the server would prompt it: its functions as tools, its first turn's messages."""
    tools = bfcl_lib.openai_tools(q.entry["function"])
    return Turn({"id": q.id}, request_messages(tools, q.entry["question"][0], fewshot=fewshot))


def answer(policy: Any, qs: list[Question], batch_size: int, fewshot: bool = False,
           progress: Callable[[int], None] = lambda n: None) -> list[dict]:
    """One assistant turn per question from a model policy: its text and token counts."""
    turns = [prompt(q, fewshot) for q in qs]
    memories = [fresh_memory(policy) for _ in turns]
    texts = act_all(policy, turns, memories, batch_size, progress)
    rows = []
    for q, text, memory in zip(qs, texts, memories):
        new, prefilled = token_counts(memory)
        rows.append({"id": q.id, "category": q.category, "text": text, "new_tokens": new,
                     "prompt_tokens": prefilled})
    return rows
