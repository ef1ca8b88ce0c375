"""Stage build_datasets: seeded task pools and splits, oracle SFT data, leakage audit, manifest.

    python scripts/build_datasets.py                         # profile from params.yaml, into data/v1
    python scripts/build_datasets.py --profile paper --out DIR

Writes tasks/<split>.jsonl, sft/oracle_train.jsonl, sft/oracle_val.jsonl,
leakage_audit.json and manifest.json. Every file is written to a temporary name and
renamed, so an interrupted run never leaves a partial artifact behind.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ccl.config import ConfigError, load_params, stage_config  # noqa: E402
from ccl.datasets import BuildDatasetsConfig, build_all, family_counts  # noqa: E402
from ccl.jsonio import write_json, write_jsonl  # noqa: E402
from ccl.manifest import write_manifest  # noqa: E402
from ccl.oracle import OraclePolicy  # noqa: E402
from ccl.runtime import run_episode  # noqa: E402
from ccl.sft import sft_row  # noqa: E402
from ccl.validate import validate  # noqa: E402
from ccl.boundary import run_stage  # noqa: E402


def oracle_rows(tasks: list[dict]) -> list[dict]:
    rows = []
    for task in tasks:
        record = run_episode(task, OraclePolicy()).record()
        verdict = validate(task, record)
        if not verdict["success"]:  # the oracle is the ceiling; anything else is a bug
            raise AssertionError(f"oracle failed {task['id']}: {verdict['reasons'] + verdict['strict_reasons']}")
        rows.append(sft_row(task, record, "oracle"))
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--profile", default=None, help="paper | cpu | smoke (default: params.yaml)")
    ap.add_argument("--params", type=Path, default=ROOT / "params.yaml")
    ap.add_argument("--out", type=Path, default=ROOT / "data" / "v1")
    args = ap.parse_args(argv)
    try:
        cfg, profile = stage_config(load_params(args.params), "build_datasets", BuildDatasetsConfig,
                                    args.profile, where=str(args.params))
    except ConfigError as e:  # one line naming the file and the key, no usage text
        print(f"build_datasets: {e}", file=sys.stderr)
        return 2
    cfg = BuildDatasetsConfig(**{**cfg.__dict__, "catalog_sizes": tuple(cfg.catalog_sizes)})
    t0 = time.perf_counter()
    print(f"build_datasets: profile {profile} -> {args.out}")
    splits, audit = build_all(cfg)
    t_tasks = time.perf_counter() - t0
    out = args.out
    written = []
    for name, tasks in splits.items():
        path = out / "tasks" / f"{name}.jsonl"
        write_jsonl(path, tasks)
        written.append(path)
    for name, pool in (("oracle_train", "train_pool"), ("oracle_val", "val_pool")):
        rows = oracle_rows(splits[pool])
        path = out / "sft" / f"{name}.jsonl"
        write_jsonl(path, rows)
        written.append(path)
        print(f"  sft/{name}.jsonl: {len(rows)} episodes, "
              f"{sum(r['n_assistant_turns'] for r in rows)} assistant turns")
    audit["profile"] = profile
    write_json(out / "leakage_audit.json", audit)
    written.append(out / "leakage_audit.json")
    write_manifest(out, written, {"profile": profile, "stage": "build_datasets"})
    for name, tasks in splits.items():
        print(f"  {name}: {family_counts(tasks)}")
    print(f"build_datasets: {len(written) + 1} files in {time.perf_counter() - t0:.1f} s "
          f"(tasks {t_tasks:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(run_stage("build_datasets", main))
