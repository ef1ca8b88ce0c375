"""Does a fresh clone rebuild what the locks record? The check CI runs (issue 54).

    python -m scripts.fresh_clone_check [--source DIR] [--stage PIPELINE:STAGE ...] [--keep DIR]

In a temporary clone of ``--source``'s committed HEAD (an empty DVC cache, as a new user has):

1. ``dvc status`` of both pipelines may list only what an empty cache explains: an output not in the
   cache, or a dependency that is (or holds) an output of some stage missing from the workspace. A changed
   command, a changed params value, or a changed code or git-tracked data dependency is a problem: the
   lock no longer records what the repository would run.
2. Every model-free stage (``MODEL_FREE``, or those ``--stage`` names) is rebuilt in pipeline order with
   ``dvc repro --single-item --force``, and each of its outputs is compared with the hash the committed
   lock records. A difference names the stage and the file; inside a folder output, the files whose
   SHA-256 differs from a committed ``manifest.json`` are named too.

Exit status 1 with one line per problem, 0 when the clone matches. Needs no model and no network.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from ccl.artifacts.dvc_lock import locked_stages, overlapping
from ccl.artifacts.jsonio import sha256_file

ROOT = Path(__file__).resolve().parents[1]
PIPELINES = ("dvc.yaml", "study2/dvc.yaml", "scale/dvc.yaml", "study3/dvc.yaml")

# Stages that run no model: rebuilt from what git holds, in dependency order. Each must reproduce the bytes
# its lock records on any machine (data, tasks and transcripts are hardware-independent).
MODEL_FREE = (
    "dvc.yaml:build_datasets", "dvc.yaml:accept_teacher", "dvc.yaml:accept_teacher_ruler2", "dvc.yaml:build_sft",
    "dvc.yaml:export_sft", "dvc.yaml:dpo_pairs", "dvc.yaml:bfcl_sample", "dvc.yaml:build_replay", "dvc.yaml:power",
    "study2/dvc.yaml:fresh_pool", "study2/dvc.yaml:rebuild_c", "study2/dvc.yaml:power",
    "scale/dvc.yaml:build_c", "scale/dvc.yaml:arm_tasks", "scale/dvc.yaml:cplus_data",
    "study3/dvc.yaml:fresh_pool", "study3/dvc.yaml:power",
)
# dvc status's words for what an empty cache explains
CACHE_ABSENT = {"not in cache", "deleted"}


@dataclass(frozen=True)
class Problem:
    stage: str  # pipeline:stage
    path: str
    what: str

    def __str__(self) -> str:
        return f"{self.stage}: {self.path}: {self.what}"


def run(cmd: list[str], cwd: Path) -> subprocess.CompletedProcess:
    # the environment's own python first on PATH: the stages' commands say `python -m scripts...`
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    return subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)


def clone(source: Path, into: Path) -> Path:
    r = run(["git", "clone", "--quiet", "--no-hardlinks", str(source), str(into)], cwd=source)
    if r.returncode:
        raise SystemExit(f"fresh_clone_check: git clone of {source} failed: {r.stderr.strip()}")
    return into


def lock_outs(root: Path, pipeline: str) -> dict[str, dict[str, str]]:
    """stage -> {output path: recorded md5} from ``pipeline``'s lock file in ``root``."""
    return {name: {o["path"]: o.get("md5", "") for o in body.get("outs", [])}
            for name, body in locked_stages(root, pipeline).items()}


def absent_outputs(root: Path) -> set[str]:
    """Every output either lock records (foreach items resolved, as DVC wrote them) missing from ``root``."""
    return {p for pipeline in PIPELINES for paths in lock_outs(root, pipeline).values() for p in paths
            if not (root / p).exists()}


def status_problems(root: Path, pipeline: str, absent: set[str]) -> list[Problem]:
    """What ``dvc status`` lists for ``pipeline`` that an empty cache does not explain."""
    r = run([sys.executable, "-m", "dvc", "status", "--json", pipeline], cwd=root)
    if r.returncode:
        return [Problem(pipeline, "-", f"dvc status failed: {r.stderr.strip()[-300:]}")]
    problems = []
    for stage, entries in (json.loads(r.stdout or "{}")).items():
        for entry in entries:
            if isinstance(entry, str):  # "changed checksum", "changed command", "always changed"
                problems.append(Problem(stage, "-", entry))
                continue
            for kind, paths in entry.items():
                problems += _entry_problems(stage, kind, paths, absent)
    return problems


