"""The agreement runs of experiments/bf16_cpu/README.md (issue 56), one record per part.

    python -m experiments.bf16_cpu.agreement train [--work DIR] [--out experiments/bf16_cpu/train_agreement.json]
    python -m experiments.bf16_cpu.agreement generate [--work DIR] [--out experiments/bf16_cpu/generate_agreement.json]

``generate`` first measures the yardstick (16 first-turn prompts of ``val_pool``: float32 against bfloat16
torch logits over the whole vocabulary at the last position; delta = twice their 99th percentile
absolute difference), then runs ``scripts.bench_engines``' precision comparison with that delta on the
cpu profile's engine (OpenVINO) and on torch, with the float32-trained C adapter of ``train`` (G1-G3).

``train`` trains the cpu profile's C recipe (seed 0) in float32 and in bfloat16 through the project's own
training run (``ccl.train.run.train_run``), computing at each checkpoint the validation loss of the LoRA
weights so far on a float32 model (T1), and records each run's stability and minutes; then both adapters
play the same ``VAL_TASKS`` tasks of ``val_pool`` greedily on the cpu profile's float32 engine, judged by
ruler 1 (T3: exact McNemar and the 10-point bound). Adapters and runs stay under ``--work`` (not kept);
the JSON record is what the README quotes.
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import time
from pathlib import Path

import torch
from scipy.stats import binomtest

from ccl.artifacts.inputs import split_rows
from ccl.artifacts.jsonio import write_json
from ccl.config import load_params, stage_config, stage_with_models
from ccl.devices import cpu_record
from ccl.episode.evaluate_config import EvaluateConfig
from ccl.episode.rollout import rollout
from ccl.judge.validate import validate
from ccl.models.weights import model_dir
from ccl.policy.base import GenConfig
from ccl.policy.load import load_policy
from ccl.train import torch_trainer as T
from ccl.train.recipe import TrainRecipe
from ccl.train.run import train_run, validation_set
from ccl.vocabulary import Run
from scripts.layout import DATA, PARAMS
from scripts.model_store import model_store

VAL_TASKS = 64  # the README's T3/G3 sample of val_pool
YARDSTICK_PROMPTS = 16
LOSS_TOLERANCE = 0.02  # T1, nats
RATE_BOUND = 0.10  # T3/G3: success rates at most 10 points apart
ALPHA = 0.05


def mcnemar(a: list[bool], b: list[bool]) -> dict:
    """Paired outcomes: the discordant counts, the exact two-sided McNemar p and the rate difference."""
    ab = sum(x and not y for x, y in zip(a, b))
    ba = sum(y and not x for x, y in zip(a, b))
    p = binomtest(ab, ab + ba, 0.5).pvalue if ab + ba else 1.0
    diff = (sum(b) - sum(a)) / len(a)
    return {"n": len(a), "rate_a": sum(a) / len(a), "rate_b": sum(b) / len(b), "difference": diff,
            "a_only": ab, "b_only": ba, "mcnemar_p": p, "holds": p >= ALPHA and abs(diff) <= RATE_BOUND}


def successes(store, model: str, engine: str, adapter: Path, tasks: list[dict], max_new_tokens: int,
              precision: str = "float32") -> tuple[list[bool], list[dict], float]:
    """Ruler 1's strict success per task (in ``tasks`` order), the transcripts, and the seconds taken."""
    policy = load_policy(store, model, engine, adapter, GenConfig(max_new_tokens=max_new_tokens), precision=precision)
    start = time.perf_counter()
    records = {f.task["id"]: f.episode.record() for f in rollout(tasks, policy, batch_size=32)}
    seconds = time.perf_counter() - start
    return [validate(t, records[t["id"]])["success"] for t in tasks], [records[t["id"]] for t in tasks], seconds


