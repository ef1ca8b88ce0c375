"""The data stage: sizes and compositions, leakage controls, byte-identical rebuilds,
manifest verification, and params errors."""
import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from ccl.artifacts.jsonio import file_digest
from ccl.artifacts.manifest import write_manifest
from ccl.artifacts.verification import verify_tree
from ccl.config import ConfigError, stage_config
from ccl.data.datasets import PAPER_COMPOSITION, BuildDatasetsConfig, build_all, family_counts, scale_composition
from ccl.world.tools import HELD_OUT_TOOLS

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def paper():
    return build_all(BuildDatasetsConfig(), log=lambda s: None)


def test_paper_sizes_and_compositions_match_the_write_up(paper):
    splits, audit = paper
    sizes = {k: len(v) for k, v in splits.items()}
    assert sizes == {"train_pool": 3000, "val_pool": 150, "eval_id": 200, "eval_ood": 240,
                     "eval_unseen": 120, "eval_renamed": 160, "eval_catalog_0": 96,
                     "eval_catalog_5": 96, "eval_catalog_12": 96}
    for name, tasks in splits.items():
        key = "eval_catalog" if name.startswith("eval_catalog") else name
        assert family_counts(tasks) == PAPER_COMPOSITION[key], name


def test_leakage_controls(paper):
    splits, audit = paper
    train = splits["train_pool"] + splits["val_pool"]
    train_requests = {t["request"] for t in train}
    assert audit["held_out_tools_seen_in_train"] == []
    assert not {x for t in train for x in t["catalogue"]} & set(HELD_OUT_TOOLS)
    for name, stats in audit["splits"].items():
        assert stats["request_overlap"] == 0, name
        assert not any(t["request"] in train_requests for t in splits[name])
        assert all(isinstance(t["graph_seen"], bool) for t in splits[name])
        assert 0 <= stats["request_similarity_p99"] <= stats["request_similarity_max"] <= 1
    # (i) templates belong to one split; (v) disjoint seed ranges, train pools a subset
    train_templates = {t["template"] for t in train}
    assert not train_templates & {t["template"] for s in ("eval_ood", "eval_unseen") for t in splits[s]}
    assert audit["splits"]["eval_ood"]["shared_templates"] == audit["splits"]["eval_unseen"]["shared_templates"] == 0
    train_seeds = {t["seed"] for t in splits["train_pool"]}
    for name in splits:
        if name.startswith("eval"):
            assert not {t["seed"] for t in splits[name]} & train_seeds, name
    assert {t["pool"] for t in train} == {"train"}
    assert {t["pool"] for s, ts in splits.items() if s.startswith("eval") for t in ts} == {"eval"}


def test_renaming_shares(paper):
    splits, _ = paper
    assert sum(t["rename"] == "train" for t in splits["train_pool"]) == 750
    assert sum(t["rename"] == "train" for t in splits["val_pool"]) == round(0.25 * 150)
    assert all(t["rename"] == "heldout" for t in splits["eval_renamed"])
    assert all(t["rename"] is None for t in splits["eval_id"])


def test_catalogue_splits_are_the_same_tasks(paper):
    splits, _ = paper
    a, b, c = (splits[f"eval_catalog_{k}"] for k in (0, 5, 12))
    assert [t["request"] for t in a] == [t["request"] for t in b] == [t["request"] for t in c]
    for t0, t12 in zip(a, c):
        own = {n["tool"] for n in t0["gold"]["nodes"]}
        assert set(t0["catalogue"]) == own | set(t0["catalogue"]) and len(t12["catalogue"]) == len(t0["catalogue"]) + 12
    assert all(t["distractors"] == 12 for t in c) and all(t["distractors"] == 0 for t in a)


def test_scale_composition_largest_remainder():
    assert scale_composition({"select": 750, "args": 250}, 10) == {"select": 8, "args": 2}
    assert sum(scale_composition(PAPER_COMPOSITION["eval_id"], 24).values()) == 24
    assert scale_composition(PAPER_COMPOSITION["train_pool"], 3000) == PAPER_COMPOSITION["train_pool"]


