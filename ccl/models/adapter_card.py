"""A trained run's adapter as a Hub-ready folder: PEFT's two files with the base named by its Hub id,
and a model card written from the run's own artifacts (recipe, data hash, losses, strict success by
split, hashes).

The training folder (``runs/<run>/adapter``) names its base by the registry's folder name, which is
what this repository's loader matches; a user of ``AutoPeftModelForCausalLM`` needs a Hub id. Where the
student came from a GGUF (the cpu profile), the Hub checkpoint it was converted from is the nearest
base that exists, not the weights the adapter was trained on: the card says so, with both hashes.
"""
from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from ..artifacts.jsonio import read_json, sha256_file
from ..artifacts.manifest import write_manifest
from ..errors import InputError
from ..stats.binomial import wilson
from .registry import ModelError, ModelSpec

WEIGHTS = "adapter_model.safetensors"
CONFIG = "adapter_config.json"


@dataclass(frozen=True)
class HubBase:
    repo: str
    revision: str | None  # a full commit where the registry pins one
    exact: bool  # the adapter was trained on exactly these weights
    note: str  # why not exact, for the card


def hub_base(spec: ModelSpec) -> HubBase:
    """The Hub id an adapter trained on ``spec`` names as its base."""
    if spec.source == "hub":
        return HubBase(spec.repo or "", spec.revision, True, "")
    if spec.hub_base:
        return HubBase(spec.hub_base, None, False,
                       f"The adapter was trained on the registry's `{spec.name}`: a GGUF of this checkpoint "
                       f"(SHA-256 `{spec.sha256}`), dequantised to float32. The Hub checkpoint's weights differ "
                       f"from those by the quantisation, so loading it as the base gives a near, not identical, "
                       f"model. To reproduce the study's numbers, load the adapter with this repository's "
                       f"loader (`scripts/agent.py --adapter runs/<run>`), which converts the same GGUF.")
    raise ModelError(f"model {spec.name}: no Hub id to name as an adapter's base; add hub_base to its "
                     f"entry in configs/models.yaml")


@dataclass(frozen=True)
class RunRecord:
    """What the card reads, each from the file the stage that made it wrote."""
    config: dict  # runs/<run>/config.json (train)
    summary: dict  # runs/<run>/summary.json (train)
    metrics: dict  # results/runs/<run>/metrics.json (judge_run)


def read_run(run_dir: Path, metrics_file: Path) -> RunRecord:
    for path, stage in ((run_dir / "config.json", "train"), (run_dir / "summary.json", "train"),
                        (run_dir / "adapter" / WEIGHTS, "train"), (metrics_file, "judge_run")):
        if not path.is_file():
            raise InputError(f"{path}: missing; run the {stage} stage first (or `dvc pull`)")
    record = RunRecord(read_json(run_dir / "config.json"), read_json(run_dir / "summary.json"),
                       read_json(metrics_file))
    weights = sha256_file(run_dir / "adapter" / WEIGHTS)
    if weights != record.summary.get("adapter_sha256"):
        raise InputError(f"{run_dir / 'adapter' / WEIGHTS}: SHA-256 {weights[:12]} differs from the run's "
                         f"summary ({str(record.summary.get('adapter_sha256'))[:12]}); rerun the train stage")
    evaluated = record.metrics.get("adapter")
    if not isinstance(evaluated, str) or Path(evaluated).name != record.config["run"]:
        raise InputError(f"{metrics_file}: evaluates adapter {evaluated!r}, not run {record.config['run']}; "
                         f"rerun the judge_run stage of {record.config['run']}")
    return record


