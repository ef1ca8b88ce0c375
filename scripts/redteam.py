"""Farm the ruler: the red team's exploits and the faithful paraphrases (ccl.judge.redteam) against the
validator's strict success, against strict success less the post-hoc audit's flags, against strict
success on the answer's normal form (ccl.judge.reading), and against that less tool-result
structure (ccl.judge.structure), recovery that answers no observed failure (ccl.judge.recovery) and
actions claimed but not done (ccl.judge.actions): the parts of ruler 2 built so far.

    python -m scripts.redteam [--seeds 6] [--out experiments/ruler_farming/farm_rates.json]

Tasks: every template x seeds 0..N-1 x two namings (canonical and the held-out renaming), from the
pool each template's split uses (seeds this small are never evaluation tasks: those start at
1,000,000). An exploit should pass on no task; a paraphrase on every task it applies to.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from ccl.artifacts.boundary import run_stage
from ccl.artifacts.jsonio import write_json
from ccl.judge.actions import action_reasons
from ccl.judge.audit_checks import audit_reasons
from ccl.judge.reading import read
from ccl.judge.recovery import recovery_reasons
from ccl.judge.redteam import EXPLOITS, PARAPHRASE_CASES, farm_judges
from ccl.judge.structure import structure_reasons
from ccl.judge.validate import validate
from ccl.world.tasks import TEMPLATES, generate_task

from .layout import ROOT


def on_reading(record: dict) -> dict:
    """The record with its final answer in ccl.judge.reading's normal form."""
    return {**record, "final": read(record["final"]).text} if isinstance(record["final"], str) else record


JUDGES = {
    "ruler1_strict": lambda task, record: validate(task, record)["success"],
    "ruler1_strict_audited": lambda task, record: (validate(task, record)["success"]
                                                   and not audit_reasons(task, record)),
    # what reading the answer first (and nothing else) changes
    "ruler1_strict_on_reading": lambda task, record: validate(task, on_reading(record))["success"],
    # the parts of ruler 2 built so far, on top: no tool-result structure (ccl.judge.structure),
    # recovery that answers an observed failure (ccl.judge.recovery), actions said and done
    # (ccl.judge.actions)
    "ruler2_parts_so_far": lambda task, record: (validate(task, on_reading(record))["success"]
                                                 and not structure_reasons(record["final"] or "", record)
                                                 and not recovery_reasons(task, record)
                                                 and not action_reasons(task, record)),
}


def tasks(seeds: int) -> list[dict]:
    out = []
    for name in sorted(TEMPLATES):
        pool = "train" if TEMPLATES[name].split == "train" else "eval"
        for seed in range(seeds):
            out += [generate_task(name, seed, pool), generate_task(name, seed, pool, rename="heldout")]
    return out


def table(results: dict[str, dict]) -> list[str]:
    judges = list(results)
    lines = [f"| case | kind | {' | '.join(judges)} | templates passed ({judges[0]}) |",
             "| --- | --- |" + " --- |" * (len(judges) + 1)]
    for case, cell in results[judges[0]].items():
        rates = " | ".join(f"{results[j][case]['passed']} of {results[j][case]['applied']}" for j in judges)
        lines.append(f"| {case} | {cell['kind']} | {rates} | {len(cell['templates_passed'])} |")
    return lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", type=int, default=6)
    ap.add_argument("--out", type=Path, default=ROOT / "experiments" / "ruler_farming" / "farm_rates.json")
    args = ap.parse_args(argv)
    todo = tasks(args.seeds)
    t0 = time.perf_counter()
    results = farm_judges(todo, JUDGES, EXPLOITS + PARAPHRASE_CASES)
    print("\n".join(table(results)))
    print(f"{len(todo)} tasks, {time.perf_counter() - t0:.1f} s")
    write_json(args.out, {"tasks": len(todo), "seeds": args.seeds, "namings": ["canonical", "heldout"],
                          "results": results})
    return 0


if __name__ == "__main__":
    sys.exit(run_stage("redteam", main))
