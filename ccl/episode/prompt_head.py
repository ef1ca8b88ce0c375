"""The static head of every system prompt, on its own so that code which only needs to find
it (the training packer, the backends' shared-prefix cache) depends on nothing but jsonio.

Two heads are shared by many episodes: STATIC_HEAD (every prompt) and STATIC_HEAD + FEWSHOT
(variant A+). ``head_end`` finds the longer one present, so a backend prefills it once and
reuses its KV cache."""
from __future__ import annotations

from ..artifacts.jsonio import dumps

# The static instructions come first so every episode's prompt starts with the same text:
# a backend can prefill that shared head once and reuse its KV cache (STATIC_HEAD).
STATIC_HEAD = """You are an assistant that completes the user's request by calling tools.
Answer every turn with exactly one JSON object and nothing else:
{"calls": [{"tool": "<name>", "args": {...}}]} to call tools (several calls in one turn run in parallel, so combine only calls that do not need each other's results), or
{"final": "<answer for the user>", "status": "done|refused|blocked|failed"} when you are finished.
Use only the listed tools, names and parameters. Take identifiers from earlier results, never guess them. Tool results come back in the next user message.
Status: done = request completed; refused = your role does not allow it; blocked = the user declined an approval (do not retry it); failed = it cannot be completed (something was not found or no tool can do it). Retry a call that timed out; use the declared fallback when a service is unavailable. If no tool is needed, answer directly."""


# Ends every observation: without it small models keep repeating calls that already
# succeeded (cpu teacher, first 32 training tasks: 0/32 finished within 8 turns without
# it, 32/32 with this wording, 7 accepted; experiments/observation_hint.md).
NEXT_STEP = 'If these results complete the request, reply with {"final": ..., "status": ...}; otherwise call the next tools.'


RESULTS = "Results:\n"


def observation_text(results: list[dict]) -> str:
    """The user message that returns one turn's tool results (one canonical JSON line each)."""
    return observation_from_lines([dumps(r) for r in results])


def observation_from_lines(lines: list[str]) -> str:
    """The observation message around already-serialised result lines."""
    return RESULTS + "\n".join(lines) + "\n" + NEXT_STEP


def observation_lines(text: str) -> list[str] | None:
    """The result lines of an observation message (the inverse of :func:`observation_from_lines`), or
    None when ``text`` is not one."""
    if not (text.startswith(RESULTS) and text.endswith("\n" + NEXT_STEP)):
        return None
    return text[len(RESULTS):-len(NEXT_STEP) - 1].split("\n")


# Few-shot variant A+: two worked examples whose tools are never in any catalogue, so they
# teach the action format and the loop without leaking an answer. The write-up says only that
# they are appended to the system prompt; they sit right after the static head, before the
# task's date, role and tools, so that the head plus examples are the same text in every A+
# episode and are prefilled once (before issue 17 they came after the catalogue and were
# prefilled for every episode; the committed A+ transcripts before that change used that order).
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

SHARED_HEADS = (STATIC_HEAD + FEWSHOT, STATIC_HEAD)  # longest first


def head_end(text: str) -> int | None:
    """Where the longest shared head in ``text`` ends (None: no shared head)."""
    for head in SHARED_HEADS:
        at = text.find(head)
        if at >= 0:
            return at + len(head)
    return None
