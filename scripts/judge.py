"""Stage judge: score one configuration's stored transcripts with the validator.

    python scripts/judge.py --name B_s0

Reads results/runs/<name>/episodes.jsonl.gz (transcripts, from evaluate) and
generation.json, and the task files; writes results/runs/<name>/verdicts.jsonl.gz (one
row per episode: task id, split, strata and the verdict under both success definitions)
and metrics.json (per split and pooled over the main splits: both success rates and
every diagnostic, plus the generation record's efficiency).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ccl.jsonio import read_json, read_jsonl, write_json, write_jsonl  # noqa: E402
from ccl.judging import JudgeError, judge_rows, metrics  # noqa: E402
from ccl.boundary import run_stage  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--name", required=True, help="configuration or run name (a folder under --runs)")
    ap.add_argument("--data", type=Path, default=ROOT / "data" / "v1",
                    help="data root (default data/v1); task splits are read from its tasks/ folder")
    ap.add_argument("--runs", type=Path, default=ROOT / "results" / "runs")
    args = ap.parse_args(argv)
    folder = args.runs / args.name
    episodes, generation = folder / "episodes.jsonl.gz", folder / "generation.json"
    for path, stage in ((episodes, "evaluate"), (generation, "evaluate")):
        if not path.is_file():
            print(f"judge: {path}: missing; run the {stage} stage for {args.name} first", file=sys.stderr)
            return 2
    gen = read_json(generation)
    missing = [k for k in ("name", "profile", "model", "backend", "adapter", "splits", "efficiency") if k not in gen]
    if missing:
        print(f"judge: {generation}: lacks {', '.join(missing)}; rerun the evaluate stage for {args.name}",
              file=sys.stderr)
        return 2
    tasks = {}
    for split in gen["splits"]:
        path = args.data / "tasks" / f"{split}.jsonl"
        if not path.is_file():
            print(f"judge: {path}: split file missing; run the build_datasets stage first", file=sys.stderr)
            return 2
        tasks.update((t["id"], t) for t in read_jsonl(path))
    try:
        rows = judge_rows(tasks, read_jsonl(episodes), str(episodes))
    except (JudgeError, ValueError, OSError, EOFError) as e:
        print(f"judge: {e}", file=sys.stderr)
        return 2
    write_jsonl(folder / "verdicts.jsonl.gz", rows)
    result = {k: gen[k] for k in ("name", "profile", "model", "backend", "adapter")}
    result |= {**metrics(rows, gen["splits"]), "efficiency": gen["efficiency"]}
    write_json(folder / "metrics.json", result)
    pooled = result["pooled_main"]
    if pooled:
        print(f"judge {args.name}: pooled success {pooled['success']:.3f} strict, "
              f"{pooled['success_writeup']:.3f} by the write-up's definition, over {pooled['n']} episodes")
    return 0


if __name__ == "__main__":
    sys.exit(run_stage("judge", main))