def train_part(work: Path) -> dict:
    params = load_params(PARAMS)
    recipe, _ = stage_config(params, "train", TrainRecipe, "cpu")
    ev, models, _ = stage_with_models(PARAMS, "evaluate", EvaluateConfig, "cpu")
    store = model_store()
    folder = model_dir(store, models.student)
    val_file = DATA / "sft" / "oracle_val.jsonl"
    judge = T.load_for_training(folder, recipe, 0, "cpu")  # float32: every checkpoint's loss is read here
    val = validation_set(judge, val_file, recipe)
    lora = {n: p for n, p in judge.model.named_parameters() if p.requires_grad}
    out: dict = {"machine": cpu_record(), "recipe": dataclasses.asdict(recipe), "runs": {}}
    for precision in ("float32", "bfloat16"):
        losses: dict[int, float] = {}

        def measure(step: int, tm, losses=losses) -> None:
            with torch.no_grad():
                for n, p in tm.model.named_parameters():
                    if p.requires_grad:
                        lora[n].copy_(p)
            losses[step] = round(T.mean_loss(judge, val, recipe.batch_size, lambda n: None), 6)

        root = work / precision
        summary = train_run(Run("C", 0), dataclasses.replace(recipe, precision=precision), models.student, folder,
                            "torch", DATA / "variants" / "C.jsonl", val_file, root / "runs", root / "archive",
                            root / "stability.jsonl", "cpu", on_checkpoint=measure)
        out["runs"][precision] = {"val_loss_float32_at": losses, "summary": summary}
    ref, bf = (out["runs"][p]["val_loss_float32_at"] for p in ("float32", "bfloat16"))
    gaps = {step: round(bf[step] - ref[step], 6) for step in ref}
    out["T1"] = {"gaps": gaps, "tolerance": LOSS_TOLERANCE, "holds": all(abs(g) <= LOSS_TOLERANCE for g in gaps.values())}
    out["T2"] = {"holds": all(r["summary"]["stability"] == "passed" for r in out["runs"].values())}
    tasks = split_rows(DATA / "tasks", "val_pool", need_rows=True)[:VAL_TASKS]
    ok = {}
    for precision in ("float32", "bfloat16"):
        ok[precision], _, seconds = successes(store, models.student, models.student_generation,
                                              work / precision / "runs" / "C_s0", tasks, ev.max_new_tokens)
        out["runs"][precision]["eval_seconds"] = round(seconds, 1)
    out["T3"] = {**mcnemar(ok["float32"], ok["bfloat16"]), "engine": models.student_generation, "tasks": [t["id"] for t in tasks]}
    out["agrees"] = out["T1"]["holds"] and out["T2"]["holds"] and out["T3"]["holds"]
    return out


def yardstick(store, model: str, adapter: Path, tasks: list[dict], n: int = YARDSTICK_PROMPTS) -> dict:
    """|bfloat16 - float32| torch logits at the last position of ``n`` first-turn prompts, every vocabulary
    entry: its 99th percentile and maximum, and delta (twice the 99th percentile)."""
    from ccl.episode import chat
    from ccl.episode.runtime import Episode
    from ccl.policy.load import load_backend

    pair = {p: load_backend(store, model, "torch", adapter, precision=p) for p in ("float32", "bfloat16")}
    tok = pair["float32"].tok
    diffs = []
    for task in tasks[:n]:
        ids = torch.tensor([tok(chat.prompt(tok, Episode(task).messages), add_special_tokens=False).input_ids])
        with torch.inference_mode():
            logits = {p: b.model(input_ids=ids, logits_to_keep=1).logits[0, -1].float() for p, b in pair.items()}
        diffs.append((logits["bfloat16"] - logits["float32"]).abs())
    d = torch.cat(diffs)
    p99 = float(torch.quantile(d, 0.99))
    return {"prompts": n, "p99_abs_logit_difference": round(p99, 5), "max_abs_logit_difference": round(float(d.max()), 5),
            "delta": round(2 * p99, 5)}


def generate_part(work: Path, save=lambda record: None) -> dict:
    """G1-G3 (see the module's text); ``save`` is handed the record after each engine (a crash keeps those)."""
    from scripts.bench_engines import precision_pair

    ev, models, _ = stage_with_models(PARAMS, "evaluate", EvaluateConfig, "cpu")
    store = model_store()
    adapter = work / "float32" / "runs" / "C_s0"
    if not (adapter / "adapter").is_dir():
        raise SystemExit(f"{adapter}: no float32 C adapter; run the train part first (same --work)")
    tasks = split_rows(DATA / "tasks", "val_pool", need_rows=True)[:VAL_TASKS]
    ruler = yardstick(store, models.student, adapter, tasks)
    from ccl.policy.load import load_backend
    arbiter = load_backend(store, models.student, "torch", adapter)
    gen = GenConfig(max_new_tokens=ev.max_new_tokens)
    out: dict = {"machine": cpu_record(), "yardstick": ruler, "engines": {}}
    for engine in (models.student_generation, "torch"):
        row = precision_pair(store, models.student, engine, str(adapter), tasks, gen, ev.batch_size, arbiter, ruler["delta"])
        ok = row.pop("outcomes_ruler1")
        row["G1_identical_share"] = round(row["identical_transcripts"] / len(tasks), 4)
        row["G2_holds"] = row["all_divergences_near_ties"]
        row["G3"] = mcnemar(ok["float32"], ok["bfloat16"])
        row["agrees"] = bool(row["G2_holds"]) and row["G3"]["holds"]
        out["engines"][engine] = row
        save(out)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("part", choices=["train", "generate"])
    ap.add_argument("--work", type=Path, default=Path("/tmp/ccl-bf16"))
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()
    out = args.out or Path(__file__).with_name(f"{args.part}_agreement.json")

    def save(record: dict) -> None:
        write_json(out, json.loads(json.dumps(record, default=str)))

    record = train_part(args.work) if args.part == "train" else generate_part(args.work, save)
    save(record)
    print(json.dumps(record, indent=1, default=str))


if __name__ == "__main__":
    main()
