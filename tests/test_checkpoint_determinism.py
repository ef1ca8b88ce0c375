"""Deterministic checkpoints (issue 55): a checkpoint holds no timing, so a rerun's bytes hash the same
(DVC hashes DAgger's ``continuation/``); the train seconds go beside it in ``checkpoint_seconds.json``,
from which a resumed run sums them.

Each step's wall-clock seconds are replaced by a fixed number (``timed``), different between the runs
compared, so the expectations below are worked by hand: TINY has 6 steps and checkpoints after steps 3
and 6; a run stopped after its 4th step has the step-3 checkpoint."""
from __future__ import annotations

import io
import zipfile

import pytest
import torch
from train_fixtures import Crash, run

from ccl.artifacts.jsonio import read_json, sha256_file
from ccl.train import torch_trainer
from ccl.train.run import SECONDS, Segment
from ccl.train.torch_trainer import state_digest
from ccl.vocabulary import Run

REAL_STEP = torch_trainer.train_step
KEEP = Segment(leave_state=True)  # a one-piece run that keeps continuation/, as DAgger's segments do


def timed(monkeypatch, seconds: float) -> None:
    """Every optimizer step takes ``seconds`` (and its tokens/s says so, rounded as the trainer does)."""
    def step(*args, **kwargs):
        out = REAL_STEP(*args, **kwargs)
        return {**out, "seconds": seconds, "tok_per_s": round(out["tokens"] / seconds, 1)}

    monkeypatch.setattr(torch_trainer, "train_step", step)


def stop_after_4(_, done, total):
    if done == 4:  # after the step-3 checkpoint
        raise Crash


def stopped(tiny_model, data_dir, root, monkeypatch, seconds):
    """A run stopped after its 4th step, each step taking ``seconds``; its folder."""
    timed(monkeypatch, seconds)
    with pytest.raises(Crash):
        run(tiny_model, data_dir, root, progress=stop_after_4, segment=KEEP)
    return root / "runs" / "C_s0"


def test_a_rerun_writes_the_same_checkpoint_bytes_and_its_seconds_beside_it(tiny_model, data_dir, tmp_path,
                                                                            monkeypatch):
    a = stopped(tiny_model, data_dir, tmp_path / "a", monkeypatch, 10.0)
    b = stopped(tiny_model, data_dir, tmp_path / "b", monkeypatch, 20.0)
    assert sha256_file(a / "checkpoint.pt") == sha256_file(b / "checkpoint.pt")
    assert read_json(a / SECONDS) == {"3": 30.0} and read_json(b / SECONDS) == {"3": 60.0}
    state = torch.load(a / "checkpoint.pt", map_location="cpu", weights_only=True)
    assert state["step"] == 3 and "train_seconds" not in state
    # torch's zip: records named after the buffer (not the file), in a fixed order, with a fixed date
    with zipfile.ZipFile(a / "checkpoint.pt") as z:
        assert z.namelist()[0] == "archive/data.pkl" and z.namelist()[-1] == "archive/.data/serialization_id"
        assert {i.date_time for i in z.infolist()} == {(1980, 0, 0, 0, 0, 0)}


def test_a_resumed_run_sums_its_seconds_from_the_sidecar_and_leaves_the_straight_runs_continuation(
        tiny_model, data_dir, tmp_path, monkeypatch):
    timed(monkeypatch, 10.0)
    straight = run(tiny_model, data_dir, tmp_path / "a", segment=KEEP)
    assert straight["train_minutes"] == 1.0  # 6 steps x 10 s
    b = stopped(tiny_model, data_dir, tmp_path / "b", monkeypatch, 10.0)
    assert read_json(b / SECONDS) == {"3": 30.0}
    timed(monkeypatch, 20.0)
    resumed = run(tiny_model, data_dir, tmp_path / "b", segment=KEEP)
    assert resumed["train_minutes"] == 1.5  # 3 steps x 10 s from the sidecar + 3 redone x 20 s
    assert resumed["adapter_sha256"] == straight["adapter_sha256"]
    a = tmp_path / "a" / "runs" / "C_s0"
    assert sha256_file(a / "continuation" / "checkpoint.pt") == sha256_file(b / "continuation" / "checkpoint.pt")
    for folder in (a, b):  # the timing went with the checkpoint: not in the run's folder nor its manifest
        assert not (folder / SECONDS).exists() and not (folder / "checkpoint.pt").exists()
        assert sorted(read_json(folder / "manifest.json")["files"]) == [
            "adapter/README.md", "adapter/adapter_config.json", "adapter/adapter_model.safetensors", "config.json",
            "continuation/checkpoint.pt", "summary.json", "train_log.jsonl"]


