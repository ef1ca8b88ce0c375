"""The OpenVINO run-time-LoRA sampler against the torch sampler, by the standard in README.md (issue 56).

    python -m experiments.ov_lora_sampler.measure --init RUN_FOLDER --out experiments/ov_lora_sampler/agreement.json

RUN_FOLDER is C_s0's run folder (its ``adapter/``), trained by the cpu recipe in float32. Eight GRPO steps
of the cpu profile (sparse reward) on GRPO's own training-pool slices: each step both engines sample the
step's groups (the order alternating), every token OpenVINO drew is scored by the torch float32 model on
the same path, and the torch samples drive one update. The merged re-export this sampler replaces is
timed once at the end. Reads the training pool only.
"""
from __future__ import annotations

import argparse
import copy
import json
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np
import torch
from scipy.stats import wilcoxon

from ccl.artifacts.inputs import split_rows
from ccl.artifacts.jsonio import sha256_file, write_json
from ccl.config import ModelsConfig, load_params, stage_config
from ccl.devices import cpu_record
from ccl.learn.grpo import GroupSampler, GrpoConfig, Learner, learner_parts, lr_at, sample, update
from ccl.models.openvino_export import export_ir
from ccl.models.weights import gguf_file, model_dir
from ccl.policy.openvino_lora import OpenVINOLoraBackend
from ccl.policy.torch_backend import TorchBackend
from ccl.train.torch_trainer import ADAPTER_FILE
from scripts.layout import PARAMS
from scripts.model_store import model_store

STEPS = 8
DESIGN = "sparse"
MEAN_ABS, MEAN = 1e-3, 1e-3  # A1's bounds, nats per token (README.md)
MAX_POINTS = 10.0  # A3


def torch_logps(model, trace: list[dict]) -> list[float]:
    """The torch model's log-probability of every token OpenVINO drew, on the path it drew it on."""
    out = []
    with torch.no_grad():
        for t in trace:
            ids = torch.tensor([t["path"] + t["ids"]])
            logp = model(input_ids=ids).logits[0].float().log_softmax(-1)
            start = len(t["path"]) - 1
            out += [float(logp[start + i, tok]) for i, tok in enumerate(t["ids"])]
    return out


def gaps(trace: list[dict], theirs: list[float]) -> dict:
    mine = [x for t in trace for x in t["logps"]]
    if len(mine) != len(theirs):
        raise ValueError(f"OpenVINO reported {len(mine)} log-probabilities for {len(theirs)} tokens")
    d = np.asarray(mine) - np.asarray(theirs)
    return {"tokens": int(d.size), "mean_abs": float(np.abs(d).mean()), "mean": float(d.mean()),
            "p99_abs": float(np.quantile(np.abs(d), 0.99)), "max_abs": float(np.abs(d).max())}


def task_success(groups) -> dict[str, float]:
    return {g[0].task["id"]: sum(s.sparse for s in g) / len(g) for g in groups}


def one_step(step: int, cfg: GrpoConfig, pool, learners: dict[str, Learner]) -> dict:
    tasks = cfg.step_tasks(pool, step)
    ov = learners["openvino"].sampler.backend
    order = ["torch", "openvino"] if step % 2 == 0 else ["openvino", "torch"]
    groups, seconds = {}, {}
    loads_before = len(ov.loads)
    trace: list[dict] = []
    tokens = {}
    for engine in order:
        ov.trace = trace if engine == "openvino" else None
        stats = learners[engine].sampler.stats
        before = stats.new_tokens
        t0 = time.perf_counter()
        groups[engine] = sample(learners[engine], tasks, step)
        seconds[engine] = round(time.perf_counter() - t0, 2)
        tokens[engine] = stats.new_tokens - before
    ov.trace = None
    t0 = time.perf_counter()
    rec = gaps(trace, torch_logps(learners["torch"].tm.model, trace))
    score_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    upd = update(learners["torch"], groups["torch"], DESIGN, lr_at(cfg, step))
    return {"step": step, "order": order, "sample_s": seconds, "new_tokens": tokens, "loads": ov.loads[loads_before:],
            "score_s": round(score_s, 2), "update_s": round(time.perf_counter() - t0, 2), "updated": upd["updated"],
            "success": {e: task_success(groups[e]) for e in groups}, "logp_gap": rec}