def build(out: Path) -> None:
    subprocess.run([sys.executable, "-m", "scripts.build_datasets", "--profile", "smoke", "--out", str(out)],
                   cwd=ROOT, check=True, capture_output=True)


@pytest.fixture(scope="module")
def smoke_builds(tmp_path_factory):
    a, b = tmp_path_factory.mktemp("a"), tmp_path_factory.mktemp("b")
    build(a)
    build(b)
    return a, b


def test_two_builds_in_two_processes_are_byte_identical(smoke_builds):
    a, b = smoke_builds
    files = sorted(p.relative_to(a) for p in a.rglob("*") if p.is_file())
    assert len(files) == 13
    assert [p.relative_to(b) for p in sorted(b.rglob("*")) if p.is_file()] == files
    for rel in files:
        assert (a / rel).read_bytes() == (b / rel).read_bytes(), rel
    manifest = json.loads((a / "manifest.json").read_text())
    assert manifest["files"]["tasks/train_pool.jsonl"]["rows"] == 96
    assert manifest["files"]["sft/oracle_train.jsonl"]["assistant_turns"] >= 96


def test_verify_names_a_flipped_truncated_missing_or_unexpected_file(smoke_builds, tmp_path):
    src = smoke_builds[0]
    tree = tmp_path / "tree"
    subprocess.run(["cp", "-r", str(src), str(tree)], check=True)
    assert verify_tree(tree) == []
    manifest = json.loads((tree / "manifest.json").read_text())
    for rel in manifest["files"]:
        path = tree / rel
        original = path.read_bytes()
        flipped = bytearray(original)
        flipped[len(flipped) // 2] ^= 0x01
        path.write_bytes(bytes(flipped))
        problems = verify_tree(tree)
        assert len(problems) == 1 and problems[0].startswith(f"MISMATCH {rel} "), problems
        path.write_bytes(original)
    victim = tree / "tasks" / "eval_id.jsonl"
    original = victim.read_bytes()
    victim.write_bytes(original[:100])
    assert verify_tree(tree)[0].startswith("MISMATCH tasks/eval_id.jsonl")
    victim.unlink()
    assert verify_tree(tree) == ["MISSING tasks/eval_id.jsonl (listed in manifest.json)"]
    victim.write_bytes(original)
    (tree / "tasks" / "extra.jsonl").write_text("{}\n")
    assert verify_tree(tree) == ["UNEXPECTED tasks/extra.jsonl (in no manifest)"]
    out = subprocess.run([sys.executable, "-m", "scripts.verify", "--root", str(tree)], cwd=ROOT,
                         capture_output=True, text=True)
    assert out.returncode == 1 and "UNEXPECTED tasks/extra.jsonl" in out.stdout


def lock_tree(src: Path, tmp_path: Path) -> Path:
    """A copy of a dataset build with a dvc.lock recording its files, as the repository's does."""
    tree = tmp_path / "tree"
    tree.mkdir()
    subprocess.run(["cp", "-r", str(src), str(tree / "data")], check=True)
    outs = [{"path": p.relative_to(tree).as_posix(), "md5": file_digest(p, "md5")}
            for p in sorted(tree.rglob("*")) if p.is_file()]
    (tree / "dvc.lock").write_text(yaml.safe_dump({"schema": "2.0", "stages": {"build_datasets": {"outs": outs}}}))
    return tree


def test_verify_is_anchored_in_dvc_lock_so_a_deleted_manifest_is_named(smoke_builds, tmp_path):
    tree = lock_tree(smoke_builds[0], tmp_path)
    data = tree / "data"
    other = data / "elsewhere"  # another manifest survives in the tree
    other.mkdir()
    (other / "note.txt").write_text("x")
    write_manifest(other, [other / "note.txt"])
    assert verify_tree(tree, [data]) == []
    (data / "manifest.json").unlink()
    victim = data / "tasks" / "eval_id.jsonl"
    victim.write_bytes(victim.read_bytes() + b"\n")  # edited
    assert verify_tree(tree, [data]) == [
        "MISSING data/manifest.json (dvc.lock records it from stage build_datasets: `dvc pull` fetches it, "
        "`dvc repro build_datasets` makes it)",
        "MISMATCH data/tasks/eval_id.jsonl (its MD5 differs from the one dvc.lock records from stage build_datasets)"]


def test_verify_checks_every_field_and_refuses_malformed_manifests(smoke_builds, tmp_path):
    tree = tmp_path / "tree"
    subprocess.run(["cp", "-r", str(smoke_builds[0]), str(tree)], check=True)
    path = tree / "manifest.json"
    good = json.loads(path.read_text())

    def problems_with(manifest) -> list[str]:
        path.write_text(json.dumps(manifest))
        return verify_tree(tree)

    edited = json.loads(json.dumps(good))
    edited["files"]["tasks/eval_id.jsonl"]["rows"] += 1
    assert problems_with(edited) == ["MISMATCH tasks/eval_id.jsonl (rows is 24, manifest says 25)"]
    entry = good["files"]["tasks/eval_id.jsonl"]
    for rel in ("../outside.jsonl", "/etc/passwd", "tasks/../../x"):
        got = problems_with({**good, "files": {**good["files"], rel: entry}})
        assert f"REFUSED manifest.json (entry {rel!r} points outside the manifest's folder)" in got
    (tree / "tasks" / "link.jsonl").symlink_to(tmp_path / "outside.jsonl")
    (tmp_path / "outside.jsonl").write_text("{}\n")
    got = problems_with({**good, "files": {**good["files"], "tasks/link.jsonl": entry}})
    assert "REFUSED manifest.json (entry 'tasks/link.jsonl' resolves outside the manifest's folder)" in got
    (tree / "tasks" / "link.jsonl").unlink()
    got = problems_with({**good, "files": {**good["files"], "tasks/eval_id.jsonl": {"bytes": 3}}})
    assert "CORRUPT manifest.json (entry 'tasks/eval_id.jsonl' has no sha256)" in got
    assert problems_with({"files": list(good["files"])})[0] == \
        "CORRUPT manifest.json ('files' must map relative paths to entries, got list)"
    path.unlink()
    path.mkdir()
    assert "CORRUPT manifest.json (a folder, not a manifest file)" in verify_tree(tree)


def test_params_errors_name_the_problem():
    with pytest.raises(ConfigError, match="unknown profile 'huge'; valid profiles: paper, paper-cuda, cpu, cpu-scale, smoke"):
        stage_config({"profile": "huge"}, "build_datasets", BuildDatasetsConfig)
    with pytest.raises(ConfigError, match=r"build_datasets: unknown key\(s\) \['train_size'\]"):
        stage_config({"profile": "cpu", "build_datasets": {"train_size": 3}}, "build_datasets",
                     BuildDatasetsConfig)
    with pytest.raises(ConfigError, match=r"unknown profile\(s\) \['gpu'\]"):
        stage_config({"profile": "cpu", "build_datasets": {"profiles": {"gpu": {}}}}, "build_datasets",
                     BuildDatasetsConfig)
    cfg, profile = stage_config({"profile": "cpu", "build_datasets": {"eval_id": 5, "profiles": {
        "smoke": {"eval_id": 7}}}}, "build_datasets", BuildDatasetsConfig, "smoke")
    assert (cfg.eval_id, cfg.train_pool, profile) == (7, 3000, "smoke")
    out = subprocess.run([sys.executable, "-m", "scripts.build_datasets", "--profile", "huge", "--out", "/tmp/x"],
                         cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 2 and "unknown profile 'huge'" in out.stderr


def test_committed_params_profiles_resolve():
    from ccl.config import load_params
    params = load_params(ROOT / "params.yaml")
    for profile in ("paper", "cpu", "smoke"):
        cfg, _ = stage_config(params, "build_datasets", BuildDatasetsConfig, profile)
        assert cfg.train_pool > 0
