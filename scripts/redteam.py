"""Farm the ruler: the red team's exploits and faithful paraphrases (experiments.ruler_farming.redteam) against
ruler 1's strict success, ruler 2 (ccl.judge.ruler2) and ruler 3 (ccl.judge.ruler3: each one's sparse
reward, and the mean of its decomposed reward), one table per set: rounds 1 and 2 (``results``), their
held-out set (``holdout``), round 3 written after ruler 2 by a reviewer who did not write ruler 3
(``round3``, its development part) and round 3's held-out part (``round3_holdout``, never read by ruler 3's
author).

    python -m scripts.redteam [--seeds 6] [--out experiments/ruler_farming/farm_rates.json]

Tasks: every template x seeds 0..N-1 x two namings (canonical and the held-out renaming), from the
pool each template's split uses (seeds this small are never evaluation tasks: those start at
1,000,000). An exploit should pass on no task; a paraphrase on every task it applies to. The
held-out cases are printed by name only (their names say the class, not the words), so that running
this does not show a ruler's author what they say.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Callable

from ccl.artifacts.boundary import run_stage
from ccl.artifacts.jsonio import write_json
from experiments.ruler_farming.redteam import holdout as redteam_holdout
from experiments.ruler_farming.redteam import round3, round3_holdout
from experiments.ruler_farming.redteam.base import farm_judges, tasks
from experiments.ruler_farming.redteam.cases import EXPLOITS, PARAPHRASE_CASES
from ccl.judge.codes import WEIGHTS
from ccl.judge.ruler2 import judge as ruler2_judge
from ccl.judge.ruler3 import judge as ruler3_judge
from ccl.judge.validate import validate

from .layout import ROOT

REWARD, REWARD3 = "ruler2_mean_reward", "ruler3_mean_reward"
REWARDS = (REWARD, REWARD3)


class Cached:
    """A ruler's verdict on the episode last judged, kept so that its sparse and its decomposed reward
    read one verdict (each case's episode is judged once per ruler, not once per column)."""

    def __init__(self, judge: Callable[[dict, dict], dict]) -> None:
        self._judge, self._key, self._verdict = judge, None, {}

    def verdict(self, task: dict, record: dict) -> dict:
        key = (task["id"], id(record))
        if key != self._key:
            self._key, self._verdict = key, self._judge(task, record)
        return self._verdict

    def sparse(self, task: dict, record: dict) -> bool:
        return self.verdict(task, record)["success"]

    def decomposed(self, task: dict, record: dict) -> float:
        return sum(WEIGHTS[c] for c, passed in self.verdict(task, record)["criteria"].items() if passed)


def judges() -> dict:
    ruler2, ruler3 = Cached(ruler2_judge), Cached(ruler3_judge)
    return {"ruler1_strict": lambda task, record: validate(task, record)["success"],
            "ruler2": ruler2.sparse, REWARD: ruler2.decomposed, "ruler3": ruler3.sparse, REWARD3: ruler3.decomposed}


def _rate(cell: dict, mean: bool) -> str:
    if mean:
        return f"{cell['passed'] / cell['applied']:.3f}" if cell["applied"] else "-"
    return f"{cell['passed']} of {cell['applied']}"


def table(results: dict[str, dict]) -> list[str]:
    """A markdown table: per case, each column's passes (the reward column: its mean)."""
    columns = list(results)
    lines = [f"| case | kind | {' | '.join(columns)} | templates passed ({columns[0]}) |",
             "| --- | --- |" + " --- |" * (len(columns) + 1)]
    for case, cell in results[columns[0]].items():
        rates = " | ".join(_rate(results[j][case], j in REWARDS) for j in columns)
        lines.append(f"| {case} | {cell['kind']} | {rates} | {len(cell['templates_passed'])} |")
    return lines


def rounded(results: dict[str, dict]) -> dict[str, dict]:
    """The reward column's sums rounded (a sum of float weights is not exact in its last digits)."""
    return {j: {k: {**v, "passed": round(v["passed"], 6)} if j in REWARDS else v for k, v in table_.items()}
            for j, table_ in results.items()}


def by_kind(results: dict[str, dict]) -> dict[str, dict]:
    """Per kind of case (the issue's classes; ``paraphrase`` for faithful answers, ``reference`` for the
    oracle): the cases, the episodes they applied to and how many each sparse column passed."""
    sparse = [j for j in results if j not in REWARDS]
    out: dict[str, dict] = {}
    for case, cell in results[sparse[0]].items():
        row = out.setdefault(cell["kind"], {"cases": 0, "applied": 0, **{j: 0 for j in sparse}})
        row["cases"] += 1
        row["applied"] += cell["applied"]
        for j in sparse:
            row[j] += results[j][case]["passed"]
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", type=int, default=6)
    ap.add_argument("--out", type=Path, default=ROOT / "experiments" / "ruler_farming" / "farm_rates.json")
    args = ap.parse_args(argv)
    todo = tasks(args.seeds)
    t0 = time.perf_counter()
    sets = {"results": EXPLOITS + PARAPHRASE_CASES, "holdout": redteam_holdout.EXPLOITS + redteam_holdout.PARAPHRASE_CASES,
            "round3": round3.ROUND3_EXPLOITS + round3.ROUND3_PARAPHRASES,
            "round3_holdout": round3_holdout.EXPLOITS + round3_holdout.PARAPHRASES}
    out = {}
    for name, cases in sets.items():
        out[name] = rounded(farm_judges(todo, judges(), cases))
        print(f"\n{name}{' (names only)' if 'holdout' in name else ''}:\n" + "\n".join(table(out[name])))
        out[f"{name}_by_kind"] = by_kind(out[name])
    print(f"{len(todo)} tasks, {time.perf_counter() - t0:.1f} s")
    write_json(args.out, {"tasks": len(todo), "seeds": args.seeds, "namings": ["canonical", "heldout"],
                          "columns": {"ruler1_strict": "passed of applied", "ruler2": "passed of applied",
                                      "ruler3": "passed of applied",
                                      REWARD: "sum of ruler 2's decomposed reward over the tasks applied (mean: / applied)",
                                      REWARD3: "the same for ruler 3"},
                          **out})
    return 0


if __name__ == "__main__":
    sys.exit(run_stage("redteam", main))
