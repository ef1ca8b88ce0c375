"""The system prompt every driver uses (oracle data, teacher, student, CLI, server)."""
from __future__ import annotations

import datetime as dt

from .catalogue import Catalogue
from .prompt_head import FEWSHOT, NEXT_STEP, STATIC_HEAD, observation_text

__all__ = ["FEWSHOT", "NEXT_STEP", "STATIC_HEAD", "observation_text", "system_prompt"]

# The per-task part, after the shared head.
TASK_PART = """

Today is {today} ({weekday}). The user's role is {role}.
Tools:
{tools}"""


def system_prompt(task: dict, catalogue: Catalogue | None = None, fewshot: bool = False) -> str:
    """The static head (with the A+ worked examples when ``fewshot``), then the task's date, role and tools."""
    catalogue = catalogue or Catalogue(task)
    day = dt.date.fromisoformat(task["today"])
    rest = TASK_PART.replace("{today}", task["today"]).replace("{weekday}", day.strftime("%A")).replace(
        "{role}", task["role"]).replace("{tools}", catalogue.render())
    return STATIC_HEAD + (FEWSHOT if fewshot else "") + rest
