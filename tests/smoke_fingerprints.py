"""SHA-256 of the smoke chain's outputs, to show a refactor changes no byte of them.

    python tests/smoke_fingerprints.py STUDY_ROOT [tests/fixtures/smoke_fingerprints.json] > new.json

With an existing fixture, its entries for other CPU signatures are kept and this CPU's entry
is replaced.

STUDY_ROOT is a repository-shaped smoke study (the ``smoke_study`` fixture of conftest.py;
keep it with ``pytest --basetemp DIR``). Two groups, because the brief's byte-stability
claim differs between them:
- ``portable``: tasks, oracle SFT rows, the teacher's greedy transcripts, acceptance, the
  training sets and the oracle's transcripts and verdicts. Hardware-independent.
- ``cpu_bound``: the adapter and the trained run's transcripts and verdicts. Floating-point
  sums of training differ between CPU generations (AVX2 vs AVX-512), so these are compared
  only on a CPU whose signature has a record (``cpu_bound_by_cpu``). The AVX2 record made
  before trainer round 2 (commit c8c28e9, which changed training's summation order) was
  dropped: no AVX2 machine was at hand to re-record it, so the check skips there.
Files that carry wall times (summaries, generation.json, step logs) are left out.
"""
from __future__ import annotations

import hashlib
import json
import platform
import sys
from pathlib import Path

PORTABLE = (
    "data/v1/tasks/train_pool.jsonl", "data/v1/tasks/val_pool.jsonl", "data/v1/tasks/eval_id.jsonl",
    "data/v1/tasks/eval_ood.jsonl", "data/v1/tasks/eval_unseen.jsonl", "data/v1/tasks/eval_renamed.jsonl",
    "data/v1/tasks/eval_catalog_0.jsonl", "data/v1/tasks/eval_catalog_5.jsonl",
    "data/v1/tasks/eval_catalog_12.jsonl", "data/v1/manifest.json", "data/v1/sft/oracle_train.jsonl", "data/v1/sft/oracle_val.jsonl",
    "data/v1/leakage_audit.json",
    "data/v1/teacher/pass1.jsonl.gz", "data/v1/teacher/pass2.jsonl.gz", "data/v1/teacher/acceptance.jsonl",
    "data/v1/variants/B.jsonl", "data/v1/variants/C.jsonl", "data/v1/variants/C_matched.jsonl",
    "data/v1/variants/C_25.jsonl", "data/v1/variants/C_50.jsonl", "data/v1/variants/C_full.jsonl",
    "data/v1/variants/Dmix.jsonl", "data/v1/variants/Dseq.jsonl", "data/v1/variants/variants.json",
    "results/runs/oracle/episodes.jsonl.gz", "results/runs/oracle/verdicts.jsonl.gz",
)
CPU_BOUND = (
    "runs/C_s0/adapter/adapter_model.safetensors", "runs/C_s0/adapter/adapter_config.json", "runs/C_s0/config.json",
    "results/runs/C_s0/episodes.jsonl.gz", "results/runs/C_s0/verdicts.jsonl.gz",
)


def cpu_vendor() -> str:
    """The CPU's vendor (Linux: /proc/cpuinfo's vendor_id): the math libraries take other kernels on
    Intel and AMD at the same instruction-set level (measured: an Intel Xeon with AVX-512 trained the
    smoke adapter to other bytes than the AMD Zen 4 the record was made on)."""
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.is_file():
        for line in cpuinfo.read_text(errors="replace").splitlines():
            if line.startswith("vendor_id"):
                return line.split(":", 1)[1].strip()
    return platform.processor() or "unknown"


def cpu_signature() -> str:
    """What decides float sums in training: the machine, torch's kernel level, the CPU vendor, the threads."""
    import torch

    return (f"{platform.machine()} {torch.backends.cpu.get_cpu_capability()} {cpu_vendor()} "
            f"threads={torch.get_num_threads()}")


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def fingerprints(root: Path) -> dict:
    return {"portable": {rel: sha256(root / rel) for rel in PORTABLE},
            "cpu": cpu_signature(),
            "cpu_bound": {rel: sha256(root / rel) for rel in CPU_BOUND}}


def fixture(root: Path, previous: dict | None = None) -> dict:
    """The fixture file's content: the portable hashes and, per CPU signature, the CPU-bound ones."""
    got = fingerprints(root)
    by_cpu = dict((previous or {}).get("cpu_bound_by_cpu", {}))
    by_cpu[got["cpu"]] = got["cpu_bound"]
    return {"portable": got["portable"], "cpu_bound_by_cpu": by_cpu}


if __name__ == "__main__":
    old = json.loads(Path(sys.argv[2]).read_text()) if len(sys.argv) > 2 else None
    print(json.dumps(fixture(Path(sys.argv[1]), old), indent=1, sort_keys=True))
