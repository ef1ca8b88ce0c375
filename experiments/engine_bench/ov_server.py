"""OpenVINO GenAI generation server: JSON lines on stdin, one JSON reply per line on stdout.

Runs in its own virtual environment (/work/ovenv, see README.md): it imports only the
standard library, numpy and openvino / openvino_genai, never the repository, so the
repository's venv stays untouched. The caller (bench.py) tokenises and detokenises with
the repository's own Hugging Face tokenizer and sends token ids; this process only runs
the model through ``openvino_genai.ContinuousBatchingPipeline`` (paged attention,
continuous batching across the requests in flight, prefix caching of KV blocks).

Requests (one JSON object per line):

    {"op": "info"}                                    -> versions, scheduler, precisions
    {"op": "generate", "ids": [[...], ...], "max_new_tokens": 128}
        one batched greedy call; -> {"ids": [[...], ...], "finish": ["stop"|"length"], "seconds": s}
    {"op": "add", "rid": k, "ids": [...], "max_new_tokens": 128}   queue one request (refill mode)
    {"op": "step"}  run scheduler steps until at least one queued request finished;
        -> {"done": [[rid, ids, finish], ...], "steps": n, "seconds": s}
    {"op": "metrics"}                                 -> pipeline metrics
    {"op": "quit"}

Generated ids include the end token when generation stopped on it (as the torch engine's
``out`` lists do). Errors come back as {"error": "..."}; the process keeps serving.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
import traceback

F32 = {  # float32 everywhere: on CPUs with native bf16 OpenVINO would otherwise infer in bf16,
    # and the exported IR's rt_info asks for an f16 KV cache (the CPU default is u8)
    "INFERENCE_PRECISION_HINT": "f32",
    "KV_CACHE_PRECISION": "f32",
    "KEY_CACHE_PRECISION": "f32",
    "VALUE_CACHE_PRECISION": "f32",
    "DYNAMIC_QUANTIZATION_GROUP_SIZE": 0,  # no on-the-fly int8 activations
}
QUERY = ["INFERENCE_PRECISION_HINT", "KV_CACHE_PRECISION", "KEY_CACHE_PRECISION", "VALUE_CACHE_PRECISION",
         "DYNAMIC_QUANTIZATION_GROUP_SIZE", "EXECUTION_MODE_HINT", "INFERENCE_NUM_THREADS"]


def weight_types(model) -> dict[str, int]:
    """Element type -> number of elements, over the IR's floating-point constants (the weights)."""
    out: dict[str, int] = {}
    for op in model.get_ops():
        if op.get_type_name() == "Constant":
            et = op.get_element_type()
            if et.is_real():
                n = 1
                for d in op.get_output_shape(0):
                    n *= d
                out[et.get_type_name()] = out.get(et.get_type_name(), 0) + n
    return out


