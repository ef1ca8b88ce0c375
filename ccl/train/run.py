"""One training run, end to end: data, resumable optimizer loop, stability rule, outputs.

Writes ``runs/<name>/``: ``adapter/`` (peft format), ``config.json`` (everything that
determined the run), ``train_log.jsonl`` (one line per optimizer step), ``summary.json``
(steps, train time, peak memory, final validation loss on oracle validation episodes,
trainable parameters, adapter SHA-256, stability verdict) and ``manifest.json``. While
running, ``checkpoint.pt`` holds adapter, optimizer, step, RNG and monitor state,
written atomically every ``checkpoint_every`` steps; a rerun resumes from it. The checkpoint holds no
timing, so equal training state gives equal bytes (DVC hashes the ``continuation/`` a segment leaves):
the train seconds so far, which a resumed run adds to, go beside it in ``checkpoint_seconds.json``
(:func:`_checkpoint_seconds`), removed with the checkpoint when the run is published.
A run that breaks the stability rule moves to ``archive/<name>/`` with its reason.

A run may be one segment of a schedule that several runs share (:class:`Segment`; DAgger's
iterations): segment k of K trains steps [round(S(k-1)/K), round(Sk/K)) of the recipe's S steps,
with the learning rate those steps have in the whole schedule, starting from the state the
previous segment's run left in its ``continuation/`` folder (adapter, optimizer moments, RNG and
stability monitor; the step log is the previous run's ``train_log.jsonl``). A segment's summary
counts its own minutes, its step log the whole schedule so far. Its batches are the same steps of the whole schedule's batch
order over its own training rows, so segments over unchanged rows train exactly the one-piece run.
"""
from __future__ import annotations

import dataclasses
import fcntl
import json
import shutil
import time
from pathlib import Path
from typing import Any, Callable

from ..artifacts.inputs import read_rows
from ..artifacts.jsonio import atomic_write_bytes, dumps, sha256_file, write_json
from ..artifacts.shapes import ChatRow
from ..artifacts.manifest import folder_files, write_manifest
from ..devices import cpu_record
from ..resources import peak_memory_gb
from ..vocabulary import DEFAULT_PRECISION, Run, precision_fields
from .errors import Diverged, TrainingError
from .recipe import TrainRecipe, batch_order, learning_rate, recipe_record
from .stability import StabilityMonitor


def trainer_module(backend: str):
    """The backend's training functions (both modules expose the same names)."""
    if backend == "torch":
        from . import torch_trainer
        return torch_trainer
    if backend == "mlx":
        from . import mlx_trainer
        return mlx_trainer
    raise TrainingError(f"unknown training backend {backend!r}; valid: torch, mlx (params models.student_backend)")


CONTINUATION = "continuation"  # the folder holding the state a segment leaves for the next (checkpoint name inside)
SECONDS = "checkpoint_seconds.json"  # train seconds at each kept checkpoint's step: the timing kept out of it


@dataclasses.dataclass(frozen=True)
class Segment:
    """Which part of the recipe's schedule a run trains; the default is the whole of it."""

    index: int = 1  # 1-based
    count: int = 1
    previous: Path | None = None  # run folder of segment index - 1 (required exactly when index > 1)
    leave_state: bool = False  # keep the final state (continuation/) for a later segment, even of a 1-segment schedule

    def __post_init__(self) -> None:
        if not 1 <= self.index <= self.count:
            raise TrainingError(f"segment {self.index} of {self.count}: expected 1 <= index <= count")
        if (self.index > 1) != (self.previous is not None):
            raise TrainingError(f"segment {self.index} of {self.count}: a later segment continues the previous "
                                f"segment's run and the first continues none (previous: {self.previous})")

    def steps(self, total: int) -> range:
        part = range(round(total * (self.index - 1) / self.count), round(total * self.index / self.count))
        if not part:
            raise TrainingError(f"segment {self.index} of {self.count}: no step of a {total}-step schedule falls in it")
        return part

    @property
    def leaves_state(self) -> bool:
        """Whether the run keeps its final state for a later segment."""
        return self.count > 1 or self.leave_state


@dataclasses.dataclass(frozen=True)
class RunPaths:
    root: Path
    checkpoint_name: str

    @property
    def adapter(self) -> Path:
        return self.root / "adapter"

    @property
    def checkpoint(self) -> Path:
        return self.root / self.checkpoint_name

    @property
    def log(self) -> Path:
        return self.root / "train_log.jsonl"

    @property
    def seconds(self) -> Path:
        return self.root / SECONDS

    @property
    def continuation(self) -> Path:
        return self.root / CONTINUATION / self.checkpoint_name


