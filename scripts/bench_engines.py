"""Engine benchmark (issue 39): the cpu profile's evaluation episodes through the torch engine (the
reference: token-level refill, ccl/policy/torch_continuous.py) and other engines, side by side in one
run, same tasks, prompts and greedy decoding: the openvino backend (ccl/policy/openvino_backend.py) and,
where llama-cpp-python is installed, the llama.cpp engine measured and not adopted
(experiments/engine_bench2/llama_backend.py).

    python -m scripts.bench_engines [--episodes 128] [--engines openvino,llamacpp] [--adapter runs/C_s0] [--out FILE]

Prints, per engine, seconds, episodes/s (and the ratio to torch, measured in this run), prompt and new
tokens, and its efficiency record (prefill and decode seconds and tokens/s, padding, slot use: the fields
ccl.records.EngineRecord defines for every engine, as the evaluate stage writes them; llama.cpp, not
adopted, has none); then, per engine, agreement with the torch reference under the rule fixed before
measuring (experiments/engine_bench2/README.md):

- identical transcripts on at least 97% of episodes;
- every divergence starts at a near-tie: at the first token where an engine's turn leaves the torch
  transcript, one unbatched torch forward along the engine's token path gives torch's logit of its own
  choice minus its logit of the engine's token; that gap is below ``--near-tie`` (default 0.01, the
  rule's threshold; its yardstick: experiments/engine_bench2/kernel_variation.py);
- strict verdicts (ruler 1 and ruler 2) pooled within the same bounds.

    python -m scripts.bench_engines --precision [--episodes 64] [--adapter runs/C_s0] [--engines openvino,torch]

instead runs each engine in float32 and in bfloat16 (issue 56) on the first tasks of ``val_pool`` (a
choice of precision is made on validation tasks, never on an evaluation split): episodes/s and the ratio
bfloat16/float32 per engine (target: 2x on OpenVINO with AMX), and the agreement of
experiments/bf16_cpu/README.md: identical transcripts with the float32 twin, and at each divergence
float32 torch's gap along the bfloat16 path (``--near-tie``: the README's delta, from its yardstick).

The JSON summary (``--out``) holds every number printed, each engine's counts behind its record, and the
process's peak memory (every engine's included: one process runs them all, so the per-engine peak is the
evaluate stage's, one engine per process).
"""
from __future__ import annotations

import argparse
import json
import time

import torch

from ccl.artifacts.jsonio import write_json
from ccl.episode.rollout import rollout
from ccl.judge.judging import verdict_row
from ccl.policy.base import GenConfig, ModelPolicy
from ccl.policy.load import load_backend
from ccl.resources import peak_memory_gb
from ccl.stages.evaluate import plan
from ccl.vocabulary import RULER2, STUDENT_BASE, STUDENT_FEWSHOT

from .layout import DATA, PARAMS
from .model_store import model_store


def run_engine(tasks, policy, batch_size: int, fewshot: bool) -> tuple[float, dict]:
    """Seconds and {task id: (messages as (role, content), ruler-1 success, ruler-2 success)}."""
    t0 = time.perf_counter()
    eps = [(task, ep) for task, ep, _, _ in rollout(tasks, policy, batch_size, fewshot=fewshot)]
    dt = time.perf_counter() - t0
    out = {}
    for task, ep in eps:
        row = verdict_row(task, {"task_id": task["id"], "record": ep.record()})
        out[task["id"]] = ([(m["role"], m["content"]) for m in ep.messages], row["verdict"]["success"],
                           row[RULER2]["success"])
    return dt, out


def first_divergence(a: list[tuple[str, str]], b: list[tuple[str, str]]) -> int:
    """The index of the first assistant turn whose text differs (the world answers actions
    deterministically, so the first differing message is an assistant's)."""
    turn = 0
    for (role, x), (_, y) in zip(a, b):
        if x != y:
            return turn
        turn += role == "assistant"
    return turn


