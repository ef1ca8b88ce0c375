"""Episode data for the trace explorer, written as JavaScript files.

The site must work opened from disk, where browsers refuse ``fetch`` of local JSON; a
``<script>`` that assigns to ``window.CCL`` loads everywhere. System prompts (the tool
catalogue, most of each episode's bytes) are stored once per distinct text and
referenced by hash.
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

from ..artifacts.inputs import read_record, read_rows
from ..artifacts.jsonio import atomic_write_bytes, dumps
from ..errors import InputError

TASK_FIELDS = ("request", "role", "approvals", "expected_status", "family", "template", "depth", "today")


def js_assign(var: str, key: str | None, obj) -> bytes:
    body = dumps(obj).replace("</", "<\\/")  # strict JSON: a NaN in model text is a string here too
    target = f'window.CCL.{var}' + (f"[{json.dumps(key)}]" if key is not None else "")
    return (f"window.CCL = window.CCL || {{}}; window.CCL.{var} = window.CCL.{var} || {{}};\n"
            f"{target} = {body};\n").encode("utf-8")


def prompt_ref(text: str, prompts: dict[str, str]) -> str:
    h = hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]
    prompts[h] = text
    return h


def slim_episode(row: dict, verdict: dict, latency: float | None, prompts: dict[str, str]) -> dict:
    """One transcript row with its verdict (both definitions) and latency, system prompt by hash."""
    rec = row["record"]
    messages = [{"role": m["role"], "prompt": prompt_ref(m["content"], prompts)} if m["role"] == "system"
                else {"role": m["role"], "content": m["content"]} for m in rec["messages"]]
    calls = [{k: c.get(k) for k in ("turn", "tool", "args", "outcome", "observation")} for c in rec["calls"]]
    return {"task_id": row["task_id"], "split": row["dataset"], "family": row["family"], "template": row["template"],
            "depth": row["depth"], "verdict": verdict, "latency_s": latency,
            "messages": messages, "calls": calls, "final": rec["final"], "status": rec["status"],
            "end_reason": rec["end_reason"], "effects": rec["effects"]}


def export_traces(runs_dir: Path, tasks_dir: Path, out: Path, prompts: dict[str, str]) -> dict:
    """Write data/traces/<config>.js, tasks.js and index.js; return the index. System prompts are
    added to ``prompts`` (hash -> text), which the caller writes once for every page (prompts.js)."""
    index: dict[str, dict] = {}
    wanted: set[str] = set()
    for verdicts in sorted(runs_dir.glob("*/verdicts.jsonl.gz")):
        folder = verdicts.parent
        name = folder.name
        judged = {r["task_id"]: r["verdict"] for r in read_rows(verdicts, "judge")}
        gen = folder / "generation.json"
        latency = read_record(gen, "evaluate").get("latency_s", {}) if gen.is_file() else {}
        episodes = read_rows(folder / "episodes.jsonl.gz", "evaluate")
        unjudged = [r["task_id"] for r in episodes if r["task_id"] not in judged]
        if unjudged:
            raise InputError(f"{verdicts}: no verdict for {len(unjudged)} episode(s) of {folder / 'episodes.jsonl.gz'} "
                             f"(first {unjudged[0]}); rerun the judge stage for {name}")
        rows = [slim_episode(r, judged[r["task_id"]], latency.get(r["task_id"]), prompts) for r in episodes]
        wanted |= {r["task_id"] for r in rows}
        atomic_write_bytes(out / f"{name}.js", js_assign("traces", name, rows))
        index[name] = {"episodes": len(rows), "success": sum(bool(r["verdict"]["success"]) for r in rows),
                       "file": f"data/traces/{name}.js"}
    tasks = {}
    for split in sorted(tasks_dir.glob("*.jsonl")):
        for t in read_rows(split, "build_datasets"):
            if t["id"] in wanted:
                tasks[t["id"]] = {k: t.get(k) for k in TASK_FIELDS}
    atomic_write_bytes(out / "tasks.js", js_assign("tasks", None, tasks))
    atomic_write_bytes(out / "index.js", js_assign("index", None, index))
    return index