def write_hub_folder(run_dir: Path, metrics_file: Path, spec_of: Callable[[str], ModelSpec], out: Path) -> Path:
    """``out``: README.md (the card), adapter_config.json (base = Hub id), the adapter's weights and
    their manifest, written beside and swapped in, so a failure keeps the last folder. ``spec_of``: the registry's
    entry for the run's base model, by name."""
    record = read_run(run_dir, metrics_file)
    spec = spec_of(record.config["base_model"])
    base = hub_base(spec)
    config = json.loads((run_dir / "adapter" / CONFIG).read_text())
    config.update(base_model_name_or_path=base.repo, revision=base.revision)
    config_text = json.dumps(config, indent=2, sort_keys=True) + "\n"
    tmp = out.with_name(out.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    shutil.copyfile(run_dir / "adapter" / WEIGHTS, tmp / WEIGHTS)
    (tmp / CONFIG).write_text(config_text)
    (tmp / "README.md").write_text(card(record, spec, base, sha256_file(tmp / CONFIG)))
    write_manifest(tmp, [tmp / WEIGHTS, tmp / CONFIG, tmp / "README.md"],
                   {"stage": "hub_adapter", "run": record.config["run"]})  # what scripts/verify.py rechecks
    shutil.rmtree(out, ignore_errors=True)
    tmp.rename(out)
    return out


def _rate(k: int, n: int) -> str:
    lo, hi = wilson(k, n)
    return f"{k}/{n} = {100 * k / n:.1f}% [{100 * lo:.1f}, {100 * hi:.1f}]"


def evaluation_rows(metrics: dict) -> list[str]:
    """One table row per split and one pooled: strict success with its Wilson 95% interval, the
    write-up's success beside it."""
    rows = []
    for label, m in [*sorted(metrics["splits"].items()), ("pooled", metrics["pooled_main"])]:
        n = m["n"]
        strict, writeup = round(m["success"] * n), round(m["success_writeup"] * n)
        rows.append(f"| {label} | {n} | {_rate(strict, n)} | {_rate(writeup, n)} |")
    return rows


def card(record: RunRecord, spec: ModelSpec, base: HubBase, config_sha256: str) -> str:
    cfg, summary, metrics = record.config, record.summary, record.metrics
    run, recipe = cfg["run"], cfg["recipe"]
    revision = f" at revision `{base.revision}`" if base.revision else ""
    exactness = ("The adapter was trained on exactly this checkpoint." if base.exact else base.note)
    recipe_rows = "\n".join(f"| {k} | {v} |" for k, v in sorted(recipe.items()) if not isinstance(v, dict))
    pooled = metrics["pooled_main"]
    return f"""---
base_model: {base.repo}
base_model_relation: adapter
library_name: peft
license: {spec.license or "other"}
pipeline_tag: text-generation
tags: [lora, tool-use, function-calling, agents]
---

# {run}: a LoRA adapter for tool orchestration ({metrics['profile']} profile)

Trained by `python -m scripts.train {run}` in the study "can cheap LoRA training turn a small
open-weight model into a reliable tool orchestrator?": variant {cfg['variant']} (the training set),
seed {cfg['seed']}, on {summary['backend']} ({summary['device']}).

## Base model

`{base.repo}`{revision}. {exactness}

## Training data

`data/v1/variants/{cfg['variant']}.jsonl`, SHA-256 `{cfg['train_sha256']}`: {summary['episodes_used']}
episodes used of {summary['episodes']}; validation on {summary['val_episodes']} oracle episodes.
The dataset card (`data/v1/export/README.md`) describes the format and the families.

## Recipe

| setting | value |
| --- | --- |
{recipe_rows}

Trainable parameters: {summary['trainable_params']:,}. Training time: {summary['train_minutes']} min;
peak memory {summary['peak_mem_gb']} GB.

## Training metrics

| metric | value |
| --- | --- |
| final training loss | {summary['final_train_loss']:.6f} |
| validation loss before training | {summary['val_loss_before']:.6f} |
| validation loss after training | {summary['val_loss']:.6f} |
| stability rule | {summary['stability']} |

## Evaluation (strict success; the write-up's definition beside it)

Greedy episodes on held-out tasks, judged by code. Write-up success: a final answer with the expected
status and every required fact, every required call made with matching arguments, side effects as
expected, no permission violation and no retry of a declined action. Strict success adds: no call on a
task that needs none, every required call answered by the world (a call that timed out and was never
retried did not do the work), dependencies and parallel groups respected, and an answer that states
its facts plainly (not hedged, negated, misattributed or in another currency). The full definitions
are in the repository's `docs/architecture.md`. Rates with Wilson 95% intervals.

| split | n | strict success | write-up success |
| --- | --- | --- | --- |
{chr(10).join(evaluation_rows(metrics))}

## Limitations

Pooled strict success is {100 * pooled['success']:.1f}% over {pooled['n']} tasks: this adapter is a
research artifact of a small study, not a usable orchestrator. Parse errors in
{100 * pooled['parse_errors']:.1f}% of turns; hallucinated tools in {100 * pooled['hallucinated_tools']:.1f}%.

## Hashes

| file | SHA-256 |
| --- | --- |
| `{WEIGHTS}` | `{summary['adapter_sha256']}` |
| `{CONFIG}` (this folder's) | `{config_sha256}` |
| base weights as trained on (converted) | `{cfg['base_weights']}` |

The weights' hash holds only where training ran on the same CPU kernel path (same instruction set);
a retrain elsewhere is checked against this adapter by tolerance: `python -m scripts.verify --compare
runs/{run} <retrained run folder>`. Data hash the same on every machine; transcripts almost always
(greedy decoding can resolve a near-tie differently under another instruction set's float32 kernels).

## Use

```python
from peft import AutoPeftModelForCausalLM  # fetches the base from the Hub
model = AutoPeftModelForCausalLM.from_pretrained("<this folder>")
```

For mlx-lm, convert it (the numbers are copied, not re-fitted):
`python -c "from pathlib import Path; from ccl.models.adapter_convert import peft_to_mlx; peft_to_mlx(Path('<this folder>'), Path('<out>'))"`,
then `mlx_lm.generate --adapter-path <out>`.
"""