LEARNING_DATA = "dagger_rollout / err_data"  # the stages that write a learning arm's --train-file


def variant_rows(path: Path, stage: str = "build_sft") -> list[dict]:
    """The training rows of ``path`` (a variant of build_sft, or a learning arm's aggregate written by
    ``stage``), read by the one reader: missing, corrupt, empty or misshapen is one line naming the file."""
    return read_rows(path, stage, ChatRow, need_rows=True)


def update_stability_log(path: Path, entry: dict) -> None:
    """One line per run in logs/stability.jsonl, replaced when the run is redone. Runs of the
    matrix may finish at once (dvc repro -j), so the read-modify-write holds an exclusive lock."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.with_name(path.name + ".lock"), "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        lines = read_jsonl_tolerant(path)
        lines = [x for x in lines if x.get("run") != entry["run"]] + [entry]
        atomic_write_bytes(path, "".join(dumps(x) + "\n" for x in sorted(lines, key=lambda x: x["run"])).encode())


def read_jsonl_tolerant(path: Path) -> list[dict]:
    """The complete lines of a JSON-lines log; a torn last line (a kill mid-write) is dropped."""
    if not path.exists():
        return []
    lines = path.read_text(encoding="utf-8").splitlines()
    out = []
    for i, line in enumerate(lines):
        if not line.strip():
            continue
        try:
            out.append(json.loads(line))
        except json.JSONDecodeError:
            if i == len(lines) - 1:
                break  # torn by a kill: the step it described is redone
            raise TrainingError(f"{path}: line {i + 1} is not JSON (not a torn last line); "
                                f"delete the run folder to start over") from None
    return out


def read_log(path: Path, before: int) -> list[dict]:
    return [r for r in read_jsonl_tolerant(path) if r["step"] < before]


def resolve_device(backend: str, device: str | None) -> str:
    if backend == "torch":
        from ..devices import pick_device
        return pick_device(device)
    return "mlx"  # MLX picks its own device (Metal on Apple silicon, else CPU)


def baseline_key(recipe: TrainRecipe, model_name: str, model_folder: Path, backend: str, device: str,
                 val_file: Path) -> dict:
    """What the untrained model's validation loss depends on. Not the seed nor the LoRA shape:
    LoRA's B matrices start at zero, so every run of a base model starts from the same function."""
    # another precision computes another loss; a float32 key keeps the bytes it had (precision_fields)
    return {"base_model": model_name, "base_weights": _weights_id(model_folder), "backend": backend,
            "device": device, "val_sha256": sha256_file(val_file), "val_episodes": recipe.val_episodes,
            "max_length": recipe.max_length, "batch_size": recipe.batch_size, **precision_fields(recipe.precision)}


def validation_set(tm, val_file: Path, recipe: TrainRecipe) -> list:
    rows = read_rows(val_file, "build_datasets", ChatRow, need_rows=True)[: recipe.val_episodes]
    return [p for p in (tm.pack(r["messages"], recipe.max_length) for r in rows) if p.turns]


def validation_baseline(recipe: TrainRecipe, model_name: str, model_folder: Path, backend: str, val_file: Path,
                        device: str | None = None) -> dict:
    """The untrained model's validation loss, computed once for every run of this base model
    and validation set (stage ``val_baseline``); a run reads it instead of recomputing it."""
    T = trainer_module(backend)
    device = resolve_device(backend, device)
    tm = T.load_for_training(model_folder, recipe, 0, device)
    val = validation_set(tm, val_file, recipe)
    loss = T.mean_loss(tm, val, recipe.batch_size, lambda n: None)
    # no timing in the record: every train stage depends on its bytes
    return {**baseline_key(recipe, model_name, model_folder, backend, device, val_file),
            "val_loss_before": round(loss, 6), "val_episodes_used": len(val)}


