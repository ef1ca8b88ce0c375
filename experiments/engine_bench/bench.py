"""External-engine benchmark: the cpu profile's A_base evaluation episodes through
(a) the repository's torch engine (``ModelPolicy`` on the torch backend, token-level refill,
``rollout(tasks, policy, 32)``) and (b) OpenVINO GenAI (``ContinuousBatchingPipeline``,
float32, prefix caching) driven by the same episode loop.

    .venv/bin/python -m experiments.engine_bench.bench [--episodes N] [--ov-mode lockstep|refill|both]

OpenVINO runs in a child process with its own venv (``--ov-python``, default
/work/ovenv/bin/python; see README.md), fed token ids over JSON lines
(``ov_server.py``). The OpenVINO policy renders every episode with the model's chat
template and tokenises exactly as the torch backend does (the shared prompt head, then
each turn's increment after the cached text, generated ids kept as generated: ``--tokens
mirror``), so both engines see the same token sequences and OpenVINO's prefix cache finds
every earlier turn. ``--tokens full`` re-tokenises the whole rendered conversation each turn.

OpenVINO modes: ``lockstep`` (default): one batched ``generate`` call per round with every
live episode's prompt (the rollout's lock-step schedule); ``refill``: token-level refill
like the torch engine (``add_request`` / ``step``), a finished turn's next turn or a new
episode joins at once.

Prints episodes/s per engine, the ratio OpenVINO / torch, identical transcripts and
identical strict verdicts against the torch engine, and writes the numbers to
experiments/engine_bench/result.json (``--out``).
"""
from __future__ import annotations

import argparse
import itertools
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
if str(ROOT) not in sys.path:  # run as a script
    sys.path.insert(0, str(ROOT))

from ccl import chat
from ccl.judging import verdict_row
from ccl.models.weights import model_dir
from ccl.policy.base import GenConfig, ModelPolicy, cached_increment
from ccl.prompt_head import head_end
from ccl.rollout import rollout
from ccl.stages.evaluate import plan
from ccl.vocabulary import STUDENT_FEWSHOT
from scripts.layout import DATA, PARAMS
from scripts.model_store import model_store


# ---------------------------------------------------------------- the OpenVINO child process
class OVClient:
    def __init__(self, python: str, args: list[str]):
        # the server's stderr; kept (and named in the error) when it fails, removed by close()
        self.log = tempfile.NamedTemporaryFile("w+", prefix="ov_server_", suffix=".log", delete=False)  # noqa: SIM115
        self.p = subprocess.Popen([python, str(HERE / "ov_server.py"), *args], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=self.log, text=True, bufsize=1)
        ready = self._read()
        self.load_s = ready["load_s"]

    def _read(self) -> dict:
        line = self.p.stdout.readline()
        if not line:
            self.log.flush()
            tail = Path(self.log.name).read_text()[-3000:]
            raise RuntimeError(f"OpenVINO server exited (rc {self.p.poll()}); its stderr ({self.log.name}):\n{tail}")
        rep = json.loads(line)
        if "error" in rep:
            raise RuntimeError(f"OpenVINO server: {rep['error']}\n{rep.get('trace', '')}")
        return rep

    def __call__(self, op: str, **kw) -> dict:
        self.p.stdin.write(json.dumps({"op": op, **kw}) + "\n")
        self.p.stdin.flush()
        return self._read()

    def close(self) -> None:
        if self.p.poll() is None:
            try:
                self.p.stdin.write('{"op": "quit"}\n')
                self.p.stdin.flush()
                self.p.wait(timeout=30)
            except Exception:  # noqa: BLE001
                self.p.kill()
        self.log.close()
        if self.p.returncode == 0:
            Path(self.log.name).unlink(missing_ok=True)


class Tok:
    """The repository's own tokenizer and end tokens (as ``TorchBackend`` builds them)."""

    def __init__(self, folder: Path):
        from transformers import AutoTokenizer
        from transformers import GenerationConfig as HFGen

        self.tok = AutoTokenizer.from_pretrained(folder)
        eos = HFGen.from_pretrained(folder).eos_token_id
        eos = eos if isinstance(eos, list) else [eos]
        self.eos_ids = sorted({i for i in eos + [self.tok.eos_token_id] if i is not None})

    def render(self, messages: list[dict]) -> str:
        return chat.prompt(self.tok, messages)

    def encode(self, text: str) -> list[int]:
        return self.tok(text, add_special_tokens=False).input_ids


