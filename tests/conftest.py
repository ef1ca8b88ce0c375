import os
import subprocess
import sys
from pathlib import Path

# No test may download: the hub client reads this once, when first imported (and the scripts'
# model store reads it too), so it is set before anything imports huggingface_hub.
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import pytest
from subproc import run_py
from train_fixtures import data_dir, tiny_model  # noqa: F401 (the training tests' fixtures)

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def smoke_data(tmp_path_factory):
    """The smoke profile's task splits (build_datasets run once per test session)."""
    out = tmp_path_factory.mktemp("data")
    subprocess.run([sys.executable, "-m", "scripts.build_datasets", "--profile", "smoke", "--out", str(out)],
                   cwd=ROOT, check=True, capture_output=True)
    return out / "tasks"


@pytest.fixture(scope="session")
def smoke_distilled(smoke_data):
    """The smoke data root with the teacher stages' output in teacher/ (run once per session):
    distill (pass 1), distill_pass2 and accept_teacher."""
    root = smoke_data.parent
    for module in ("scripts.distill", "scripts.distill_pass2", "scripts.accept_teacher"):
        subprocess.run([sys.executable, "-m", module, "--profile", "smoke", "--data", str(root),
                        "--out", str(root / "teacher")], cwd=ROOT, check=True, capture_output=True)
    return root


@pytest.fixture(scope="session")
def smoke_study(smoke_distilled, tmp_path_factory):
    """A repository-shaped root with the whole smoke chain run once per session:
    build_sft -> train C_s0 -> evaluate and judge C_s0 and oracle -> analyze, and their decision-point
    replay: build_replay -> replay and replay_judge C_s0 and oracle -> analyze_replay; BFCL: bfcl_sample -> bfcl
    A_base, C_s0 and oracle -> bfcl_score. Layout as in the repository
    (data/v1, runs, logs, results), so report and site builders run on it with --root."""
    study = tmp_path_factory.mktemp("study")
    for name in ("dvc.yaml", "params.yaml", "configs"):  # the site's pipeline table reads the root's own
        (study / name).symlink_to(ROOT / name)  # (configs: the published BFCL numbers the report quotes)
    data = study / "data" / "v1"
    data.mkdir(parents=True)
    for name in ("tasks", "sft", "teacher", "manifest.json", "leakage_audit.json"):
        (data / name).symlink_to(smoke_distilled / name)
    run_py("-m", "scripts.build_sft", "--profile", "smoke", "--data", str(data), "--out", str(data / "variants"))
    runs = study / "runs"
    run_py("-m", "scripts.train", "C_s0", "--profile", "smoke", "--data", str(data),
           "--runs", str(runs), "--archive", str(study / "archive"),
           "--stability-log", str(study / "logs" / "stability.jsonl"))
    results = study / "results" / "runs"
    for name, extra in (("C_s0", ["--adapter", str(runs / "C_s0")]), ("oracle", [])):
        run_py("-m", "scripts.evaluate", "--profile", "smoke", "--name", name, *extra, "--data", str(data),
               "--out", str(results))
        run_py("-m", "scripts.judge", "--name", name, "--data", str(data), "--runs", str(results))
    run_py("-m", "scripts.analyze", "--profile", "smoke", "--runs", str(results), "--out",
           str(study / "results" / "summary.json"))
    golden, replay = data / "replay", study / "results" / "replay"
    run_py("-m", "scripts.build_replay", "--profile", "smoke", "--data", str(data), "--out", str(golden))
    for name, extra in (("C_s0", ["--adapter", str(runs / "C_s0")]), ("oracle", [])):
        run_py("-m", "scripts.replay", "--profile", "smoke", "--name", name, *extra, "--data", str(data),
               "--golden", str(golden), "--out", str(replay))
        run_py("-m", "scripts.replay_judge", "--name", name, "--data", str(data), "--golden", str(golden),
               "--runs", str(replay))
    run_py("-m", "scripts.analyze_replay", "--profile", "smoke", "--replay", str(replay), "--runs", str(results),
           "--out", str(study / "results" / "replay_summary.json"))
    run_py("-m", "scripts.power", "--profile", "smoke", "--data", str(data), "--out", str(study / "results" / "power.json"))
    # the external benchmark: BFCL's smoke draw answered by A_base, C_s0 and the oracle, checked by BFCL
    sample, answers = study / "data" / "bfcl" / "sample.json", study / "results" / "bfcl" / "answers"
    run_py("-m", "scripts.bfcl_sample", "--profile", "smoke", "--out", str(sample))
    for name, extra in (("A_base", []), ("C_s0", ["--adapter", str(runs / "C_s0")]), ("oracle", [])):
        run_py("-m", "scripts.bfcl", "--profile", "smoke", "--name", name, *extra, "--sample", str(sample),
               "--out", str(answers))
    run_py("-m", "scripts.bfcl_score", "--names", "A_base", "C_s0", "oracle", "--sample", str(sample),
           "--answers", str(answers), "--out", str(study / "results" / "bfcl"))
    # a README with the results-in-brief block that build_report rewrites
    (study / "README.md").write_text("# Study\n\n<!-- BEGIN:results-in-brief -->\n<!-- END:results-in-brief -->\n")
    return study
