"""Read what GRPO's policies did (issue 41): each GRPO run's first- and last-step samples side by side
(``runs/<run>/samples.jsonl.gz``): ruler-2 success, final statuses, turns, the turn grades, the hacking
flags and ruler 2's reasons, counted, and the episodes that repeat a call in a later turn after it was
already answered (anything but a timeout: waste ruler 2 does not fail), replayed through the runtime to
read each call's outcome; and every last-step episode that a flag marks or that ruler 2 passes, printed
in full, to be read.

    python -m scripts.grpo_samples                       # every GRPO run under runs/
    python -m scripts.grpo_samples --out experiments/grpo_cpu/samples_summary.json
"""
from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

from ccl.analysis.repeats import repeats_after_answer
from ccl.artifacts.inputs import split_rows
from ccl.artifacts.jsonio import read_json, read_jsonl, write_json
from ccl.episode.runtime import Episode

from .layout import DATA, TRAIN_RUNS


def repeats_answered(task: dict, turns: list[str]) -> int:
    """The episode replayed through the runtime (the samples keep texts, not outcomes), then counted by
    the repeat audit's rule (``ccl.analysis.repeats``)."""
    ep = Episode(task)
    for text in turns:
        if not ep.done:
            ep.step(text)
    return repeats_after_answer(ep.record())


def summarise(rows: list[dict], tasks: dict[str, dict]) -> dict:
    n = len(rows)
    waste = [repeats_answered(tasks[r["task_id"]], r["turns"]) for r in rows]
    return {"episodes": n, "success": sum(r["sparse"] for r in rows),
            "episodes_repeating_an_answered_call": sum(w > 0 for w in waste),
            "successes_repeating_an_answered_call": sum(w > 0 and r["sparse"] == 1 for w, r in zip(waste, rows)),
            "turns_mean": round(sum(len(r["turns"]) for r in rows) / max(n, 1), 3),
            "status": dict(Counter(str(r["status"]) for r in rows).most_common()),
            "grades": dict(Counter(g for r in rows for g in r["grades"]).most_common()),
            "flags": dict(Counter(f for r in rows for f in r["flags"]).most_common()),
            "reasons": dict(Counter(x.split(":")[0] for r in rows for x in r["reasons"]).most_common(8)),
            "families": dict(Counter(r["family"] for r in rows).most_common())}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=Path, default=TRAIN_RUNS)
    ap.add_argument("--data", type=Path, default=DATA, help="data root: its training pool holds the sampled tasks")
    ap.add_argument("--out", type=Path, default=None, help="write the counts here (JSON)")
    ap.add_argument("--show", type=int, default=6, help="last-step episodes to print per run")
    args = ap.parse_args(argv)
    tasks = {t["id"]: t for t in split_rows(args.data / "tasks", "train_pool")}
    out = {}
    for summary in sorted(args.runs.glob("*/summary.json")):
        if read_json(summary).get("method") != "grpo":
            continue
        rows = list(read_jsonl(summary.parent / "samples.jsonl.gz"))
        last = max(r["step"] for r in rows)
        first_rows, last_rows = [r for r in rows if r["step"] == 0], [r for r in rows if r["step"] == last]
        out[summary.parent.name] = {"first_step": summarise(first_rows, tasks), "last_step": summarise(last_rows, tasks)}
        print(f"== {summary.parent.name}")
        for k in ("first_step", "last_step"):
            print(f"  {k}: {out[summary.parent.name][k]}")
        marked = [r for r in last_rows if r["flags"] or r["sparse"]][:args.show]
        for r in marked:
            print(f"  -- {r['task_id']} #{r['index']} success={r['sparse']} flags={r['flags']} grades={r['grades']}")
            for t in r["turns"]:
                print(f"     > {t[:300]}")
    if args.out:
        write_json(args.out, out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
