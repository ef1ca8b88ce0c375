"""Stage fresh_pool: a study's fresh evaluation tasks (ccl.data.fresh_pool), their audit and manifest.

Reads every split of the first study's data (training, validation and evaluation), and of any later folder
of tasks named (an earlier study's fresh splits), so that no fresh task repeats a request any of them holds;
writes ``out/tasks/<split>.jsonl``, ``out/pool_audit.json`` and
``out/manifest.json``, each to a temporary name and then renamed.
"""
from __future__ import annotations

from pathlib import Path

from ..artifacts.inputs import read_rows
from ..artifacts.jsonio import write_json, write_jsonl
from ..artifacts.manifest import write_manifest
from ..config import load_params, stage_config
from ..data.datasets import family_counts
from ..data.fresh_pool import FreshPoolConfig, build_fresh_pool
from ..errors import InputError


def config(params: Path, profile: str | None) -> tuple[FreshPoolConfig, str]:
    """The stage's settings for ``profile`` (default: the file's), validated."""
    return stage_config(load_params(params), "fresh_pool", FreshPoolConfig, profile, where=str(params))


def existing_splits(tasks_dir: Path, also: tuple[Path, ...] = ()) -> dict[str, list[dict]]:
    """Every split file of ``tasks_dir`` by name (the training and validation pools must be among them), and
    of each folder in ``also`` as ``<its parent's name>/<split>`` (``study2/eval_id``): the same split names
    recur across studies."""
    splits = {p.stem: read_rows(p, "build_datasets") for p in sorted(tasks_dir.glob("*.jsonl"))}
    missing = [s for s in ("train_pool", "val_pool") if s not in splits]
    if missing:
        raise InputError(f"{tasks_dir}: no {' or '.join(missing)} split; run the build_datasets stage first")
    for folder in also:
        files = sorted(folder.glob("*.jsonl"))
        if not files:
            raise InputError(f"{folder}: no task files (<split>.jsonl); name a study's tasks folder")
        splits.update((f"{folder.parent.name}/{p.stem}", read_rows(p, "fresh_pool")) for p in files)
    return splits


def run(cfg: FreshPoolConfig, profile: str, tasks_dir: Path, out: Path, also: tuple[Path, ...] = ()) -> dict:
    """Write the fresh splits; returns the audit (also in ``out/pool_audit.json``)."""
    splits, audit = build_fresh_pool(cfg, existing_splits(tasks_dir, also))
    written = []
    for name, tasks in splits.items():
        write_jsonl(out / "tasks" / f"{name}.jsonl", tasks)
        written.append(out / "tasks" / f"{name}.jsonl")
        audit["splits"][name]["families"] = family_counts(tasks)
    audit = {"profile": profile, **audit}
    write_json(out / "pool_audit.json", audit)
    written.append(out / "pool_audit.json")
    write_manifest(out, written, {"profile": profile, "stage": "fresh_pool"})
    return audit