def train_run(run: Run, recipe: TrainRecipe, model_name: str, model_folder: Path, backend: str,
              train_file: Path, val_file: Path, runs_dir: Path, archive_dir: Path, stability_log: Path,
              device: str | None = None, progress: Callable[[str, int, int], None] = lambda *a: None,
              baseline: dict | None = None, segment: Segment = Segment(),
              on_checkpoint: Callable[[int, Any], None] = lambda step, tm: None) -> dict:
    """``baseline``: a :func:`validation_baseline` record; used when its key matches this run's.
    ``segment``: the part of the schedule this run trains (default: all of it). ``on_checkpoint``: called
    with the step and the model after each checkpoint is written (an experiment's own measurements)."""
    T, device = trainer_module(backend), resolve_device(backend, device)
    paths = RunPaths(runs_dir / run.name, T.CHECKPOINT)
    rows = variant_rows(train_file)  # checked before anything is written or loaded
    paths.root.mkdir(parents=True, exist_ok=True)
    fingerprint = _fingerprint(run, recipe, model_name, model_folder, train_file, segment)
    steps = segment.steps(recipe.steps)
    tm = T.load_for_training(model_folder, recipe, run.seed, device)
    packed = [tm.pack(r["messages"], recipe.max_length) for r in rows]
    usable = [i for i, p in enumerate(packed) if p.turns]
    if not usable:
        raise TrainingError(f"{train_file}: no episode fits max_length {recipe.max_length}")
    phases = [rows[i].get("phase", 0) for i in usable]
    order = batch_order(phases, recipe.steps, recipe.episodes_per_step, run.seed)
    val = validation_set(tm, val_file, recipe)
    opt = T.make_optimizer(tm, recipe)
    monitor = StabilityMonitor(recipe.stability, recipe.warmup)
    if baseline and not _same_key(baseline, baseline_key(recipe, model_name, model_folder, backend, device, val_file)):
        baseline = None  # computed for another model, validation set or device
    start, train_seconds, val_before, val_before_from = _resume(T, tm, opt, paths, fingerprint, monitor, recipe, val,
                                                                baseline or None, segment)
    kept = {start: train_seconds} if paths.checkpoint.exists() else {}  # checkpoint step -> train seconds
    _start_log(paths, start, segment.previous if start == steps.start else None)
    with open(paths.log, "a", encoding="utf-8") as logf:
        for step in range(start, steps.stop):
            lr = learning_rate(step, recipe)
            out = T.train_step(tm, opt, [packed[usable[i]] for i in order[step]], recipe, lr)
            train_seconds += out["seconds"]
            entry = {"step": step, "lr": lr, "loss": out["loss"], "grad_norm": out["grad_norm"],
                     "targets": out["targets"], "tokens": out["tokens"], "tok_per_s": out["tok_per_s"],
                     "peak_mem_gb": peak_memory_gb(), "phase": phases[order[step][0]]}
            logf.write(dumps(entry) + "\n")
            logf.flush()
            progress("train", step + 1, recipe.steps)
            broken = monitor.update(step, out["loss"], out["grad_norm"])
            if broken:
                return _archive(run, paths, archive_dir, stability_log, step, broken)
            if (step + 1) % recipe.checkpoint_every == 0 or step + 1 == steps.stop:
                kept = _checkpoint(T, paths, step + 1, tm, opt, kept, train_seconds,
                                   {"fingerprint": fingerprint, "monitor": monitor.state(),
                                    "val_loss_before": val_before, "val_loss_before_from": val_before_from})
                on_checkpoint(step + 1, tm)
    val_loss = T.mean_loss(tm, val, recipe.batch_size, lambda n: None)
    T.save_adapter(tm, paths.adapter)
    summary = {
        "run": run.name, "variant": run.variant, "seed": run.seed, "backend": backend, "device": device,
        "base_model": model_name, "steps": steps.stop, "episodes": len(rows), "episodes_used": len(usable),
        "train_minutes": round(train_seconds / 60, 2), "final_train_loss": read_log(paths.log, steps.stop)[-1]["loss"],
        "val_loss": round(val_loss, 6), "val_loss_before": round(val_before, 6), "val_episodes": len(val),
        "val_loss_before_from": val_before_from, "trainable_params": T.count_trainable(tm),
        "adapter_sha256": sha256_file(paths.adapter / T.ADAPTER_FILE)} | _machine_fields(recipe, segment)
    _publish(run, paths, fingerprint, device, summary, stability_log, monitor, steps.stop, segment.leaves_state)
    return summary


def _machine_fields(recipe: TrainRecipe, segment: Segment) -> dict:
    """The summary's fields past the numbers: memory, the rule passed, the precision and the machine (the
    CPU's kernel path says where the adapter's hash holds), and the segment of a split schedule."""
    return {"peak_mem_gb": peak_memory_gb(), "stability": "passed", "precision": recipe.precision,
            "machine": cpu_record(), **({"segment": f"{segment.index}/{segment.count}"} if segment.count > 1 else {})}


