"""The system prompt every driver uses (oracle data, teacher, student, CLI, server)."""
from __future__ import annotations

import datetime as dt

from .catalogue import Catalogue
from .jsonio import dumps
from .prompt_head import STATIC_HEAD

SYSTEM = STATIC_HEAD + """

Today is {today} ({weekday}). The user's role is {role}.
Tools:
{tools}"""


# Ends every observation: without it small models keep repeating calls that already
# succeeded (cpu teacher, first 32 training tasks: 0/32 finished within 8 turns without
# it, 32/32 with this wording, 7 accepted; experiments/observation_hint.md).
NEXT_STEP = 'If these results complete the request, reply with {"final": ..., "status": ...}; otherwise call the next tools.'


def observation_text(results: list[dict]) -> str:
    """The user message that returns one turn's tool results (one canonical JSON line each)."""
    return "Results:\n" + "\n".join(dumps(r) for r in results) + "\n" + NEXT_STEP


# Few-shot variant A+: two worked examples whose tools are never in any catalogue, so they
# teach the action format and the loop without leaking an answer.
FEWSHOT = """

Example 1 (tools from another app, for illustration only):
User: Water the roses in zone B, then tell me the soil moisture there.
Assistant: {"calls": [{"tool": "water_plants", "args": {"zone": "B"}}]}
User: {obs1}
Assistant: {"final": "Zone B is watered; soil moisture is now 41%.", "status": "done"}

Example 2:
User: Look up recipes for soup and salad.
Assistant: {"calls": [{"tool": "find_recipe", "args": {"dish": "soup"}}, {"tool": "find_recipe", "args": {"dish": "salad"}}]}
User: {obs2}
Assistant: {"final": "I found a salad recipe (RC-204) but no soup recipe.", "status": "failed"}""".replace(
    "{obs1}", observation_text([{"ok": True, "result": {"zone": "B", "soil_moisture_pct": 41}, "tool": "water_plants"}])
).replace("{obs2}", observation_text([
    {"error": {"kind": "not_found", "message": "no recipe for 'soup'"}, "ok": False, "tool": "find_recipe"},
    {"ok": True, "result": {"dish": "salad", "recipe_id": "RC-204"}, "tool": "find_recipe"}]))


def system_prompt(task: dict, catalogue: Catalogue | None = None, fewshot: bool = False) -> str:
    catalogue = catalogue or Catalogue(task)
    day = dt.date.fromisoformat(task["today"])
    text = SYSTEM.replace("{today}", task["today"]).replace("{weekday}", day.strftime("%A")).replace(
        "{role}", task["role"]).replace("{tools}", catalogue.render())
    return text + FEWSHOT if fewshot else text