class Recorder:
    """Keeps each turn's token path (prompt ids, generated ids) by task, so a divergence can be located
    token by token: OpenVINO's from its backend's trace of finished turns, llama.cpp's by wrapping its
    decoder's turn ends."""

    def __init__(self, dec):
        self.dec, self._turns = dec, {}
        if hasattr(dec.b, "trace"):  # OpenVINO
            dec.b.trace = []
            return
        finish = dec._finish

        def record(turn):
            out = finish(turn)
            ids, gen = turn.state["ids"], turn.out  # the state's path ends with every generated token but the last
            prompt = ids[: len(ids) - (len(gen) - 1)]
            self._turns.setdefault(turn.key[0].task["id"], []).append((list(prompt), list(gen)))
            return out

        dec._finish = record

    @property
    def turns(self) -> dict[str, list[tuple[list[int], list[int]]]]:
        trace = getattr(self.dec.b, "trace", None)
        if trace is None:
            return self._turns
        out: dict[str, list[tuple[list[int], list[int]]]] = {}
        for t in trace:
            out.setdefault(t["key"][0].task["id"], []).append((t["path"], t["ids"]))
        return out


def margins(torch_backend, prompt: list[int], out: list[int]) -> tuple[int, float, float]:
    """Where the torch reference leaves llama.cpp's path through one turn, by one unbatched torch forward
    over that path: (token index or -1, torch's top-2 logit margin there, torch's logit of its own
    choice minus its logit of llama.cpp's token)."""
    ids = torch.tensor([prompt + out[:-1]])
    with torch.inference_mode():
        logits = torch_backend.model(input_ids=ids).logits[0, len(prompt) - 1:]
    top = logits.topk(2, dim=-1)
    for k, t in enumerate(out):
        if int(top.indices[k, 0]) != t:
            return k, float(top.values[k, 0] - top.values[k, 1]), float(top.values[k, 0] - logits[k, t])
    return -1, 0.0, 0.0


def recorded(policy: ModelPolicy, bs: int, engine: str) -> tuple[ModelPolicy, Recorder | None, object]:
    """The policy with its decoder's turns recorded, the recorder and the decoder. The torch decoder keeps
    its turns' caches, not their token paths: its turns are not recorded (divergences not located)."""
    dec = policy.decoder(bs) if hasattr(policy, "decoder") else None
    if dec is None:
        return policy, None, None
    policy.decoder = lambda slots, dec=dec: dec  # the rollout asks for the decoder: this one, summarised after
    if engine == "torch":
        return policy, None, dec
    return policy, Recorder(dec), dec


def precision_pair(store, model: str, engine: str, adapter: str | None, tasks: list, gen: GenConfig, bs: int,
                   arbiter, near_tie: float) -> dict:
    """One engine in float32 then bfloat16 on ``tasks``: seconds, episodes/s, the ratio, and the bfloat16
    run's agreement with its float32 twin (each divergence located along the bfloat16 path by
    ``arbiter``, a float32 torch backend)."""
    runs = {}
    for precision in ("float32", "bfloat16"):
        backend = load_backend(store, model, engine, adapter, precision=precision)
        policy, rec, dec = recorded(ModelPolicy(backend, gen), bs, engine)
        seconds, got = run_engine(tasks, policy, bs, False)
        runs[precision] = {"seconds": seconds, "got": got, "rec": rec, "efficiency": engine_efficiency(dec)["efficiency"]}
        del backend, policy, dec
    n, f32, bf = len(tasks), runs["float32"], runs["bfloat16"]
    if bf["rec"] is not None:
        agree = agreement(arbiter, f32["got"], bf["got"], bf["rec"], near_tie)
    else:  # identical transcripts and verdicts only
        same = [k for k in f32["got"] if f32["got"][k][0] == bf["got"][k][0]]
        agree = {"identical_transcripts": len(same), "divergences": None,
                 "identical_verdicts_ruler1": sum(f32["got"][k][1] == bf["got"][k][1] for k in f32["got"])}
    return {"engine": engine, "episodes": n, "seconds": {p: round(r["seconds"], 1) for p, r in runs.items()},
            "episodes_per_s": {p: round(n / r["seconds"], 4) for p, r in runs.items()},
            "bf16_over_f32": round(f32["seconds"] / bf["seconds"], 2),
            "efficiency": {p: r["efficiency"] for p, r in runs.items()},
            "outcomes_ruler1": {p: [r["got"][t["id"]][1] for t in tasks] for p, r in runs.items()},
            **{k: v for k, v in agree.items() if k != "agreement_met"},
            "all_divergences_near_ties": None if agree["divergences"] is None else all(d["near_tie"] for d in agree["divergences"])}


