"""Stage rebuild_c: the first study's training set C, rebuilt for study 2 without running the teacher.

C is the oracle's episodes for a seeded draw of the tasks offered to the teacher (the first
``distill.n`` of the training pool). The draw shares its generator with B's, which depends on the
teacher only through how many of its episodes were accepted (``ccl.data.variants.draw_b_and_c``), so
the published count and the published file's SHA-256 (params ``study1_c``, from
data/v1/variants/variants.json) are enough: the stage rebuilds the rows and refuses a file whose hash
differs from the published one. Study 2 thus trains exactly the C the learning arms were built from,
and never reruns the first study's teacher stages.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..artifacts.inputs import read_rows
from ..artifacts.jsonio import sha256_file, write_json, write_jsonl
from ..artifacts.manifest import write_manifest
from ..config import load_params, stage_config
from ..data.teacher import DistillConfig
from ..data.variants import BuildSFTConfig, c_rows, describe_variant
from ..errors import InputError


@dataclass(frozen=True)
class Study1C:
    """What the first study published about C (data/v1/variants/variants.json)."""

    teacher_accepted: int  # the teacher's accepted episodes, which fix the generator's state before C's draw
    sha256: str = ""  # the published C.jsonl's SHA-256; empty: nothing to check against (smoke profile)


def run(params: Path, profile: str | None, data: Path, out: Path) -> dict:
    """Write ``out/C.jsonl``, ``out/C.json`` (composition, hash) and the manifest; returns the record."""
    p = load_params(params)
    sft, profile = stage_config(p, "build_sft", BuildSFTConfig, profile, where=str(params))
    n = stage_config(p, "distill", DistillConfig, profile, where=str(params))[0].n
    published = stage_config(p, "study1_c", Study1C, profile, where=str(params))[0]
    pool = read_rows(data / "tasks" / "train_pool.jsonl", "build_datasets")
    oracle = {r["task_id"]: r for r in read_rows(data / "sft" / "oracle_train.jsonl", "build_datasets")}
    rows = c_rows(sft, published.teacher_accepted, [t["id"] for t in pool[:n]], oracle)
    path = out / "C.jsonl"
    write_jsonl(path, rows)
    digest = sha256_file(path)
    if published.sha256 and digest != published.sha256:
        path.unlink()
        raise InputError(f"{path}: rebuilt C has SHA-256 {digest}, the published C.jsonl {published.sha256} "
                         f"({params}: study1_c); the training pool, the oracle's episodes or the draw changed")
    record = {"profile": profile, "offered": n, "teacher_accepted": published.teacher_accepted,
              "sha256": digest, "matches_published": digest == published.sha256, **describe_variant(rows)}
    write_json(out / "C.json", record)
    write_manifest(out, [path, out / "C.json"], {"profile": profile, "stage": "rebuild_c"})
    return record