def reexport_seconds(tm, folder: Path, spec, ov: OpenVINOLoraBackend) -> dict:
    """What the run-time LoRA replaces: the merged model exported and its pipeline built, timed once."""
    merged = copy.deepcopy(tm.model).merge_and_unload()
    with tempfile.TemporaryDirectory(prefix="ccl-reexport-") as tmp:
        t0 = time.perf_counter()
        ir = export_ir(gguf_file(spec, Path(tmp)), merged, Path(tmp) / "ir")
        exported = time.perf_counter() - t0
        ov._pipeline(ir, ov.properties, ov.max_seqs)
        built = time.perf_counter() - t0
    return {"export_s": round(exported, 2), "export_and_pipeline_s": round(built, 2)}


def speed(steps: list[dict]) -> dict:
    """Sampling seconds and generated tokens per engine over all steps (OpenVINO's seconds include its
    weight loads), and tokens per second: the engines draw different episodes, so lengths differ."""
    out = {}
    for e in ("torch", "openvino"):
        seconds, tokens = sum(s["sample_s"][e] for s in steps), sum(s["new_tokens"][e] for s in steps)
        out[e] = {"seconds": round(seconds, 1), "new_tokens": tokens, "tokens_per_s": round(tokens / seconds, 2)}
    out["openvino_over_torch_tokens_per_s"] = round(out["openvino"]["tokens_per_s"] / out["torch"]["tokens_per_s"], 2)
    return out


def verdict(steps: list[dict]) -> dict:
    every = [s["logp_gap"] for s in steps]
    tokens = sum(g["tokens"] for g in every)
    pooled = {k: sum(g[k] * g["tokens"] for g in every) / tokens for k in ("mean_abs", "mean")}
    a1 = pooled["mean_abs"] <= MEAN_ABS and abs(pooled["mean"]) <= MEAN
    a2 = all(g["mean_abs"] <= MEAN_ABS and abs(g["mean"]) <= MEAN for g in every)
    ov = [r for s in steps for r in s["success"]["openvino"].values()]
    pt = [r for s in steps for r in s["success"]["torch"].values()]
    diff = [a - b for a, b in zip(ov, pt)]
    p = 1.0 if not any(diff) else float(wilcoxon(ov, pt).pvalue)
    points = 100 * statistics.mean(diff)
    a3 = p >= 0.05 and abs(points) <= MAX_POINTS
    return {"tokens": tokens, "pooled_gap": pooled, "A1": a1, "A2": a2,
            "success_openvino": statistics.mean(ov), "success_torch": statistics.mean(pt), "tasks": len(ov),
            "difference_points": round(points, 2), "wilcoxon_p": round(p, 4), "A3": a3, "agrees": a1 and a2 and a3}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--init", type=Path, required=True, help="C_s0's run folder (float32, the cpu recipe)")
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()
    values = load_params(PARAMS)
    cfg, _ = stage_config(values, "grpo", GrpoConfig, "cpu", where=str(PARAMS))
    if (cfg.temperature, cfg.top_p) != (1.0, 1.0):  # A1 compares with torch's plain softmax
        raise SystemExit(f"A1 compares log-probabilities at temperature 1 and top-p 1; grpo has {cfg.temperature}, "
                         f"{cfg.top_p}")
    models, _ = stage_config(values, "models", ModelsConfig, "cpu", where=str(PARAMS))
    store = model_store()
    folder, spec = model_dir(store, models.student), store.spec(models.student)
    pool = split_rows(PARAMS.parent / "data" / "v1" / "tasks", "train_pool", need_rows=True)
    tm, ref, gen, opt = learner_parts(folder, args.init / "adapter", "cpu", cfg)
    backends = {"torch": TorchBackend.around(tm.model, tm.tok),
                "openvino": OpenVINOLoraBackend.around(tm.model, tm.tok, folder, spec)}
    learners = {e: Learner(tm, ref, GroupSampler(b, gen, name=f"C_grpo_{DESIGN}_s0"), opt, cfg) for e, b in backends.items()}
    steps = []
    for step in range(STEPS):
        steps.append(one_step(step, cfg, pool, learners))
        print(json.dumps({k: steps[-1][k] for k in ("step", "sample_s", "new_tokens", "loads", "updated", "logp_gap")}),
              flush=True)
    record = {"machine": cpu_record(), "init_adapter_sha256": sha256_file(args.init / "adapter" / ADAPTER_FILE),
              "grpo": cfg.record(), "design": DESIGN, "steps": steps,
              "reexport": reexport_seconds(tm, folder, spec, backends["openvino"]),
              "first_load_s": backends["openvino"].loads[0], "speed": speed(steps), "verdict": verdict(steps)}
    write_json(args.out, record)
    print(json.dumps({k: record[k] for k in ("verdict", "speed", "reexport")}, indent=1))


if __name__ == "__main__":
    main()
