"""Ruler 2 against the project's red team (issue 37): every exploit gets sparse reward 0 and less
decomposed reward than the oracle on every task it applies to, and every faithful paraphrase passes.

Tasks: every template x seeds 0-2 x canonical and held-out naming, from the pool each template's
split uses. One test per case, so a failure names the case; its message lists the tasks it won on.
The held-out cases (experiments.ruler_farming.redteam.holdout) are not run here: they measure generalisation once,
at the end (scripts/redteam.py).
"""
from __future__ import annotations

from functools import lru_cache

import pytest

from experiments.ruler_farming.redteam import base as R
from ccl.judge import ruler2
from experiments.ruler_farming.redteam.cases import EXPLOITS, PARAPHRASE_CASES
from ccl.world.tasks import TEMPLATES, generate_task

SEEDS = range(3)
NAMINGS = (None, "heldout")


@lru_cache(maxsize=1)
def episodes() -> tuple:
    """(task, the oracle's turns, its record, ruler 2's verdict on it) for every task of the suite."""
    out = []
    for name in sorted(TEMPLATES):
        pool = "train" if TEMPLATES[name].split == "train" else "eval"
        for seed in SEEDS:
            for rename in NAMINGS:
                task = generate_task(name, seed, pool, rename=rename)
                turns = R.oracle_turns(task)
                record = R.play(task, turns)
                out.append((task, turns, record, ruler2.judge(task, record)))
    return tuple(out)


def reward(verdict: dict) -> float:
    """The decomposed reward: the weights of the criteria passed."""
    return sum(ruler2.WEIGHTS[c] for c, passed in verdict["criteria"].items() if passed)


def where(task: dict) -> str:
    return f"{task['template']}/{task['id']}"


def test_the_suite_starts_from_passing_oracle_episodes():
    for task, _, _, verdict in episodes():
        assert verdict["success"] and reward(verdict) == pytest.approx(1.0), (where(task), verdict["reasons"])


@pytest.mark.parametrize("case", EXPLOITS, ids=lambda c: c.name)
def test_every_exploit_gets_no_sparse_reward_and_less_decomposed_reward_than_the_oracle(case):
    applied, won = 0, []
    for task, turns, record, oracle in episodes():
        new = R.case_record(case, task, turns, record)
        if new is None:
            continue
        applied += 1
        verdict = ruler2.judge(task, new)
        if verdict["success"] or reward(verdict) >= reward(oracle):
            won.append(f"{where(task)} success={verdict['success']} reward={reward(verdict):.2f}: {new['final']!r:.120}")
    assert applied > 0, f"{case.name} applies to no task of the suite"
    assert not won, f"{case.name} farmed {len(won)} of {applied} tasks:\n" + "\n".join(won[:8])


@pytest.mark.parametrize("case", PARAPHRASE_CASES, ids=lambda c: c.name)
def test_every_faithful_paraphrase_passes(case):
    applied, refused = 0, []
    for task, turns, record, _ in episodes():
        new = R.case_record(case, task, turns, record)
        if new is None:
            continue
        applied += 1
        verdict = ruler2.judge(task, new)
        if not verdict["success"]:
            refused.append(f"{where(task)} {verdict['reasons']}: {new['final']!r:.120}")
    assert applied > 0, f"{case.name} applies to no task of the suite"
    assert not refused, f"{case.name} refused on {len(refused)} of {applied} tasks:\n" + "\n".join(refused[:8])
