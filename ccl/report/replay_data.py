"""Data for the site's replay page: the failure maps and every graded decision, as JavaScript files.

Like the trace explorer's data (:mod:`.traces`), the files assign to ``window.CCL`` so the page
works opened from disk. The golden prefixes of one task are nested (each decision's messages
start with the previous decision's), so each task's longest prefix is stored once and a
decision keeps only its length; system prompts go into the shared prompt table by hash.
"""
from __future__ import annotations

from pathlib import Path

from ..artifacts.inputs import read_rows
from ..artifacts.jsonio import atomic_write_bytes, sha256_file
from ..errors import InputError
from .artifacts import Missing
from .traces import js_assign, prompt_ref


def _golden(golden_dir: Path, splits: list[str], prompts: dict[str, str]) -> tuple[dict, dict]:
    """(task -> its longest message prefix, (split, task, index) -> decision record)."""
    longest: dict[str, list[dict]] = {}
    decisions: dict[tuple[str, str, int], dict] = {}
    for split in splits:
        path = golden_dir / f"{split}.jsonl"
        if not path.is_file():
            raise InputError(f"{path}: missing; run the build_replay stage first")
        for d in read_rows(path, "build_replay"):
            msgs = [{"role": m["role"], "prompt": prompt_ref(m["content"], prompts)} if m["role"] == "system"
                    else {"role": m["role"], "content": m["content"]} for m in d["messages"]]
            have = longest.get(d["task_id"], [])
            short, long_ = sorted((have, msgs), key=len)
            if long_[:len(short)] != short:
                raise InputError(f"{path}: decision {d['task_id']} #{d['index']} does not extend the task's "
                                 f"other prefixes; rerun the build_replay stage")
            longest[d["task_id"]] = long_
            decisions[(split, d["task_id"], d["index"])] = {"n": len(msgs), "gold": d["gold"]}
    return longest, decisions


def export_replay(summary: dict | Missing, golden_dir: Path, replay_dir: Path, out: Path,
                  prompts: dict[str, str]) -> dict:
    """Write data/replay/index.js (failure maps), prefixes.js and one <config>.js of graded decisions
    per configuration of ``summary`` (results/replay_summary.json); returns the index. Nothing is
    written without the summary: the page then says which stage to run."""
    if isinstance(summary, Missing):
        atomic_write_bytes(out / "index.js", js_assign("replay", None, {"missing": summary.message(), "configs": {}}))
        atomic_write_bytes(out / "prefixes.js", js_assign("replayPrefixes", None, {}))  # the page loads it
        return {}
    main = summary["stats"]["main_splits"]
    fm = summary["failure_map"]["configs"]
    rows_by_config: dict[str, list[dict]] = {}
    splits: set[str] = set()
    for config, runs in summary["runs_per_config"].items():
        rows = []
        for run in runs:
            path = replay_dir / run / "verdicts.jsonl.gz"
            if not path.is_file():
                raise InputError(f"{path}: missing; run the replay_judge stage for {run}")
            # the heat map's counts come from the summary, the listed decisions from this file
            if summary["inputs"].get(f"replay/{run}/verdicts.jsonl.gz") != sha256_file(path):
                raise InputError(f"{path}: not the file results/replay_summary.json was computed from; "
                                 f"run the analyze_replay stage first")
            rows += [{"run": run, "split": r["dataset"], **{k: r[k] for k in (
                "task_id", "index", "kind", "ready_tools", "verdict", "strict", "text")}}
                for r in read_rows(path, "replay_judge") if r["dataset"] in main]
        rows_by_config[config] = rows
        splits |= {r["split"] for r in rows}
    longest, decisions = _golden(golden_dir, sorted(splits), prompts)
    index = {"final": summary["failure_map"]["final_label"], "note": summary["failure_map"]["note"], "configs": {}}
    for config, rows in rows_by_config.items():
        for r in rows:
            key = (r["split"], r["task_id"], r["index"])
            if key not in decisions:
                raise InputError(f"{replay_dir}: {r['run']} graded {r['task_id']} #{r['index']} ({r['split']}), "
                                 f"which the golden set no longer holds; rerun replay for {r['run']}")
            r.update(decisions[key])
        atomic_write_bytes(out / f"{config}.js", js_assign("replayRows", config, rows))
        index["configs"][config] = {"file": f"data/replay/{config}.js", "runs": summary["runs_per_config"][config],
                                    "decisions": len(rows), "map": fm.get(config)}
    atomic_write_bytes(out / "prefixes.js", js_assign("replayPrefixes", None, longest))
    atomic_write_bytes(out / "index.js", js_assign("replay", None, index))
    return index
