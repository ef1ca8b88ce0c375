"""Stage accept_teacher: which teacher episodes become configuration B's demonstrations.

    python scripts/accept_teacher.py

Judges every transcript of both passes (data/v1/teacher/pass{1,2}.jsonl.gz) with the strict
validator and the cleanliness rules of ccl.acceptance. Writes acceptance.jsonl (per episode:
task, pass, accepted, rejection reasons, whether the write-up's definition would have
accepted it, and the verdict), summary.json (per pass: episodes, acceptance, rejection
reasons, tokens, wall clock; accepted episodes by family) and manifest.json over the folder.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ccl.acceptance import judge_pass, pass_summary, summary  # noqa: E402
from ccl.config import ConfigError  # noqa: E402
from ccl.teacher import load_setup  # noqa: E402
from ccl.jsonio import read_json, read_jsonl, write_json, write_jsonl  # noqa: E402
from ccl.judging import JudgeError  # noqa: E402
from ccl.manifest import write_manifest  # noqa: E402
from ccl.models.registry import ModelError  # noqa: E402
from ccl.boundary import run_stage  # noqa: E402

PASSES = ("pass1", "pass2")  # the files of stages distill and distill_pass2


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--profile", default=None)
    ap.add_argument("--params", type=Path, default=ROOT / "params.yaml")
    ap.add_argument("--data", type=Path, default=ROOT / "data" / "v1",
                    help="data root (default data/v1); task splits are read from its tasks/ folder")
    ap.add_argument("--out", type=Path, default=ROOT / "data" / "v1" / "teacher")
    args = ap.parse_args(argv)
    out = args.out
    try:
        setup = load_setup(args.params, args.profile, args.data / "tasks" / "train_pool.jsonl", None,
                           n_from=out / "pass1.jsonl.gz")
        tasks = {t["id"]: t for t in setup.offered}
        judged, passes = [], {}
        for name, stage in (("pass1", "distill"), ("pass2", "distill_pass2")):
            for path in (out / f"{name}.jsonl.gz", out / f"{name}.json"):
                if not path.is_file():
                    raise ConfigError(f"{path}: missing; run the {stage} stage first")
            generation = read_json(out / f"{name}.json")
            if generation["teacher"] != setup.teacher:
                raise ConfigError(f"{out / (name + '.json')}: written by teacher {generation['teacher']['model']}, "
                                  f"but params name {setup.teacher['model']}; rerun the {stage} stage")
            transcripts = list(read_jsonl(out / f"{name}.jsonl.gz"))
            rows = judge_pass(tasks, transcripts, str(out / f"{name}.jsonl.gz"))
            passes[name] = pass_summary(rows, transcripts, generation)
            judged += rows
            print(f"  {name}: {passes[name]['accepted']}/{len(rows)} accepted "
                  f"({passes[name]['accepted_writeup']} under the write-up's definition); "
                  f"rejections {passes[name]['rejection_reasons']}")
    except (ConfigError, ModelError, JudgeError, OSError, EOFError, ValueError) as e:
        print(f"accept_teacher: {e}", file=sys.stderr)
        return 2
    if len({r["task_id"] for r in judged if r["accepted"]}) != sum(r["accepted"] for r in judged):
        print("accept_teacher: more than one accepted episode for a task (pass 2 must only rerun rejections)",
              file=sys.stderr)
        return 2
    write_jsonl(out / "acceptance.jsonl", judged)
    record = summary(setup.cfg, setup.teacher, setup.offered, passes, judged)
    write_json(out / "summary.json", record)
    files = [out / f"{n}{s}" for n in PASSES for s in (".jsonl.gz", ".json")]
    write_manifest(out, files + [out / "acceptance.jsonl", out / "summary.json"],
                   {"profile": setup.profile, "stage": "accept_teacher"})
    print(f"accept_teacher: {record['accepted_episodes']} accepted episodes from {len(setup.offered)} tasks; "
          f"the write-up's definition would accept {record['accepted_tasks_writeup']} tasks")
    return 0


if __name__ == "__main__":
    sys.exit(run_stage("accept_teacher", main))