class Server:
    def __init__(self, args):
        import openvino as ov
        import openvino_genai as ovg

        self.ov, self.ovg, self.args = ov, ovg, args
        self.props = dict(F32) if args.precision == "f32" else {}
        if args.threads:
            self.props["INFERENCE_NUM_THREADS"] = args.threads
        sc = ovg.SchedulerConfig()
        sc.enable_prefix_caching = not args.no_prefix_cache
        sc.cache_size = args.cache_gb
        sc.max_num_seqs = args.max_num_seqs
        sc.max_num_batched_tokens = args.max_batched_tokens
        sc.dynamic_split_fuse = True
        self.sc = sc
        kw = {}
        self.adapter_cfg = None
        if args.adapter:  # a peft LoRA safetensors; peft scales B@A by lora_alpha/r, genai by the alpha given here
            self.adapter_cfg = ovg.AdapterConfig([(ovg.Adapter(args.adapter), args.adapter_alpha)])
            kw["adapters"] = self.adapter_cfg
        t0 = time.perf_counter()
        self.pipe = ovg.ContinuousBatchingPipeline(args.model, sc, "CPU", {**self.props, **kw})
        self.load_s = time.perf_counter() - t0
        self.eos = args.eos
        self.handles: dict[int, object] = {}

    def config(self, max_new_tokens: int):
        g = self.ovg.GenerationConfig()
        g.max_new_tokens = max_new_tokens
        g.do_sample = False  # greedy
        g.num_beams = 1
        g.eos_token_id = self.eos[0]
        g.stop_token_ids = set(self.eos)
        if self.adapter_cfg is not None:
            g.adapters = self.adapter_cfg
        return g

    def tensor(self, ids: list[int]):
        import numpy as np
        return self.ov.Tensor(np.asarray([ids], dtype=np.int64))

    @staticmethod
    def reason(r) -> str:
        return str(r).split(".")[-1].lower()

    # ------------------------------------------------------------------ ops
    def info(self, _req) -> dict:
        ov, ovg = self.ov, self.ovg
        core = ov.Core()
        model = core.read_model(os.path.join(self.args.model, "openvino_model.xml"))
        rt = {}
        if model.has_rt_info("runtime_options"):
            rt = {k: v.astype(str) for k, v in model.get_rt_info("runtime_options").astype(dict).items()}
        compiled = core.compile_model(model, "CPU", self.props)  # the same properties as the pipeline's
        cm = {k: str(compiled.get_property(k)) for k in QUERY}
        del compiled
        return {"openvino": ov.__version__, "openvino_genai": ovg.__version__,
                "cpu_default_inference_precision": str(core.get_property("CPU", "INFERENCE_PRECISION_HINT")),
                "cpu_capabilities": list(core.get_property("CPU", "OPTIMIZATION_CAPABILITIES")),
                "ir_weight_element_types": weight_types(model), "ir_runtime_options": rt,
                "properties": {k: str(v) for k, v in self.props.items()}, "compiled_with_properties": cm,
                "scheduler": self.sc.to_string(), "load_s": round(self.load_s, 2),
                "adapter": self.args.adapter}

    def generate(self, req) -> dict:
        ids = req["ids"]
        cfg = self.config(req["max_new_tokens"])
        t0 = time.perf_counter()
        res = self.pipe.generate([self.tensor(x) for x in ids], [cfg] * len(ids))
        dt = time.perf_counter() - t0
        return {"ids": [list(r.m_generation_ids[0]) for r in res],
                "finish": [self.reason(r.finish_reasons[0]) for r in res], "seconds": dt}

    def add(self, req) -> dict:
        rid = int(req["rid"])
        self.handles[rid] = self.pipe.add_request(rid, self.tensor(req["ids"]), self.config(req["max_new_tokens"]))
        return {"ok": True}

    def step(self, _req) -> dict:
        t0 = time.perf_counter()
        done, steps = [], 0
        finished = self.ovg.GenerationStatus.FINISHED
        while self.handles and not done:
            self.pipe.step()
            steps += 1
            for rid, h in list(self.handles.items()):
                st = h.get_status()
                if st == finished:
                    out = h.read_all()[0]
                    done.append([rid, list(out.generated_ids), self.reason(out.finish_reason)])
                    del self.handles[rid]
                elif st != self.ovg.GenerationStatus.RUNNING:
                    raise RuntimeError(f"request {rid}: status {st}")
        return {"done": done, "steps": steps, "seconds": time.perf_counter() - t0}

    def metrics(self, _req) -> dict:
        m = self.pipe.get_metrics()
        return {k: getattr(m, k) for k in ("requests", "scheduled_requests", "cache_usage", "max_cache_usage",
                                           "avg_cache_usage", "kv_cache_size_in_bytes") if hasattr(m, k)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="/work/ovenv-models/smollm2-fp32")
    ap.add_argument("--precision", choices=["f32", "default"], default="f32",
                    help="f32: force float32 inference and KV cache; default: OpenVINO's own choice")
    ap.add_argument("--no-prefix-cache", action="store_true")
    ap.add_argument("--cache-gb", type=int, default=4, help="KV cache pool (GB)")
    ap.add_argument("--max-num-seqs", type=int, default=64)
    ap.add_argument("--max-batched-tokens", type=int, default=2048)
    ap.add_argument("--threads", type=int, default=0, help="0: OpenVINO's default (all cores)")
    ap.add_argument("--eos", type=int, nargs="+", default=[2])
    ap.add_argument("--adapter", default=None, help="peft adapter_model.safetensors")
    ap.add_argument("--adapter-alpha", type=float, default=1.0, help="peft lora_alpha / r")
    args = ap.parse_args()
    # the protocol owns the original stdout; anything native code prints goes to stderr
    proto = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    try:
        srv = Server(args)
    except Exception as e:  # noqa: BLE001
        proto.write(json.dumps({"error": f"{type(e).__name__}: {e}"}) + "\n")
        return
    proto.write(json.dumps({"ready": True, "load_s": srv.load_s}) + "\n")
    ops = {"info": srv.info, "generate": srv.generate, "add": srv.add, "step": srv.step, "metrics": srv.metrics}
    for line in sys.stdin:
        if not line.strip():
            continue
        req = json.loads(line)
        if req.get("op") == "quit":
            break
        try:
            rep = ops[req["op"]](req)
        except Exception as e:  # noqa: BLE001
            rep = {"error": f"{type(e).__name__}: {e}", "trace": traceback.format_exc()[-2000:]}
        proto.write(json.dumps(rep) + "\n")


if __name__ == "__main__":
    main()