def _entry_problems(stage: str, kind: str, paths: dict, absent: set[str]) -> list[Problem]:
    out = []
    for path, state in paths.items():
        if isinstance(state, dict):  # a params file: {key: "modified" | "new" | "deleted"}
            out += [Problem(stage, f"{path}:{key}", f"params {v}") for key, v in state.items()]
        elif kind == "changed outs" and state in CACHE_ABSENT:
            continue
        elif kind == "changed deps" and (state in CACHE_ABSENT or state == "modified") and overlapping(path, absent):
            continue  # an upstream output the empty cache lacks, or a folder holding one
        else:
            out.append(Problem(stage, path, f"{kind.removeprefix('changed ')} {state}"))
    return out


def rebuild(root: Path, stages: list[str]) -> list[Problem]:
    """Rerun ``stages`` in ``root`` (in order) through DVC; a failed command is a problem."""
    problems = []
    for target in stages:
        r = run([sys.executable, "-m", "dvc", "repro", "--single-item", "--force", target], cwd=root)
        if r.returncode:
            tail = (r.stderr or r.stdout).strip().splitlines()[-3:]
            problems.append(Problem(target, "-", "rebuild failed: " + " | ".join(tail)))
    return problems


def output_problems(root: Path, recorded: dict[str, dict[str, dict[str, str]]], stages: list[str]) -> list[Problem]:
    """Each rebuilt stage's outputs against the hashes the committed lock recorded."""
    problems = []
    for target in stages:
        pipeline, stage = target.split(":")
        now = lock_outs(root, pipeline).get(stage, {})
        for path, md5 in recorded[pipeline].get(stage, {}).items():
            if now.get(path) == md5:
                continue
            files = differing_files(root, path)
            where = f" (differs: {', '.join(files)})" if files else ""
            problems.append(Problem(target, path, f"rebuilt bytes differ from the lock: md5 {md5} -> "
                                                  f"{now.get(path, 'not written')}{where}"))
    return problems


def differing_files(root: Path, output: str) -> list[str]:
    """Files under folder output ``output`` whose SHA-256 differs from a committed manifest listing them."""
    folder = root / output
    if not folder.is_dir():
        return []
    found = []
    for manifest in _committed_manifests(root, output):
        base = (root / manifest).parent
        listed = json.loads(run(["git", "show", f"HEAD:{manifest}"], cwd=root).stdout)["files"]
        for rel, entry in listed.items():
            path = base / rel
            if folder in path.parents and path.is_file() and sha256_file(path) != entry["sha256"]:
                found.append(path.relative_to(root).as_posix())
    return sorted(set(found))


def _committed_manifests(root: Path, output: str) -> list[str]:
    """Committed manifest.json files that can list ``output``'s files: in it, or in a folder above it."""
    tracked = run(["git", "ls-files", "*manifest.json"], cwd=root).stdout.split()
    out = PurePosixPath(output)
    return [m for m in tracked if PurePosixPath(m).parent in (out, *out.parents) or out in PurePosixPath(m).parents]


def check(source: Path, stages: list[str], workdir: Path) -> list[Problem]:
    root = clone(source, workdir / "clone")
    recorded = {p: lock_outs(root, p) for p in PIPELINES}
    absent = absent_outputs(root)
    problems = [p for pipeline in PIPELINES for p in status_problems(root, pipeline, absent)]
    problems += rebuild(root, stages)
    problems += output_problems(root, recorded, stages)
    return problems


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--source", type=Path, default=ROOT, help="the repository whose HEAD is cloned (default: this one)")
    ap.add_argument("--stage", action="append", default=None, metavar="PIPELINE:STAGE",
                    help=f"rebuild only these (default: every model-free stage, {len(MODEL_FREE)})")
    ap.add_argument("--keep", type=Path, default=None, help="clone into this empty folder and keep it")
    args = ap.parse_args(argv)
    stages = args.stage or list(MODEL_FREE)
    unknown = [s for s in stages if s.count(":") != 1 or s.split(":")[0] not in PIPELINES]
    if unknown:
        ap.error(f"--stage {unknown[0]!r}: write it as PIPELINE:STAGE with PIPELINE one of {', '.join(PIPELINES)}")
    if args.keep:
        args.keep.mkdir(parents=True, exist_ok=True)
        problems = check(args.source.resolve(), stages, args.keep)
    else:
        with tempfile.TemporaryDirectory(prefix="fresh_clone_") as tmp:
            problems = check(args.source.resolve(), stages, Path(tmp))
    for p in problems:
        print(f"fresh_clone_check: {p}")
    print(f"fresh_clone_check: {len(stages)} model-free stage(s) rebuilt; "
          f"{'no problem' if not problems else f'{len(problems)} problem(s)'}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
