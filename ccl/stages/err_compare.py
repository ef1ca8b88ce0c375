"""Stage err_compare: the validation replay set before and after (issue 40; ``ccl.learn.errors``).

Grades every val_replay run, and compares each with C's per coordinate (decision kind x tool) on the
map half, whose failures chose the error round's data, and on the held-out half, which chose nothing.
Writes ``results/learn/err_clusters.json``.
"""
from __future__ import annotations

from pathlib import Path

from ..artifacts.inputs import read_record
from ..artifacts.jsonio import write_json
from ..learn.errors import HELDOUT, MAP, cluster_changes
from ..records import ReplayVerdict
from .err_data import graded


def _pass(rows: list[dict], half: str) -> dict:
    mine = [r for r in rows if r["half"] == half]
    return {"decisions": len(mine), "passed": sum(r["verdict"] == ReplayVerdict.PASS for r in mine)}


def run(data: Path, runs: Path, reference: str, names: list[str], failure_map: Path, out: Path) -> dict:
    targets = set(read_record(failure_map, "err_data")["targets"])
    before = graded(data, runs / reference / "actions.jsonl.gz")
    result = {"reference": reference, "targets": sorted(targets),
              "overall": {reference: {h: _pass(before, h) for h in (MAP, HELDOUT)}}, "by_coordinate": {}}
    for name in names:
        after = graded(data, runs / name / "actions.jsonl.gz")
        result["overall"][name] = {h: _pass(after, h) for h in (MAP, HELDOUT)}
        result["by_coordinate"][name] = cluster_changes(before, after, targets)
    write_json(out, result)
    return result