def test_a_kill_between_the_sidecar_and_the_checkpoint_keeps_the_older_checkpoints_seconds(
        tiny_model, data_dir, tmp_path, monkeypatch):
    """The seconds are written first: killed before the step-6 checkpoint replaced the step-3 one, the
    sidecar still holds step 3's entry."""
    real_save = torch_trainer.save_checkpoint

    def save(path, step, *args):
        if step == 6:
            raise Crash
        real_save(path, step, *args)

    timed(monkeypatch, 10.0)
    monkeypatch.setattr(torch_trainer, "save_checkpoint", save)
    with pytest.raises(Crash):
        run(tiny_model, data_dir, tmp_path)
    folder = tmp_path / "runs" / "C_s0"
    assert read_json(folder / SECONDS) == {"3": 30.0, "6": 60.0}
    assert torch.load(folder / "checkpoint.pt", weights_only=True)["step"] == 3
    monkeypatch.setattr(torch_trainer, "save_checkpoint", real_save)
    timed(monkeypatch, 20.0)
    assert run(tiny_model, data_dir, tmp_path)["train_minutes"] == 1.5  # 30 s + 3 x 20 s, not 60 s + 60 s


def test_without_the_sidecar_an_old_checkpoints_seconds_else_the_step_logs_count(tiny_model, data_dir, tmp_path,
                                                                                 monkeypatch):
    # a checkpoint of the old layout, with train_seconds inside (and its digest over them)
    old = stopped(tiny_model, data_dir, tmp_path / "old", monkeypatch, 10.0)
    (old / SECONDS).unlink()
    state = torch.load(old / "checkpoint.pt", map_location="cpu", weights_only=True)
    del state["sha256"]
    state["train_seconds"] = 42.0
    buf = io.BytesIO()
    torch.save({**state, "sha256": state_digest(state)}, buf)
    (old / "checkpoint.pt").write_bytes(buf.getvalue())
    timed(monkeypatch, 20.0)
    assert run(tiny_model, data_dir, tmp_path / "old", segment=KEEP)["train_minutes"] == 1.7  # 42 s + 3 x 20 s
    # a new checkpoint whose sidecar was lost: steps 0-2 from the log, tokens over tokens/s (10 s each,
    # to within the 0.1 tok/s rounding: 90 s in all, not the 60 s of the redone steps alone)
    lost = stopped(tiny_model, data_dir, tmp_path / "lost", monkeypatch, 10.0)
    (lost / SECONDS).unlink()
    timed(monkeypatch, 20.0)
    assert run(tiny_model, data_dir, tmp_path / "lost", segment=KEEP)["train_minutes"] == 1.5


def test_a_resumed_later_segment_counts_only_its_own_seconds(tiny_model, data_dir, tmp_path, monkeypatch):
    """Segment 2 of 2 (steps 3-5) continues segment 1, checkpointing every step, and is stopped after its
    step 4 ran but before that step was saved: its own checkpoint is at step 4, one 10 s step of its own."""
    import dataclasses

    from train_fixtures import TINY
    recipe = dataclasses.replace(TINY, checkpoint_every=1)
    timed(monkeypatch, 10.0)
    run(tiny_model, data_dir, tmp_path, recipe=recipe, name=Run("C_dagger_i1", 0), segment=Segment(1, 2))
    i1 = tmp_path / "runs" / "C_dagger_i1_s0"

    def stop_at_5(_, done, total):
        if done == 5:
            raise Crash

    with pytest.raises(Crash):
        run(tiny_model, data_dir, tmp_path, recipe=recipe, name=Run("C_dagger", 0), segment=Segment(2, 2, i1),
            progress=stop_at_5)
    assert read_json(tmp_path / "runs" / "C_dagger_s0" / SECONDS) == {"4": 10.0}  # not segment 1's 30 s
    timed(monkeypatch, 20.0)
    resumed = run(tiny_model, data_dir, tmp_path, recipe=recipe, name=Run("C_dagger", 0), segment=Segment(2, 2, i1))
    assert resumed["train_minutes"] == 0.83  # 10 s + steps 4 and 5 redone at 20 s: 50 s


def test_an_mlx_checkpoint_does_not_depend_on_the_order_its_arrays_come_in(tmp_path):
    """MLX lays a safetensors file's data out in the dict's order (its header is sorted): the optimizer
    state a resumed run loads back may come in another order than a straight run's."""
    mx = pytest.importorskip("mlx.core")
    from types import SimpleNamespace

    from ccl.train import mlx_trainer

    params = {"layers": {"0": {"lora_a": mx.ones((2, 3)), "lora_b": mx.zeros((3, 2))}}}
    moments = {"m": mx.arange(6).reshape(2, 3), "v": mx.full((2, 3), 0.5)}
    tm = SimpleNamespace(model=SimpleNamespace(trainable_parameters=lambda: params))
    saved = []
    for order in (list, lambda keys: list(reversed(keys))):
        opt = SimpleNamespace(state={k: moments[k] for k in order(list(moments))})
        mlx_trainer.save_checkpoint(tmp_path / f"{len(saved)}.safetensors", 3, tm, opt, {"fingerprint": {"run": "x"}})
        saved.append(sha256_file(tmp_path / f"{len(saved)}.safetensors"))
    assert saved[0] == saved[1]
