"""Stage build_datasets: seeded task pools and splits, oracle SFT data, leakage audit, manifest."""
from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from ..artifacts.jsonio import write_json, write_jsonl
from ..artifacts.manifest import write_manifest
from ..config import load_params, stage_config
from ..data.datasets import BuildDatasetsConfig, build_all, family_counts
from ..data.sft import sft_row
from ..episode.oracle import OraclePolicy
from ..episode.runtime import run_episode
from ..judge.validate import validate

ORACLE_SETS = (("oracle_train", "train_pool"), ("oracle_val", "val_pool"))  # SFT file -> the pool it replays


def config(params: Path, profile: str | None) -> tuple[BuildDatasetsConfig, str]:
    """The stage's settings for ``profile`` (default: the file's) from the parameters file, validated."""
    return stage_config(load_params(params), "build_datasets", BuildDatasetsConfig, profile, where=str(params))


def oracle_rows(tasks: list[dict]) -> list[dict]:
    """The oracle's episode of every task as an SFT row; the oracle is the ceiling, so an
    episode that fails strict success is a bug and stops the stage."""
    rows = []
    for task in tasks:
        record = run_episode(task, OraclePolicy()).record()
        verdict = validate(task, record)
        if not verdict["success"]:
            raise AssertionError(f"oracle failed {task['id']}: {verdict['reasons'] + verdict['strict_reasons']}")
        rows.append(sft_row(task, record, "oracle"))
    return rows


@dataclass(frozen=True)
class Built:
    files: list[Path]  # every file written, the manifest last
    split_families: dict[str, dict[str, int]]  # split -> family -> tasks
    seconds: float
    seconds_tasks: float


def run(cfg: BuildDatasetsConfig, profile: str, out: Path, say: Callable[[str], None] = print) -> Built:
    """Write ``out/tasks/<split>.jsonl``, ``out/sft/oracle_{train,val}.jsonl``, the leakage audit
    and the manifest (each to a temporary name, then renamed)."""
    cfg = dataclasses.replace(cfg, catalog_sizes=tuple(cfg.catalog_sizes))
    t0 = time.perf_counter()
    splits, audit = build_all(cfg)
    t_tasks = time.perf_counter() - t0
    written = []
    for name, tasks in splits.items():
        write_jsonl(out / "tasks" / f"{name}.jsonl", tasks)
        written.append(out / "tasks" / f"{name}.jsonl")
    for name, pool in ORACLE_SETS:
        rows = oracle_rows(splits[pool])
        write_jsonl(out / "sft" / f"{name}.jsonl", rows)
        written.append(out / "sft" / f"{name}.jsonl")
        say(f"  sft/{name}.jsonl: {len(rows)} episodes, {sum(r['n_assistant_turns'] for r in rows)} assistant turns")
    write_json(out / "leakage_audit.json", {**audit, "profile": profile})
    written.append(out / "leakage_audit.json")
    write_manifest(out, written, {"profile": profile, "stage": "build_datasets"})
    return Built(written + [out / "manifest.json"], {n: family_counts(t) for n, t in splits.items()},
                 time.perf_counter() - t0, t_tasks)