def _checkpoint(T: Any, paths: RunPaths, step: int, tm: Any, opt: Any, kept: dict[int, float], seconds: float,
                state: dict) -> dict[int, float]:
    """Write the checkpoint of ``step`` with no timing inside, so a rerun's is byte-identical
    (tests/test_checkpoint_determinism.py); its train seconds go to the sidecar first, which keeps the
    entry of the checkpoint still on disk: a kill between the two writes leaves that one with its entry."""
    kept = dict(list(kept.items())[-1:]) | {step: round(seconds, 3)}
    write_json(paths.seconds, {str(k): v for k, v in kept.items()})
    T.save_checkpoint(paths.checkpoint, step, tm, opt, state)
    return kept


def _fingerprint(run: Run, recipe: TrainRecipe, model_name: str, model_folder: Path, train_file: Path,
                 segment: Segment) -> dict:
    """Everything that determined the run; a checkpoint must carry the same (config.json keeps it)."""
    fingerprint = {"run": run.name, "variant": run.variant, "seed": run.seed, "recipe": recipe_record(recipe),
                   "base_model": model_name, "base_weights": _weights_id(model_folder),
                   "train_sha256": sha256_file(train_file)}
    if segment.count > 1:  # a one-piece run's fingerprint (and config.json) stays as it always was
        fingerprint["segment"] = [segment.index, segment.count]
    return fingerprint


def _start_log(paths: RunPaths, start: int, previous: Path | None) -> None:
    """The step log up to ``start``: this run's own lines (a resumed run), or, for a segment starting
    where the previous one ended, that run's lines, so the log covers the whole schedule."""
    source = previous / paths.log.name if previous is not None else paths.log
    atomic_write_bytes(paths.log, "".join(dumps(r) + "\n" for r in read_log(source, start)).encode())


def _same_key(baseline: dict, key: dict) -> bool:
    """Whether a baseline record was computed for ``key``: every key's value, and the same precision (a
    float32 key names none, so a bfloat16 baseline must not pass for it)."""
    same_precision = baseline.get("precision", DEFAULT_PRECISION) == key.get("precision", DEFAULT_PRECISION)
    return same_precision and all(baseline.get(k) == v for k, v in key.items())


def _resume(T: Any, tm: Any, opt: Any, paths: RunPaths, fingerprint: dict, monitor: StabilityMonitor,
            recipe: TrainRecipe, val: list, baseline: dict | None,
            segment: Segment) -> tuple[int, float, float, str]:
    """Where training starts (step, seconds so far) and the untrained model's validation loss with its
    source: a checkpoint's (this run's own, else the previous segment's continuation), the val_baseline
    stage's (``baseline``, when its key matches), or computed. The seconds of this run's own checkpoint
    come from :func:`_checkpoint_seconds`."""
    if paths.checkpoint.exists():
        state = T.load_checkpoint(paths.checkpoint, tm, opt, fingerprint)
    elif segment.previous is not None:
        state = _continue(T, tm, opt, RunPaths(segment.previous, paths.checkpoint_name), fingerprint, segment,
                          recipe)
    else:
        state = None
    if state is not None:
        monitor.load(state["monitor"])
        # a segment counts its own seconds (the previous segment's run reports its own)
        seconds = _checkpoint_seconds(paths, state, segment.steps(recipe.steps).start) \
            if paths.checkpoint.exists() else 0.0
        return state["step"], seconds, state["val_loss_before"], state.get("val_loss_before_from", "computed")
    if baseline is not None:
        return 0, 0.0, baseline["val_loss_before"], "val_baseline"
    # the untrained model's validation loss: the baseline the run must beat
    return 0, 0.0, round(T.mean_loss(tm, val, recipe.batch_size, lambda n: None), 6), "computed"


