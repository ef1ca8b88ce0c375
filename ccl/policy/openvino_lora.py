"""OpenVINO sampling from a model being trained: the base model's graph exported once, the LoRA weights
loaded at run time (issue 56; measured against the torch sampler in experiments/ov_lora_sampler).

GRPO samples from the policy it trains and changes it every step. Exporting the merged model after each
update and building its pipeline costs about 10 seconds on two cores (measured: 8.4-8.8 s export,
10.1-10.2 s with the pipeline); this backend exports the base model once, with its projections named
for OpenVINO GenAI's adapter support (``ccl.models.openvino_export.name_matmuls``), and hands the
pipeline the current LoRA matrices instead: the graph computes ``x W^T + x A^T (sB)^T`` with the adapter
in state variables.

Two facts of GenAI 2026.4 shape it, both found by measurement:

- the continuous-batching pipeline writes an adapter's weights into its state only inside
  ``generate``, never on ``add_request``, so a new adapter is put in place by a one-token ``generate``;
- its prefix cache is keyed by tokens alone: after new weights it would serve keys and values computed
  under the old ones (measured: the transcript then departs from torch's at once). So new weights get a
  new pipeline, read and compiled again from the IR exported once, with an empty cache: about 2.2 s a
  load (measured 1.99-2.52 s over two runs), the one-token ``generate`` included.

:meth:`forget_prefixes` (called by GRPO after every update, as on the torch backend) does both when the
weights changed, and nothing when they did not. Sampling, decoding and the efficiency record are the
OpenVINO backend's. Float32 only: GRPO trains and samples in float32 (issue 56). A GRPO step's
``sample_s`` therefore includes the load of the weights its update made; ``loads`` lists every load's
seconds, the one at construction first.
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
from .openvino_backend import INFERENCE, OpenVINOBackend, token_tensor


class OpenVINOLoraBackend(OpenVINOBackend):
    """The OpenVINO backend over a model being trained (module docstring); built by :meth:`around`."""

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
        backend._ir_dir = tempfile.TemporaryDirectory(prefix="ccl-openvino-lora-")  # lives as long as the backend
        base = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32)
        with tempfile.TemporaryDirectory(prefix="ccl-openvino-lora-export-") as tmp:  # the GGUF goes with it
            ir = backend._export(spec, base, Path(tmp), lora_targets=True)
            backend.ir = Path(backend._ir_dir.name) / "ir"
            ir.replace(backend.ir)
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
        self.pipe.generate([token_tensor([min(self.eos_ids)])], [self.config(GenConfig(max_new_tokens=1), 0)])
        self.digest = digest
        self.loads.append(round(time.perf_counter() - t0, 3))

    def config(self, gen: GenConfig, seed: int) -> Any:
        g = super().config(gen, seed)
        g.adapters = self.adapters
        return g
