"""Stage build_replay: freeze the golden decision points of the profile's evaluation tasks.

For the tasks episode evaluation runs (the profile's splits, the first ``max_tasks_per_split``
of each; of those, the first ``replay_tasks_per_split``), every decision point of the oracle's
episode goes to ``replay/<split>.jsonl`` (:func:`ccl.replay.decisions.decisions`). The manifest records each golden file's SHA-256 beside its
task file's: a golden file that changes while its task file does not means the runtime or
the oracle changed what the model is shown or what counts as right, which would silently
move every replay number, so the stage stops instead (``refreeze`` accepts the change).
"""
from __future__ import annotations

from pathlib import Path

from ..artifacts.inputs import read_record, split_rows
from ..artifacts.jsonio import atomic_write_bytes, jsonl_bytes, sha256_bytes, sha256_file
from ..artifacts.manifest import MANIFEST, write_manifest
from ..config import load_params, stage_config
from ..episode.evaluate_config import EvaluateConfig, replay_cap
from ..replay.decisions import ReplayError, decisions


def run(params: Path, profile: str | None, data: Path, out: Path, refreeze: bool = False) -> dict:
    """Write ``out/<split>.jsonl`` for each evaluation split and ``out/manifest.json``; return the manifest."""
    cfg, profile = stage_config(load_params(params), "evaluate", EvaluateConfig, profile, where=str(params))
    old = read_record(out / MANIFEST, "build_replay").get("splits", {}) if (out / MANIFEST).is_file() else {}
    splits: dict[str, dict] = {}
    bodies: dict[str, bytes] = {}
    files = []
    for split in cfg.splits:
        tasks_file = data / "tasks" / f"{split}.jsonl"
        tasks = split_rows(data / "tasks", split)[: replay_cap(cfg, split)]
        golden = [d for t in tasks for d in decisions(t)]
        body = jsonl_bytes(golden, compress=False)  # the bytes written below
        entry = {"tasks_sha256": sha256_file(tasks_file), "golden_sha256": sha256_bytes(body),
                 "max_tasks": replay_cap(cfg, split), "tasks": len(tasks), "decisions": len(golden)}
        was = old.get(split)
        same_tasks = was and all(was.get(k) == entry[k] for k in ("tasks_sha256", "max_tasks"))
        if not refreeze and same_tasks and was["golden_sha256"] != entry["golden_sha256"]:
            raise ReplayError(f"{out / f'{split}.jsonl'}: the golden decisions changed although {tasks_file} did not "
                              f"(the runtime or the oracle changed what a decision shows or accepts); if that is "
                              f"intended, rerun with --refreeze, else undo the change")
        splits[split], bodies[split] = entry, body
    for split, body in bodies.items():  # written only once every split passed the check
        atomic_write_bytes(out / f"{split}.jsonl", body)
        files.append(out / f"{split}.jsonl")
    for stale in out.glob("*.jsonl"):  # another profile's splits
        if stale not in files:
            stale.unlink()
    return write_manifest(out, files, {"stage": "build_replay", "profile": profile, "splits": splits})
