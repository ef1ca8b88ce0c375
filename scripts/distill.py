"""Stage distill: teacher demonstrations with rejection sampling (configuration B's data).

    python scripts/distill.py                  # profile from params.yaml
    python scripts/distill.py --n 1600         # tasks offered, from the start of the training pool

Writes data/v1/teacher/pass1.jsonl.gz (greedy, every offered task), pass2.jsonl.gz (one
seeded sample for every task pass 1 rejected, or the first
``distill.pass2_max`` of them), summary.json (per pass: episodes,
acceptance, rejection reasons, tokens, wall clock; accepted episodes by family) and
manifest.json. Every episode is kept with its rejection reasons. A killed run resumes
from the last finished chunk (data/v1/teacher/pass<k>.partial.jsonl).
"""
from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tqdm import tqdm  # noqa: E402

from ccl.config import ConfigError, stage_with_models  # noqa: E402
from ccl.distill import DistillConfig, pass2_tasks, pass_summary, run_pass, summary  # noqa: E402
from ccl.jsonio import read_jsonl, sha256_file, write_json, write_jsonl  # noqa: E402
from ccl.manifest import write_manifest  # noqa: E402
from ccl.models.registry import ModelError, get_spec  # noqa: E402
from ccl.policy.base import GenConfig, ModelPolicy  # noqa: E402
from ccl.policy.load import load_backend  # noqa: E402
from ccl.resume import ChunkLog  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=None, help="tasks offered (default: the profile's distill.n)")
    ap.add_argument("--profile", default=None)
    ap.add_argument("--params", type=Path, default=ROOT / "params.yaml")
    ap.add_argument("--data", type=Path, default=ROOT / "data" / "v1" / "tasks")
    ap.add_argument("--out", type=Path, default=ROOT / "data" / "v1" / "teacher")
    ap.add_argument("--model-path", default=None, help="local copy of a hub teacher")
    args = ap.parse_args(argv)
    try:
        cfg, models, profile = stage_with_models(args.params, "distill", DistillConfig, args.profile)
    except ConfigError as e:
        ap.error(str(e))
    if args.n is not None:
        if args.n < 1:
            ap.error(f"--n {args.n}: must be at least 1")
        cfg = dataclasses.replace(cfg, n=args.n)
    pool_path = args.data / "train_pool.jsonl"
    if not pool_path.exists():
        ap.error(f"{pool_path}: training pool missing; run the build_datasets stage first")
    pool = list(read_jsonl(pool_path))
    if cfg.n > len(pool):
        ap.error(f"n={cfg.n} exceeds the training pool ({len(pool)} tasks in {pool_path})")
    offered = pool[: cfg.n]
    try:
        spec = get_spec(models.teacher)
        backend = load_backend(models.teacher, models.teacher_backend, model_path=args.model_path)
    except ModelError as e:
        print(f"distill: {e}", file=sys.stderr)
        return 2
    teacher = {"model": spec.name, "upstream": spec.upstream, "license": spec.license,
               "backend": models.teacher_backend, "revision": spec.revision or spec.sha256}
    decodings = {
        "pass1": GenConfig(max_new_tokens=cfg.max_new_tokens),
        "pass2": GenConfig(max_new_tokens=cfg.max_new_tokens, temperature=cfg.temperature, top_p=cfg.top_p,
                           seed=cfg.seed),
    }
    print(f"distill: profile {profile}, teacher {spec.name} on {models.teacher_backend}, {len(offered)} tasks")
    rows_by_pass, passes, todo = {}, {}, offered
    for k, (name, gen) in enumerate(decodings.items(), 1):
        fingerprint = {"pass": name, "teacher": teacher, "gen": dataclasses.asdict(gen), "chunk": cfg.chunk,
                       "batch_size": cfg.batch_size, "pool_sha256": sha256_file(pool_path),
                       "tasks": [t["id"] for t in todo]}
        log = ChunkLog(args.out / f"{name}.partial.jsonl", fingerprint)
        if log.discarded:
            print(f"  {name}: discarded a partial log written under other settings")
        policy = ModelPolicy(backend, gen, name=spec.name)
        with tqdm(total=len(todo), desc=name, unit="ep") as bar:
            rows = run_pass(todo, policy, log, cfg, k, progress=bar.update)
        wall = sum(c["wall_s"] for c in log.chunks.values())
        passes[name] = pass_summary(rows, wall, {"temperature": gen.temperature, "top_p": gen.top_p,
                                                 "seed": gen.seed, "max_new_tokens": gen.max_new_tokens})
        rows_by_pass[name] = rows
        if name == "pass1":
            todo = pass2_tasks(offered, rows, cfg)
        print(f"  {name}: {passes[name]['accepted']}/{len(rows)} accepted; "
              f"rejections {passes[name]['rejection_reasons']}")
    written = []
    for name, rows in rows_by_pass.items():
        write_jsonl(args.out / f"{name}.jsonl.gz", rows)
        written.append(args.out / f"{name}.jsonl.gz")
    all_rows = [r for rows in rows_by_pass.values() for r in rows]
    record = summary(cfg, teacher, offered, passes, all_rows)
    write_json(args.out / "summary.json", record)
    written.append(args.out / "summary.json")
    write_manifest(args.out, written, {"profile": profile, "stage": "distill"})
    for name in decodings:
        (args.out / f"{name}.partial.jsonl").unlink(missing_ok=True)
    print(f"distill: {record['accepted_episodes']} accepted episodes from {len(offered)} tasks "
          f"({record['accepted_share_of_tasks']:.1%}); {record['wall_s_total']:.0f} s of generation")
    return 0


if __name__ == "__main__":
    sys.exit(main())
