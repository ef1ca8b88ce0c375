"""Stage build_sft: the training sets B, C, C_matched, C_25, C_50, C_full, Dmix and Dseq.

    python scripts/build_sft.py                   # profile from params.yaml

Reads the training pool and its oracle episodes (build_datasets), the teacher's
transcripts (distill, distill_pass2) and which of them were accepted (accept_teacher); writes data/v1/variants/<variant>.jsonl, variants.json (episodes,
SFT rows, SHA-256 and per-family composition of each) and manifest.json. Dseq's rows
carry ``phase`` 0 (B) then 1 (C); the trainer runs the phases in that order.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ccl.config import ConfigError, load_params, stage_config  # noqa: E402
from ccl.jsonio import read_json, read_jsonl, sha256_file, write_json, write_jsonl  # noqa: E402
from ccl.manifest import write_manifest  # noqa: E402
from ccl.variants import BuildSFTConfig, VariantError, build_variants, describe_variant, teacher_rows  # noqa: E402
from ccl.boundary import run_stage  # noqa: E402


class InputError(RuntimeError):
    """A missing or corrupt input file; the message names it and the stage that makes it."""


def load_rows(path: Path, stage: str) -> list[dict]:
    if not path.exists():
        raise InputError(f"{path}: missing; run the {stage} stage first")
    try:
        return list(read_jsonl(path))
    except (OSError, EOFError, ValueError) as e:
        raise InputError(f"{path}: corrupt ({e}); rerun the {stage} stage") from None


def check_against_manifest(folder: Path, producers: dict[str, str], manifest_stage: str) -> None:
    """A teacher file whose bytes differ from its manifest is corrupt, even if it parses.

    ``producers`` maps each file name to the stage that writes it (the remedy to name)."""
    manifest = folder / "manifest.json"
    if not manifest.exists():
        raise InputError(f"{manifest}: missing; run the {manifest_stage} stage first")
    files = read_json(manifest)["files"]
    for name, stage in producers.items():
        path = folder / name
        if not path.exists():
            raise InputError(f"{path}: missing; run the {stage} stage first")
        if name not in files or sha256_file(path) != files[name]["sha256"]:
            raise InputError(f"{path}: corrupt (SHA-256 differs from {manifest}); rerun the {stage} stage "
                             f"and then {manifest_stage}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--profile", default=None)
    ap.add_argument("--params", type=Path, default=ROOT / "params.yaml")
    ap.add_argument("--data", type=Path, default=ROOT / "data" / "v1")
    ap.add_argument("--out", type=Path, default=None, help="default: DATA/variants")
    args = ap.parse_args(argv)
    out = args.out or args.data / "variants"
    try:
        cfg, profile = stage_config(load_params(args.params), "build_sft", BuildSFTConfig, args.profile,
                                    where=str(args.params))
    except ConfigError as e:  # one line naming the file and the key, no usage text
        print(f"build_sft: {e}", file=sys.stderr)
        return 2
    teacher_dir = args.data / "teacher"
    try:
        pool = load_rows(args.data / "tasks" / "train_pool.jsonl", "build_datasets")
        oracle = {r["task_id"]: r for r in load_rows(args.data / "sft" / "oracle_train.jsonl", "build_datasets")}
        check_against_manifest(teacher_dir, {"pass1.jsonl.gz": "distill", "pass2.jsonl.gz": "distill_pass2",
                                             "acceptance.jsonl": "accept_teacher"}, "accept_teacher")
        accepted = {(r["task_id"], r["pass"]) for r in load_rows(teacher_dir / "acceptance.jsonl", "accept_teacher")
                    if r["accepted"]}
        episodes = [{**r, "accepted": (r["task_id"], r["pass"]) in accepted}
                    for p, stage in (("pass1", "distill"), ("pass2", "distill_pass2"))
                    for r in load_rows(teacher_dir / f"{p}.jsonl.gz", stage)]
        offered = [r["task_id"] for r in load_rows(teacher_dir / "pass1.jsonl.gz", "distill")]
        tasks_by_id = {t["id"]: t for t in pool}
        variants, notes = build_variants(cfg, pool, offered, teacher_rows(tasks_by_id, episodes), oracle)
    except (InputError, VariantError) as e:
        print(f"build_sft: {e}", file=sys.stderr)
        return 2
    written, listing = [], {}
    for name, rows in variants.items():
        path = out / f"{name}.jsonl"
        write_jsonl(path, rows)
        written.append(path)
        listing[name] = {"file": path.name, "sha256": sha256_file(path), **describe_variant(rows)}
        print(f"  {name}: {listing[name]['episodes']} episodes, {listing[name]['sft_rows']} SFT rows, "
              f"{listing[name]['families']}")
    write_json(out / "variants.json", {"profile": profile, "config": cfg.__dict__, **notes, "variants": listing})
    written.append(out / "variants.json")
    write_manifest(out, written, {"profile": profile, "stage": "build_sft"})
    if "shortfall" in notes:
        print(f"build_sft: note: {notes['shortfall']}")
    print(f"build_sft: {len(variants)} variants -> {out}")
    return 0


if __name__ == "__main__":
    sys.exit(run_stage("build_sft", main))
