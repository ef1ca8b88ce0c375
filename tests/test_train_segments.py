"""DAgger's shared schedule (issue 40): a run may train one segment of the recipe's steps, continuing the
previous segment's run; over unchanged rows the segments are the one-piece run, bit for bit."""
from __future__ import annotations

import pytest
from train_fixtures import TINY, Crash, oracle_rows, run

from ccl.artifacts.jsonio import read_json, read_jsonl, write_jsonl
from ccl.config import ConfigError
from ccl.stages.train import dagger_segment
from ccl.train.errors import TrainingError
from ccl.train.recipe import TrainRecipe, learning_rate
from ccl.train.run import Segment
from ccl.vocabulary import Run


def test_segments_of_one_schedule_over_unchanged_data_train_the_one_piece_run(tiny_model, data_dir, tmp_path):
    """DAgger's iterations share one schedule: segment 1 of 2 trains steps 0-2 (TINY has 6) and leaves its
    state; segment 2 continues it to step 6. Over the same rows that is the one-piece run, bit for bit."""
    whole = run(tiny_model, data_dir, tmp_path / "a")
    first = run(tiny_model, data_dir, tmp_path / "b", name=Run("C_dagger_i1", 0), segment=Segment(1, 2))
    i1 = tmp_path / "b" / "runs" / "C_dagger_i1_s0"
    assert (first["steps"], first["segment"]) == (3, "1/2") and (i1 / "continuation" / "checkpoint.pt").exists()
    assert [r["step"] for r in read_jsonl(i1 / "train_log.jsonl")] == [0, 1, 2]
    second = run(tiny_model, data_dir, tmp_path / "b", name=Run("C_dagger", 0), segment=Segment(2, 2, i1))
    assert second["adapter_sha256"] == whole["adapter_sha256"] and second["val_loss"] == whole["val_loss"]
    assert (second["steps"], second["val_loss_before"]) == (6, whole["val_loss_before"])
    log_whole = list(read_jsonl(tmp_path / "a" / "runs" / "C_s0" / "train_log.jsonl"))
    log_second = list(read_jsonl(tmp_path / "b" / "runs" / "C_dagger_s0" / "train_log.jsonl"))
    assert [(r["step"], r["loss"], r["lr"]) for r in log_second] == [(r["step"], r["loss"], r["lr"]) for r in log_whole]
    assert read_json(tmp_path / "b" / "runs" / "C_dagger_s0" / "config.json")["segment"] == [2, 2]
    assert "segment" not in read_json(tmp_path / "a" / "runs" / "C_s0" / "config.json")  # one-piece runs unchanged


def test_a_later_segment_on_new_rows_continues_the_schedule_and_refuses_a_foreign_start(tiny_model, data_dir,
                                                                                          tmp_path):
    more = tmp_path / "more.jsonl"
    write_jsonl(more, list(read_jsonl(data_dir / "variants" / "C.jsonl")) + oracle_rows(["sel_fx"], range(3)))
    run(tiny_model, data_dir, tmp_path, name=Run("C_dagger_i1", 0), segment=Segment(1, 2))
    i1 = tmp_path / "runs" / "C_dagger_i1_s0"
    for wrong, match in ((dict(seed=1), "differs from this one in seed"),
                         (dict(recipe=TrainRecipe(**{**TINY.__dict__, "lr": 5e-3})), "differs from this one in recipe"),
                         (dict(segment=Segment(2, 3, i1)), r"segment \[1, 2\] \(expected \[1, 3\]\)"),
                         (dict(segment=Segment(2, 2, tmp_path / "runs" / "nothing")), "no finished run")):
        kw = {"name": Run("C_dagger", 0), "train_file": more, "segment": Segment(2, 2, i1), **wrong}
        with pytest.raises(TrainingError, match=match):
            run(tiny_model, data_dir, tmp_path / "x", **kw)
    done = run(tiny_model, data_dir, tmp_path, name=Run("C_dagger", 0), train_file=more, segment=Segment(2, 2, i1))
    log = list(read_jsonl(tmp_path / "runs" / "C_dagger_s0" / "train_log.jsonl"))
    assert [r["step"] for r in log] == list(range(6)) and done["episodes"] == 15
    assert [r["lr"] for r in log] == [learning_rate(k, TINY) for k in range(6)]  # one schedule across segments
    with pytest.raises(TrainingError, match="first continues none"):
        Segment(1, 2, i1)
    with pytest.raises(TrainingError, match="1 <= index <= count"):
        Segment(3, 2, i1)


def test_a_crash_inside_a_later_segment_resumes_to_the_same_adapter(tiny_model, data_dir, tmp_path):
    """Segment 2 of 2 (steps 3-5) killed after step 4: its own checkpoint (step 3 is a multiple of
    checkpoint_every) resumes it, and the log keeps segment 1's lines once."""
    run(tiny_model, data_dir, tmp_path / "a", name=Run("C_dagger_i1", 0), segment=Segment(1, 2))
    straight = run(tiny_model, data_dir, tmp_path / "a", name=Run("C_dagger", 0),
                   segment=Segment(2, 2, tmp_path / "a" / "runs" / "C_dagger_i1_s0"))
    run(tiny_model, data_dir, tmp_path / "b", name=Run("C_dagger_i1", 0), segment=Segment(1, 2))
    i1 = tmp_path / "b" / "runs" / "C_dagger_i1_s0"

    def crash_at_5(_, done, total):
        if done == 5:
            raise Crash

    with pytest.raises(Crash):
        run(tiny_model, data_dir, tmp_path / "b", name=Run("C_dagger", 0), segment=Segment(2, 2, i1), progress=crash_at_5)
    resumed = run(tiny_model, data_dir, tmp_path / "b", name=Run("C_dagger", 0), segment=Segment(2, 2, i1))
    assert resumed["adapter_sha256"] == straight["adapter_sha256"]
    log = list(read_jsonl(tmp_path / "b" / "runs" / "C_dagger_s0" / "train_log.jsonl"))
    assert [r["step"] for r in log] == list(range(6))


def test_dagger_iterations_name_their_segments_from_params(tmp_path):
    params = tmp_path / "params.yaml"
    params.write_text("""profile: smoke
dagger_iterations:
  - {iteration: 1, policy: C_s0, run: C_dagger_i1_s0, base: a.jsonl}
  - {iteration: 2, policy: C_dagger_i1_s0, run: C_dagger_s0, base: b.jsonl}
""")
    first = dagger_segment(params, "C_dagger_i1_s0", 1, tmp_path / "runs")
    assert (first.index, first.count, first.previous, first.leave_state) == (1, 2, None, True)
    second = dagger_segment(params, "C_dagger_s0", 2, tmp_path / "runs")
    assert (second.index, second.previous) == (2, tmp_path / "runs" / "C_dagger_i1_s0")
    with pytest.raises(ConfigError, match="trains 'C_dagger_s0', not 'C_dagger_i1_s0'"):
        dagger_segment(params, "C_dagger_i1_s0", 2, tmp_path / "runs")
    with pytest.raises(ConfigError, match="dagger_iterations lists 2"):
        dagger_segment(params, "C_dagger_s0", 3, tmp_path / "runs")
    # two segments of a 1-step schedule: round(0.5) = 0, so the first would train nothing
    with pytest.raises(TrainingError, match="segment 1 of 2: no step of a 1-step schedule"):
        first.steps(1)
    assert second.steps(1) == range(0, 1)