def precision_main(args: argparse.Namespace) -> None:
    from ccl.artifacts.inputs import split_rows
    from ccl.devices import cpu_record

    p = plan(PARAMS, args.profile, args.config, None, DATA)
    tasks = split_rows(DATA / "tasks", "val_pool", need_rows=True)[: args.episodes or 64]
    gen, bs, store = GenConfig(max_new_tokens=p.cfg.max_new_tokens), p.cfg.batch_size, model_store()
    arbiter = load_backend(store, args.model, "torch", args.adapter)
    rows = [precision_pair(store, args.model, e, args.adapter, tasks, gen, bs, arbiter, args.near_tie)
            for e in args.engines.split(",")]
    summary = {**cpu_record(), "tasks": "val_pool", "episodes": len(tasks), "adapter": args.adapter,
               "near_tie": args.near_tie, "engines": rows}
    for r in rows:
        print(f"{r['engine']:9s} float32 {r['seconds']['float32']:7.1f} s, bfloat16 {r['seconds']['bfloat16']:7.1f} s: "
              f"{r['bf16_over_f32']:.2f}x episodes/s; identical transcripts {r['identical_transcripts']}/{len(tasks)}; "
              + (f"divergences at a near-tie (float32 gap < {args.near_tie}) "
                 f"{sum(d['near_tie'] for d in r['divergences'])}/{len(r['divergences'])}" if r["divergences"] is not None
                 else "divergences not located (no token paths recorded)"))
    if args.out:
        write_json(args.out, summary)
    print(json.dumps({k: v for k, v in summary.items()}, default=str))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default="smollm2-135m-instruct")
    ap.add_argument("--config", default=STUDENT_BASE, help=f"{STUDENT_BASE} or {STUDENT_FEWSHOT}")
    ap.add_argument("--profile", default="cpu")
    ap.add_argument("--episodes", type=int, default=None, help="first N of the profile's tasks (default all)")
    ap.add_argument("--adapter", default=None, help="a trained run (runs/<run>) to apply on both engines")
    ap.add_argument("--engines", default="openvino", help="comma-separated: openvino, llamacpp")
    ap.add_argument("--near-tie", type=float, default=0.01)
    ap.add_argument("--precision", action="store_true", help="each engine in float32 and bfloat16, on val_pool")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    if args.precision:
        return precision_main(args)
    p = plan(PARAMS, args.profile, args.config, None, DATA)
    tasks = p.tasks[: args.episodes]
    gen, bs, fewshot = GenConfig(max_new_tokens=p.cfg.max_new_tokens), p.cfg.batch_size, args.config == STUDENT_FEWSHOT
    store = model_store()
    tb = load_backend(store, args.model, "torch", args.adapter)
    n = len(tasks)
    print(f"{n} episodes ({args.profile} profile, {args.config}), {args.model}"
          f"{' + ' + args.adapter if args.adapter else ''}, batch {bs}, greedy, max {gen.max_new_tokens} new "
          f"tokens/turn, {torch.get_num_threads()} threads")
    tp = ModelPolicy(tb, gen)
    t_torch, ref = run_engine(tasks, tp, bs, fewshot)
    rows = [{"engine": "torch", "seconds": round(t_torch, 1), "episodes_per_s": round(n / t_torch, 4),
             "prompt_tokens": tp.stats.prompt_tokens, "new_tokens": tp.stats.new_tokens,
             **engine_efficiency(tp.stats.engine)}]
    print(f"torch     {t_torch:8.1f} s  {n / t_torch:6.3f} episodes/s  ({tp.stats.prompt_tokens} prompt tokens, "
          f"{tp.stats.new_tokens} new tokens)")
    print_efficiency(rows[0])
    for engine in args.engines.split(","):
        t0 = time.perf_counter()
        backend = engine_backend(store, args.model, engine, args.adapter)
        load_s = time.perf_counter() - t0
        policy = ModelPolicy(backend, gen)
        dec = policy.decoder(bs)
        rec = Recorder(dec)
        policy.decoder = lambda slots, dec=dec: dec  # the rollout asks for the decoder: the recorded one
        t, got = run_engine(tasks, policy, bs, fewshot)
        row = {"engine": engine, "seconds": round(t, 1), "episodes_per_s": round(n / t, 4), "load_s": round(load_s, 1),
               "prompt_tokens": policy.stats.prompt_tokens, "new_tokens": policy.stats.new_tokens,
               "ratio_to_torch": round(t_torch / t, 3), **engine_efficiency(dec)}
        row.update(agreement(tb, ref, got, rec, args.near_tie))
        rows.append(row)
        print(f"{engine:9s} {t:8.1f} s  {n / t:6.3f} episodes/s  (load {load_s:.1f} s; {policy.stats.prompt_tokens} "
              f"prompt tokens, {policy.stats.new_tokens} new tokens)")
        print_efficiency(row)
        print(f"  {engine} / torch: {t_torch / t:.2f}x episodes/s; identical transcripts {row['identical_transcripts']}/{n}"
              f" ({100 * row['identical_transcripts'] / n:.1f}%), divergences at a near-tie (torch gap < {args.near_tie})"
              f" {sum(d['near_tie'] for d in row['divergences'])}/{len(row['divergences'])}; identical verdicts "
              f"ruler 1 {row['identical_verdicts_ruler1']}/{n}, ruler 2 {row['identical_verdicts_ruler2']}/{n}; "
              f"successes ruler 1 {row['successes_ruler1']} (torch {sum(r[1] for r in ref.values())}), ruler 2 "
              f"{row['successes_ruler2']} (torch {sum(r[2] for r in ref.values())}); agreement rule "
              f"{'MET' if row['agreement_met'] else 'NOT MET'}")
        for d in row["divergences"]:
            print(f"    diverged {d}")
        del backend, policy, dec, rec
    from ccl.devices import cpu_record

    summary = {**cpu_record(), "episodes": n, "config": args.config, "adapter": args.adapter, "near_tie": args.near_tie,
               "peak_mem_gb": peak_memory_gb(), "engines": rows}
    if args.out:
        write_json(args.out, summary)
    print(json.dumps(summary))


