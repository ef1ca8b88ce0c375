"""Post hoc (issue 41): ruler-2 successes that repeat an answered call.

Reading GRPO's samples showed the sparse arm learning to call a tool again, with the same arguments, in a
later turn after it had already answered (``experiments/grpo_cpu``). Ruler 2 fails an identical call
repeated within one turn (a blind repeat) but not in a later turn, since retrying after a timeout is
right. A repeat after any other outcome (``ok``, ``not_found``, a refusal) cannot change the answer: it
is waste the success definition does not see. This audit counts, per evaluated configuration, the
ruler-2 successes holding such a repeat, and the success rate once they are failed: a stricter reading
reported beside ruler 2's, never in place of it, and post hoc (defined after the GRPO samples were read).
"""
from __future__ import annotations

import json
from pathlib import Path

from ..artifacts.inputs import read_rows
from ..records import EpisodeRecord
from ..vocabulary import MAIN_SPLITS

RETRYABLE = ("timeout",)  # outcomes after which the same call may rightly be made again


def repeats_after_answer(record: EpisodeRecord) -> int:
    """Calls identical (tool and arguments) to a call of an earlier turn whose outcome was not retryable."""
    seen: dict[str, dict] = {}
    count = 0
    for call in record["calls"]:
        key = json.dumps([call["tool"], call["args"]], sort_keys=True, default=str)
        before = seen.get(key)
        count += before is not None and before["turn"] != call["turn"] and before["outcome"] not in RETRYABLE
        seen[key] = call
    return count


def audit_run(folder: Path) -> dict:
    """One configuration's episodes on the main splits: ruler-2 successes, those repeating an answered call."""
    success = {r["task_id"]: r["ruler2"]["success"] for r in read_rows(folder / "verdicts.jsonl.gz", "judge")
               if r["dataset"] in MAIN_SPLITS}
    n = ok = repeating = 0
    for e in read_rows(folder / "episodes.jsonl.gz", "evaluate"):
        if e["task_id"] not in success:
            continue
        n += 1
        if success[e["task_id"]]:
            ok += 1
            repeating += repeats_after_answer(e["record"]) > 0
    return {"episodes": n, "ruler2_successes": ok, "successes_repeating_an_answered_call": repeating,
            "ruler2_pct": round(100 * ok / n, 2) if n else None,
            "without_repeats_pct": round(100 * (ok - repeating) / n, 2) if n else None}


def audit(runs: Path) -> dict:
    """Every judged configuration under ``runs`` (``results/runs``), by folder name."""
    folders = [d for d in sorted(runs.iterdir()) if (d / "verdicts.jsonl.gz").is_file()]
    return {"splits": list(MAIN_SPLITS), "retryable": list(RETRYABLE),
            "configs": {d.name: audit_run(d) for d in folders}}
