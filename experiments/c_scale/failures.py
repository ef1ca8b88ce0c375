"""Print a reading's failing validation transcripts, compactly, for the families asked (PLAN.md: read
before the data rule is fixed).

    python -m experiments.c_scale.failures CELL READING [FAMILY ...] [--limit N]
"""
from __future__ import annotations

import argparse
import json

from ccl.artifacts.inputs import split_rows
from ccl.artifacts.jsonio import read_jsonl
from ccl.judge.rulers import judge_by
from ccl.vocabulary import RULER3
from scripts.layout import DATA

from .pilot import RESULTS


def show(task: dict, row: dict) -> str:
    verdict = judge_by(RULER3)(task, row["record"])
    lines = [f"## {task['id']} ({task['template']}{', renamed' if row['renamed'] else ''}): {verdict['reasons']}",
             f"request: {task['request']}",
             f"gold: {json.dumps([(n['tool'], n.get('args')) for n in task['gold']['nodes']])[:300]}"]
    for turn in row["record"]["turns"]:
        lines.append(f"  turn {turn['index']}: {turn['text'][:240]}")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("cell")
    ap.add_argument("reading")
    ap.add_argument("families", nargs="*")
    ap.add_argument("--limit", type=int, default=6)
    args = ap.parse_args()
    tasks = {t["id"]: t for t in split_rows(DATA / "tasks", "val_pool", need_rows=True)}
    shown: dict[str, int] = {}
    for row in read_jsonl(RESULTS / args.cell / f"{args.reading}.jsonl.gz"):
        family = row["family"]
        if row[RULER3] or (args.families and family not in args.families) or shown.get(family, 0) >= args.limit:
            continue
        shown[family] = shown.get(family, 0) + 1
        print(show(tasks[row["task_id"]], row) + "\n")


if __name__ == "__main__":
    main()
