"""Stage expert_coverage: how far the any-state expert reaches (issue 40; ``ccl.learn.coverage``).

Every template, in its three namings, at the seeds of ``SEEDS``: each scripted deviation
(``ccl.learn.deviations``) at each of the oracle's decisions, then the expert to the end, judged by
ruler 2. Writes the table per template family and per deviation; no model, a few seconds.
"""
from __future__ import annotations

from pathlib import Path

from ..artifacts.jsonio import write_json
from ..learn.coverage import coverage_table, probes
from ..learn.deviations import DEVIATIONS
from ..world.tasks import TEMPLATES, generate_task

SEEDS = (0, 1, 2)
NAMINGS = (None, "train", "heldout")


def run(out: Path) -> dict:
    found = []
    for name in sorted(TEMPLATES):
        pool = "train" if TEMPLATES[name].split == "train" else "eval"
        for seed in SEEDS:
            for rename in NAMINGS:
                found += probes(generate_task(name, seed, pool, rename=rename))
    table = {"templates": len(TEMPLATES), "seeds": list(SEEDS), "namings": [n or "canonical" for n in NAMINGS],
             "deviations": list(DEVIATIONS), **coverage_table(found)}
    write_json(out, table)
    return table
