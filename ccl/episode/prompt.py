"""The system prompt every driver uses (oracle data, teacher, student, CLI, server)."""
from __future__ import annotations

import datetime as dt

from ..world.catalogue import Catalogue
from .prompt_head import FEWSHOT, NEXT_STEP, STATIC_HEAD, observation_text

__all__ = ["FEWSHOT", "NEXT_STEP", "STATIC_HEAD", "compose_system", "observation_text", "system_prompt",
           "task_context"]


def task_context(task: dict) -> str:
    """The task's line after the static head: its date and the user's role."""
    day = dt.date.fromisoformat(task["today"])
    return f"Today is {task['today']} ({day.strftime('%A')}). The user's role is {task['role']}."


def compose_system(context: str, tools: str, fewshot: bool = False) -> str:
    """The static head (with the A+ worked examples when ``fewshot``), the context line (date and role;
    an OpenAI client's system text) and the tool listing. The server builds a client's prompt here too."""
    return STATIC_HEAD + (FEWSHOT if fewshot else "") + "\n\n" + (f"{context}\n" if context else "") + "Tools:\n" + tools


def system_prompt(task: dict, catalogue: Catalogue | None = None, fewshot: bool = False) -> str:
    """A task's system prompt: its context line and its catalogue."""
    return compose_system(task_context(task), (catalogue or Catalogue(task)).render(), fewshot)