class OVPolicy:
    """Episodes through the OpenVINO server. Per-episode state in ``ep.backend_state``:
    ``text`` (what the token list spells) and ``ids`` (the token ids sent so far)."""

    def __init__(self, client: OVClient, tok: Tok, gen: GenConfig, refill: bool, tokens: str = "mirror"):
        self.c, self.t, self.gen, self.refill, self.tokens = client, tok, gen, refill, tokens
        self.rids = itertools.count()
        self.stats = {"calls": 0, "engine_s": 0.0, "server_s": 0.0, "prompt_tokens_sent": 0,
                      "increment_tokens": 0, "new_tokens": 0, "turns": 0, "stop": 0, "length": 0}

    # -------------------------------------------------------------- tokens
    def _ids(self, ep) -> list[int]:
        """Token ids of the episode's prompt, built as the torch backend builds its cache."""
        prompt = self.t.render(ep.messages)
        st = ep.backend_state
        if self.tokens == "full":
            ep.backend_state = {"text": prompt, "ids": self.t.encode(prompt)}
            inc = len(ep.backend_state["ids"])
        else:
            if st is None:
                st = ep.backend_state = {}
            cut = None if st else head_end(prompt)
            if cut is not None:  # a fresh episode: the shared head, tokenised on its own
                head = prompt[:cut]
                st["text"], st["ids"] = head, self.t.encode(head)
            rest = cached_increment(st, prompt)
            if rest is None:  # fresh without the head, or the template rewrote history
                st.clear()
                st["ids"], rest = [], prompt
            new = self.t.encode(rest)
            st["ids"] = st["ids"] + new
            st["text"] = prompt
            inc = len(new)
        self.stats["increment_tokens"] += inc
        self.stats["prompt_tokens_sent"] += len(ep.backend_state["ids"])
        ep.prompt_tokens += inc
        return ep.backend_state["ids"]

    def _done(self, ep, out: list[int], finish: str) -> str:
        """Record a finished turn; the last token stays out of the held text (as in the torch engine)."""
        st = ep.backend_state
        if self.tokens == "mirror":
            st["ids"] = st["ids"] + out[:-1]
            st["text"] = st["text"] + self.t.tok.decode(out[:-1])
        self.stats["new_tokens"] += len(out)
        self.stats["turns"] += 1
        self.stats[finish] = self.stats.get(finish, 0) + 1
        ep.new_tokens += len(out)
        return self.t.tok.decode(out, skip_special_tokens=True)

    # -------------------------------------------------------------- lock-step by turn
    def act_batch(self, eps) -> list[str]:
        ids = [self._ids(ep) for ep in eps]
        t0 = time.perf_counter()
        rep = self.c("generate", ids=ids, max_new_tokens=self.gen.max_new_tokens)
        self.stats["engine_s"] += time.perf_counter() - t0
        self.stats["server_s"] += rep["seconds"]
        self.stats["calls"] += 1
        return [self._done(ep, out, fin) for ep, out, fin in zip(eps, rep["ids"], rep["finish"])]

    def act(self, ep) -> str:
        return self.act_batch([ep])[0]

    # -------------------------------------------------------------- token-level refill
    def decoder(self, slots: int):
        return {} if self.refill else None  # request id -> episode

    def submit(self, dec: dict, ep) -> None:
        rid = next(self.rids)
        dec[rid] = ep
        self.c("add", rid=rid, ids=self._ids(ep), max_new_tokens=self.gen.max_new_tokens)

    def advance(self, dec: dict) -> list:
        t0 = time.perf_counter()
        rep = self.c("step")
        self.stats["engine_s"] += time.perf_counter() - t0
        self.stats["server_s"] += rep["seconds"]
        self.stats["calls"] += 1
        return [(dec[rid], self._done(dec.pop(rid), out, fin)) for rid, out, fin in rep["done"]]

    def release(self, ep) -> None:
        ep.backend_state = None


