"""OpenVINO sampling from a model being trained: the base model's graph exported once, the LoRA weights
loaded at run time (issue 56; measured against the torch sampler in experiments/ov_lora_sampler).

GRPO samples from the policy it trains and changes it every step. Exporting the merged model after each
update costs about 13 seconds on two cores; this backend exports the base model once, with its
projections named for OpenVINO GenAI's adapter support (``ccl.models.openvino_export.name_matmuls``),
and hands the pipeline the current LoRA matrices instead: the graph computes ``x W^T + x A^T (sB)^T``
with the adapter in state variables.

Two facts of GenAI 2026.4 shape it, both found by measurement:

- the continuous-batching pipeline writes an adapter's weights into its state only inside
  ``generate``, never on ``add_request``, so a new adapter is put in place by a one-token ``generate``;
- its prefix cache is keyed by tokens alone: after new weights it would serve keys and values computed
  under the old ones (measured: the transcript then departs from torch's at once). So new weights get a
  new pipeline, built from the compiled-once IR in about 1-2 seconds, with an empty cache.

:meth:`forget_prefixes` (called by GRPO after every update, as on the torch backend) does both when the
weights changed, and nothing when they did not. Sampling, decoding and the efficiency record are the
OpenVINO backend's. Float32 only: GRPO trains and samples in float32 (issue 56).
"""
from __future__ import annotations

import hashlib
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from ..devices import cpu_threads
from ..models.registry import ModelSpec
from .base import GenConfig
from .openvino_backend import INFERENCE, OpenVINOBackend, _tensor


class OpenVINOLoraBackend(OpenVINOBackend):
    name = "openvino"
    hybrid = False  # GRPO's check: the OpenVINO decoder serves full-attention models only

    @classmethod
    def around(cls, model: Any, tok: Any, model_dir: str | Path, spec: ModelSpec, threads: int | None = None,
               max_seqs: int = 64) -> "OpenVINOLoraBackend":
        """A sampler over ``model`` (a peft model with a ``default`` LoRA, read and never written); the base
        weights come from ``model_dir``, the model's own package, as the trainer loaded them."""
        import torch
        from transformers import AutoModelForCausalLM

        from ..models.openvino_export import lora_targets_of

        backend = cls.__new__(cls)
        backend._start(tok)
        backend.model, backend.max_seqs = model, max_seqs
        backend.properties = {**INFERENCE["float32"], "INFERENCE_NUM_THREADS": cpu_threads(threads)}
        backend._work = tempfile.TemporaryDirectory(prefix="ccl-openvino-lora-")  # lives as long as the backend
        base = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32)
        backend.ir = backend._export(spec, base, Path(backend._work.name), lora_targets=True)
        del base
        backend.targets = lora_targets_of(backend.ir)
        backend.pipe, backend.adapters, backend.digest, backend.loads = None, None, None, []
        backend.forget_prefixes()
        return backend

    def forget_prefixes(self) -> None:
        """Put the model's current LoRA in place (a new pipeline, so no cached prefix outlives the weights
        it was computed under); nothing when the weights are the ones already in place."""
        import openvino as ov
        from safetensors.torch import save

        from ..models.openvino_export import lora_tensors

        blob = save(lora_tensors(self.model, self.targets))
        digest = hashlib.sha256(blob).hexdigest()
        if digest == self.digest:
            return
        t0 = time.perf_counter()
        self.pipe = None  # the old pipeline and its KV cache go before the new one is made
        adapter = self.ovg.Adapter(ov.Tensor(np.frombuffer(blob, dtype=np.uint8), shared_memory=False))
        self.adapters = self.ovg.AdapterConfig(adapter)
        self.pipe = self._pipeline(self.ir, {**self.properties, "adapters": self.adapters}, self.max_seqs)
        # the pipeline writes the adapter into its state inside generate() only (module docstring)
        self.pipe.generate([_tensor([min(self.eos_ids)])], [self.config(GenConfig(max_new_tokens=1), 0)])
        self.digest = digest
        self.loads.append(round(time.perf_counter() - t0, 3))

    def config(self, gen: GenConfig, seed: int):
        g = super().config(gen, seed)
        g.adapters = self.adapters
        return g
