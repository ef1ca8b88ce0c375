"""LoRA training: packing, schedule, batch order, stability rule, exact resume, archiving."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from train_fixtures import TINY, Crash, run

from ccl.artifacts.jsonio import read_json, read_jsonl, sha256_file
from ccl.artifacts.verification import verify_tree
from ccl.episode import chat
from ccl.train.errors import CheckpointError, Diverged, TrainingError
from ccl.train.packing import pack_episode, per_turn_examples, pieces
from ccl.train.recipe import StabilityRule, TrainRecipe, adapted_layers, batch_order, learning_rate
from ccl.train.run import trainer_module
from ccl.train.stability import StabilityMonitor
from ccl.train.torch_trainer import load_for_training, token_losses

ROOT = Path(__file__).resolve().parents[1]



# ------------------------------------------------------------------ packing
def test_packed_loss_equals_per_turn_examples_token_by_token(tiny_model, data_dir):
    tm = load_for_training(tiny_model, TINY, seed=0, device="cpu")
    with torch.no_grad():  # make LoRA active so the check covers the adapted model
        for n, p in tm.model.named_parameters():
            if "lora_B" in n:
                p.normal_(0, 0.5)
    row = next(r for r in read_jsonl(data_dir / "variants" / "C.jsonl") if r["n_assistant_turns"] >= 3)
    packed = tm.pack(row["messages"], 10**6)
    examples = per_turn_examples(tm.tokenize, chat.template(tm.tok), row["messages"], tm.end_ids)
    assert packed.turns == len(examples) == row["n_assistant_turns"] >= 3
    whole = token_losses(tm.model, packed, "cpu")
    parts = torch.cat([token_losses(tm.model, ex, "cpu") for ex in examples])
    assert whole.shape == parts.shape and whole.numel() == packed.n_targets
    torch.testing.assert_close(whole, parts, rtol=1e-4, atol=1e-5)
    # the packed mean is the target-weighted mean of the per-turn means
    per_turn = [token_losses(tm.model, ex, "cpu") for ex in examples]
    weighted = sum(t.sum() for t in per_turn) / sum(t.numel() for t in per_turn)
    torch.testing.assert_close(whole.mean(), weighted)


def test_only_assistant_replies_and_their_end_token_carry_loss(tiny_model, data_dir):
    tm = load_for_training(tiny_model, TINY, seed=0, device="cpu")
    row = next(iter(read_jsonl(data_dir / "variants" / "C.jsonl")))
    p = tm.pack(row["messages"], 10**6)
    supervised = tm.tok.decode([t for t, lab in zip(p.input_ids, p.labels) if lab])
    replies = "".join(m["content"] + "<|im_end|>" for m in row["messages"] if m["role"] == "assistant")
    assert supervised == replies
    unsupervised = tm.tok.decode([t for t, lab in zip(p.input_ids, p.labels) if not lab])
    for m in row["messages"]:
        if m["role"] in ("system", "user"):  # system prompt, request and tool results: context only
            assert m["content"] in unsupervised


def test_pieces_follow_the_inference_split_and_truncation_keeps_whole_turns(tiny_model, data_dir):
    tm = load_for_training(tiny_model, TINY, seed=0, device="cpu")
    row = next(r for r in read_jsonl(data_dir / "variants" / "C.jsonl") if r["n_assistant_turns"] >= 3)
    parts = pieces(chat.template(tm.tok), row["messages"])
    assert "".join(t for t, _ in parts) == chat.template(tm.tok)(row["messages"], tokenize=False)
    assert parts[0][0].endswith("no tool can do it). Retry a call that timed out; use the declared fallback "
                                "when a service is unavailable. If no tool is needed, answer directly.")
    full = tm.pack(row["messages"], 10**6)
    first_two = per_turn_examples(tm.tokenize, chat.template(tm.tok), row["messages"], tm.end_ids)[1]
    cut = pack_episode(tm.tokenize, chat.template(tm.tok), row["messages"], tm.end_ids,
                       max_length=len(first_two.input_ids))
    assert (cut.turns, cut.truncated) == (2, full.turns - 2)
    assert cut.input_ids == full.input_ids[: len(cut.input_ids)] and cut.labels[-1]


def test_split_batch_hand_worked():
    from ccl.train.packing import Packed
    from ccl.train.shared_head import common_head, split_batch
    F, T = False, True
    a = Packed([1, 2, 3, 4, 5], [F, F, F, T, T], 1, 0, head=2)
    b = Packed([1, 2, 6, 7], [F, F, F, T], 1, 0, head=2)
    assert common_head([a, b]) == 2
    s = split_batch([a, b], 2, pad_id=0, device="cpu")
    assert s.head.tolist() == [[1, 2]]
    assert s.rest.tolist() == [[3, 4, 5], [6, 7, 0]]
    assert s.mask.tolist() == [[1, 1, 1, 1, 1], [1, 1, 1, 1, 0]]
    # a: position 2 (rest column 0) predicts 4, position 3 (column 1) predicts 5; b: column 0 predicts 7
    assert (s.rows.tolist(), s.cols.tolist(), s.targets.tolist()) == ([0, 0, 1], [0, 1, 0], [4, 5, 7])
    assert common_head([a, Packed([1, 9, 6, 7], [F, F, F, T], 1, 0, head=2)]) == 0  # different head ids
    assert common_head([a, Packed([1, 2, 6], [F, F, T], 1, 0, head=2)]) == 0  # the head's last logit is needed
    assert common_head([a, Packed([1, 2, 6, 7], [F, F, F, T], 1, 0)]) == 0  # a row without the head
    s0 = split_batch([a, b], 0, pad_id=0, device="cpu")
    assert (s0.rows.tolist(), s0.cols.tolist(), s0.targets.tolist()) == ([0, 0, 1], [2, 3, 2], [4, 5, 7])


@pytest.mark.parametrize("checkpointing", [False, True])
def test_shared_head_loss_and_gradients_equal_the_per_row_computation(tiny_model, data_dir, checkpointing):
    """Round 2 (head once per micro-batch, logits at each row's targets) against round 1
    (every row whole, logits at the union of target positions): the same loss and the same
    gradient on every LoRA weight, within float tolerance."""
    import dataclasses

    from ccl.train.shared_head import common_head, summed_nll
    from ccl.train.torch_trainer import summed_nll_round1, trainable
    recipe = dataclasses.replace(TINY, gradient_checkpointing=checkpointing)
    tm = load_for_training(tiny_model, recipe, seed=0, device="cpu")
    with torch.no_grad():
        for n, p in tm.model.named_parameters():
            if "lora_B" in n:
                p.normal_(0, 0.5)
    rows = list(read_jsonl(data_dir / "variants" / "C.jsonl"))[:3]
    batch = [tm.pack(r["messages"], 10**6) for r in rows]
    head = len(tm.tokenize(pieces(chat.template(tm.tok), rows[0]["messages"])[0][0]))
    assert common_head(batch) == head == batch[0].head > 100
    assert len({len(p.input_ids) for p in batch}) > 1  # rows of different lengths: padding is exercised
    tm.model.train()
    params = trainable(tm.model)
    got = {}
    for name, fn in (("round1", summed_nll_round1), ("round2", summed_nll)):
        loss, n = fn(tm.model, batch, tm.tok.pad_token_id, "cpu")
        loss.backward()
        got[name] = float(loss.detach()), n, {k: p.grad.clone() for k, p in params.items()}
        tm.model.zero_grad(set_to_none=True)
    (l1, n1, g1), (l2, n2, g2) = got["round1"], got["round2"]
    assert n1 == n2 == sum(p.n_targets for p in batch)
    assert l2 == pytest.approx(l1, rel=1e-5)
    assert all(g1[k].abs().sum() > 0 for k in g1)  # every LoRA weight gets a gradient
    for k in g1:  # float32 sums in another order: within 1e-4 of each tensor's largest entry
        assert float((g2[k] - g1[k]).abs().max()) <= 1e-4 * float(g1[k].abs().max()), k


# ------------------------------------------------------------------ recipe
def test_learning_rate_schedule_hand_worked():
    r = TrainRecipe(lr=1e-4, lr_min=1e-5, warmup=4, steps=14)
    assert learning_rate(0, r) == pytest.approx(2.5e-5) and learning_rate(3, r) == pytest.approx(1e-4)
    assert learning_rate(4, r) == pytest.approx(1e-4)  # cosine starts at the peak
    assert learning_rate(9, r) == pytest.approx(5.5e-5)  # halfway: mean of peak and floor
    assert learning_rate(13, r) == pytest.approx(1e-5 + 0.5 * 9e-5 * (1 + torch.cos(torch.tensor(0.9 * 3.14159265)).item()),
                                                 rel=1e-5)


def test_adapted_layers_are_the_last_two_thirds():
    assert adapted_layers(24, 2 / 3) == list(range(8, 24))  # the paper's 16 of 24
    assert adapted_layers(30, 2 / 3) == list(range(10, 30))


def test_batch_order_is_seeded_covers_epochs_and_runs_phases_in_order():
    a, b = batch_order([0] * 10, 5, 4, seed=1), batch_order([0] * 10, 5, 4, seed=1)
    assert a == b and a != batch_order([0] * 10, 5, 4, seed=2)
    flat = [i for step in a for i in step]
    assert sorted(flat[:10]) == list(range(10))  # the first epoch is a permutation
    seq = batch_order([0] * 6 + [1] * 6, 4, 3, seed=0)
    assert all(i < 6 for s in seq[:2] for i in s) and all(i >= 6 for s in seq[2:] for i in s)


# ------------------------------------------------------------------ stability rule
def test_stability_rule_hand_worked():
    rule = StabilityRule(ema=0.5, loss_ratio=2.0, loss_margin=0.5, grad_ratio=10.0, grad_patience=2)
    m = StabilityMonitor(rule, warmup=2)
    assert m.update(0, 2.0, 1.0) is None and m.update(1, 1.0, 3.0) is None  # warmup: median norm 2
    assert m.update(2, 0.2, 25.0) is None  # ema 0.85; norm above 20 once
    assert m.update(3, 0.2, 5.0) is None  # ema 0.525 (min); the streak resets
    assert m.update(4, 0.2, 21.0) is None and "gradient norm" in m.update(5, 0.2, 30.0)
    m = StabilityMonitor(rule, warmup=1)
    m.update(0, 1.0, 1.0)
    assert m.update(1, 0.1, 1.0) is None  # ema 0.55, min 0.55
    assert m.update(2, 1.6, 1.0) is None  # ema 1.075, still below 2 x 0.55 = 1.1
    assert "smoothed loss" in m.update(3, 2.0, 1.0)  # ema 1.5375 > 1.1, and 0.99 > 0.5 above the minimum
    assert "non-finite" in StabilityMonitor(rule, 1).update(0, float("nan"), 1.0)


# ------------------------------------------------------------------ full runs on the tiny model
def test_runs_read_the_shared_validation_baseline_only_when_it_is_theirs(tiny_model, data_dir, tmp_path):
    """The untrained model's validation loss is computed once (stage val_baseline) and read by every
    run of that base model and validation set, whatever the seed; a record made under other settings
    is ignored and the run computes the value itself, to the same number."""
    import dataclasses

    from ccl.train.run import validation_baseline
    base = validation_baseline(TINY, "tiny", tiny_model, "torch", data_dir / "sft" / "oracle_val.jsonl", "cpu")
    assert base["val_episodes_used"] == 4 and base["val_loss_before"] > 0
    shared = run(tiny_model, data_dir, tmp_path / "a", baseline=base, seed=1)
    assert (shared["val_loss_before"], shared["val_loss_before_from"]) == (base["val_loss_before"], "val_baseline")
    other = validation_baseline(dataclasses.replace(TINY, val_episodes=2), "tiny", tiny_model, "torch",
                                data_dir / "sft" / "oracle_val.jsonl", "cpu")
    own = run(tiny_model, data_dir, tmp_path / "b", baseline=other)
    assert own["val_loss_before_from"] == "computed" and own["val_loss_before"] == base["val_loss_before"]


# MLX on Linux CPU uses a slow bundled BLAS (~3 GFLOP/s) and computes logits at every
# position: its runs take minutes even on the tiny model, so they are in the slow suite.
@pytest.mark.parametrize("backend", ["torch", pytest.param("mlx", marks=pytest.mark.slow)])
def test_interrupted_run_resumes_to_a_bit_identical_adapter(tiny_model, data_dir, tmp_path, backend):
    T = trainer_module(backend)
    straight = run(tiny_model, data_dir, tmp_path / "a", backend=backend)

    def crash_at_5(_, done, total):
        if done == 5:  # after the step-3 checkpoint: steps 4 and 5 are lost and redone
            raise Crash

    with pytest.raises(Crash):
        run(tiny_model, data_dir, tmp_path / "b", progress=crash_at_5, backend=backend)
    assert (tmp_path / "b" / "runs" / "C_s0" / T.CHECKPOINT).exists()
    with open(tmp_path / "b" / "runs" / "C_s0" / "train_log.jsonl", "a") as f:
        f.write('{"step": 5, "lo')  # the kill also tore the step log's last line
    resumed = run(tiny_model, data_dir, tmp_path / "b", backend=backend)
    a, b = (tmp_path / d / "runs" / "C_s0" for d in ("a", "b"))
    assert sha256_file(a / "adapter" / T.ADAPTER_FILE) == sha256_file(b / "adapter" / T.ADAPTER_FILE)
    assert straight["adapter_sha256"] == resumed["adapter_sha256"] and straight["val_loss"] == resumed["val_loss"]
    la, lb = list(read_jsonl(a / "train_log.jsonl")), list(read_jsonl(b / "train_log.jsonl"))
    assert [(r["step"], r["loss"], r["grad_norm"], r["lr"]) for r in la] == \
           [(r["step"], r["loss"], r["grad_norm"], r["lr"]) for r in lb]
    assert [r["step"] for r in la] == list(range(6))
    assert not (b / T.CHECKPOINT).exists()
    assert straight["val_loss"] < straight["val_loss_before"]  # training moved the model toward oracle data
    from safetensors.numpy import load_file
    lora_b = [t for n, t in load_file(a / "adapter" / T.ADAPTER_FILE).items() if "lora_b" in n.lower()]
    assert lora_b and all(abs(t).sum() > 0 for t in lora_b)  # B starts at zero: the adapter changed


def test_resume_refuses_corrupt_or_foreign_checkpoints(tiny_model, data_dir, tmp_path):
    ckpt = tmp_path / "runs" / "C_s0" / "checkpoint.pt"
    ckpt.parent.mkdir(parents=True)
    ckpt.write_bytes(b"not a checkpoint")
    with pytest.raises(CheckpointError, match="corrupt or unsafe checkpoint"):
        run(tiny_model, data_dir, tmp_path)

    def crash(_, done, total):
        if done == 4:
            raise Crash

    ckpt.unlink()
    with pytest.raises(Crash):
        run(tiny_model, data_dir, tmp_path, progress=crash)
    other = TrainRecipe(**{**TINY.__dict__, "lr": 5e-3})
    with pytest.raises(CheckpointError, match="differs in recipe"):
        run(tiny_model, data_dir, tmp_path, recipe=other)


def test_a_run_that_breaks_the_rule_is_archived(tiny_model, data_dir, tmp_path):
    strict = TrainRecipe(**{**TINY.__dict__, "stability": StabilityRule(grad_ratio=1e-9, grad_patience=1)})
    with pytest.raises(Diverged, match="gradient norm"):
        run(tiny_model, data_dir, tmp_path, recipe=strict)
    assert not (tmp_path / "runs" / "C_s0").exists()
    reason = json.loads((tmp_path / "archive" / "C_s0" / "reason.json").read_text())
    assert reason["status"] == "broken" and reason["step"] == 2  # the first step after warmup
    assert (tmp_path / "archive" / "C_s0" / "train_log.jsonl").exists()
    log = [json.loads(x) for x in (tmp_path / "logs" / "stability.jsonl").read_text().splitlines()]
    assert log == [reason]


@pytest.mark.slow
def test_mlx_adapter_loads_with_mlx_lm(tiny_model, data_dir, tmp_path):
    import mlx_lm
    run(tiny_model, data_dir, tmp_path, backend="mlx")
    adapter = tmp_path / "runs" / "C_s0" / "adapter"
    model, _ = mlx_lm.load(str(tiny_model), adapter_path=str(adapter))
    names = [n for n, _ in __import__("mlx.utils", fromlist=["tree_flatten"]).tree_flatten(model.parameters())]
    assert any("lora_a" in n for n in names)


def test_torch_adapter_loads_with_peft(tiny_model, data_dir, tmp_path):
    from peft import PeftModel
    from transformers import AutoModelForCausalLM
    run(tiny_model, data_dir, tmp_path)
    model = PeftModel.from_pretrained(AutoModelForCausalLM.from_pretrained(tiny_model),
                                      str(tmp_path / "runs" / "C_s0" / "adapter"))
    assert any("lora_A" in n for n, _ in model.named_parameters())


def test_adapter_files_name_no_machine_path_and_dotfiles_stay_out_of_the_manifest(tiny_model, data_dir, tmp_path):
    (tmp_path / "runs" / "C_s0").mkdir(parents=True)
    (tmp_path / "runs" / "C_s0" / ".gitignore").write_text("/adapter\n")  # as DVC leaves it in a clone
    run(tiny_model, data_dir, tmp_path)
    folder = tmp_path / "runs" / "C_s0"
    cfg = json.loads((folder / "adapter" / "adapter_config.json").read_text())
    assert cfg["base_model_name_or_path"] == tiny_model.name  # the folder's name, not this machine's path
    assert cfg["target_modules"] == sorted(cfg["target_modules"])  # not peft's hash-seeded set order
    assert str(tmp_path) not in (folder / "adapter" / "README.md").read_text()
    assert str(tiny_model.parent) not in (folder / "adapter" / "README.md").read_text()
    assert ".gitignore" not in read_json(folder / "manifest.json")["files"]
    assert verify_tree(tmp_path, [tmp_path / "runs"]) == []


class Planted:
    """A pickle payload: unpickling it would create ``marker``."""

    def __init__(self, marker: Path):
        self.marker = marker

    def __reduce__(self):
        return (Path.touch, (self.marker,))


def crash_after_first_checkpoint(_, done, total):
    if done == 4:
        raise Crash


def test_a_planted_pickle_payload_in_a_checkpoint_never_runs(tiny_model, data_dir, tmp_path):
    ckpt = tmp_path / "runs" / "C_s0" / "checkpoint.pt"
    ckpt.parent.mkdir(parents=True)
    marker = tmp_path / "payload_ran"
    torch.save({"step": 2, "payload": Planted(marker)}, ckpt)
    with pytest.raises(CheckpointError, match="corrupt or unsafe checkpoint"):
        run(tiny_model, data_dir, tmp_path)
    assert not marker.exists()


def test_a_changed_value_inside_a_stored_tensor_is_refused(tiny_model, data_dir, tmp_path):
    with pytest.raises(Crash):
        run(tiny_model, data_dir, tmp_path, progress=crash_after_first_checkpoint)
    ckpt = tmp_path / "runs" / "C_s0" / "checkpoint.pt"
    state = torch.load(ckpt, weights_only=True)
    name = sorted(state["adapter"])[0]
    flat = state["adapter"][name].view(-1)
    flat.view(torch.int32)[0] ^= 1  # one flipped bit, the stored digest kept
    torch.save(state, ckpt)
    with pytest.raises(CheckpointError, match="does not match its SHA-256"):
        run(tiny_model, data_dir, tmp_path)


def _log_many(path: str, worker: int) -> None:
    from ccl.train.run import update_stability_log
    for i in range(25):
        update_stability_log(Path(path), {"run": f"w{worker}_{i:02d}", "status": "passed"})


def test_concurrent_stability_log_updates_keep_every_entry(tmp_path):
    import multiprocessing as mp
    path = tmp_path / "logs" / "stability.jsonl"
    ctx = mp.get_context("fork")
    procs = [ctx.Process(target=_log_many, args=(str(path), w)) for w in range(6)]
    for p in procs:
        p.start()
    for p in procs:
        p.join()
    runs = [r["run"] for r in read_jsonl(path)]
    assert len(runs) == len(set(runs)) == 150


def test_a_torn_log_line_is_dropped_but_a_damaged_middle_line_is_an_error(tmp_path):
    from ccl.train.run import read_jsonl_tolerant
    path = tmp_path / "train_log.jsonl"
    path.write_text('{"step": 0}\n{"step": 1}\n{"step": 2, "lo')
    assert read_jsonl_tolerant(path) == [{"step": 0}, {"step": 1}]
    path.write_text('{"step": 0}\n{"st\n{"step": 2}\n')
    with pytest.raises(TrainingError, match="line 2 is not JSON"):
        read_jsonl_tolerant(path)


def test_a_full_disk_ends_training_in_one_line_and_leaves_no_adapter(tiny_model, data_dir, tmp_path, monkeypatch,
                                                                      capsys):
    """The train stage's boundary on a real run: the first write (a checkpoint, the log or the adapter) hits
    ENOSPC; the stage prints one line naming the path and the remedy, and no adapter looks complete."""
    import errno
    import tempfile

    from ccl.artifacts.boundary import run_stage

    def full(*args, dir=None, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device", str(dir))

    monkeypatch.setattr(tempfile, "mkstemp", full)
    code = run_stage("train", lambda argv: run(tiny_model, data_dir, tmp_path) and 0)
    # transformers' weight-loading progress bar also writes to stderr; the stage's own report is one line
    err = [line for line in capsys.readouterr().err.strip().splitlines() if not line.startswith("Loading weights")]
    assert code == 2 and len(err) == 1, err
    assert err[0].startswith(f"train: No space left on device: {tmp_path / 'runs' / 'C_s0'}") and "free disk" in err[0]
    assert not (tmp_path / "runs" / "C_s0" / "summary.json").exists()
    assert not list((tmp_path / "runs").rglob("adapter_model.safetensors"))


def test_a_disk_that_fills_under_a_write_ends_training_naming_the_file(tiny_model, data_dir, tmp_path, monkeypatch,
                                                                       capsys):
    """The write itself fails (ENOSPC naming no file, as the system call reports it): the one atomic-write
    helper names the file it was writing (issue 38: was "No space left on device: (unknown path)")."""
    from test_boundary import full_disk_on_write

    from ccl.artifacts.boundary import run_stage

    full_disk_on_write(monkeypatch)
    code = run_stage("train", lambda argv: run(tiny_model, data_dir, tmp_path) and 0)
    err = [line for line in capsys.readouterr().err.strip().splitlines() if not line.startswith("Loading weights")]
    assert code == 2 and len(err) == 1, err
    assert err[0].startswith(f"train: No space left on device: {tmp_path / 'runs' / 'C_s0'}/") and "free disk" in err[0]
    assert "unknown path" not in err[0]


def test_mlx_gradient_checkpointing_is_honoured_and_changes_no_number(tiny_model, data_dir):
    """The recipe's switch reaches MLX (mlx-lm's block recomputation) and the step's loss and
    gradient norm stay those of the plain step. It runs last in this module: the switch patches
    the block class for the rest of the process (forward values unchanged)."""
    import dataclasses

    from ccl.train import mlx_trainer as M
    rows = list(read_jsonl(data_dir / "variants" / "C.jsonl"))[:2]
    got = {}
    for checkpointing in (False, True):
        recipe = dataclasses.replace(TINY, gradient_checkpointing=checkpointing, batch_size=1)
        tm = M.load_for_training(tiny_model, recipe, seed=0)
        block = type(tm.model.layers[0]).__call__
        got[checkpointing] = M.train_step(tm, M.make_optimizer(tm, recipe), [tm.pack(r["messages"], 10**6)
                                                                            for r in rows], recipe, 1e-2), block
    (plain, plain_call), (ckpt, ckpt_call) = got[False], got[True]
    assert ckpt_call is not plain_call  # the recomputing call replaced the block's own
    assert ckpt["loss"] == pytest.approx(plain["loss"], rel=1e-5)
    assert ckpt["grad_norm"] == pytest.approx(plain["grad_norm"], rel=1e-4)