def peft_scale(adapter: Path) -> float:
    """peft's LoRA scale (lora_alpha / r, or / sqrt(r) with rsLoRA): OpenVINO GenAI reads only the
    safetensors (no alpha in a peft file) and multiplies B @ A by the alpha given in AdapterConfig."""
    cfg = json.loads((adapter / "adapter_config.json").read_text())
    if cfg.get("rank_pattern") or cfg.get("alpha_pattern"):
        raise SystemExit(f"{adapter}: per-module rank_pattern / alpha_pattern has no single OpenVINO alpha")
    r, alpha = cfg["r"], cfg.get("lora_alpha", cfg["r"])
    return alpha / (r ** 0.5 if cfg.get("use_rslora") else r)


# ---------------------------------------------------------------- running and comparing
def outcome(task, ep) -> tuple[list[str], bool]:
    row = {"task_id": task["id"], "record": ep.record()}
    return [m["content"] for m in ep.messages], verdict_row(task, row)["verdict"]["success"]


def run_engine(tasks, policy, batch_size: int, fewshot: bool) -> tuple[float, dict]:
    t0 = time.perf_counter()
    eps = [(task, ep) for task, ep, _ in rollout(tasks, policy, batch_size, fewshot=fewshot)]
    return time.perf_counter() - t0, {t["id"]: outcome(t, ep) for t, ep in eps}


