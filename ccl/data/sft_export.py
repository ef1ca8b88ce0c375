"""The SFT files in the ecosystem's tool-call chat format, and mlx-lm's folder layout.

The study trains on messages whose assistant turns are JSON text (``{"calls": [...]}`` or
``{"final": ..., "status": ...}``) and whose tool results come back as one user message
(``observation_text``). Here the same episodes are written the way TRL, Hugging Face chat
templates and mlx-lm read tool use: assistant messages with ``tool_calls`` (OpenAI shape; the
arguments as a JSON string, so Arrow-based readers such as ``datasets`` keep each call's own keys),
one ``tool`` message per result. The closing turn keeps the study's ``{"final", "status"}``
JSON as its content: the status is part of what is supervised.

Every exported row is converted back and must give the original messages exactly, so the
supervised text (and tokens) of either form are the same; a row that would not is refused.
"""
from __future__ import annotations

import json
import shutil
from pathlib import Path

from ..artifacts.jsonio import read_jsonl, write_jsonl
from ..artifacts.manifest import MANIFEST, write_manifest
from ..episode.prompt_head import observation_from_lines, observation_lines
from ..errors import InputError


class ExportError(InputError):
    """An SFT row that the tool-call format cannot hold exactly; the message names the row."""


def tool_call(cid: str, call: dict) -> dict:
    """One study call (``{"tool", "args"}``) in the OpenAI shape: the arguments as a JSON string."""
    return {"id": cid, "type": "function",
            "function": {"name": call["tool"], "arguments": json.dumps(call["args"], ensure_ascii=False)}}


def to_tool_format(messages: list[dict]) -> list[dict]:
    out: list[dict] = []
    pending: list[str] = []  # call ids of the last assistant turn, in order
    for turn, m in enumerate(messages):
        if m["role"] == "assistant":
            action = json.loads(m["content"])
            if isinstance(action, dict) and "calls" in action:
                pending = [f"call_{turn}_{i}" for i in range(len(action["calls"]))]
                out.append({"role": "assistant", "content": "",
                            "tool_calls": [tool_call(cid, c) for cid, c in zip(pending, action["calls"])]})
                continue
        elif m["role"] == "user" and (lines := observation_lines(m["content"])) is not None:
            if len(lines) == len(pending):
                for cid, line in zip(pending, lines):
                    out.append({"role": "tool", "tool_call_id": cid, "name": json.loads(line).get("tool", ""),
                                "content": line})
                pending = []
                continue
        out.append({"role": m["role"], "content": m["content"]})
    return out


def from_tool_format(messages: list[dict]) -> list[dict]:
    """The study's messages from the tool-call form (the inverse of :func:`to_tool_format`)."""
    out: list[dict] = []
    results: list[str] = []
    for m in messages:
        if m["role"] == "tool":
            results.append(m["content"])
            continue
        if results:
            out.append({"role": "user", "content": observation_from_lines(results)})
            results = []
        if m["role"] == "assistant" and m.get("tool_calls"):
            calls = [{"tool": c["function"]["name"], "args": json.loads(c["function"]["arguments"])}
                     for c in m["tool_calls"]]
            out.append({"role": "assistant", "content": json.dumps({"calls": calls}, ensure_ascii=False)})
        else:
            out.append({"role": m["role"], "content": m["content"]})
    if results:
        out.append({"role": "user", "content": observation_from_lines(results)})
    return out


def export_row(row: dict, where: str) -> dict:
    try:
        messages = to_tool_format(row["messages"])
        back = from_tool_format(messages)
    except (ValueError, KeyError, TypeError, AttributeError) as e:  # a turn not in the study's JSON shape
        raise ExportError(f"{where}: task {row.get('task_id') if isinstance(row, dict) else '?'}: cannot be written "
                          f"as tool calls ({type(e).__name__}: {e}); nothing was written") from None
    if back != row["messages"]:
        raise ExportError(f"{where}: task {row.get('task_id')}: the tool-call form does not convert back to the "
                          f"same messages (an assistant turn not in the study's JSON shape?); nothing was written")
    return {"messages": messages, **{k: v for k, v in row.items() if k != "messages"}}


def export(variants: Path, val_file: Path, out: Path) -> dict[str, int]:
    """``out/<variant>/{train,valid}.jsonl`` (mlx-lm's layout; valid = the oracle validation episodes)
    and ``out/README.md`` (the dataset card). Returns episodes per variant."""
    if not val_file.is_file():
        raise InputError(f"{val_file}: missing; run the build_datasets stage first")
    files = sorted(variants.glob("*.jsonl"))
    if not files:
        raise InputError(f"{variants}: no <variant>.jsonl; run the build_sft stage first")
    valid = [export_row(r, f"{val_file}:{i}") for i, r in enumerate(read_jsonl(val_file), 1)]
    # every row converted (and checked) before anything is written: a refused row leaves the last export as it was
    sets = {f.stem: [export_row(r, f"{f}:{i}") for i, r in enumerate(read_jsonl(f), 1)] for f in files}
    tmp = out.with_name(out.name + ".tmp")  # written beside, then swapped in: a crash keeps the last export
    shutil.rmtree(tmp, ignore_errors=True)
    for name, rows in sets.items():
        write_jsonl(tmp / name / "train.jsonl", rows)
        write_jsonl(tmp / name / "valid.jsonl", valid)
    counts = {name: len(rows) for name, rows in sets.items()}
    turns = {name: sum(r.get("n_assistant_turns", 0) for r in rows) for name, rows in sets.items()}
    (tmp / "README.md").write_text(card(counts, turns, len(valid)))
    write_manifest(tmp, sorted(p for p in tmp.rglob("*") if p.is_file() and p.name != MANIFEST),
                   {"stage": "export_sft"})
    shutil.rmtree(out, ignore_errors=True)  # a training set that no longer exists leaves no folder behind
    tmp.rename(out)
    return counts


def card(counts: dict[str, int], turns: dict[str, int], n_valid: int) -> str:
    rows = "\n".join(f"| {v} | {counts[v]} | {turns[v]} |" for v in counts)
    return f"""---
license: apache-2.0
task_categories: [text-generation]
tags: [tool-use, function-calling, agents, synthetic]
---

# Tool-orchestration episodes (SFT), in the tool-call chat format

Multi-turn episodes of a simulated tool environment: the assistant picks tools, fills their
arguments, chains and parallelises calls, recovers from faults, respects permissions and
approvals, and stops with a final answer and a status. Written by `python -m scripts.export_sft`
from the study's SFT files (`data/v1/variants`, `data/v1/sft/oracle_val.jsonl`).

- One folder per training set (variant), in mlx-lm's layout: `train.jsonl` and `valid.jsonl`
  (the oracle's validation episodes, the same in every folder).
- Each row: `messages` (system prompt with the tool catalogue and rules; user request;
  assistant turns with `tool_calls`, OpenAI shape, arguments as a JSON string; one `tool`
  message per result; the closing assistant turn's content is the study's
  `{{"final": ..., "status": ...}}` JSON), plus `task_id`, `template`, `family`, `source`
  (`oracle` or `teacher`) and `n_assistant_turns`.
- Converting a row back gives the study's training messages exactly (checked for every row on
  export), so training on either form supervises the same text.

"Episodes" counts rows; "assistant turns" counts supervised turns (the write-up's "SFT rows").

| variant | episodes | assistant turns |
| --- | --- | --- |
{rows}

Validation: {n_valid} episodes. Licence: Apache-2.0 (generated data; no third-party text).
"""