def engine_efficiency(dec) -> dict:
    """An engine's efficiency record (ccl.records.EngineRecord) and the counts behind it; none for a lock-step
    schedule (no decoder: a hybrid model on torch), and llama.cpp's decoder (measured, not adopted) has only
    its counts."""
    if dec is None:
        return {"efficiency": None, "counts": None}
    if hasattr(dec, "details"):
        return {"efficiency": dec.summary(), "counts": dec.details()}
    return {"efficiency": None, "counts": dec.summary()}


def print_efficiency(row: dict) -> None:
    e = row["efficiency"]
    if e is None:
        print(f"  {row['engine']}: no efficiency record; counts {row['counts']}")
        return
    print(f"  {row['engine']}: prefill {e['prefill_s']} s ({e['prefill_tok_per_s']} tokens/s), "
          f"decode {e['decode_s']} s ({e['decode_tok_per_s']} tokens/s), padding {e['prefill_padding']} "
          f"({row['counts']['prefill_padding_tokens']} tokens), slot use {e['decode_slot_use']}, "
          f"GFLOP useful {e['gflop_useful']} executed {e['gflop_executed']}")


def engine_backend(store, model: str, engine: str, adapter: str | None):
    if engine == "llamacpp":  # measured, not adopted: lives with its experiment
        from ccl.models.weights import model_dir
        from experiments.engine_bench2.llama_backend import LlamaBackend
        return LlamaBackend(model_dir(store, model), store.spec(model), adapter)
    return load_backend(store, model, engine, adapter)


def agreement(tb, ref: dict, got: dict, rec: Recorder, near_tie: float) -> dict:
    """Identical transcripts, each divergence's torch gap at its first differing token, verdicts."""
    n = len(ref)
    same = [k for k in ref if ref[k][0] == got[k][0]]
    diverged, turns = [], rec.turns  # (an OpenVINO recorder's turns are gathered from its trace once)
    for k in ref:
        if k in same:
            continue
        turn = first_divergence(ref[k][0], got[k][0])
        pos, margin, gap = margins(tb, *turns[k][turn])
        diverged.append({"task_id": k, "assistant_turn": turn, "token": pos, "torch_top2_margin": round(margin, 5),
                         "torch_gap_to_engine_token": round(gap, 5), "near_tie": gap < near_tie})
    return {"identical_transcripts": len(same), "divergences": diverged,
            "identical_verdicts_ruler1": sum(ref[k][1] == got[k][1] for k in ref),
            "identical_verdicts_ruler2": sum(ref[k][2] == got[k][2] for k in ref),
            "successes_ruler1": sum(r[1] for r in got.values()), "successes_ruler2": sum(r[2] for r in got.values()),
            "agreement_met": len(same) >= 0.97 * n and all(d["near_tie"] for d in diverged)}


if __name__ == "__main__":
    main()
