"""Stage evaluate: run one configuration over the profile's evaluation splits.

    python scripts/evaluate.py --name A_base            # student, no adapter
    python scripts/evaluate.py --name A_fewshot         # student + two worked examples (A+)
    python scripts/evaluate.py --name teacher
    python scripts/evaluate.py --name oracle
    python scripts/evaluate.py --name B_s0 --adapter runs/B_s0/adapter

Writes results/runs/<name>/episodes.jsonl.gz (every episode's full transcript, no verdict:
the judge stage scores them) and generation.json (model, backend, adapter, profile,
splits, efficiency and each episode's latency). Interrupted runs resume from
results/runs/<name>/episodes.partial.jsonl, unless it was written for another model,
adapter, decoding or task list.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tqdm import tqdm  # noqa: E402

from ccl.config import ConfigError, stage_with_models  # noqa: E402
from ccl.evaluation import EvaluateConfig, efficiency, fingerprint, run_tasks  # noqa: E402
from ccl.jsonio import read_jsonl, sha256_file, write_json, write_jsonl  # noqa: E402
from ccl.models.registry import ModelError  # noqa: E402
from ccl.policy.base import GenConfig  # noqa: E402
from ccl.policy.adapters import resolve_adapter  # noqa: E402
from ccl.policy.load import load_policy  # noqa: E402
from ccl.resume import ChunkLog  # noqa: E402
from ccl.vocabulary import BASELINES  # noqa: E402
from ccl.boundary import run_stage  # noqa: E402


def adapter_hashes(adapter: Path | None) -> dict[str, str] | None:
    """SHA-256 of every file of the adapter, so a partial log never outlives a retrained adapter."""
    if adapter is None:
        return None
    folder = resolve_adapter(adapter)
    return {p.name: sha256_file(p) for p in sorted(folder.iterdir()) if p.is_file()} if folder.is_dir() else {}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--name", required=True, help=f"{', '.join(BASELINES)}, or a run name with --adapter")
    ap.add_argument("--adapter", type=Path, default=None, help="LoRA adapter folder for a trained run")
    ap.add_argument("--profile", default=None)
    ap.add_argument("--params", type=Path, default=ROOT / "params.yaml")
    ap.add_argument("--data", type=Path, default=ROOT / "data" / "v1",
                    help="data root (default data/v1); task splits are read from its tasks/ folder")
    ap.add_argument("--out", type=Path, default=ROOT / "results" / "runs")
    ap.add_argument("--model-path", default=None, help="local copy of a hub model")
    args = ap.parse_args(argv)
    try:
        cfg, models, profile = stage_with_models(args.params, "evaluate", EvaluateConfig, args.profile)
    except ConfigError as e:  # one line naming the file and the key, no usage text
        print(f"evaluate: {e}", file=sys.stderr)
        return 2
    if args.name not in BASELINES and args.adapter is None:
        ap.error(f"--name {args.name}: not a baseline ({', '.join(BASELINES)}); pass --adapter for a trained run")
    model, backend = models.student, models.student_backend
    if args.name == "teacher":
        model, backend = models.teacher, models.teacher_backend
    tasks = []
    for split in cfg.splits:
        path = args.data / "tasks" / f"{split}.jsonl"
        if not path.exists():
            ap.error(f"{path}: split file missing; run the build_datasets stage first")
        tasks += list(read_jsonl(path))[: cfg.max_tasks_per_split]
    gen = GenConfig(max_new_tokens=cfg.max_new_tokens)
    try:
        policy = load_policy("oracle" if args.name == "oracle" else model, backend, args.adapter, gen,
                             args.model_path)
    except ModelError as e:
        print(f"evaluate: {e}", file=sys.stderr)
        return 2
    out = args.out / args.name
    print_name = "oracle" if args.name == "oracle" else f"{model} on {backend}"
    log = ChunkLog(out / "episodes.partial.jsonl",
                   fingerprint(args.name, None if args.name == "oracle" else model, backend,
                               adapter_hashes(args.adapter), gen, cfg.batch_size, tasks))
    if log.discarded:
        print(f"evaluate {args.name}: discarded a partial log written for other settings")
    print(f"evaluate {args.name}: {len(tasks)} tasks, profile {profile}, {print_name}")
    with tqdm(total=len(tasks), initial=sum(log.done(t["id"]) for t in tasks), unit="ep") as bar:
        run = run_tasks(tasks, policy, log, cfg.batch_size, fewshot=args.name == "A_fewshot",
                        progress=bar.update)
    done = [log.chunks[t["id"]] for t in tasks]
    rows = [d["row"] for d in done]
    write_jsonl(out / "episodes.jsonl.gz", rows)
    record = {"name": args.name, "profile": profile, "model": None if args.name == "oracle" else model,
              "backend": None if args.name == "oracle" else backend,
              "adapter": str(args.adapter) if args.adapter else None, "splits": list(cfg.splits),
              "efficiency": efficiency(rows, run, getattr(policy, "stats", None)),
              "latency_s": {t["id"]: d["latency_s"] for t, d in zip(tasks, done)}}
    write_json(out / "generation.json", record)
    log.remove()
    print(f"evaluate {args.name}: {len(rows)} transcripts -> {out / 'episodes.jsonl.gz'} (scored by the judge stage)")
    return 0


if __name__ == "__main__":
    sys.exit(run_stage("evaluate", main))