def compare(ref: dict, got: dict) -> dict:
    same = [k for k in ref if ref[k][0] == got[k][0]]
    first_diff = {}
    for k in ref:
        if ref[k][0] != got[k][0]:
            a, b = ref[k][0], got[k][0]
            first_diff[k] = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
    return {"identical_transcripts": len(same), "identical_verdicts": sum(ref[k][1] == got[k][1] for k in ref),
            "successes": sum(v[1] for v in got.values()), "first_differing_message": first_diff}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default="smollm2-135m-instruct")
    ap.add_argument("--config", default="A_base")
    ap.add_argument("--profile", default="cpu")
    ap.add_argument("--episodes", type=int, default=None, help="first N of the profile's tasks (default all)")
    ap.add_argument("--batch", type=int, default=32, help="episodes in flight (the rollout's batch_size)")
    ap.add_argument("--ov-mode", choices=["lockstep", "refill", "both"], default="lockstep")
    ap.add_argument("--tokens", choices=["mirror", "full"], default="mirror")
    ap.add_argument("--skip-torch", action="store_true", help="OpenVINO only (no comparison)")
    ap.add_argument("--ov-python", default="/work/ovenv/bin/python")
    ap.add_argument("--ov-model", default="/work/ovenv-models/smollm2-fp32")
    ap.add_argument("--ov-precision", choices=["f32", "default"], default="f32")
    ap.add_argument("--no-prefix-cache", action="store_true")
    ap.add_argument("--cache-gb", type=int, default=4, help="OpenVINO KV cache pool (GB)")
    ap.add_argument("--adapter", default=None,
                    help="a peft LoRA folder (adapter_config.json + adapter_model.safetensors) for both engines")
    ap.add_argument("--max-batched-tokens", type=int, default=2048)
    ap.add_argument("--threads", type=int, default=0,
                    help="threads per engine (0: each engine's default, all cores; use 1 when the CPUs are shared)")
    ap.add_argument("--no-warmup", action="store_true")
    ap.add_argument("--out", default=str(HERE / "result.json"))
    args = ap.parse_args()

    p = plan(PARAMS, args.profile, args.config, None, DATA)
    tasks = p.tasks[: args.episodes]
    n, fewshot = len(tasks), args.config == STUDENT_FEWSHOT
    gen = GenConfig(max_new_tokens=p.cfg.max_new_tokens)
    store = model_store()
    tok = Tok(model_dir(store, args.model, None))
    print(f"{n} episodes ({args.profile} profile, {args.config}), {args.model}, batch {args.batch}, greedy, "
          f"max {gen.max_new_tokens} new tokens/turn, end tokens {tok.eos_ids}", flush=True)
    result: dict = {"episodes": n, "profile": args.profile, "config": args.config, "model": args.model,
                    "batch": args.batch, "max_new_tokens": gen.max_new_tokens, "tokens": args.tokens}

    ref = None
    if not args.skip_torch:
        import torch

        from ccl.policy.load import load_backend
        backend = load_backend(store, args.model, "torch", adapter=args.adapter)
        if args.threads:
            torch.set_num_threads(args.threads)
        if not args.no_warmup:
            backend.generate([{}], [backend.render([{"role": "user", "content": "Hi"}])], GenConfig(max_new_tokens=4), [0])
        policy = ModelPolicy(backend, gen)
        t, ref = run_engine(tasks, policy, args.batch, fewshot)
        result["torch"] = {"seconds": round(t, 2), "episodes_per_s": round(n / t, 4), "threads": torch.get_num_threads(),
                           "successes": sum(v[1] for v in ref.values()), "new_tokens": policy.stats.new_tokens,
                           "prompt_tokens": policy.stats.prompt_tokens}
        print(f"torch (token-level refill, float32, {torch.get_num_threads()} threads): {t:7.1f} s  "
              f"{n / t:6.3f} episodes/s  ({policy.stats.new_tokens} new tokens, "
              f"{result['torch']['successes']}/{n} strict successes)", flush=True)

    srv_args = ["--model", args.ov_model, "--precision", args.ov_precision, "--cache-gb", str(args.cache_gb),
                "--max-batched-tokens", str(args.max_batched_tokens), "--eos", *map(str, tok.eos_ids)]
    if args.no_prefix_cache:
        srv_args.append("--no-prefix-cache")
    if args.threads:
        srv_args += ["--threads", str(args.threads)]
    if args.adapter:
        srv_args += ["--adapter", str(Path(args.adapter) / "adapter_model.safetensors"),
                     "--adapter-alpha", str(peft_scale(Path(args.adapter)))]
        result["adapter"] = {"path": args.adapter, "scale": peft_scale(Path(args.adapter))}
    modes = ["lockstep", "refill"] if args.ov_mode == "both" else [args.ov_mode]
    for mode in modes:
        client = OVClient(args.ov_python, srv_args)  # a fresh process per mode: no prefix cache carried over
        try:
            info = client("info")
            if "openvino" not in result:
                result["openvino"] = info
                cm = info["compiled_with_properties"]
                print(f"OpenVINO {info['openvino']}, GenAI {info['openvino_genai']}: IR weights "
                      f"{info['ir_weight_element_types']}, IR runtime_options {info['ir_runtime_options']}; "
                      f"CPU default inference precision {info['cpu_default_inference_precision']}; compiled with "
                      f"inference {cm['INFERENCE_PRECISION_HINT']}, KV cache {cm['KV_CACHE_PRECISION']}, "
                      f"{cm['INFERENCE_NUM_THREADS']} threads; prefix caching {not args.no_prefix_cache}", flush=True)
            if not args.no_warmup:
                client("generate", ids=[tok.encode(tok.render([{"role": "user", "content": "Hi"}]))], max_new_tokens=4)
            policy = OVPolicy(client, tok, gen, refill=mode == "refill", tokens=args.tokens)
            t, got = run_engine(tasks, policy, args.batch, fewshot)
            metrics = client("metrics")
        finally:
            client.close()
        s = policy.stats
        r = {"seconds": round(t, 2), "episodes_per_s": round(n / t, 4), "load_s": round(client.load_s, 2),
             **{k: round(v, 2) if isinstance(v, float) else v for k, v in s.items()}, "pipeline_metrics": metrics}
        label = "one generate call per round" if mode == "lockstep" else "token-level refill"
        line = (f"OpenVINO {mode} ({label}): {t:7.1f} s  {n / t:6.3f} episodes/s  ({s['new_tokens']} new tokens, "
                f"{s['calls']} calls, engine {s['server_s']:.1f} s)")
        if ref is not None:
            c = compare(ref, got)
            r.update(c, ratio_vs_torch=round(result["torch"]["seconds"] / t, 3))
            line += (f"\n  OpenVINO {mode} / torch: {result['torch']['seconds'] / t:.2f}x episodes/s; identical "
                     f"transcripts {c['identical_transcripts']}/{n}, identical strict verdicts "
                     f"{c['identical_verdicts']}/{n}; strict successes {c['successes']}/{n} "
                     f"(torch {result['torch']['successes']}/{n})")
        else:
            r["successes"] = sum(v[1] for v in got.values())
        result[f"openvino_{mode}"] = r
        print(line, flush=True)
    Path(args.out).write_text(json.dumps(result, indent=1) + "\n")
    keep = ("seconds", "episodes_per_s", "ratio_vs_torch", "identical_transcripts", "identical_verdicts", "successes")
    print(json.dumps({k: ({kk: vv for kk, vv in v.items() if kk in keep} if isinstance(v, dict) else v)
                      for k, v in result.items() if k != "openvino"}))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