def _checkpoint_seconds(paths: RunPaths, state: dict, first: int) -> float:
    """The train seconds this run had spent when its checkpoint (at ``state["step"]``) was written: the
    entry ``checkpoint_seconds.json`` keeps for that step. Without one (the file deleted, or a checkpoint
    written before the seconds moved out of it), a checkpoint's own ``train_seconds`` (the old layout), else
    the step log's timing of this run's steps ``first`` to the checkpoint: each line's tokens over its
    throughput (``tok_per_s``, rounded to 0.1 tok/s, so within a fraction of a percent)."""
    step = state["step"]
    if paths.seconds.exists():
        try:
            kept = json.loads(paths.seconds.read_text(encoding="utf-8"))
        except json.JSONDecodeError:  # written atomically: only a hand edit gets here; the fallbacks apply
            kept = {}
        if isinstance(kept, dict) and isinstance(kept.get(str(step)), (int, float)):
            return float(kept[str(step)])
    if "train_seconds" in state:
        return float(state["train_seconds"])
    return sum(r["tokens"] / r["tok_per_s"] for r in read_log(paths.log, step)
               if r["step"] >= first and r.get("tok_per_s"))


# What a segment must share with the one it continues: everything that defines the schedule and the model.
SHARED_BY_SEGMENTS = ("seed", "recipe", "base_model", "base_weights")


def _continue(T: Any, tm: Any, opt: Any, previous: RunPaths, fingerprint: dict, segment: Segment,
              recipe: TrainRecipe) -> dict:
    """Load the state the previous segment's run left, after checking that it is that run's (its
    config.json) and that the run trained the segment before this one of the same schedule."""
    config = previous.root / "config.json"
    if not previous.continuation.exists() or not config.exists():
        raise TrainingError(f"{previous.root}: no finished run with a {previous.continuation.name} to continue "
                            f"(segment {segment.index} of {segment.count} starts where segment {segment.index - 1} "
                            f"ended); train that run first")
    theirs = {k: v for k, v in json.loads(config.read_text(encoding="utf-8")).items() if k != "device"}
    wrong = [k for k in SHARED_BY_SEGMENTS if theirs.get(k) != fingerprint[k]]
    if theirs.get("segment") != [segment.index - 1, segment.count]:
        wrong.append(f"segment {theirs.get('segment')} (expected {[segment.index - 1, segment.count]})")
    if wrong:
        raise TrainingError(f"{config}: the run to continue differs from this one in {', '.join(wrong)}")
    state = T.load_checkpoint(previous.continuation, tm, opt, theirs)
    if state["step"] != segment.steps(recipe.steps).start:
        raise TrainingError(f"{previous.continuation}: ends at step {state['step']}, but segment {segment.index} "
                            f"of {segment.count} starts at step {segment.steps(recipe.steps).start}")
    return state


def _publish(run: Run, paths: RunPaths, fingerprint: dict, device: str, summary: dict, stability_log: Path,
             monitor: StabilityMonitor, steps: int, continuable: bool) -> None:
    """A finished run's config, summary, stability record and manifest; the last checkpoint is removed,
    or kept as the continuation a later segment starts from."""
    write_json(paths.root / "config.json", {**fingerprint, "device": device})
    write_json(paths.root / "summary.json", summary)
    update_stability_log(stability_log, {"run": run.name, "status": "passed", "steps": steps,
                                         "final_ema_loss": monitor.ema, "min_ema_loss": monitor.min_ema})
    if continuable:
        paths.continuation.parent.mkdir(exist_ok=True)
        paths.checkpoint.replace(paths.continuation)
    else:
        paths.checkpoint.unlink(missing_ok=True)
    paths.seconds.unlink(missing_ok=True)  # the timing of a checkpoint no longer there (summary.json has it)
    write_manifest(paths.root, folder_files(paths.root), {"run": run.name, "stage": "train"})


def _weights_id(folder: Path) -> str:
    """The converted weights' identity (source hash or revision), so a checkpoint is tied to them."""
    meta = folder / "ccl_source.json"
    if meta.exists():
        return json.loads(meta.read_text(encoding="utf-8")).get("safetensors_sha256", "")
    return str(folder.resolve())


def _archive(run: Run, paths: RunPaths, archive_dir: Path, stability_log: Path, step: int,
             reason: str) -> dict:
    dest = archive_dir / run.name
    shutil.rmtree(dest, ignore_errors=True)
    dest.parent.mkdir(parents=True, exist_ok=True)
    paths.checkpoint.unlink(missing_ok=True)
    paths.seconds.unlink(missing_ok=True)
    shutil.move(str(paths.root), dest)
    record = {"run": run.name, "status": "broken", "step": step, "reason": reason,
              "archived_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    write_json(dest / "reason.json", record)
    update_stability_log(stability_log, record)
    raise Diverged(f"run {run.name} broke the stability rule at step {step}: {reason}; moved to {dest}")
