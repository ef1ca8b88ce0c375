"""The power analysis of the primary contrasts: exact McNemar power, hand-worked, and the stage's record."""
from __future__ import annotations

import json

import numpy as np
import pytest
import yaml

from ccl.stats.power import Design, mde, power, rejection_counts


def test_rejection_counts_hand_worked():
    # 10 discordant pairs, alpha 0.05: p(k=0) = 2/1024, p(k=1) = 2 * 11/1024 = 0.021, p(k=2) = 2 * 56/1024 = 0.11
    assert np.flatnonzero(rejection_counts(10, 0.05)).tolist() == [0, 1, 9, 10]
    # one discordant pair can never be significant: p = 1
    assert not rejection_counts(1, 0.5).any()


def test_power_hand_worked_two_tasks():
    # n = 2, psi = 0.5, delta = 0.5: every discordant task is won by a. D = 2 with probability 1/4,
    # and only then can the test reject (p = 2 * 1/4 = 0.5 <= 0.6); D = 1 gives p = 1.
    assert power(2, 0.5, 0.5, 0.6) == pytest.approx(0.25)
    assert power(2, 0.5, 0.5, 0.4) == 0.0  # p = 0.5 > 0.4 even when both pairs go a's way


def test_power_extremes_and_size():
    assert power(10, 1.0, 1.0, 0.05) == pytest.approx(1.0)  # all ten pairs won by a: p = 0.002
    assert power(50, 0.3, 0.0, 0.05) <= 0.05  # no effect: the exact test keeps its level
    with pytest.raises(ValueError, match="delta"):
        power(10, 0.1, 0.2, 0.05)


def test_mde_grows_with_reverse_share_and_shrinks_with_tasks():
    d = Design(160, 0.05 / 3)
    values = [mde(d, q) for q in (0.0, 0.05, 0.1)]
    assert values == sorted(values) and len(set(values)) == 3
    assert mde(Design(320, 0.05 / 3), 0.05) < values[1]
    # issue 22's arithmetic: 160 tasks, 3 contrasts, 20% discordant pairs -> about 12 points
    # (psi = 0.2 at delta 0.12 means q = 0.04)
    assert 0.10 <= mde(d, 0.04) <= 0.13
    # the reported MDE reaches the power and the grid step below it does not
    m = values[1]
    assert power(160, m + 0.1, m, d.alpha) >= 0.8 > power(160, m - 0.005 + 0.1, m - 0.005, d.alpha)


def test_design_rejects_nonsense():
    with pytest.raises(ValueError, match="n must be"):
        Design(0, 0.05)
    with pytest.raises(ValueError, match="alpha and power"):
        Design(10, 1.5)


def test_power_stage_reads_the_design(tmp_path):
    from ccl.stages import power as stage

    tasks = tmp_path / "tasks"
    tasks.mkdir()
    for split, n in (("eval_id", 30), ("eval_renamed", 12)):
        (tasks / f"{split}.jsonl").write_text("".join(json.dumps({"id": f"{split}{i}"}) + "\n" for i in range(n)))
    params = {"profile": "cpu", "runs": ["B_s0", "B_s1", "C_s0", "C_s1", "C_matched_s0", "Dmix_s0"],
              "evaluate": {"splits": ["eval_id", "eval_renamed"], "max_tasks_per_split": {"eval_id": 20}},
              "analyze": {}, "power": {}}
    path = tmp_path / "params.yaml"
    path.write_text(yaml.safe_dump(params))
    rec = stage.run(path, None, tasks)
    assert rec["tasks"] == {"eval_id": 20, "eval_renamed": 12} and rec["n"] == 32  # the cap, then the file's size
    rows = {r["contrast"]: r for r in rec["contrasts"]}
    assert rows["C_vs_A_base"]["alpha"] == round(0.05 / 3, 6) and rows["C_vs_A_base"]["component_power"] == 0.8
    assert rows["Dmix_vs_best_single"]["component_power"] == 0.9  # two comparators: 1 - 0.2 / 2
    assert rows["B_vs_C_matched"]["seeds"] == {"B": 2, "C_matched": 1}
    assert rows["C_vs_A_base"]["mde"] == mde(Design(32, 0.05 / 3), 0.05)
    assert not rec["all_meet_target"]  # 32 tasks cannot detect 15 points
    assert [c["reverse_share"] for c in rec["curve"]] == [0.0, 0.025, 0.05, 0.075, 0.1]


def test_power_stage_refuses_a_primary_split_that_is_not_evaluated(tmp_path):
    from ccl.errors import InputError
    from ccl.stages import power as stage

    path = tmp_path / "params.yaml"
    path.write_text(yaml.safe_dump({"profile": "cpu", "evaluate": {"splits": ["eval_id"]}, "analyze": {}}))
    with pytest.raises(InputError, match="primary split eval_renamed is not evaluated"):
        stage.run(path, None, tmp_path)
