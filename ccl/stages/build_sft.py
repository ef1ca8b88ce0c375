"""Stage build_sft: the training sets of ``ccl.vocabulary.VARIANTS`` from oracle and teacher episodes."""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path

from ..artifacts.inputs import read_rows
from ..artifacts.jsonio import sha256_file, write_json, write_jsonl
from ..artifacts.manifest import check_against_manifest, write_manifest
from ..config import load_params, stage_config
from ..data.variants import BuildSFTConfig, build_variants, describe_variant, teacher_rows

TEACHER_FILES = {"pass1.jsonl.gz": "distill", "pass2.jsonl.gz": "distill_pass2", "acceptance.jsonl": "accept_teacher"}


@dataclass(frozen=True)
class Built:
    listing: dict[str, dict]  # variant -> file, SHA-256, episodes, SFT rows, composition
    notes: dict  # budget, episodes of B and C, and a shortfall sentence when the teacher fell short


def config(params: Path, profile: str | None) -> tuple[BuildSFTConfig, str]:
    """The stage's settings for ``profile`` (default: the file's) from the parameters file, validated."""
    return stage_config(load_params(params), "build_sft", BuildSFTConfig, profile, where=str(params))


def run(cfg: BuildSFTConfig, profile: str, data: Path, out: Path) -> Built:
    """Read ``data``'s training pool, its oracle episodes and the teacher's accepted transcripts;
    write ``out/<variant>.jsonl``, ``variants.json`` and the manifest."""
    teacher_dir = data / "teacher"
    pool = read_rows(data / "tasks" / "train_pool.jsonl", "build_datasets")
    oracle = {r["task_id"]: r for r in read_rows(data / "sft" / "oracle_train.jsonl", "build_datasets")}
    check_against_manifest(teacher_dir, TEACHER_FILES, "accept_teacher")
    accepted = {(r["task_id"], r["pass"]) for r in read_rows(teacher_dir / "acceptance.jsonl", "accept_teacher")
                if r["accepted"]}
    episodes = [{**r, "accepted": (r["task_id"], r["pass"]) in accepted}
                for p, stage in (("pass1", "distill"), ("pass2", "distill_pass2"))
                for r in read_rows(teacher_dir / f"{p}.jsonl.gz", stage)]
    offered = [r["task_id"] for r in read_rows(teacher_dir / "pass1.jsonl.gz", "distill")]
    tasks_by_id = {t["id"]: t for t in pool}
    variants, notes = build_variants(cfg, pool, offered, teacher_rows(tasks_by_id, episodes), oracle)
    written, listing = [], {}
    for name, rows in variants.items():
        path = out / f"{name}.jsonl"
        write_jsonl(path, rows)
        written.append(path)
        listing[name] = {"file": path.name, "sha256": sha256_file(path), **describe_variant(rows)}
    write_json(out / "variants.json", {"profile": profile, "config": dataclasses.asdict(cfg), **notes,
                                       "variants": listing})
    written.append(out / "variants.json")
    write_manifest(out, written, {"profile": profile, "stage": "build_sft"})
    return Built(listing, notes)
